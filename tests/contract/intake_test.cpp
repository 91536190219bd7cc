// Order intake on every engine: the seed-004 acceptance list (second item out of stock,
// lock order, failure after the first deduction, lock timeout is not out-of-stock,
// replays) and seed 002's ids, as real races over several connections (the concurrency
// tests: intake_race_test.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <barrier>
#include <deque>
#include <latch>
#include <random>
#include <set>
#include <thread>

#include "common/test_db.hpp"
#include "contract/intake_fixture.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

TEST_P(IntakeTest, SecondItemOutOfStockChangesNothingAndReplaysEvenAfterRestock) {
  stock(101, 5);
  stock(202, 0);
  auto r = place("k1", {{101, 2}, {202, 1}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->out_of_stock);
  ASSERT_EQ(r->shortages.size(), 1u);
  EXPECT_EQ(r->shortages[0].sku_id, 202);
  EXPECT_EQ(r->shortages[0].requested, 1);
  EXPECT_EQ(r->shortages[0].available, 0);
  EXPECT_EQ(available(101), 5);
  EXPECT_EQ(available(202), 0);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE reserved <> 0"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts WHERE outcome = 'out_of_stock'"), 1);
  ASSERT_TRUE(stock_.adjust(1, 202, 3, "restock", soon()).ok());
  auto replay = place("k1", {{202, 1}, {101, 2}});  // display order does not matter
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->out_of_stock);
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->shortages[0].available, 0) << "the stored decision, not a new one";
  auto fresh = place("k2", {{101, 2}, {202, 1}});
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->out_of_stock);
  EXPECT_EQ(available(101), 3);
  EXPECT_EQ(available(202), 2);
  expect_invariants_hold();
}

TEST_P(IntakeTest, PlacedOrderHasSortedLinesPriceSnapshotsAndSourceOrders) {
  stock(202, 9, 250);
  stock(101, 9, 1200);
  auto r = place("k", {{202, 1}, {101, 2}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_FALSE(r->out_of_stock);
  const Order& o = r->order;
  EXPECT_EQ(o.status, "placed");
  ASSERT_EQ(o.lines.size(), 2u);
  EXPECT_EQ(o.lines[0].sku_id, 101);
  EXPECT_EQ(o.lines[0].line_no, 1);
  EXPECT_EQ(o.lines[0].unit_price_cents, 1200);
  EXPECT_EQ(o.total_cents, 2 * 1200 + 250);
  EXPECT_EQ(o.order_no, order_number(o.order_id));
  // The price snapshot stays when the price changes.
  ASSERT_TRUE(stock_.put_sku(1, 101, 9999, std::nullopt, soon()).ok());
  auto again = intake_.get_order(o.order_id, soon());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->lines[0].unit_price_cents, 1200);
  EXPECT_EQ(again->created_at, o.created_at);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders WHERE site_code = 'W1' AND order_no = '" +
                  o.order_no + "'"),
            2);
  auto sku = stock_.get_sku(1, 101, soon());
  EXPECT_EQ(sku->available, 7);
  EXPECT_EQ(sku->reserved, 2);
  expect_invariants_hold();
}

TEST_P(IntakeTest, DuplicateLinesAreMergedAndAChangedRequestIsAConflict) {
  stock(101, 2);
  auto merged = place("m", {{101, 1}, {101, 2}});  // checks 101 x 3 against 2
  ASSERT_TRUE(merged.ok());
  EXPECT_TRUE(merged->out_of_stock);
  EXPECT_EQ(merged->shortages[0].requested, 3);
  auto changed = place("m", {{101, 2}});
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), Code::idempotency_key_reused);
  // Keys are per customer.
  auto other = place("m", {{101, 2}}, 8);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->out_of_stock);
}

TEST_P(IntakeTest, UnknownSkuIsNotOutOfStockAndStoresNothing) {
  stock(101, 5);
  auto r = place("u", {{101, 1}, {999, 1}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::unknown_sku);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  EXPECT_EQ(available(101), 5);
  stock(999, 1);
  auto later = place("u", {{101, 1}, {999, 1}});
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->out_of_stock);
}

