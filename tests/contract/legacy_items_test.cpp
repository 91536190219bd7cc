// Legacy schedule items on every engine: the seed's duplicate groups are soft-moved to
// `aborted` (success kept, else the newest wait), nothing is deleted, and a database whose
// duplicates block the live-item index says so and is fixed by the dedup command.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/test_db.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/legacy_items.hpp"

namespace onceorder::testing {
namespace {

class LegacyItemsTest : public ::testing::TestWithParam<Engine> {
 protected:
  LegacyItemsTest() : tdb_(GetParam()), db_(tdb_.open()) {}
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  std::string status_of(const std::string& order_no, const std::string& created_prefix) {
    auto rows = tdb_.sql("SELECT status FROM schedule_items WHERE order_no = '" + order_no +
                         "' AND error LIKE 'legacy line " + created_prefix + "%'");
    return rows.empty() ? "" : rows[0].text(0);
  }
  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
};

// The seed's groups: A12345 has a SUCCESS and a WAIT; B has two WAITs; C a FAILED and a
// WAIT (not duplicates: FAILED is not live); D is alone.
constexpr std::string_view kLegacyCsv =
    "site_code,order_no,lot_no,status,created_at,run_id\n"
    "S1,A12345,1,WAIT,2024-03-01T08:00:00Z,r1\n"     // line 2
    "S1,A12345,1,SUCCESS,2024-02-01T08:00:00Z,r0\n"  // line 3: kept (success)
    "S1,B1,1,wait,2024-03-01T08:00:00Z,r1\n"         // line 4
    "S1,B1,1,Wait,2024-03-02T08:00:00+08:00,r2\n"    // line 5: kept (newest wait)
    "S1,C1,1,FAILED,2024-03-01T08:00:00Z,r1\n"       // line 6
    "S1,C1,1,WAIT,2024-03-02T08:00:00Z,r2\n"         // line 7: kept (only live row)
    "S1,D1,1,success,2024-03-01T08:00:00Z,\n";       // line 8

void import_sources(TestDb& tdb) {
  for (const char* order : {"A12345", "B1", "C1", "D1"}) {
    tdb.sql(
        std::string(
            "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('S1', '") +
        order + "', '1', 5)");
  }
}

TEST_P(LegacyItemsTest, DedupKeepsSuccessElseNewestWaitAndDeletesNothing) {
  auto staged = import_legacy_items(*db_, kLegacyCsv, soon());
  ASSERT_TRUE(staged.ok()) << staged.status().to_string();
  EXPECT_EQ(*staged, 7);
  auto plan = plan_legacy_dedup(*db_, soon());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->duplicates.size(), 2u);
  EXPECT_EQ(plan->to_abort, 2);
  EXPECT_EQ(plan->missing_sources.size(), 4u);
  ASSERT_FALSE(plan->applied);
  EXPECT_EQ(plan->duplicates[0].key.order_no, "A12345");
  EXPECT_EQ(plan->duplicates[0].rows[0].source, "legacy line 3");
  EXPECT_TRUE(plan->duplicates[0].rows[0].keep);
  EXPECT_EQ(plan->duplicates[1].rows[0].source, "legacy line 5");

