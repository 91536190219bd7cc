// The IntakeTest fixture of intake_test.cpp and of its races in their own program
// (intake_race_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/intake.hpp"
#include "onceorder/invariants.hpp"

namespace onceorder::testing {

class IntakeTest : public ::testing::TestWithParam<Engine> {
 protected:
  IntakeTest() : tdb_(GetParam()), db_(tdb_.open({.pool_size = 8})), intake_(*db_) {}

  void stock(std::int64_t sku, std::int64_t available, std::int64_t price = 100) {
    auto r = intake_.put_sku(1, sku, price, available, soon());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  std::int64_t available(std::int64_t sku) {
    return tdb_
        .sql("SELECT available FROM stock WHERE warehouse_id = 1 AND sku_id = " +
             std::to_string(sku))
        .at(0)
        .i64(0);
  }
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  Result<Placed> place(const std::string& key, std::vector<CartLine> lines,
                       std::int64_t customer = 7, Intake* via = nullptr) {
    return (via ? *via : intake_).place({customer, 1, std::move(lines), key}, soon());
  }
  void expect_invariants_hold() { onceorder::testing::expect_invariants_hold(*db_); }
  // A second client holding row locks (SQLite: the write lock) until release().
  struct Holder {
    std::unique_ptr<store::Database> db;
    std::optional<store::PooledConnection> conn;
  };
  Holder hold_sku(std::int64_t sku) {
    Holder h{tdb_.open({.pool_size = 1}, false), std::nullopt};
    auto c = h.db->acquire(soon());
    EXPECT_TRUE(c.ok());
    h.conn.emplace(std::move(*c));
    EXPECT_TRUE((*h.conn)->begin(store::TxMode::write).ok());
    // Statements keep views: their text lives in the fixture for the test's duration.
    held_names_.push_back("t_hold_" + std::to_string(sku));
    held_sql_.push_back(
        "UPDATE stock SET available = available WHERE warehouse_id = 1 AND sku_id = " +
        std::to_string(sku));
    store::Statement stable{held_names_.back(), held_sql_.back()};
    EXPECT_TRUE((*h.conn)->query(stable, {}).ok());
    return h;
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Intake intake_;
  std::deque<std::string> held_sql_, held_names_;
};

}  // namespace onceorder::testing