TEST_P(IntakeTest, BadRequestsAreRejectedWithFieldErrorsAndWriteNothing) {
  stock(101, 5);
  EXPECT_EQ(place("", {{101, 1}}).status().code(), Code::missing_idempotency_key);
  auto bad = intake_.place({0, 0, {{0, 0}}, "k k"}, soon());
  ASSERT_FALSE(bad.ok());
  std::set<std::string> fields;
  for (const auto& f : bad.status().fields()) fields.insert(f.field);
  EXPECT_EQ(fields, (std::set<std::string>{"Idempotency-Key", "customer_id", "warehouse_id",
                                           "lines[0].sku_id", "lines[0].quantity"}));
  std::vector<CartLine> many;
  for (int i = 1; i <= 21; ++i) many.push_back({i, 1});
  EXPECT_EQ(place("many", many).status().code(), Code::invalid_request);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
}

TEST_P(IntakeTest, FailureAfterTheDeductionsLeavesEverythingAsBefore) {
  stock(101, 5);
  stock(202, 5);
  IntakeOptions options;
  options.fault_after_deduction = [] {
    return Status(Code::internal, "injected after the deductions");
  };
  Intake faulty(*db_, options);
  auto r = place("f", {{101, 2}, {202, 1}}, 7, &faulty);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::internal);
  // Through a new connection: nothing of it is there.
  EXPECT_EQ(available(101), 5);
  EXPECT_EQ(available(202), 5);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE reserved <> 0"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 0);
  auto retry = place("f", {{101, 2}, {202, 1}});
  ASSERT_TRUE(retry.ok());
  EXPECT_FALSE(retry->out_of_stock);
  expect_invariants_hold();
}

// A deduction that misses a locked row (planted: a trigger swallows the update of sku
// 202) must fail the placement inside its transaction. On PostgreSQL the statement goes
// out with COMMIT pipelined, so a check of the row count after it would come too late.
TEST_P(IntakeTest, ADeductionThatMissesFailsBeforeCommitAndStoresNothing) {
  stock(101, 5);
  stock(202, 5);
  if (GetParam() == Engine::sqlite) {
    tdb_.sql(
        "CREATE TRIGGER t_miss BEFORE UPDATE OF available ON stock WHEN NEW.sku_id = 202 AND "
        "NEW.available < OLD.available BEGIN SELECT RAISE(IGNORE); END");
  } else {
    tdb_.sql(
        "CREATE FUNCTION t_miss() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.sku_id = "
        "202 AND NEW.available < OLD.available THEN RETURN NULL; END IF; RETURN NEW; END $$");
    tdb_.sql("CREATE TRIGGER t_miss BEFORE UPDATE ON stock FOR EACH ROW EXECUTE FUNCTION t_miss()");
  }
  auto r = place("miss", {{101, 2}, {202, 1}});
  ASSERT_FALSE(r.ok()) << "a half-deducted order was answered as placed";
  EXPECT_EQ(r.status().code(), Code::internal) << r.status().to_string();
  EXPECT_NE(r.status().message().find("did not take its deduction"), std::string::npos)
      << r.status().to_string();
  EXPECT_EQ(available(101), 5);
  EXPECT_EQ(available(202), 5);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE reserved <> 0"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 0);
  expect_invariants_hold();
}

// The first placement made with options() is held after its deductions, before its commit,
// until release: another request arrives while it is still running.
struct HeldFirstPlacement {
  std::atomic<bool> first{true};
  std::latch entered{1}, release{1};
  IntakeOptions options(IntakeOptions o) {
    o.fault_after_deduction = [this] {
      if (first.exchange(false)) {
        entered.count_down();
        release.wait();
      }
      return Status::Ok();
    };
    return o;
  }
};

