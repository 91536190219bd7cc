// A follower of GET /v1/orders?order=asc (follow_orders) while several connections place
// orders: order ids are taken before a placement's transaction and transactions commit in any
// order, so a cursor by order id (or by event id on PostgreSQL) passes over an order that
// commits after a larger one was read. The follower must read every order exactly once. One
// writer holds each of its placements open a while after writing it (the Intake's test seam),
// so late commits happen on every run: on PostgreSQL its order's event has an older
// transaction id than events that commit meanwhile; on SQLite it holds the one write lock while
// other placements wait with order ids taken before its own.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/listings.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

class FollowOrdersRaceTest : public ::testing::TestWithParam<Engine> {
 protected:
  FollowOrdersRaceTest() : tdb_(GetParam()), db_(tdb_.open({.pool_size = 12})), intake_(*db_) {}

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Intake intake_;
  Stock stock_{*db_};
};

TEST_P(FollowOrdersRaceTest, AFollowerReadsEveryOrderOnceWhilePlacementsCommitOutOfOrder) {
  constexpr int kWriters = 6, kEach = 40, kSlow = 15, kPage = 3;
  constexpr std::int64_t kSlowSku = 99;
  for (std::int64_t sku = 1; sku <= kWriters; ++sku)
    ASSERT_TRUE(stock_.put_sku(1, sku, 10, 1000000, soon()).ok());
  ASSERT_TRUE(stock_.put_sku(1, kSlowSku, 10, 1000000, soon()).ok());
  IntakeOptions held;
  held.fault_after_deduction = [] {
    std::this_thread::sleep_for(15ms);
    return Status::Ok();
  };
  Intake slow(*db_, held);
  std::atomic<int> writing{kWriters + 1};
  std::barrier start(kWriters + 2);
  std::vector<std::thread> writers;
  writers.emplace_back([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kSlow; ++i) {
      auto r = slow.place({99, 1, {{kSlowSku, 1}}, "slow-" + std::to_string(i)}, soon(30));
      ASSERT_TRUE(r.ok() && !r->out_of_stock) << (r.ok() ? "out" : r.status().to_string());
    }
    --writing;
  });
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        // Each cart also takes SKU 1, so placements meet on one row and queue in a lane.
        const std::string key = "w" + std::to_string(w) + "-" + std::to_string(i);
        auto r = intake_.place({100 + w, 1, {{1, 1}, {w + 1, 1}}, key}, soon(30));
        ASSERT_TRUE(r.ok() && !r->out_of_stock) << (r.ok() ? "out" : r.status().to_string());
      }
      --writing;
    });
  }
  std::map<std::int64_t, int> times;
  FeedPosition at;
  OrderFilter filter;
  filter.limit = kPage;
  int reads = 0;
  auto read_page = [&]() -> bool {
    auto page = follow_orders(*db_, filter, at, soon(30));
    EXPECT_TRUE(page.ok()) << page.status().to_string();
    if (!page.ok()) return false;
    ++reads;
    for (const auto& o : page->orders) ++times[o.order_id];
    if (page->next_after) at = *page->next_after;
    return !page->orders.empty();
  };
  start.arrive_and_wait();
  while (writing.load() > 0) read_page();
  for (auto& t : writers) t.join();
  // The rest, until every order is visible (another transaction in the cluster may hold
  // PostgreSQL's horizon back for a moment).
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (times.size() < static_cast<size_t>(kWriters * kEach + kSlow) &&
         std::chrono::steady_clock::now() < give_up) {
    if (!read_page()) std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(times.size(), static_cast<size_t>(kWriters * kEach + kSlow))
      << "the follower lost orders";
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << "order " << id << " read " << n << " times";
  EXPECT_GT(reads, kWriters * kEach / kPage / 4) << "the follower hardly ran during placements";
  std::printf("follower: %d reads\n", reads);
}

INSTANTIATE_TEST_SUITE_P(Engines, FollowOrdersRaceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
