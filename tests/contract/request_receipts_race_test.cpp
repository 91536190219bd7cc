// The same Idempotency-Key sent by several connections at once, on stock adjustments, source
// orders and manual runs: one effect and one answer, however the requests interleave (the
// receipt is inserted first; the others wait on it and replay). Their own program,
// race_tests, so that ThreadSanitizer runs them too.
#include <gtest/gtest.h>

#include <barrier>
#include <set>
#include <thread>

#include "contract/request_receipts_fixture.hpp"

namespace onceorder::testing {
namespace {

constexpr int kKeyThreads = 6;
constexpr int kKeyRounds = 8;

TEST_P(RequestReceiptsTest, SameKeyAdjustmentsMakeOneAdjustmentRace) {
  stock(101, 1000);
  for (int round = 0; round < kKeyRounds; ++round) {
    const std::string key = "adj-" + std::to_string(round);
    std::barrier start(kKeyThreads);
    std::vector<std::optional<Adjusted>> answers(kKeyThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kKeyThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto r = adjust(101, -1, key);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        answers[t] = *r;
      });
    }
    for (auto& th : threads) th.join();
    int fresh = 0;
    for (const auto& a : answers) {
      ASSERT_TRUE(a.has_value());
      fresh += a->replayed ? 0 : 1;
      EXPECT_TRUE(same_sku(a->sku, answers[0]->sku));
    }
    EXPECT_EQ(fresh, 1) << "round " << round;
    EXPECT_EQ(answers[0]->sku.available, 1000 - round - 1);
  }
  EXPECT_EQ(available(101), 1000 - kKeyRounds);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'adjustment'"), kKeyRounds);
  expect_invariants_hold();
}

TEST_P(RequestReceiptsTest, SameKeySourceOrdersAndRunsMakeOneEachRace) {
  for (int round = 0; round < kKeyRounds; ++round) {
    const std::string key = "k-" + std::to_string(round);
    const std::vector<SourceOrder> orders = {source("A" + std::to_string(round)),
                                             source("B" + std::to_string(round))};
    const std::vector<OrderKey> keys = {orders[0].key, orders[1].key};
    std::barrier start(kKeyThreads);
    std::vector<SourceImport> imports(kKeyThreads);
    std::vector<std::int64_t> runs(kKeyThreads, 0);
    std::vector<std::size_t> skipped(kKeyThreads, 99);
    std::vector<std::thread> threads;
    for (int t = 0; t < kKeyThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto imported = scheduler_.import_source_orders(orders, soon(), key);
        ASSERT_TRUE(imported.ok()) << imported.status().to_string();
        imports[t] = *imported;
        auto run = scheduler_.create_run(RunKind::manual, keys, soon(), key);
        ASSERT_TRUE(run.ok()) << run.status().to_string();
        runs[t] = run->run.run_id;
        skipped[t] = run->skipped.size();
      });
    }
    for (auto& th : threads) th.join();
    int fresh = 0;
    for (const SourceImport& i : imports) {
      fresh += i.replayed ? 0 : 1;
      EXPECT_EQ(i.created, 2);  // every answer is the first one
      EXPECT_EQ(i.existing, 0);
    }
    EXPECT_EQ(fresh, 1) << "round " << round;
    EXPECT_EQ(std::set<std::int64_t>(runs.begin(), runs.end()).size(), 1u) << "round " << round;
    EXPECT_EQ(std::set<std::size_t>(skipped.begin(), skipped.end()), std::set<std::size_t>{0});
  }
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 2 * kKeyRounds);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_runs"), kKeyRounds);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 2 * kKeyRounds);
  expect_invariants_hold();
}

INSTANTIATE_TEST_SUITE_P(Engines, RequestReceiptsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
