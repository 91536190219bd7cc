// Seed 000, step 4, on every engine: creating a run first aborts the `wait` items of dead runs
// (ended, or their owner silent for run_timeout) on the keys it takes, and counts them; the
// candidate view and the live-item index hold a key by one rule, so that an item of a status
// the view does not know is not taken for an exhausted order.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "contract/scheduling_fixture.hpp"

namespace onceorder::testing {
namespace {

class RunOrphansTest : public SchedulingTest {
 protected:
  // A scheduler whose runs die after 500 ms without a heartbeat.
  SchedulerOptions quick_death() {
    SchedulerOptions o = opts();
    o.run_timeout = std::chrono::milliseconds(500);
    return o;
  }
  std::int64_t items(const std::string& where) {
    return count("SELECT count(*) FROM schedule_items WHERE " + where);
  }
  static std::vector<OrderKey> keys_of(const std::string& prefix, std::vector<int> numbers) {
    std::vector<OrderKey> out;
    for (int n : numbers) out.push_back({"S1", prefix + std::to_string(n), "1"});
    return out;
  }
};

std::map<std::string, std::string> reasons_of(const RunCreated& r) {
  std::map<std::string, std::string> out;
  for (const Skipped& s : r.skipped) out[s.key.order_no] = s.reason;
  return out;
}

TEST_P(RunOrphansTest, AManualRunTakesTheKeysOfARunWhoseOwnerStoppedHeartBeating) {
  Scheduler crashed(*db_, quick_death());
  ASSERT_TRUE(crashed.import_source_orders(make_orders("S1", "O", 5), soon()).ok());
  auto dead = crashed.create_run(RunKind::manual, keys_of("O", {0, 1, 2}), soon());
  ASSERT_TRUE(dead.ok()) << dead.status().to_string();  // then its process dies

  Scheduler next(*db_, quick_death());
  // Its owner may still be alive: a key it holds is in progress.
  auto early = next.create_run(RunKind::manual, keys_of("O", {0}), soon());
  ASSERT_TRUE(early.ok()) << early.status().to_string();
  EXPECT_EQ(reasons_of(*early)["O0"], "in_progress");
  EXPECT_EQ(early->orphans_aborted, 0);

  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  // A live run of its own holds O3: never touched.
  auto live = next.create_run(RunKind::manual, keys_of("O", {3}), soon());
  ASSERT_TRUE(live.ok());
  ASSERT_TRUE(next.heartbeat(live->run.run_id).ok());
  auto taken = next.create_run(RunKind::manual, keys_of("O", {0, 1, 3}), soon());
  ASSERT_TRUE(taken.ok()) << taken.status().to_string();
  EXPECT_EQ(taken->orphans_aborted, 2);
  const auto reasons = reasons_of(*taken);
  EXPECT_FALSE(reasons.contains("O0")) << reasons.at("O0");
  EXPECT_FALSE(reasons.contains("O1")) << reasons.at("O1");
  EXPECT_EQ(reasons.at("O3"), "in_progress");
  EXPECT_EQ(taken->run.counts.wait, 2);
  // Only the keys it took: the dead run's O2 waits for the reaper, and the dead run itself is
  // the reaper's to end.
  const std::string dead_id = std::to_string(dead->run.run_id);
  EXPECT_EQ(items("run_id = " + dead_id + " AND status = 'aborted' AND error = 'run is not alive'"),
            2);
  EXPECT_EQ(items("run_id = " + dead_id + " AND status = 'wait' AND order_no = 'O2'"), 1);
  EXPECT_EQ(
      count("SELECT count(*) FROM schedule_runs WHERE status = 'running' AND run_id = " + dead_id),
      1);
  EXPECT_EQ(items("run_id = " + std::to_string(live->run.run_id) + " AND status = 'wait'"), 1);
  expect_invariants_hold();
}

TEST_P(RunOrphansTest, EndedRunsOrphansAreAbortedByABatchAndAKeyedRunAndReplayedCounts) {
  Scheduler s(*db_);  // the default run_timeout (minutes): only ended runs are dead here
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "E", 4), soon()).ok());
  auto done = s.create_run(RunKind::manual, keys_of("E", {0, 1}), soon());
  auto failed = s.create_run(RunKind::manual, keys_of("E", {2, 3}), soon());
  ASSERT_TRUE(done.ok() && failed.ok());
  // Runs that ended without settling their items (as in the seed's data).
  tdb_.sql("UPDATE schedule_runs SET status = 'done' WHERE run_id = " +
           std::to_string(done->run.run_id));
  tdb_.sql("UPDATE schedule_runs SET status = 'error' WHERE run_id = " +
           std::to_string(failed->run.run_id));

  const std::optional<std::string> key = "orphans-k";
  auto keyed = s.create_run(RunKind::manual, keys_of("E", {0, 1}), soon(), key);
  ASSERT_TRUE(keyed.ok()) << keyed.status().to_string();
  EXPECT_EQ(keyed->orphans_aborted, 2);
  EXPECT_TRUE(keyed->skipped.empty());
  auto replay = s.create_run(RunKind::manual, keys_of("E", {0, 1}), soon(), key);
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->run.run_id, keyed->run.run_id);
  EXPECT_EQ(replay->orphans_aborted, 2);

  auto batch = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(batch.ok()) << batch.status().to_string();
  EXPECT_EQ(batch->orphans_aborted, 2);  // E2, E3
  EXPECT_EQ(batch->run.counts.wait, 2);
  EXPECT_EQ(items("status = 'wait'"), 4);
  expect_invariants_hold();
}