  // Without source orders nothing moves.
  auto refused = apply_legacy_dedup(*db_, soon());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("source order"), std::string::npos);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 0);

  import_sources(tdb_);
  auto applied = apply_legacy_dedup(*db_, soon());
  ASSERT_TRUE(applied.ok()) << applied.status().to_string();
  EXPECT_TRUE(applied->applied);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 7);  // nothing deleted
  EXPECT_EQ(count("SELECT count(*) FROM legacy_items WHERE moved_at IS NULL"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM legacy_items"), 7);
  EXPECT_EQ(status_of("A12345", "3"), "success");
  EXPECT_EQ(status_of("A12345", "2"), "aborted");
  // The kept `wait` rows waited in the old system's queue: they move as `aborted`, so the
  // orders are candidates again and no `wait` item sits in a run that is not alive.
  EXPECT_EQ(status_of("B1", "5"), "aborted");
  EXPECT_EQ(status_of("B1", "4"), "aborted");
  EXPECT_EQ(status_of("C1", "7"), "aborted");
  EXPECT_EQ(status_of("C1", "6"), "failed");
  // Applying again finds nothing more to do.
  auto again = apply_legacy_dedup(*db_, soon());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->legacy_rows, 0);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 7);
  // Honest at once: nothing is left for the reaper.
  auto inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  for (const auto& r : *inv) EXPECT_EQ(r.violations, 0) << r.id;
  Scheduler s(*db_);
  auto reaped = s.reap(soon());
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(reaped->aborted_waiting, 0);
  inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  for (const auto& r : *inv) EXPECT_EQ(r.violations, 0) << r.id;
}

TEST_P(LegacyItemsTest, BadLinesRejectTheWholeFile) {
  const std::string csv =
      "site_code,order_no,lot_no,status,created_at\n"
      "S1,A,1,WAIT,2024-03-01T08:00:00Z\n"
      "S1,A,1,DONE,2024-03-01T08:00:00Z\n"
      "S1,B,1,WAIT,last tuesday\n"
      "S 1,C,1,WAIT,2024-03-01T08:00:00Z\n"
      "S1,D,1\n";
  auto r = import_legacy_items(*db_, csv, soon());
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.status().fields().size(), 4u);
  EXPECT_EQ(r.status().fields()[0].field, "line 3");
  EXPECT_EQ(r.status().fields()[1].field, "line 4");
  EXPECT_EQ(r.status().fields()[2].field, "line 5");
  EXPECT_EQ(r.status().fields()[3].field, "line 6");
  EXPECT_EQ(count("SELECT count(*) FROM legacy_items"), 0);
  EXPECT_FALSE(import_legacy_items(*db_, "order_no,site_code\n", soon()).ok());
}

TEST_P(LegacyItemsTest, DuplicatesBlockingTheLiveIndexAreNamedAndFixedByDedup) {
  // A database at version 2 (tables, no live-item index) into which duplicates were loaded.
  ASSERT_TRUE(store::migrate_down(*db_, 2).ok());
  import_sources(tdb_);
  tdb_.sql("INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'done', 'old')");
  for (const char* st : {"success", "wait", "wait"}) {
    tdb_.sql(std::string("INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) "
                         "VALUES (1, 'S1', 'A12345', '1', '") +
             st + "')");
  }
  auto blocked = store::migrate(*db_);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), Code::unique_violation);
  EXPECT_NE(blocked.status().message().find("onceorder legacy dedup"), std::string::npos)
      << blocked.status().message();
  auto plan = plan_legacy_dedup(*db_, soon());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->duplicates.size(), 1u);
  EXPECT_EQ(plan->to_abort, 2);
  ASSERT_TRUE(apply_legacy_dedup(*db_, soon()).ok());
  auto fixed = store::migrate(*db_);
  ASSERT_TRUE(fixed.ok()) << fixed.status().to_string();
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'success'"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'aborted'"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 3);
}

// Issue 7 item 5, seed 000 through the migration path: the old system was producing
// A12345 when it was stopped. However its row travels (staged and applied, then the
// reaper's expired-lease pass, then a batch run), OnceOrder must not make it again
// without an operator's word on what happened to it.
TEST_P(LegacyItemsTest, InFlightLegacyRowIsNotProducedAgainByTheCutover) {
  import_sources(tdb_);
  ASSERT_TRUE(import_legacy_items(*db_,
                                  "site_code,order_no,lot_no,status,created_at\n"
                                  "S1,A12345,1,PROCESSING,2024-03-01T08:00:00Z\n",
                                  soon())
                  .ok());
  (void)apply_legacy_dedup(*db_, soon());  // refused (unresolved) or not: either way...
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Scheduler s(*db_);
  ASSERT_TRUE(s.reap(soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  // ...nothing was made for it, and no item of it is a candidate again.
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no = 'A12345'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'A12345' AND status IN "
                  "('failed', 'aborted')"),
            0);
}

