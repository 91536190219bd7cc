// Per-item and per-order timelines (schedule_item_events, migration 19) on every engine: each
// change of an item's status writes its event with the change (a full life, a failed attempt
// and its retry, the reaper's release, a cancel's abort, a stopped run), the order's timeline
// puts its placement, receipts, source orders and items' events in time order, and invariant
// I17 notices a change whose event is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "common/test_db.hpp"
#include "contract/scheduling_fixture.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/listings.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

using TimelineTest = SchedulingTest;

// A step that fails ("machine jammed") every time for the first item it sees, then produces
// the others: a batch that failed is settled item by item, which calls the step again.
class FlakyStep final : public ProductionStep {
 public:
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    std::int64_t none = 0;
    first_.compare_exchange_strong(none, claim.item_id);
    if (first_.load() == claim.item_id) return Status(Code::internal, "machine jammed");
    return standard_production_step()->produce(claim, issuer);
  }

 private:
  std::atomic<std::int64_t> first_{0};
};

std::vector<std::string> kinds(const std::vector<ItemEvent>& events) {
  std::vector<std::string> out;
  for (const ItemEvent& e : events) out.push_back(e.kind);
  return out;
}

std::vector<std::string> kinds(const OrderTimeline& t) {
  std::vector<std::string> out;
  for (const OrderTimelineEntry& e : t.entries) out.push_back(e.kind);
  return out;
}

using Kinds = std::vector<std::string>;

TEST_P(TimelineTest, AFullLifeIsCreatedClaimedProduced) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "T", 1), soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  const std::int64_t item = count("SELECT item_id FROM schedule_items");
  auto t = item_timeline(*db_, item, soon());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->item.status, ItemStatus::success);
  EXPECT_FALSE(t->truncated);
  ASSERT_EQ(kinds(t->events), (Kinds{"created", "claimed", "produced"}));
  const ItemEvent& created = t->events[0];
  EXPECT_EQ(created.status, "wait");
  EXPECT_EQ(created.attempt, 0);
  EXPECT_EQ(created.run_id, run->run.run_id);
  const ItemEvent& claimed = t->events[1];
  EXPECT_EQ(claimed.status, "processing");
  EXPECT_EQ(claimed.attempt, 1);
  EXPECT_EQ(claimed.owner, t->item.owner) << "the claim's fencing owner";
  EXPECT_FALSE(claimed.owner.empty());
  EXPECT_FALSE(claimed.lease_until.empty());
  const ItemEvent& produced = t->events[2];
  EXPECT_EQ(produced.status, "success");
  EXPECT_EQ(produced.attempt, 1);
  EXPECT_EQ(produced.document_number,
            tdb_.sql("SELECT document_number FROM production_orders").at(0).text(0));
  EXPECT_FALSE(produced.document_number.empty());
  EXPECT_LE(created.at, claimed.at);
  EXPECT_LE(claimed.at, produced.at);
  expect_invariants_hold();
}

TEST_P(TimelineTest, AFailedAttemptAndItsRetryAreTwoItemsEachClaimed) {
  SchedulerOptions o = opts();
  o.max_attempts = 3;
  o.site_steps["S1"] = std::make_shared<FlakyStep>();
  Scheduler s(*db_, o);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "R", 1), soon()).ok());
  for (int i = 0; i < 2; ++i) {
    auto run = s.create_run(RunKind::batch, std::nullopt, soon());
    ASSERT_TRUE(run.ok());
    ASSERT_EQ(run->run.counts.wait, 1);
    ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  }
  auto rows = tdb_.sql("SELECT item_id FROM schedule_items ORDER BY item_id");
  ASSERT_EQ(rows.size(), 2u);
  auto first = item_timeline(*db_, rows.at(0).i64(0), soon());
  auto second = item_timeline(*db_, rows.at(1).i64(0), soon());
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(kinds(first->events), (Kinds{"created", "claimed", "failed"}));
  EXPECT_NE(first->events[2].detail.find("machine jammed"), std::string::npos);
  EXPECT_EQ(first->events[2].status, "failed");
  EXPECT_EQ(first->events[2].attempt, 1);
  ASSERT_EQ(kinds(second->events), (Kinds{"created", "claimed", "produced"}));
  // Both claims are in the key's history, each with its own fencing token.
  auto claims = tdb_.sql(
      "SELECT e.attempt, e.owner FROM schedule_item_events e JOIN schedule_items i ON i.item_id = "
      "e.item_id WHERE i.order_no = 'R0' AND e.kind = 'claimed' ORDER BY e.event_id");
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims.at(0).i64(0), 1);
  EXPECT_EQ(claims.at(1).i64(0), 1);
  expect_invariants_hold();
}

