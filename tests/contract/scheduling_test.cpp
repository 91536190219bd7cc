// Production scheduling on every engine: the seed-000 failures (orphaned `wait` items, a
// worker that lost its claim; batch and manual picking the same order and the stale worker's
// race are in scheduling_race_test.cpp).
#include <gtest/gtest.h>

#include <barrier>
#include <regex>
#include <set>
#include <thread>

#include "common/test_db.hpp"
#include "contract/scheduling_fixture.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder::testing {
namespace {

// A site whose processing fails for chosen orders.
class FailingStep final : public ProductionStep {
 public:
  explicit FailingStep(std::set<std::string> failing) : failing_(std::move(failing)) {}
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    if (failing_.contains(claim.key.order_no)) return Status(Code::internal, "machine jammed");
    return standard_production_step()->produce(claim, issuer);
  }

 private:
  std::set<std::string> failing_;
};

// Issue 8: source orders refused 10,001 orders but a run took them. One limit, both routes.
TEST_P(SchedulingTest, SourceOrdersAndRunsTakeAtMostTenThousandOrders) {
  constexpr int kMax = 10000;  // API.md
  static_assert(kMaxOrdersPerRequest == static_cast<size_t>(kMax));
  Scheduler s(*db_, opts());
  auto max = make_orders("S1", "O", kMax);
  ASSERT_TRUE(s.import_source_orders(max, soon(60)).ok());
  auto over = make_orders("S2", "O", kMax + 1);
  auto refused = s.import_source_orders(over, soon(60));
  EXPECT_EQ(refused.status().code(), Code::invalid_request);
  ASSERT_FALSE(refused.status().fields().empty());
  EXPECT_EQ(refused.status().fields()[0].field, "orders");
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), kMax);

  // Runs over orders that do not exist: quick to create, every one skipped as unknown.
  std::vector<OrderKey> keys;
  for (const auto& o : make_orders("S3", "O", kMax + 1)) keys.push_back(o.key);
  auto too_many = s.create_run(RunKind::manual, keys, soon(60));
  EXPECT_EQ(too_many.status().code(), Code::invalid_request);
  ASSERT_FALSE(too_many.status().fields().empty());
  EXPECT_EQ(too_many.status().fields()[0].field, "orders");
  EXPECT_EQ(count("SELECT count(*) FROM schedule_runs"), 0);
  keys.pop_back();
  auto run = s.create_run(RunKind::manual, keys, soon(60));
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  EXPECT_EQ(run->skipped.size(), static_cast<size_t>(kMax));
}

TEST_P(SchedulingTest, SkippedOrdersSayWhy) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "O", 3), soon()).ok());
  auto first = s.create_run(RunKind::manual, std::vector<OrderKey>{{"S1", "O0", "1"}}, soon());
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_TRUE(s.process_run(first->run.run_id).ok());
  auto pending = s.create_run(RunKind::manual, std::vector<OrderKey>{{"S1", "O1", "1"}}, soon());
  ASSERT_TRUE(pending.ok());  // left in wait: O1 is in progress for the next run
  auto second = s.create_run(
      RunKind::manual,
      std::vector<OrderKey>{
          {"S1", "O0", "1"}, {"S1", "O1", "1"}, {"S1", "NOPE", "1"}, {"S1", "O2", "1"}},
      soon());
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  std::map<std::string, std::string> reasons;
  for (const auto& sk : second->skipped) reasons[sk.key.order_no] = sk.reason;
  EXPECT_EQ(reasons["O0"], "already_scheduled");
  EXPECT_EQ(reasons["O1"], "in_progress");
  EXPECT_EQ(reasons["NOPE"], "unknown_order");
  EXPECT_FALSE(reasons.contains("O2"));
  EXPECT_EQ(second->run.counts.wait, 1);
  EXPECT_EQ(second->run.status, RunStatus::running);
}

TEST_P(SchedulingTest, ExpiredLeaseIsRetriedAndTheStaleWorkerCannotCommit) {
  SchedulerOptions o = opts();
  o.lease = std::chrono::milliseconds(100);
  Scheduler s(*db_, o);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "L", 1), soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  // A worker claims the item and "dies" (never completes).
  auto stale = s.claim(run->run.run_id, 10);
  ASSERT_TRUE(stale.ok());
  ASSERT_EQ(stale->size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(violations("I8"), 1);  // expired lease, reaper not run yet
  auto reaped = s.reap(soon());
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(reaped->released_processing, 1);
  EXPECT_EQ(violations("I8"), 0);
  // The order is a candidate again: a new run makes its production order.
  ASSERT_TRUE(s.fail_run(run->run.run_id, "test ends the first run").ok());
  Scheduler fresh(*db_);
  auto rerun = fresh.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(rerun.ok());
  EXPECT_EQ(rerun->run.counts.wait, 1);
  ASSERT_TRUE(fresh.process_run(rerun->run.run_id).ok());
  // The stale worker resumes: fenced out, nothing committed, nothing marked.
  auto late = s.complete(*stale);
  ASSERT_TRUE(late.ok()) << late.status().to_string();
  EXPECT_EQ(*late, 0);
  EXPECT_EQ(count("SELECT count(*) FROM production_orders"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'success'"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'failed'"), 1);
  expect_invariants_hold();
}