// The same key arrives while the first request is still running (held after its
// deductions): the second gives up with request_in_progress, never busy, and once the
// first has committed the key replays its answer.
TEST_P(IntakeTest, SameKeyWhileTheFirstIsStillRunningIsRequestInProgress) {
  stock(101, 5);
  HeldFirstPlacement held;
  Intake slow(*db_, held.options({}));
  Result<Placed> r1 = Status(Code::internal, "not run");
  std::thread holder([&] { r1 = place("same", {{101, 1}}, 7, &slow); });
  held.entered.wait();
  auto r2 =
      slow.place({7, 1, {{101, 1}}, "same"}, store::Clock::now() + std::chrono::milliseconds(500));
  held.release.count_down();
  holder.join();
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), Code::request_in_progress) << r2.status().to_string();
  ASSERT_TRUE(r1.ok()) << r1.status().to_string();
  auto r3 = place("same", {{101, 1}}, 7, &slow);
  ASSERT_TRUE(r3.ok());
  EXPECT_TRUE(r3->replayed);
  EXPECT_EQ(r3->order.order_id, r1->order.order_id);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 1);
  EXPECT_EQ(available(101), 4);
}

// Seed 002's backstop: an order id another process already used (two processes on one
// node id, a clock that lied — planted here) fires the unique keys of orders. The request
// is retried with a fresh id from another node, never a 500, and the alarm is counted.
TEST_P(IntakeTest, ATakenOrderIdIsRetriedWithAFreshIdAndCounted) {
  stock(101, 5);
  auto first = place("one", {{101, 1}});
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  std::atomic<bool> once{true};
  IntakeOptions options;
  options.fault_order_id = [&]() -> std::optional<std::int64_t> {
    if (once.exchange(false)) return first->order.order_id;
    return std::nullopt;
  };
  Intake twin(*db_, options);
  auto second = place("two", {{101, 1}}, 7, &twin);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_FALSE(second->out_of_stock);
  EXPECT_NE(second->order.order_id, first->order.order_id);
  EXPECT_NE(second->order.order_no, first->order.order_no);
  EXPECT_EQ(twin.id_collisions(), 1u);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 2);
  EXPECT_EQ(available(101), 3);
  auto replay = place("two", {{101, 1}}, 7, &twin);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->order.order_id, second->order.order_id);
  expect_invariants_hold();
}

TEST_P(IntakeTest, LockTimeoutIsNotOutOfStockAndTheSameKeySucceedsLater) {
  stock(101, 5);
  stock(202, 5);
  auto small = tdb_.open({.pool_size = 1, .lock_timeout = std::chrono::milliseconds(150)});
  Intake impatient(*small);
  {
    Holder h = hold_sku(202);
    auto r = impatient.place({7, 1, {{101, 2}, {202, 1}}, "t"}, soon(3));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::busy) << r.status().to_string();
    EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0) << "a timeout stored a decision";
    (*h.conn)->rollback();
  }
  EXPECT_EQ(available(101), 5);
  // The one pooled connection came back clean; the same key now places the order.
  auto later = impatient.place({7, 1, {{101, 2}, {202, 1}}, "t"}, soon());
  ASSERT_TRUE(later.ok()) << later.status().to_string();
  EXPECT_FALSE(later->out_of_stock);
  EXPECT_FALSE(later->replayed);
  expect_invariants_hold();
}

