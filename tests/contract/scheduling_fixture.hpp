// The SchedulingTest fixture of scheduling_test.cpp and of its races in their own program
// (scheduling_race_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder::testing {

inline std::vector<SourceOrder> make_orders(const std::string& site, const std::string& prefix,
                                            int n) {
  std::vector<SourceOrder> out;
  for (int i = 0; i < n; ++i) out.push_back({{site, prefix + std::to_string(i), "1"}, 10 + i});
  return out;
}

class SchedulingTest : public ::testing::TestWithParam<Engine> {
 protected:
  SchedulingTest() : tdb_(GetParam()), db_(tdb_.open({.pool_size = 8})) {}

  SchedulerOptions opts(int workers = 1) {
    SchedulerOptions o;
    o.workers = workers;
    return o;
  }
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  void expect_invariants_hold() { onceorder::testing::expect_invariants_hold(*db_); }
  std::int64_t violations(const std::string& id) {
    auto inv = check_invariants(*db_, soon());
    EXPECT_TRUE(inv.ok());
    for (const auto& r : *inv)
      if (r.id == id) return r.violations;
    ADD_FAILURE() << "no invariant " << id;
    return -1;
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
};

}  // namespace onceorder::testing