// The same on a database migrated before this fix: a legacy `processing` item already
// sits in schedule_items with a lease that expired at the cutover.
TEST_P(LegacyItemsTest, MovedInFlightLegacyItemIsNotReapedIntoACandidate) {
  import_sources(tdb_);
  tdb_.sql(
      "INSERT INTO schedule_runs (kind, status, owner) VALUES ('legacy', 'done', "
      "'legacy-import')");
  tdb_.sql(
      std::string("INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, "
                  "lease_until, error) VALUES (1, 'S1', 'A12345', '1', 'processing', ") +
      (GetParam() == Engine::sqlite ? "'2024-03-01T08:00:00.000Z'" : "'2024-03-01T08:00:00Z'") +
      ", 'legacy line 2')");
  Scheduler s(*db_);
  auto reaped = s.reap(soon());
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(reaped->released_processing, 0);
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no = 'A12345'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'A12345' AND status = "
                  "'processing'"),
            1);
}

// A1 was being made by the old system at the cutover, B1 was waiting, C1 is done.
constexpr std::string_view kInFlightCsv =
    "site_code,order_no,lot_no,status,created_at\n"
    "S1,A12345,1,processing,2024-03-01T08:00:00Z\n"  // line 2
    "S1,B1,1,wait,2024-03-01T08:00:00Z\n"            // line 3
    "S1,C1,1,success,2024-03-01T08:00:00Z\n";        // line 4

std::int64_t run_batch(store::Database& db) {
  Scheduler s(db);
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  if (!run.ok()) return -1;
  auto done = s.process_run(run->run.run_id);
  return done.ok() ? done->counts.success : -1;
}

TEST_P(LegacyItemsTest, UnresolvedInFlightRowBlocksApplyAndEveryCandidatePath) {
  import_sources(tdb_);
  ASSERT_TRUE(import_legacy_items(*db_, kInFlightCsv, soon()).ok());
  auto plan = plan_legacy_dedup(*db_, soon());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->unresolved, 1);
  ASSERT_EQ(plan->in_flight.size(), 1u);  // an unresolved wait row is not in flight
  EXPECT_EQ(plan->in_flight[0].line_no, 2);
  EXPECT_FALSE(plan->in_flight[0].outcome.has_value());

  auto refused = apply_legacy_dedup(*db_, soon());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::conflict);
  EXPECT_NE(refused.status().message().find("legacy resolve"), std::string::npos);
  ASSERT_EQ(refused.status().fields().size(), 1u);
  EXPECT_EQ(refused.status().fields()[0].field, "legacy line 2");
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_runs"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM legacy_items WHERE moved_at IS NOT NULL"), 0);

  // Neither a batch nor a manual run takes a key whose legacy history is staged (D1 has
  // none and is made), and the reaper has nothing to touch.
  Scheduler s(*db_);
  ASSERT_TRUE(s.reap(soon()).ok());
  EXPECT_EQ(run_batch(*db_), 1);
  auto manual = s.create_run(RunKind::manual, std::vector<OrderKey>{{"S1", "A12345", "1"}}, soon());
  ASSERT_TRUE(manual.ok()) << manual.status().to_string();
  ASSERT_EQ(manual->skipped.size(), 1u);
  EXPECT_EQ(manual->skipped[0].reason, "legacy_pending");
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no <> 'D1'"), 0);
}