TEST_P(IntakeTest, LockOrderIsBySkuNotByDisplayOrder) {
  // A holds 101; B lists 202 before 101; B must wait on 101 without holding 202; when A
  // takes 4 of 101 and commits, B decides on what A left.
  stock(101, 5);
  stock(202, 5);
  Holder a = hold_sku(101);
  std::atomic<bool> done{false};
  Result<Placed> b = Status(Code::internal, "not run");
  std::thread tb([&] {
    b = place("b", {{202, 1}, {101, 2}});
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(done.load()) << "B did not wait for A";
  if (GetParam() == Engine::postgres) {
    // B has not touched 202: another client can lock it without waiting.
    RawPg probe(tdb_.url());
    probe.exec("BEGIN");
    probe.exec("SELECT * FROM stock WHERE sku_id = 202 FOR UPDATE NOWAIT");
    probe.exec("ROLLBACK");
  }
  static const store::Statement kTake{
      "t_take", "UPDATE stock SET available = available - 4 WHERE sku_id = 101"};
  ASSERT_TRUE((*a.conn)->query(kTake, {}).ok());
  ASSERT_TRUE((*a.conn)->commit().ok());
  tb.join();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_TRUE(b->out_of_stock);
  EXPECT_EQ(b->shortages[0].sku_id, 101);
  EXPECT_EQ(b->shortages[0].available, 1);
  EXPECT_EQ(available(202), 5);
}

TEST_P(IntakeTest, CancelReleasesExactlyOnceAndIsIdempotent) {
  stock(101, 5);
  stock(202, 5);
  auto r = place("c", {{101, 2}, {202, 1}});
  ASSERT_TRUE(r.ok());
  auto c1 = intake_.cancel(r->order.order_id, soon());
  ASSERT_TRUE(c1.ok()) << c1.status().to_string();
  EXPECT_EQ(c1->status, "cancelled");
  auto c2 = intake_.cancel(r->order.order_id, soon());
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->status, "cancelled");
  EXPECT_EQ(available(101), 5);
  EXPECT_EQ(available(202), 5);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'release'"), 2);
  EXPECT_EQ(intake_.cancel(424242, soon()).status().code(), Code::not_found);
  // The replay still answers as the order was first placed.
  auto replay = place("c", {{101, 2}, {202, 1}});
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->order.status, "placed");
  // Its lines are no longer scheduling candidates.
  Scheduler s(*db_);
  auto run = s.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->run.counts.wait, 0);
  expect_invariants_hold();
}

// Migration 21 folds the `reservations` table into the stock rows' `reserved` and the ledger.
// Both ways on a database with placed and cancelled orders: down rebuilds one reservation per
// line (active while placed), up counts the active ones again, and cancel goes on working.
TEST_P(IntakeTest, ReservationsSurviveMigration21BothWays) {
  stock(101, 9);
  stock(202, 9);
  auto kept = place("kept", {{101, 2}, {202, 1}});
  auto gone = place("gone", {{101, 3}});
  ASSERT_TRUE(kept.ok() && gone.ok());
  ASSERT_TRUE(intake_.cancel(gone->order.order_id, soon()).ok());
  const std::string reserved = "SELECT sku_id * 1000 + reserved FROM stock ORDER BY sku_id";
  auto before = tdb_.sql(reserved);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].i64(0), 101002);
  EXPECT_EQ(before[1].i64(0), 202001);

  ASSERT_TRUE(store::migrate_down(*db_, 20).ok());
  EXPECT_EQ(count("SELECT count(*) FROM reservations WHERE status = 'active'"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM reservations WHERE status = 'released' AND order_id = " +
                  std::to_string(gone->order.order_id) + " AND released_at IS NOT NULL"),
            1);
  EXPECT_EQ(count("SELECT coalesce(sum(quantity), 0) FROM reservations WHERE status = 'active' "
                  "AND sku_id = 101"),
            2);
  // Up counts what the old table holds active (changed here to tell it from the lines).
  tdb_.sql("UPDATE reservations SET quantity = 7 WHERE order_id = " +
           std::to_string(kept->order.order_id) + " AND line_no = 1");

  ASSERT_TRUE(store::migrate(*db_).ok());
  auto after = tdb_.sql(reserved);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].i64(0), 101007);
  EXPECT_EQ(after[1].i64(0), 202001);
  auto found = check_invariants(*db_, soon());
  ASSERT_TRUE(found.ok());
  for (const auto& inv : *found)
    EXPECT_EQ(inv.violations, inv.id == "I4" ? 2 : 0) << inv.id << ": reserved 7, lines 2";
  tdb_.sql("UPDATE stock SET reserved = 2 WHERE sku_id = 101");
  expect_invariants_hold();
  ASSERT_TRUE(intake_.cancel(kept->order.order_id, soon()).ok());
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE reserved <> 0"), 0);
  EXPECT_EQ(available(101), 9);
  expect_invariants_hold();
}

