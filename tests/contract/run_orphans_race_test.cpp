// Two run creations and the reaper at one instant over the same orphans (wait items of a run
// that ended without settling them), on every engine: each orphan is aborted exactly once,
// by one of the three, and each key ends with exactly one live item.
#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "contract/scheduling_fixture.hpp"

namespace onceorder::testing {
namespace {

class RunOrphansRaceTest : public SchedulingTest {};

TEST_P(RunOrphansRaceTest, TwoCreationsAndTheReaperAbortEachOrphanOnceRace) {
  constexpr int kOrders = 300, kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::string prefix = "Q" + std::to_string(round) + "-";
    Scheduler setup(*db_);
    auto orders = make_orders("S1", prefix, kOrders);
    ASSERT_TRUE(setup.import_source_orders(orders, soon()).ok());
    std::vector<OrderKey> keys;
    for (const auto& o : orders) keys.push_back(o.key);
    auto dead = setup.create_run(RunKind::manual, keys, soon(60));
    ASSERT_TRUE(dead.ok()) << dead.status().to_string();
    tdb_.sql("UPDATE schedule_runs SET status = 'error' WHERE run_id = " +
             std::to_string(dead->run.run_id));

    Scheduler manual(*db_, opts(2)), batch(*db_, opts(2)), reaper(*db_);
    std::barrier start(3);
    Result<RunCreated> by_manual = Status(Code::internal, "not run");
    Result<RunCreated> by_batch = Status(Code::internal, "not run");
    Result<ReapReport> reaped = Status(Code::internal, "not run");
    std::thread a([&] {
      start.arrive_and_wait();
      by_manual = manual.create_run(RunKind::manual, keys, soon(60));
    });
    std::thread b([&] {
      start.arrive_and_wait();
      by_batch = batch.create_run(RunKind::batch, std::nullopt, soon(60));
    });
    std::thread c([&] {
      start.arrive_and_wait();
      reaped = reaper.reap(soon(60));
    });
    a.join();
    b.join();
    c.join();
    ASSERT_TRUE(by_manual.ok()) << by_manual.status().to_string();
    ASSERT_TRUE(by_batch.ok()) << by_batch.status().to_string();
    ASSERT_TRUE(reaped.ok()) << reaped.status().to_string();
    EXPECT_EQ(by_manual->orphans_aborted + by_batch->orphans_aborted + reaped->aborted_waiting,
              kOrders)
        << "round " << round;
    EXPECT_EQ(by_manual->run.counts.wait + by_batch->run.counts.wait, kOrders) << "round " << round;
    // What the manual run did not take is in progress in the batch, and nothing else.
    for (const Skipped& s : by_manual->skipped) EXPECT_EQ(s.reason, "in_progress");
    EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE run_id = " +
                    std::to_string(dead->run.run_id) + " AND status = 'aborted'"),
              kOrders);
    EXPECT_EQ(
        count("SELECT count(*) FROM (SELECT site_code, order_no, lot_no FROM "
              "schedule_items WHERE status = 'wait' AND order_no LIKE '" +
              prefix + "%' GROUP BY site_code, order_no, lot_no HAVING count(*) = 1) one_each"),
        kOrders);
    // The two runs end (so that the next round's orders are the only candidates).
    ASSERT_TRUE(manual.process_run(by_manual->run.run_id).ok());
    ASSERT_TRUE(batch.process_run(by_batch->run.run_id).ok());
  }
  EXPECT_EQ(count("SELECT count(*) FROM production_orders"), kOrders * kRounds);
  expect_invariants_hold();
}

INSTANTIATE_TEST_SUITE_P(Engines, RunOrphansRaceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
