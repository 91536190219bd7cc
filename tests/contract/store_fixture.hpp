// The StoreTest fixture of store_test.cpp and of its races in their own program
// (store_race_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include "common/test_db.hpp"

namespace onceorder::testing {

class StoreTest : public ::testing::TestWithParam<Engine> {
 protected:
  StoreTest() : tdb_(GetParam()) {}
  TestDb tdb_;
};

}  // namespace onceorder::testing