TEST_P(LegacyItemsTest, MadeMovesAsSuccessAndIsNeverProducedAgain) {
  import_sources(tdb_);
  ASSERT_TRUE(import_legacy_items(*db_, kInFlightCsv, soon()).ok());
  auto resolved =
      resolve_legacy_items(*db_, "site_code,order_no,lot_no,outcome\nS1,A12345,1,made\n", soon());
  ASSERT_TRUE(resolved.ok()) << resolved.status().to_string();
  EXPECT_EQ(resolved->staged, 1);
  EXPECT_EQ(resolved->settled, 0);
  auto plan = plan_legacy_dedup(*db_, soon());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->unresolved, 0);
  ASSERT_EQ(plan->in_flight.size(), 1u);
  EXPECT_EQ(plan->in_flight[0].outcome, LegacyOutcome::made);
  auto applied = apply_legacy_dedup(*db_, soon());
  ASSERT_TRUE(applied.ok()) << applied.status().to_string();
  EXPECT_EQ(status_of("A12345", "2"), "success");
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'A12345' AND error LIKE "
                  "'%operator said it was made%'"),
            1);
  EXPECT_EQ(count("SELECT count(*) FROM legacy_items WHERE resolution = 'made' AND resolved_at "
                  "IS NOT NULL"),
            1);

  Scheduler s(*db_);
  ASSERT_TRUE(s.reap(soon()).ok());  // B1's wait row: its (legacy) run is not alive
  EXPECT_EQ(run_batch(*db_), 2);     // B1 and D1; never A12345 (made) nor C1 (success)
  ASSERT_TRUE(s.reap(soon()).ok());
  EXPECT_EQ(run_batch(*db_), 0);
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no IN ('A12345', 'C1')"), 0);
  auto inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  for (const auto& r : *inv) EXPECT_EQ(r.violations, 0) << r.id;
}

TEST_P(LegacyItemsTest, NotMadeMovesAsFailedAndIsProducedExactlyOnce) {
  import_sources(tdb_);
  ASSERT_TRUE(import_legacy_items(*db_, kInFlightCsv, soon()).ok());
  ASSERT_TRUE(
      resolve_legacy_items(*db_, "site_code,order_no,lot_no,outcome\nS1,A12345,1,made\n", soon())
          .ok());
  // A later file may change the word until apply.
  ASSERT_TRUE(resolve_legacy_items(
                  *db_, "site_code,order_no,lot_no,outcome\nS1,A12345,1,NOT_MADE\n", soon())
                  .ok());
  ASSERT_TRUE(apply_legacy_dedup(*db_, soon()).ok());
  EXPECT_EQ(status_of("A12345", "2"), "failed");
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'A12345' AND error LIKE "
                  "'%operator said it was not made%'"),
            1);
  Scheduler s(*db_);
  ASSERT_TRUE(s.reap(soon()).ok());
  EXPECT_EQ(run_batch(*db_), 3);  // A12345, B1, D1
  ASSERT_TRUE(s.reap(soon()).ok());
  EXPECT_EQ(run_batch(*db_), 0);
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no = 'A12345'"), 1);
  auto inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  for (const auto& r : *inv) EXPECT_EQ(r.violations, 0) << r.id;
}