TEST_P(IntakeTest, StockAdjustmentsAreLedgeredAndNeverNegative) {
  auto created = stock_.put_sku(1, 5, 100, 3, soon());
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(created->created);
  auto again = stock_.put_sku(1, 5, 100, 3, soon());
  EXPECT_EQ(again.status().code(), Code::use_adjustment);
  auto price = stock_.put_sku(1, 5, 150, std::nullopt, soon());
  ASSERT_TRUE(price.ok());
  EXPECT_FALSE(price->created);
  EXPECT_EQ(price->sku.price_cents, 150);
  auto neg = stock_.adjust(1, 5, -4, "damaged", soon());
  EXPECT_EQ(neg.status().code(), Code::insufficient_stock);
  auto ok = stock_.adjust(1, 5, -2, "damaged", soon());
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->available, 1);
  EXPECT_EQ(stock_.adjust(1, 6, 1, "x", soon()).status().code(), Code::not_found);
  EXPECT_EQ(stock_.adjust(1, 5, 0, "x", soon()).status().code(), Code::invalid_request);
  EXPECT_EQ(stock_.adjust(1, 5, 1, "", soon()).status().code(), Code::invalid_request);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE sku_id = 5"), 2);
  expect_invariants_hold();
}

// Issue 8: prices up to 10^12 and quantities up to 10^6 over 20 lines do not fit in 64 bits.
// A total that would wrap is refused before anything is written, not stored negative.
TEST_P(IntakeTest, ATotalThatDoesNotFitIn64BitsIsRefusedAndWritesNothing) {
  constexpr std::int64_t kPrice = 1'000'000'000'000;
  constexpr std::int64_t kQuantity = 1'000'000;
  std::vector<CartLine> ten;
  for (std::int64_t sku = 1; sku <= 10; ++sku) {
    stock(sku, kQuantity, kPrice);
    ten.push_back({sku, kQuantity});
  }
  auto huge = place("huge", ten);
  ASSERT_FALSE(huge.ok()) << "total_cents " << huge->order.total_cents;
  EXPECT_EQ(huge.status().code(), Code::invalid_request);
  ASSERT_FALSE(huge.status().fields().empty());
  EXPECT_EQ(huge.status().fields()[0].field, "lines");
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE reserved <> 0"), 0);
  for (std::int64_t sku = 1; sku <= 10; ++sku) EXPECT_EQ(available(sku), kQuantity);
  // Nine such lines (9 * 10^18) still fit, exactly.
  ten.pop_back();
  auto nine = place("nine", ten);
  ASSERT_TRUE(nine.ok()) << nine.status().to_string();
  EXPECT_EQ(nine->order.total_cents, 9 * kPrice * kQuantity);
  expect_invariants_hold();
}

// Adjustments cannot push `available` past the bound PUT takes (10^12), so that repeated
// adjustments can never make it wrap either.
TEST_P(IntakeTest, AnAdjustmentCannotPushAvailablePastTheBound) {
  constexpr std::int64_t kMax = 1'000'000'000'000;
  stock(5, kMax);
  auto over = stock_.adjust(1, 5, 1, "found one", soon());
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::invalid_request);
  ASSERT_FALSE(over.status().fields().empty());
  EXPECT_EQ(over.status().fields()[0].field, "delta");
  EXPECT_EQ(available(5), kMax);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE sku_id = 5"), 1);
  ASSERT_TRUE(stock_.adjust(1, 5, -kMax, "all gone", soon()).ok());
  ASSERT_TRUE(stock_.adjust(1, 5, kMax, "all back", soon()).ok());
  EXPECT_EQ(available(5), kMax);
  expect_invariants_hold();
}