TEST_P(SchedulingTest, RunErrorCascadesAndReaperAbortsOnlyOrphans) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "C", 6), soon()).ok());
  auto live = s.create_run(RunKind::manual,
                           std::vector<OrderKey>{{"S1", "C0", "1"}, {"S1", "C1", "1"}}, soon());
  auto doomed = s.create_run(RunKind::manual,
                             std::vector<OrderKey>{{"S1", "C2", "1"}, {"S1", "C3", "1"}}, soon());
  auto orphaned = s.create_run(RunKind::manual,
                               std::vector<OrderKey>{{"S1", "C4", "1"}, {"S1", "C5", "1"}}, soon());
  ASSERT_TRUE(live.ok() && doomed.ok() && orphaned.ok());
  // One of the doomed run's items is being processed when the run fails.
  auto claimed = s.claim(doomed->run.run_id, 1);
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  ASSERT_TRUE(s.fail_run(doomed->run.run_id, "operator stopped it").ok());
  auto d = s.get_run(doomed->run.run_id, soon());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->status, RunStatus::error);
  EXPECT_EQ(d->counts.aborted, 1);
  EXPECT_EQ(d->counts.failed, 1);
  EXPECT_EQ(d->counts.wait + d->counts.processing, 0);
  // A run that ended without settling its items (as in the seed's legacy data).
  tdb_.sql("UPDATE schedule_runs SET status = 'done' WHERE run_id = " +
           std::to_string(orphaned->run.run_id));
  EXPECT_EQ(violations("I2"), 2);
  auto reaped = s.reap(soon());
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(reaped->aborted_waiting, 2);
  EXPECT_EQ(reaped->dead_runs, 0);
  auto l = s.get_run(live->run.run_id, soon());
  EXPECT_EQ(l->counts.wait, 2) << "the reaper must not touch a live run's items";
  expect_invariants_hold();
  // The aborted orders are candidates again; the live run's are not.
  Scheduler next(*db_);
  auto rerun = next.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(rerun.ok());
  EXPECT_EQ(rerun->run.counts.wait, 4);  // C2..C5
}

TEST_P(SchedulingTest, DeadRunIsSetToErrorByTheReaper) {
  SchedulerOptions o = opts();
  o.run_timeout = std::chrono::milliseconds(200);
  Scheduler crashed(*db_, o);
  ASSERT_TRUE(crashed.import_source_orders(make_orders("S1", "D", 5), soon()).ok());
  auto run = crashed.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  auto claims = crashed.claim(run->run.run_id, 2);  // then the process "crashes"
  ASSERT_TRUE(claims.ok());
  Scheduler reaper(*db_, o);
  auto early = reaper.reap(soon());
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->dead_runs, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto reaped = reaper.reap(soon());
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(reaped->dead_runs, 1);
  auto r = reaper.get_run(run->run.run_id, soon());
  EXPECT_EQ(r->status, RunStatus::error);
  EXPECT_EQ(r->counts.aborted, 3);
  EXPECT_EQ(r->counts.failed, 2);
  expect_invariants_hold();
  auto rerun = reaper.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(rerun.ok());
  ASSERT_TRUE(reaper.process_run(rerun->run.run_id).ok());
  EXPECT_EQ(count("SELECT count(*) FROM production_orders"), 5);
  expect_invariants_hold();
}