TEST_P(LegacyItemsTest, BadResolveFileWritesNothing) {
  import_sources(tdb_);
  ASSERT_TRUE(import_legacy_items(*db_, kInFlightCsv, soon()).ok());
  auto none = [&] {
    return count("SELECT count(*) FROM legacy_items WHERE resolution IS NOT NULL");
  };
  auto bad = resolve_legacy_items(*db_,
                                  "site_code,order_no,lot_no,outcome\n"
                                  "S1,A12345,1,made\n"      // line 2: fine
                                  "S1,B1,1,maybe\n"         // line 3: bad outcome
                                  "S1,A12345,1,not_made\n"  // line 4: key twice
                                  "S1,B1\n"                 // line 5: fields
                                  "S 1,B1,1,made\n",        // line 6: bad key
                                  soon());
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.status().fields().size(), 4u);
  EXPECT_EQ(bad.status().fields()[0].field, "line 3");
  EXPECT_EQ(bad.status().fields()[1].field, "line 4");
  EXPECT_NE(bad.status().fields()[1].message.find("line 2"), std::string::npos);
  EXPECT_EQ(bad.status().fields()[2].field, "line 5");
  EXPECT_EQ(bad.status().fields()[3].field, "line 6");
  EXPECT_EQ(none(), 0);

  // Keys with nothing in flight: unknown, or only done rows (C1 succeeded).
  auto unknown = resolve_legacy_items(*db_,
                                      "site_code,order_no,lot_no,outcome\n"
                                      "S1,A12345,1,made\n"
                                      "S1,Z9,1,made\n"
                                      "S1,C1,1,not_made\n",
                                      soon());
  ASSERT_FALSE(unknown.ok());
  ASSERT_EQ(unknown.status().fields().size(), 2u);
  EXPECT_EQ(unknown.status().fields()[0].field, "line 3");
  EXPECT_EQ(unknown.status().fields()[1].field, "line 4");
  EXPECT_EQ(none(), 0);
  EXPECT_FALSE(resolve_legacy_items(*db_, "site_code,order_no,outcome\n", soon()).ok());
  EXPECT_FALSE(resolve_legacy_items(*db_, "site_code,order_no,lot_no,outcome\n", soon()).ok());
  EXPECT_EQ(none(), 0);
  EXPECT_FALSE(apply_legacy_dedup(*db_, soon()).ok());  // still unresolved
}

// A database migrated before the fix: a legacy `processing` item already sits in
// schedule_items. The reaper leaves it alone; `resolve` settles it.
TEST_P(LegacyItemsTest, MovedInFlightItemIsSettledByResolve) {
  import_sources(tdb_);
  tdb_.sql(
      "INSERT INTO schedule_runs (kind, status, owner) VALUES ('legacy', 'done', "
      "'legacy-import')");
  for (const char* order : {"A12345", "B1"}) {
    tdb_.sql(
        std::string("INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, "
                    "lease_until, error) VALUES (1, 'S1', '") +
        order + "', '1', 'processing', " +
        (GetParam() == Engine::sqlite ? "'2024-03-01T08:00:00.000Z'" : "'2024-03-01T08:00:00Z'") +
        ", 'legacy line 2')");
  }
  tdb_.sql(
      "INSERT INTO legacy_items (line_no, site_code, order_no, lot_no, status, created_at, "
      "moved_at, item_id) VALUES (2, 'S1', 'A12345', '1', 'processing', "
      "'2024-03-01T08:00:00Z', '2024-03-02T08:00:00Z', 1)");
  Scheduler s(*db_);
  ASSERT_TRUE(s.reap(soon()).ok());
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'processing'"), 2);
  auto r = resolve_legacy_items(*db_,
                                "site_code,order_no,lot_no,outcome\n"
                                "S1,A12345,1,made\n"
                                "S1,B1,1,not_made\n",
                                soon());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->settled, 2);
  EXPECT_EQ(r->staged, 0);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'A12345' AND status = "
                  "'success' AND lease_until IS NULL AND error LIKE 'legacy line 2; %made'"),
            1);
  EXPECT_EQ(count("SELECT count(*) FROM legacy_items WHERE item_id = 1 AND resolution = 'made'"),
            1);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'B1' AND status = "
                  "'failed'"),
            1);
  // Settled once: a second word on the same key finds nothing in flight.
  EXPECT_FALSE(
      resolve_legacy_items(*db_, "site_code,order_no,lot_no,outcome\nS1,B1,1,made\n", soon()).ok());
  EXPECT_EQ(run_batch(*db_), 3);  // B1 (not made), C1, D1
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no = 'A12345'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no = 'B1'"), 1);
  auto inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  for (const auto& i : *inv) EXPECT_EQ(i.violations, 0) << i.id;
}

INSTANTIATE_TEST_SUITE_P(Engines, LegacyItemsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
