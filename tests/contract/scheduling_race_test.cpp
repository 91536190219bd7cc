// Production scheduling's races (seed 000: batch and manual picking the same order, a
// stale worker against its replacement); their own program, race_tests, so that
// ThreadSanitizer runs them too.
#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "contract/scheduling_fixture.hpp"

namespace onceorder::testing {
namespace {

TEST_P(SchedulingTest, BatchAndManualAtTheSameInstantProduceEachOrderOnceRace) {
  constexpr int kOrders = 1000, kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::string prefix = "R" + std::to_string(round) + "-";
    Scheduler setup(*db_);
    auto orders = make_orders("S1", prefix, kOrders);
    ASSERT_TRUE(setup.import_source_orders(orders, soon()).ok());
    std::vector<OrderKey> keys;
    for (const auto& o : orders) keys.push_back(o.key);

    // Two processes' schedulers: a batch over every candidate, a manual run naming them.
    Scheduler batch(*db_, opts(2)), manual(*db_, opts(2));
    std::barrier start(2);
    Status batch_status, manual_status;
    std::thread a([&] {
      start.arrive_and_wait();
      auto run = batch.create_run(RunKind::batch, std::nullopt, soon(60));
      if (!run.ok()) {
        batch_status = run.status();
        return;
      }
      batch_status = batch.process_run(run->run.run_id).status();
    });
    std::thread b([&] {
      start.arrive_and_wait();
      auto run = manual.create_run(RunKind::manual, keys, soon(60));
      if (!run.ok()) {
        manual_status = run.status();
        return;
      }
      manual_status = manual.process_run(run->run.run_id).status();
    });
    a.join();
    b.join();
    ASSERT_TRUE(batch_status.ok()) << batch_status.to_string();
    ASSERT_TRUE(manual_status.ok()) << manual_status.to_string();
    const std::string like = " LIKE '" + prefix + "%'";
    EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no" + like), kOrders);
    EXPECT_EQ(
        count("SELECT count(*) FROM schedule_items WHERE status = 'success' AND order_no" + like),
        kOrders);
    EXPECT_EQ(count("SELECT count(*) FROM (SELECT order_no FROM schedule_items WHERE status = "
                    "'success' GROUP BY site_code, order_no, lot_no HAVING count(*) > 1) x"),
              0);
  }
  // Every production order has its own gapless number in the site's scope.
  EXPECT_EQ(count("SELECT count(DISTINCT document_value) FROM production_orders"),
            kOrders * kRounds);
  EXPECT_EQ(count("SELECT max(document_value) FROM production_orders"), kOrders * kRounds);
  expect_invariants_hold();
}

TEST_P(SchedulingTest, StaleWorkerRacingItsOwnReplacementNeverDoublesRace) {
  // The stale worker and the reaper race for the same item, many times: either the stale
  // worker commits (and the reaper finds nothing), or the reaper wins (and the worker is
  // fenced out). Never both, never a second production order.
  SchedulerOptions o = opts();
  o.lease = std::chrono::milliseconds(1);
  Scheduler s(*db_, o);
  constexpr int kRounds = 20;
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "X", kRounds), soon()).ok());
  for (int i = 0; i < kRounds; ++i) {
    auto run = s.create_run(RunKind::manual,
                            std::vector<OrderKey>{{"S1", "X" + std::to_string(i), "1"}}, soon());
    ASSERT_TRUE(run.ok());
    auto claims = s.claim(run->run.run_id, 1);
    ASSERT_TRUE(claims.ok() && claims->size() == 1u);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::barrier start(2);
    std::thread reaper([&] {
      start.arrive_and_wait();
      ASSERT_TRUE(s.reap(soon()).ok());
    });
    start.arrive_and_wait();
    ASSERT_TRUE(s.complete(*claims).ok());
    reaper.join();
    ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  }
  EXPECT_LE(count("SELECT count(*) FROM production_orders"), kRounds);
  expect_invariants_hold();
}

INSTANTIATE_TEST_SUITE_P(Engines, SchedulingTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