// The live-item index releases a key only for `failed` and `aborted` (a deny-list: a status
// added later holds the key). The view the candidate statements and the skip reasons read
// must hold it by the same rule, or a run skips the key as `max_attempts_reached`.
TEST_P(RunOrphansTest, AnItemOfAStatusTheViewDoesNotKnowHoldsItsKeyAsInProgress) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "H", 2), soon()).ok());
  auto first = s.create_run(RunKind::manual, keys_of("H", {0}), soon());
  ASSERT_TRUE(first.ok());
  // A status of a later version ('held'), which this schema's CHECKs do not admit yet.
  const std::string held = "UPDATE schedule_items SET status = 'held' WHERE order_no = 'H0'";
  if (GetParam() == Engine::sqlite) {
    auto db = tdb_.open({.pool_size = 1});
    auto conn = db->acquire(soon());
    ASSERT_TRUE(conn.ok());
    for (const std::string& sql : {std::string("PRAGMA ignore_check_constraints = ON"), held}) {
      auto r = (*conn)->query(store::Statement{sql, sql}, {});
      ASSERT_TRUE(r.ok()) << r.status().to_string() << " in " << sql;
    }
  } else {
    tdb_.sql(
        "DO $$ DECLARE c record; BEGIN FOR c IN SELECT conrelid::regclass AS t, conname FROM "
        "pg_constraint WHERE conrelid IN ('schedule_items'::regclass, "
        "'schedule_item_events'::regclass) AND contype = 'c' AND pg_get_constraintdef(oid) LIKE "
        "'%processing%' LOOP EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.t, c.conname); "
        "END LOOP; END $$");
    tdb_.sql(held);
  }
  ASSERT_EQ(items("status = 'held'"), 1);

  auto again = s.create_run(RunKind::manual, keys_of("H", {0, 1}), soon());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(reasons_of(*again)["H0"], "in_progress");
  EXPECT_EQ(again->skipped.size(), 1u);
  auto batch = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->run.counts.wait, 0);
  EXPECT_EQ(items("order_no = 'H0'"), 1) << "the index holds the key: no second item";
}

INSTANTIATE_TEST_SUITE_P(Engines, RunOrphansTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