TEST_P(IntakeTest, TwoProcessesNeverShareANodeId) {
  Intake other(*db_);
  auto a = intake_.node_id();
  auto b = other.node_id();
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string() << b.status().to_string();
  EXPECT_NE(*a, *b);
  // Every node leased: the next process is refused rather than given a shared one.
  std::vector<std::unique_ptr<NodeLease>> leases;
  for (int i = 0; i < 254; ++i) {
    auto l = NodeLease::acquire(*db_, "filler", std::chrono::seconds(60));
    ASSERT_TRUE(l.ok()) << i << ": " << l.status().to_string();
    leases.push_back(std::move(*l));
  }
  std::set<int> nodes{*a, *b};
  for (auto& l : leases) nodes.insert(l->node());
  EXPECT_EQ(nodes.size(), 256u);
  auto none = NodeLease::acquire(*db_, "late", std::chrono::seconds(60));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::unavailable);
  // A released node is taken over; the new holder never issues a time before the old end.
  const int freed = leases.back()->node();
  leases.back()->release(*db_);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the released lease's end
  auto taken = NodeLease::acquire(*db_, "late", std::chrono::seconds(60));
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ((*taken)->node(), freed);
  EXPECT_GT((*taken)->not_before_ms(), 0);
}

TEST_P(IntakeTest, ExpiredLeaseIsNotUsedAndRenewalKeepsIt) {
  auto l = NodeLease::acquire(*db_, "short", std::chrono::milliseconds(400));
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE((*l)->valid());
  ASSERT_TRUE((*l)->renew(*db_).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  EXPECT_FALSE((*l)->valid()) << "a lease past its end must not issue ids";
  auto next = NodeLease::acquire(*db_, "next", std::chrono::seconds(60));
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE((*l)->renew(*db_).ok() && (*next)->node() == (*l)->node())
      << "two holders of one node";
}

// Replays from memory (IntakeOptions::replay_memory) answer exactly as the stored receipt
// does: compared field by field with the database's replay of the same key.
void expect_same_answer(const Placed& memory, const Placed& stored) {
  EXPECT_TRUE(memory.replayed);
  EXPECT_TRUE(stored.replayed);
  EXPECT_EQ(memory.out_of_stock, stored.out_of_stock);
  EXPECT_EQ(memory.order.order_id, stored.order.order_id);
  EXPECT_EQ(memory.order.order_no, stored.order.order_no);
  EXPECT_EQ(memory.order.status, stored.order.status);
  EXPECT_EQ(memory.order.customer_id, stored.order.customer_id);
  EXPECT_EQ(memory.order.warehouse_id, stored.order.warehouse_id);
  EXPECT_EQ(memory.order.total_cents, stored.order.total_cents);
  EXPECT_EQ(memory.order.created_at, stored.order.created_at);
  ASSERT_EQ(memory.order.lines.size(), stored.order.lines.size());
  for (std::size_t i = 0; i < memory.order.lines.size(); ++i) {
    EXPECT_EQ(memory.order.lines[i].line_no, stored.order.lines[i].line_no);
    EXPECT_EQ(memory.order.lines[i].sku_id, stored.order.lines[i].sku_id);
    EXPECT_EQ(memory.order.lines[i].quantity, stored.order.lines[i].quantity);
    EXPECT_EQ(memory.order.lines[i].unit_price_cents, stored.order.lines[i].unit_price_cents);
  }
  ASSERT_EQ(memory.shortages.size(), stored.shortages.size());
  for (std::size_t i = 0; i < memory.shortages.size(); ++i) {
    EXPECT_EQ(memory.shortages[i].sku_id, stored.shortages[i].sku_id);
    EXPECT_EQ(memory.shortages[i].requested, stored.shortages[i].requested);
    EXPECT_EQ(memory.shortages[i].available, stored.shortages[i].available);
  }
}

IntakeOptions remembering(std::chrono::milliseconds ttl = std::chrono::seconds(30)) {
  IntakeOptions options;
  options.replay_memory = ttl;
  return options;
}

TEST_P(IntakeTest, ReplaysFromMemoryAnswerAsTheStoredReceiptDoes) {
  stock(101, 5, 250);
  stock(202, 1, 999);
  Intake memory(*db_, remembering());
  auto placed = place("m1", {{202, 1}, {101, 2}}, 7, &memory);
  ASSERT_TRUE(placed.ok()) << placed.status().to_string();
  ASSERT_FALSE(placed->out_of_stock);
  auto short_of = place("m2", {{101, 1}, {202, 1}}, 7, &memory);  // 202 is gone
  ASSERT_TRUE(short_of.ok()) << short_of.status().to_string();
  ASSERT_TRUE(short_of->out_of_stock);
  // Restocked: a replay still says what was decided.
  ASSERT_TRUE(stock_.adjust(1, 202, 3, "restock", soon()).ok());
  const std::int64_t orders = count("SELECT count(*) FROM orders");
  for (const auto& [key, lines] : std::vector<std::pair<std::string, std::vector<CartLine>>>{
           {"m1", {{101, 2}, {202, 1}}},  // display order does not matter
           {"m2", {{202, 1}, {101, 1}}}}) {
    auto from_memory = place(key, lines, 7, &memory);
    auto from_receipt = place(key, lines);  // intake_ remembers nothing: reads the receipt
    ASSERT_TRUE(from_memory.ok()) << from_memory.status().to_string();
    ASSERT_TRUE(from_receipt.ok()) << from_receipt.status().to_string();
    SCOPED_TRACE(key);
    expect_same_answer(*from_memory, *from_receipt);
  }
  EXPECT_EQ(memory.replays_from_memory(), 2u);
  // Another cart under a remembered key is refused as the receipt would refuse it.
  auto reused = place("m1", {{101, 1}}, 7, &memory);
  ASSERT_FALSE(reused.ok());
  EXPECT_EQ(reused.status().code(), Code::idempotency_key_reused);
  EXPECT_EQ(memory.replays_from_memory(), 3u);
  // The key is the customer's: another customer's "m1" is a new order.
  auto other = place("m1", {{202, 1}, {101, 2}}, 8, &memory);
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  EXPECT_FALSE(other->replayed);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), orders + 1);
  EXPECT_EQ(memory.outcomes()[static_cast<std::size_t>(OrderOutcome::replayed)], 2u);
  expect_invariants_hold();
}