TEST_P(SchedulingTest, FailedIsRescheduledSuccessNeverAndMaxAttemptsIsRespected) {
  SchedulerOptions o = opts();
  o.max_attempts = 3;
  o.site_steps["S1"] = std::make_shared<FailingStep>(std::set<std::string>{"F0"});
  Scheduler s(*db_, o);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "F", 2), soon()).ok());
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto run = s.create_run(RunKind::batch, std::nullopt, soon());
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->run.counts.wait, attempt == 1 ? 2 : 1) << "attempt " << attempt;
    auto done = s.process_run(run->run.run_id);
    ASSERT_TRUE(done.ok()) << done.status().to_string();
    EXPECT_EQ(done->status, RunStatus::done);
  }
  EXPECT_EQ(
      count("SELECT count(*) FROM schedule_items WHERE order_no = 'F0' AND status = 'failed'"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE order_no = 'F1'"), 1);
  auto error = tdb_.sql("SELECT error FROM schedule_items WHERE order_no = 'F0' LIMIT 1");
  EXPECT_NE(error.at(0).text(0).find("machine jammed"), std::string::npos);
  // Max attempts reached: no longer picked, listed for an operator, skipped with a reason.
  auto fourth = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(fourth->run.counts.wait, 0);
  auto stuck = s.stuck_orders(soon());
  ASSERT_TRUE(stuck.ok());
  ASSERT_EQ(stuck->size(), 1u);
  EXPECT_EQ((*stuck)[0].order_no, "F0");
  auto named = s.create_run(RunKind::manual, std::vector<OrderKey>{{"S1", "F0", "1"}}, soon());
  ASSERT_TRUE(named.ok());
  ASSERT_EQ(named->skipped.size(), 1u);
  EXPECT_EQ(named->skipped[0].reason, "max_attempts_reached");
  expect_invariants_hold();
}

TEST_P(SchedulingTest, AbortedItemsDoNotCountAsAttempts) {
  SchedulerOptions o = opts();
  o.max_attempts = 1;
  Scheduler s(*db_, o);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "A", 1), soon()).ok());
  for (int i = 0; i < 3; ++i) {
    auto run = s.create_run(RunKind::batch, std::nullopt, soon());
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->run.counts.wait, 1);
    ASSERT_TRUE(s.fail_run(run->run.run_id, "aborted on purpose").ok());
  }
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'aborted'"), 3);
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->run.counts.wait, 1);
}

TEST_P(SchedulingTest, SourceOrdersAreIdempotentAndConflictsWriteNothing) {
  Scheduler s(*db_);
  auto first = s.import_source_orders(make_orders("S1", "Q", 3), soon());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->created, 3);
  auto again = s.import_source_orders(make_orders("S1", "Q", 4), soon());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->created, 1);
  EXPECT_EQ(again->existing, 3);
  std::vector<SourceOrder> conflicting = {{{"S1", "NEW", "1"}, 5}, {{"S1", "Q0", "1"}, 999}};
  auto conflict = s.import_source_orders(conflicting, soon());
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), Code::source_order_conflict);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 4);  // NEW was not written
  std::vector<SourceOrder> bad = {{{"", "x", "1"}, 1}, {{"S 1", "x", "1"}, 0}};
  auto invalid = s.import_source_orders(bad, soon());
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), Code::invalid_request);
  ASSERT_GE(invalid.status().fields().size(), 3u);
  EXPECT_EQ(invalid.status().fields()[0].field, "orders[0].site_code");
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 4);
}

TEST_P(SchedulingTest, LiveIndexPredicateMatchesTheStatusEnum) {
  // Read the index definition back from the engine and check its deny-list against C++.
  const std::string def =
      GetParam() == Engine::sqlite
          ? tdb_.sql("SELECT sql FROM sqlite_master WHERE name = 'schedule_items_live'")
                .at(0)
                .text(0)
          : tdb_.sql(
                    "SELECT pg_get_indexdef(c.oid) FROM pg_class c WHERE c.relname = "
                    "'schedule_items_live'")
                .at(0)
                .text(0);
  ASSERT_NE(def.find("UNIQUE"), std::string::npos) << def;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(def, m, std::regex(R"(NOT IN\s*\(([^)]*)\))", std::regex::icase)) ||
      std::regex_search(def, m, std::regex(R"(<> ALL \(\(?ARRAY\[([^\]]*)\])", std::regex::icase)))
      << "the live-item predicate must be a deny-list (NOT IN): " << def;
  std::set<std::string> excluded;
  const std::string list = m[1];
  std::regex quoted("'([a-z_]+)'");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted);
       it != std::sregex_iterator(); ++it)
    excluded.insert((*it)[1]);
  for (ItemStatus st : kAllItemStatuses) {
    EXPECT_EQ(excluded.contains(std::string(to_string(st))), is_reschedulable(st))
        << to_string(st) << " in index " << def;
  }
  EXPECT_EQ(excluded.size(), 2u) << def;
  ASSERT_NE(def.find("site_code"), std::string::npos);
  EXPECT_EQ(def.find("run_id"), std::string::npos) << "uniqueness is on the business key only";
}

TEST_P(SchedulingTest, InvariantsDetectPlantedViolations) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "V", 2), soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  expect_invariants_hold();
  // A success item whose production order vanished (I3).
  tdb_.sql(
      "UPDATE schedule_items SET status = 'success' WHERE item_id = (SELECT min(item_id) FROM "
      "schedule_items)");
  tdb_.sql("DELETE FROM production_orders WHERE order_no = 'V0'");
  EXPECT_EQ(violations("I3"), 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, SchedulingTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