TEST_P(TimelineTest, TheReaperReleasesAnExpiredLeaseAndARunStopAborts) {
  SchedulerOptions o = opts();
  o.lease = std::chrono::milliseconds(100);
  Scheduler s(*db_, o);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "E", 2), soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  auto claimed = s.claim(run->run.run_id, 1);
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  auto reaped = s.reap(soon());
  ASSERT_TRUE(reaped.ok());
  ASSERT_EQ(reaped->released_processing, 1);
  auto t = item_timeline(*db_, (*claimed)[0].item_id, soon());
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(kinds(t->events), (Kinds{"created", "claimed", "released"}));
  EXPECT_EQ(t->events[2].status, "failed");
  EXPECT_EQ(t->events[2].detail, "lease expired");
  EXPECT_EQ(t->events[2].attempt, 1);
  // The other item still waits; stopping the run aborts it.
  ASSERT_TRUE(s.fail_run(run->run.run_id, "operator stopped it").ok());
  auto other = tdb_.sql("SELECT item_id FROM schedule_items WHERE order_no = 'E1'");
  auto w = item_timeline(*db_, other.at(0).i64(0), soon());
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(kinds(w->events), (Kinds{"created", "aborted"}));
  EXPECT_EQ(w->events[1].detail, "operator stopped it");
  expect_invariants_hold();
}

TEST_P(TimelineTest, UnknownItemsAndOrdersAreNotFound) {
  auto t = item_timeline(*db_, 424242, soon());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::not_found);
  auto o = order_timeline(*db_, 424242, std::nullopt, soon());
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), Code::not_found);
}

TEST_P(TimelineTest, AnOrdersTimelineRunsFromPlacedToProducedInTimeOrder) {
  Intake intake(*db_);
  Stock stock(*db_);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 10, soon()).ok());
  ASSERT_TRUE(stock.put_sku(1, 202, 100, 10, soon()).ok());
  auto placed = intake.place({7, 1, {{101, 2}, {202, 1}}, "k-1"}, soon());
  ASSERT_TRUE(placed.ok()) << placed.status().to_string();
  const std::int64_t order_id = placed->order.order_id;
  Scheduler s(*db_);
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());

  auto t = order_timeline(*db_, order_id, std::nullopt, soon());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->order_no, placed->order.order_no);
  EXPECT_EQ(t->status, "placed");
  EXPECT_FALSE(t->truncated);
  const Kinds k = kinds(*t);
  ASSERT_EQ(k.size(), 1u + 1u + 2u + 6u) << ::testing::PrintToString(k);
  // The receipt is written first, in the placement's transaction: on SQLite its time may be a
  // millisecond before the order's.
  EXPECT_EQ((std::set<std::string>{k[0], k[1]}), (std::set<std::string>{"placed", "receipt"}));
  EXPECT_EQ(std::count(k.begin(), k.end(), "placed"), 1);
  EXPECT_EQ(std::count(k.begin(), k.end(), "receipt"), 1);
  EXPECT_EQ(std::count(k.begin(), k.end(), "source_order"), 2);
  EXPECT_EQ(std::count(k.begin(), k.end(), "created"), 2);
  EXPECT_EQ(std::count(k.begin(), k.end(), "claimed"), 2);
  EXPECT_EQ(std::count(k.begin(), k.end(), "produced"), 2);
  std::set<std::string> lots;
  for (size_t i = 0; i < t->entries.size(); ++i) {
    const OrderTimelineEntry& e = t->entries[i];
    if (i > 0) {
      EXPECT_LE(t->entries[i - 1].at, e.at) << "entry " << i;
    }
    if (e.kind == "receipt") {
      EXPECT_EQ(e.idempotency_key, "k-1");
    }
    if (e.kind == "produced") {
      ASSERT_TRUE(e.event.has_value());
      EXPECT_FALSE(e.event->document_number.empty());
      lots.insert(e.lot_no);
    }
  }
  EXPECT_EQ(lots, (std::set<std::string>{"1", "2"}));
  // A customer sees its own order's timeline; another customer's is not found.
  EXPECT_TRUE(order_timeline(*db_, order_id, 7, soon()).ok());
  auto other = order_timeline(*db_, order_id, 8, soon());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::not_found);
  expect_invariants_hold();
}

TEST_P(TimelineTest, ACancelAbortsTheItemsAndEndsTheTimeline) {
  Intake intake(*db_);
  Stock stock(*db_);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 10, soon()).ok());
  auto placed = intake.place({7, 1, {{101, 2}}, "k-c"}, soon());
  ASSERT_TRUE(placed.ok());
  Scheduler s(*db_);
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  auto cancelled = intake.cancel(placed->order.order_id, soon());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().to_string();
  auto t = order_timeline(*db_, placed->order.order_id, std::nullopt, soon());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status, "cancelled");
  Kinds k = kinds(*t);
  ASSERT_EQ(k.size(), 6u) << ::testing::PrintToString(k);
  // Placement, receipt and source order are one transaction (see above).
  std::sort(k.begin(), k.begin() + 3);
  EXPECT_EQ(k, (Kinds{"placed", "receipt", "source_order", "created", "aborted", "cancelled"}))
      << ::testing::PrintToString(kinds(*t));
  EXPECT_EQ(t->entries[4].event->detail, "the order was cancelled");
  EXPECT_EQ(t->entries[4].event->status, "aborted");
  expect_invariants_hold();
}

