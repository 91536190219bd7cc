// The NumberingTest fixture of numbering_test.cpp and of its races in their own program
// (numbering_race_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/test_db.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::testing {

class NumberingTest : public ::testing::TestWithParam<Engine> {
 protected:
  NumberingTest() : tdb_(GetParam()), db_(tdb_.open({.pool_size = 8})), numbering_(*db_) {}

  Result<Issued> issue(const std::string& scope, const std::string& title,
                       std::optional<std::string> key = std::nullopt) {
    return numbering_.issue({scope, title, std::move(key)}, soon());
  }
  std::int64_t count_documents(const std::string& scope) {
    return tdb_.sql("SELECT count(*) FROM documents WHERE scope = '" + scope + "'").at(0).i64(0);
  }
  std::int64_t last_value(const std::string& scope) {
    auto rows = tdb_.sql("SELECT last_value FROM doc_scopes WHERE scope = '" + scope + "'");
    return rows.empty() ? -1 : rows[0].i64(0);
  }
  void expect_invariants_hold() { onceorder::testing::expect_invariants_hold(*db_); }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Numbering numbering_;
};

}  // namespace onceorder::testing