TEST_P(IntakeTest, ReplayMemoryKeepsNothingButDecisionsAndEndsWithItsTime) {
  stock(101, 5);
  // A placement that failed (here after its deductions) stored nothing: its key's next
  // request runs and decides.
  std::atomic<bool> fail{true};
  IntakeOptions failing = remembering();
  failing.fault_after_deduction = [&] {
    return fail.exchange(false) ? Status(Code::internal, "planted") : Status::Ok();
  };
  Intake memory(*db_, failing);
  auto failed = place("f", {{101, 1}}, 7, &memory);
  ASSERT_FALSE(failed.ok());
  auto decided = place("f", {{101, 1}}, 7, &memory);
  ASSERT_TRUE(decided.ok()) << decided.status().to_string();
  EXPECT_FALSE(decided->replayed);
  // A replay answered by the receipt is not remembered (the receipt may be older than the
  // memory's time): a second Intake replays from its receipt each time.
  Intake second(*db_, remembering());
  for (int i = 0; i < 2; ++i) {
    auto r = place("f", {{101, 1}}, 7, &second);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->replayed);
  }
  EXPECT_EQ(second.replays_from_memory(), 0u);
  // Past its time the memory reads the receipt again.
  Intake brief(*db_, remembering(std::chrono::milliseconds(30)));
  ASSERT_TRUE(place("b", {{101, 1}}, 7, &brief).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  auto late = place("b", {{101, 1}}, 7, &brief);
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(late->replayed);
  EXPECT_EQ(brief.replays_from_memory(), 0u);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 2);
  expect_invariants_hold();
}