// Items from before migration 19 have no history: the migration gives each one `imported`
// event with its state then, so that I17 holds for them too.
TEST_P(TimelineTest, ItemsFromBeforeTheEventsGetAnImportedEvent) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "M", 2), soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  auto claimed = s.claim(run->run.run_id, 1);
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  ASSERT_TRUE(store::migrate_down(*db_, 12).ok());
  auto v = store::migrate(*db_);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  auto rows = tdb_.sql(
      "SELECT e.kind, e.status, e.attempt, i.status FROM schedule_item_events e JOIN "
      "schedule_items i ON i.item_id = e.item_id ORDER BY e.item_id");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.text(0), "imported");
    EXPECT_EQ(r.text(1), r.text(3));
  }
  EXPECT_EQ(rows.at(0).text(1), "processing");
  EXPECT_EQ(rows.at(0).i64(2), 1);
  EXPECT_EQ(violations("I17"), 0);
  // New changes are recorded again after the migration.
  ASSERT_TRUE(s.complete(*claimed).ok());
  auto t = item_timeline(*db_, (*claimed)[0].item_id, soon());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(kinds(t->events), (Kinds{"imported", "produced"}));
  expect_invariants_hold();
}

// I17 (docs/INVARIANTS.md): a status change whose event is missing leaves the item's last
// event behind its state. Planted as the bug would leave it: the produced event gone.
TEST_P(TimelineTest, InvariantI17FindsAChangeWithoutItsEvent) {
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "P", 2), soon()).ok());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  EXPECT_EQ(violations("I17"), 0);
  tdb_.sql(
      "DELETE FROM schedule_item_events WHERE kind = 'produced' AND item_id = (SELECT min(item_id) "
      "FROM schedule_items)");
  EXPECT_EQ(violations("I17"), 1);
  auto inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  for (const auto& r : *inv) {
    if (r.id != "I17") continue;
    ASSERT_EQ(r.sample.size(), 1u);
    EXPECT_NE(r.sample[0].find("last event is claimed (processing, attempt 1)"), std::string::npos)
        << r.sample[0];
  }
}

// The event triggers' inserts are never JIT-compiled (PostgreSQL migration 20): PL/pgSQL keeps
// their plan for the connection, and a plan made for a large change once made every later
// small claim compile, about 200 ms each. Here the session asks for JIT on everything
// (jit_above_cost = 0) and auto_explain sends every plan, nested ones too, back as a notice:
// a statement outside the triggers shows "JIT:", the triggers' inserts must not.
TEST_P(TimelineTest, EventTriggersNeverCompileWithJit) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "JIT is PostgreSQL's";
  Scheduler s(*db_);
  ASSERT_TRUE(s.import_source_orders(make_orders("S1", "J", 3), soon()).ok());
  ASSERT_TRUE(s.create_run(RunKind::batch, std::nullopt, soon()).ok());
  RawPg pg(tdb_.url());
  pg.exec("LOAD 'auto_explain'");
  pg.exec(
      "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; "
      "SET auto_explain.log_level = notice; SET client_min_messages = notice; SET jit = on; "
      "SET jit_above_cost = 0");
  const auto jitted = [](const std::vector<std::string>& plans, std::string_view text) {
    int n = 0, with_jit = 0;
    for (const std::string& p : plans) {
      if (p.find(text) == std::string::npos) continue;
      ++n;
      if (p.find("JIT:") != std::string::npos) ++with_jit;
    }
    return std::pair{n, with_jit};
  };
  const auto outside = jitted(pg.notices("SELECT count(*) FROM schedule_items"), "schedule_items");
  ASSERT_EQ(outside.first, 1);
  if (outside.second == 0) GTEST_SKIP() << "this PostgreSQL has no JIT provider (llvmjit)";

  const std::string kEvents = "INSERT INTO schedule_item_events";
  const auto updated =
      jitted(pg.notices("UPDATE schedule_items SET status = 'aborted', error = 'test' WHERE "
                        "item_id = (SELECT min(item_id) FROM schedule_items)"),
             kEvents);
  EXPECT_EQ(updated, std::pair(1, 0)) << "the update trigger's insert was JIT-compiled";
  const auto inserted =
      jitted(pg.notices("INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) "
                        "SELECT run_id, site_code, order_no, lot_no, 'wait' FROM schedule_items "
                        "WHERE status = 'aborted'"),
             kEvents);
  EXPECT_EQ(inserted, std::pair(1, 0)) << "the insert trigger's insert was JIT-compiled";
}

INSTANTIATE_TEST_SUITE_P(Engines, TimelineTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
