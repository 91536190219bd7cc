// The IntakeTest fixture of intake_test.cpp and of its races in their own program
// (intake_race_test.cpp).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <barrier>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {

class IntakeTest : public ::testing::TestWithParam<Engine> {
 protected:
  IntakeTest() : tdb_(GetParam()), db_(tdb_.open({.pool_size = 8})), intake_(*db_) {}

  void stock(std::int64_t sku, std::int64_t available, std::int64_t price = 100) {
    auto r = stock_.put_sku(1, sku, price, available, soon());
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
  // `threads` clients at once, each placing `each` carts of two of its own `skus_each` SKUs
  // (no two clients share one) through `via`; then every order is checked: its two lines,
  // and every SKU's deductions those of the orders placed.
  void place_disjoint_carts(Intake& via, int threads, int each, int skus_each) {
    constexpr int kInitial = 1000;
    for (int sku = 1; sku <= threads * skus_each; ++sku) stock(sku, kInitial);
    const std::int64_t before = count("SELECT count(*) FROM orders");
    std::vector<std::vector<Placed>> seen(static_cast<std::size_t>(threads));
    std::barrier start(threads);
    std::vector<std::thread> clients;
    for (int t = 0; t < threads; ++t) {
      clients.emplace_back([&, t] {
        start.arrive_and_wait();
        for (int i = 0; i < each; ++i) {
          const int first = t * skus_each + 1 + i % skus_each;
          const int second = t * skus_each + 1 + (i + 1) % skus_each;
          auto r =
              place(fmt::format("d{}-{}", t, i), {{first, 1 + i % 3}, {second, 1}}, 100 + t, &via);
          ASSERT_TRUE(r.ok()) << r.status().to_string();
          ASSERT_FALSE(r->out_of_stock);
          seen[static_cast<std::size_t>(t)].push_back(std::move(*r));
        }
      });
    }
    for (auto& c : clients) c.join();
    std::map<std::int64_t, std::int64_t> taken;
    for (const auto& answers : seen) {
      for (const Placed& p : answers) {
        for (const auto& l : p.order.lines) taken[l.sku_id] += l.quantity;
        EXPECT_EQ(count(fmt::format("SELECT count(*) FROM order_lines WHERE order_id = {}",
                                    p.order.order_id)),
                  2);
      }
    }
    EXPECT_EQ(count("SELECT count(*) FROM orders") - before, threads * each);
    for (int sku = 1; sku <= threads * skus_each; ++sku)
      EXPECT_EQ(kInitial - available(sku), taken[sku]) << "sku " << sku;
  }
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
  Stock stock_{*db_};
  std::deque<std::string> held_sql_, held_names_;
};

}  // namespace onceorder::testing