// After a connection was found dead (the server restarted or failed over, and may have lost
// the last commits), what the process remembers is forgotten: replays read their receipts.
TEST_P(IntakeTest, ReplayMemoryIsForgottenOnceAConnectionIsFoundDead) {
  stock(101, 5);
  Intake memory(*db_, remembering());
  ASSERT_TRUE(place("d", {{101, 1}}, 7, &memory).ok());
  ASSERT_TRUE(place("d", {{101, 1}}, 7, &memory).ok());
  ASSERT_EQ(memory.replays_from_memory(), 1u);
  if (GetParam() == Engine::postgres) {
    // Every pooled connection of this test's database killed; the next transaction finds
    // its connection dead and runs again on a new one.
    tdb_.sql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
        "current_database() AND pid <> pg_backend_pid()");
    auto after = place("e", {{101, 1}}, 7, &memory);
    ASSERT_TRUE(after.ok()) << after.status().to_string();
    EXPECT_GT(db_->metrics().connections_dropped.load(), 0u);
  } else {
    db_->metrics().connections_dropped.fetch_add(1);  // SQLite has no server to lose
  }
  auto replay = place("d", {{101, 1}}, 7, &memory);
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(memory.replays_from_memory(), 1u) << "answered from a doubtful memory";
  expect_invariants_hold();
}

// With replay memory a request whose key is running in this process waits for that one's
// answer instead of the receipt row; at its deadline it is request_in_progress, as ever.
TEST_P(IntakeTest, SameKeyWhileTheFirstIsStillRunningWaitsForItsAnswerInMemory) {
  stock(101, 5);
  HeldFirstPlacement held;
  Intake slow(*db_, held.options(remembering()));
  Result<Placed> r1 = Status(Code::internal, "not run");
  std::thread holder([&] { r1 = place("same", {{101, 1}}, 7, &slow); });
  held.entered.wait();
  auto impatient =
      slow.place({7, 1, {{101, 1}}, "same"}, store::Clock::now() + std::chrono::milliseconds(300));
  ASSERT_FALSE(impatient.ok());
  EXPECT_EQ(impatient.status().code(), Code::request_in_progress) << impatient.status().to_string();
  // Waits (or, if the first is done by then, finds it in memory): the same answer either way.
  Result<Placed> r2 = Status(Code::internal, "not run");
  std::thread patient([&] { r2 = place("same", {{101, 1}}, 7, &slow); });
  held.release.count_down();
  holder.join();
  patient.join();
  ASSERT_TRUE(r1.ok()) << r1.status().to_string();
  ASSERT_TRUE(r2.ok()) << r2.status().to_string();
  EXPECT_TRUE(r2->replayed);
  EXPECT_EQ(r2->order.order_id, r1->order.order_id);
  EXPECT_EQ(slow.replays_from_memory(), 1u);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 1);
  EXPECT_EQ(available(101), 4);
}

INSTANTIATE_TEST_SUITE_P(Engines, IntakeTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

// PostgreSQL: a real deadlock against another client is retried as a whole transaction.
TEST(IntakeDeadlockTest, DeadlockIsRetriedAsAWholeTransaction) {
  const auto engines = engines_under_test();
  if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end())
    GTEST_SKIP() << "PostgreSQL not configured";
  TestDb tdb(Engine::postgres);
  auto db = tdb.open({.pool_size = 2, .lock_timeout = std::chrono::milliseconds(5000)});
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 5, soon()).ok());
  ASSERT_TRUE(stock.put_sku(1, 202, 100, 5, soon()).ok());
  RawPg other(tdb.url());
  other.exec("SET deadlock_timeout = '2s'");  // let the order's side detect it first
  other.exec("BEGIN");
  other.exec("UPDATE stock SET price_cents = price_cents WHERE sku_id = 202");
  Result<Placed> r = Status(Code::internal, "not run");
  std::thread t([&] { r = intake.place({7, 1, {{101, 1}, {202, 1}}, "dl"}, soon(30)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the order holds 101, waits on 202
  other.exec("UPDATE stock SET price_cents = price_cents WHERE sku_id = 101");  // deadlock
  other.exec("ROLLBACK");
  t.join();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(r->out_of_stock);
  EXPECT_GE(db->metrics().retries_deadlock.load(), 1u);
  auto rows = tdb.sql("SELECT available FROM stock ORDER BY sku_id");
  EXPECT_EQ(rows[0].i64(0), 4);
  EXPECT_EQ(rows[1].i64(0), 4);
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM orders").at(0).i64(0), 1);
}

}  // namespace
}  // namespace onceorder::testing
