// Seed 002's incident made to happen, on every engine: two processes whose node-id leases
// overlap (the first one's lease expired by hand while it still holds it, the second one
// taking the node) and whose clocks read the same millisecond (the second one's moved back)
// issue the same order id at once. The second insert waits on the first, uncommitted one,
// then collides with it and is placed again with an id from another node: no order lost,
// none doubled, and the collision counted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <latch>
#include <thread>

#include "common/test_db.hpp"
#include "onceorder/core/id_generator.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

store::Clock::time_point collision_deadline() { return store::Clock::now() + 30s; }

// A takes a node; its lease is then ended by hand behind its back (A still trusts it), and
// every other node is made busy, so that B takes the same one; then every other node is free
// again (the one B moves to after the collision). The node, or -1 (a failure reported).
int overlapping_leases(TestDb& tdb, Intake& a, Intake& b, std::int64_t now_ms) {
  auto node = a.node_id();
  EXPECT_TRUE(node.ok()) << node.status().to_string();
  if (!node.ok()) return -1;
  tdb.sql(fmt::format("UPDATE id_nodes SET lease_until_ms = {} WHERE node_id = {}", now_ms - 1000,
                      *node));
  tdb.sql(fmt::format("UPDATE id_nodes SET lease_until_ms = {} WHERE node_id <> {}",
                      now_ms + 3'600'000, *node));
  auto b_node = b.node_id();
  EXPECT_TRUE(b_node.ok()) << b_node.status().to_string();
  EXPECT_EQ(b_node.ok() ? *b_node : -1, *node) << "the leases do not overlap";
  tdb.sql(fmt::format("UPDATE id_nodes SET lease_until_ms = 0 WHERE node_id <> {}", *node));
  return b_node.ok() && *b_node == *node ? *node : -1;
}

// Whether a session of the database waits for a lock within 10 s (PostgreSQL); SQLite's
// writer waits for the one write lock, which the server cannot be asked about: a pause.
bool some_session_waits(TestDb& tdb, Engine engine) {
  if (engine != Engine::postgres) {
    std::this_thread::sleep_for(300ms);
    return true;
  }
  const auto give_up = store::Clock::now() + 10s;
  while (tdb.sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
                 "wait_event_type = 'Lock'")
             .at(0)
             .i64(0) == 0) {
    if (store::Clock::now() > give_up) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class OrderIdCollisionRaceTest : public ::testing::TestWithParam<Engine> {};

TEST_P(OrderIdCollisionRaceTest, OverlappingLeasesIssueOneIdTwiceAndTheSecondIsPlacedAgainRace) {
  TestDb tdb(GetParam());
  auto db_a = tdb.open({.pool_size = 2});
  auto db_b = tdb.open({.pool_size = 2});
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  // Both clocks read this millisecond: A's is right, B's moved back to it.
  const IdGenerator::MsClock same_ms = [now_ms] { return now_ms; };
  std::latch inserted{1}, go{1};
  IntakeOptions a_options;
  a_options.holder = "process-a";
  a_options.id_clock = same_ms;
  // A's transaction stays open after its order is written, until B waits behind it.
  a_options.fault_after_deduction = [&] {
    inserted.count_down();
    go.wait();
    return Status::Ok();
  };
  IntakeOptions b_options;
  b_options.holder = "process-b";
  b_options.id_clock = same_ms;
  Intake a(*db_a, a_options);
  Intake b(*db_b, b_options);
  ASSERT_TRUE(Stock(*db_a).put_sku(1, 101, 100, 10, collision_deadline()).ok());

  const int node = overlapping_leases(tdb, a, b, now_ms);
  ASSERT_GE(node, 0);

  auto placed_a = std::async(std::launch::async, [&] {
    return a.place({1, 1, {{101, 1}}, "first"}, collision_deadline());
  });
  inserted.wait();
  auto placed_b = std::async(std::launch::async, [&] {
    return b.place({2, 1, {{101, 2}}, "second"}, collision_deadline());
  });
  // B's insert waits on A's uncommitted one: on PostgreSQL for the order id's index entry,
  // on SQLite for the one write lock.
  ASSERT_TRUE(some_session_waits(tdb, GetParam())) << "B never waited on A's insert";
  EXPECT_EQ(placed_b.wait_for(0s), std::future_status::timeout) << "B did not wait for A";
  go.count_down();
  auto first = placed_a.get();
  auto second = placed_b.get();

  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  ASSERT_FALSE(first->out_of_stock);
  ASSERT_FALSE(second->out_of_stock);
  EXPECT_EQ(decode_id(first->order.order_id).node, node);
  EXPECT_NE(decode_id(second->order.order_id).node, node) << "B was not given another node";
  EXPECT_NE(second->order.order_id, first->order.order_id);
  EXPECT_EQ(b.id_collisions(), 1u) << "the collision was not counted";
  EXPECT_EQ(a.id_collisions(), 0u);
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM orders").at(0).i64(0), 2) << "an order lost or doubled";
  EXPECT_EQ(tdb.sql("SELECT available FROM stock WHERE sku_id = 101").at(0).i64(0), 7);
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation'").at(0).i64(0),
            2);
  expect_invariants_hold(*db_a);
}

INSTANTIATE_TEST_SUITE_P(Engines, OrderIdCollisionRaceTest,
                         ::testing::ValuesIn(engines_under_test()), engine_param_name);

}  // namespace
}  // namespace onceorder::testing
