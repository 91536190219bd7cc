// Each line of the placement's defence on its own, and the failures the seeds name made to
// happen rather than planted as a state: the deduction's own condition (a locked row that
// cannot take its deduction is refused by the statement, not by CHECK (available >= 0)), a
// stock row changed behind a batch decided ahead, a failure between the first and the second
// deduction of the engine that deducts row by row, and an answer lost after its COMMIT went
// out (the connection cut through a fault seam), on every engine.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "common/refusals.hpp"
#include "common/test_db.hpp"
#include "onceorder/core/id_generator.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/stock.hpp"
#include "store/dialect.hpp"
#include "store/intake_store.hpp"

namespace onceorder::testing {
namespace {

// A real connection with faults a test arms: the `fail_at`-th statement named `fail_name`
// fails as a broken disk or a dead server would (before it ran), and the answer to the first
// successful COMMIT after `lose_commit` is armed is lost (the connection dies right after
// the COMMIT went out: the transaction committed, the client never hears).
struct Faults {
  std::string fail_name;
  std::atomic<int> fail_at{0};  // 0: never
  std::atomic<int> seen{0};
  std::atomic<bool> lose_commit{false};
};

class FaultSeamConnection final : public store::Connection {
 public:
  FaultSeamConnection(std::unique_ptr<store::Connection> inner, Faults& faults)
      : inner_(std::move(inner)), faults_(faults) {}
  Engine engine() const override { return inner_->engine(); }
  Status do_begin(store::TxMode mode) override { return inner_->begin(mode); }
  void rollback() override {
    if (!dead_) inner_->rollback();
  }
  bool in_transaction() const override { return !dead_ && inner_->in_transaction(); }
  bool broken() const override { return dead_ || inner_->broken(); }
  Status exec_script(std::string_view sql) override { return inner_->exec_script(sql); }
  Status lock_migrations() override { return inner_->lock_migrations(); }
  void unlock_migrations() override { inner_->unlock_migrations(); }

 protected:
  Status do_commit() override { return lose(inner_->commit()); }
  Result<store::Rows> do_query(const store::Statement& stmt, std::span<const store::Param> params,
                               store::Then then) override {
    if (stmt.name == faults_.fail_name && ++faults_.seen == faults_.fail_at)
      return Status(Code::unavailable, fmt::format("{} failed (test)", stmt.name));
    auto rows = inner_->query(stmt, params, then);
    if (then != store::Then::commit || !rows.ok()) return rows;
    if (Status st = lose(Status::Ok()); !st.ok()) return st;
    return rows;
  }

 private:
  Status lose(Status committed) {
    if (!committed.ok() || !faults_.lose_commit.exchange(false)) return committed;
    dead_ = true;
    return Status(Code::unavailable, "the connection was lost after COMMIT (test)");
  }
  std::unique_ptr<store::Connection> inner_;
  Faults& faults_;
  bool dead_ = false;
};

store::Clock::time_point defence_deadline() {
  return store::Clock::now() + std::chrono::seconds(30);
}

class IntakeDefenceTest : public ::testing::TestWithParam<Engine> {
 protected:
  IntakeDefenceTest() : tdb_(GetParam()) {
    (void)tdb_.open();  // migrated
    auto url = parse_db_url(tdb_.url());
    EXPECT_TRUE(url.ok());
    url_ = *url;
  }
  // A Database whose connections carry `faults`.
  std::unique_ptr<store::Database> faulty(Faults& faults) {
    const store::DatabaseOptions options{.pool_size = 4};
    const DbUrl url = url_;
    return std::make_unique<store::Database>(
        url.engine, options,
        [url, options, &faults]() -> Result<std::unique_ptr<store::Connection>> {
          OO_ASSIGN_OR_RETURN(auto conn,
                              store::dialect_for(url.engine).connect(url.target, options));
          return std::unique_ptr<store::Connection>(
              std::make_unique<FaultSeamConnection>(std::move(conn), faults));
        });
  }
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  std::int64_t available(std::int64_t sku) {
    return count(fmt::format("SELECT available FROM stock WHERE sku_id = {}", sku));
  }

  TestDb tdb_;
  DbUrl url_;
};

// Writes one order of `quantity` units of SKU 101 (1 available) through the store's batch
// write, its receipt first, decided on `ahead` when given: what a wrong decision would send.
Status write_order_of(store::Database& db, std::int64_t quantity, const store::DecidedOn* ahead) {
  store::IntakeStore intake(db.dialect());
  const Cart cart{1, {{101, quantity}}};
  const Order order{7001,  order_number(7001),        "placed",       7,
                    1,     {{1, 101, quantity, 100}}, 100 * quantity, "",
                    "test"};
  const store::BatchOutcome outcome{7, "over", &order, nullptr, &cart};
  return store::transact<bool>(
             db, store::write_tx(defence_deadline()),
             [&](store::Connection& c) -> Result<bool> {
               if (!ahead) {
                 const store::NewOrderReceipt r{7, "over", &cart};
                 OO_RETURN_IF_ERROR(intake.insert_receipts(c, std::span(&r, 1)).status());
               }
               OO_RETURN_IF_ERROR(
                   intake.write_outcomes(c, std::span(&outcome, 1), store::Then::commit, ahead)
                       .status());
               return true;
             })
      .status();
}

// A deduction larger than its locked row holds (what a wrong decision would ask) is refused
// by the deduction's own condition, "did not take its deduction", nothing written: never by
// the CHECK behind it. On PostgreSQL both batch statements (decided on locked rows, and
// decided ahead on rows that still hold the values they were decided on).
TEST_P(IntakeDefenceTest, ADeductionPastTheRowIsRefusedByItsConditionNotByTheCheck) {
  Refusals seen;
  auto db = open_counting_refusals(url_, {.pool_size = 2}, seen);
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 1, defence_deadline()).ok());
  const store::StockRow row{101, 1, 100};
  const store::DecidedOn known{1, std::span(&row, 1)};
  std::vector<const store::DecidedOn*> ways{nullptr};
  if (store::IntakeStore(db->dialect()).decides_ahead()) ways.push_back(&known);
  for (const store::DecidedOn* ahead : ways) {
    SCOPED_TRACE(ahead ? "decided ahead" : "decided on locked rows");
    const Status st = write_order_of(*db, 2, ahead);
    EXPECT_EQ(st.code(), Code::internal) << st.to_string();
    EXPECT_NE(st.message().find("did not take its deduction"), std::string::npos) << st.to_string();
    EXPECT_EQ(seen.second_line, 0) << "the CHECK had to refuse it: " << seen.describe();
    EXPECT_EQ(available(101), 1);
    EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
    seen.reset();
  }
}

// The stock row a batch was decided ahead on changes behind it (an adjustment committed by
// another process): the batch's statement writes nothing and says so (SQLSTATE OO002,
// retry_transaction), and the batch decided again on the locked rows answers what the stock
// now allows. No CHECK, no foreign key refuses anything on the way.
TEST_P(IntakeDefenceTest, StockChangedBehindABatchDecidedAheadIsDecidedAgain) {
  Refusals seen;
  auto db = open_counting_refusals(url_, {.pool_size = 2}, seen);
  Intake intake(*db);
  Stock stock(*db);
  if (!store::IntakeStore(db->dialect()).decides_ahead())
    GTEST_SKIP() << "this engine decides every batch on locked rows";
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 3, defence_deadline()).ok());
  ASSERT_TRUE(stock.put_sku(1, 202, 100, 5, defence_deadline()).ok());
  const std::vector<PlaceRequest> warm = {{7, 1, {{101, 1}}, "w1"}, {8, 1, {{202, 1}}, "w2"}};
  for (auto& r : intake.place_batch(warm, defence_deadline())) ASSERT_TRUE(r.ok());
  // Its lane knows 101 at 2. Another process takes both units behind it.
  auto other_db = tdb_.open({.pool_size = 1});
  ASSERT_TRUE(Stock(*other_db).adjust(1, 101, -2, "damaged", defence_deadline()).ok());
  const std::uint64_t decided = intake.decided_ahead(), missed = intake.decided_ahead_missed();
  const std::vector<PlaceRequest> batch = {{1, 1, {{101, 2}}, "a"}, {2, 1, {{202, 1}}, "b"}};
  auto answers = intake.place_batch(batch, defence_deadline());
  ASSERT_EQ(answers.size(), 2u);
  ASSERT_TRUE(answers[0].ok()) << answers[0].status().to_string();
  ASSERT_TRUE(answers[1].ok()) << answers[1].status().to_string();
  EXPECT_TRUE(answers[0]->out_of_stock) << "two units of 101 placed with none left";
  EXPECT_FALSE(answers[1]->out_of_stock);
  EXPECT_EQ(intake.decided_ahead_missed() - missed, 1u) << "the batch was not decided ahead";
  EXPECT_EQ(intake.decided_ahead() - decided, 0u);
  EXPECT_EQ(available(101), 0);
  EXPECT_EQ(available(202), 3);
  EXPECT_EQ(seen.second_line + seen.deadlocks, 0) << seen.describe();
  expect_invariants_hold(*db);
}

// The engine that deducts row by row (one UPDATE per line) fails between the first and the
// second deduction: nothing of the placement stays, the first row's units included, and the
// same key placed again deducts each row once.
TEST_P(IntakeDefenceTest, AFailureBetweenTwoDeductionsLeavesNothing) {
  Faults faults;
  auto db = faulty(faults);
  if (db->dialect().engine == Engine::postgres)
    GTEST_SKIP() << "this engine deducts every line in one statement";
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 5, defence_deadline()).ok());
  ASSERT_TRUE(stock.put_sku(1, 202, 100, 5, defence_deadline()).ok());
  faults.fail_name = "in_deduct";
  faults.fail_at = 2;
  auto failed = intake.place({7, 1, {{101, 1}, {202, 2}}, "k"}, defence_deadline());
  ASSERT_EQ(faults.seen, 2) << "the second deduction was never reached";
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(available(101), 5) << "the first deduction outlived the failure";
  EXPECT_EQ(available(202), 5);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  faults.fail_at = 0;
  auto again = intake.place({7, 1, {{101, 1}, {202, 2}}, "k"}, defence_deadline());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_FALSE(again->replayed);
  EXPECT_EQ(available(101), 4);
  EXPECT_EQ(available(202), 3);
  expect_invariants_hold(*db);
}

// The answer to a placement is lost after its COMMIT went out: the client hears
// `unavailable`, the order committed. Its replay with the same key finds that order, whole,
// and deducts nothing more.
TEST_P(IntakeDefenceTest, ALostAnswerIsFoundByItsReplay) {
  Faults faults;
  auto db = faulty(faults);
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 10, defence_deadline()).ok());
  ASSERT_TRUE(stock.put_sku(1, 202, 100, 10, defence_deadline()).ok());
  ASSERT_TRUE(intake.node_id().ok());  // its lease's transaction is not the one cut
  faults.lose_commit = true;
  auto lost = intake.place({7, 1, {{101, 3}, {202, 1}}, "lost"}, defence_deadline());
  EXPECT_FALSE(faults.lose_commit.load()) << "no COMMIT was sent";
  ASSERT_FALSE(lost.ok()) << "the answer reached the client";
  EXPECT_EQ(lost.status().code(), Code::unavailable) << lost.status().to_string();
  ASSERT_EQ(count("SELECT count(*) FROM orders"), 1) << "the COMMIT did not commit";
  const std::int64_t order_id = count("SELECT order_id FROM orders");
  auto found = intake.place({7, 1, {{202, 1}, {101, 3}}, "lost"}, defence_deadline());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  EXPECT_TRUE(found->replayed);
  EXPECT_EQ(found->order.order_id, order_id);
  EXPECT_EQ(found->order.lines.size(), 2u);
  EXPECT_EQ(available(101), 7);
  EXPECT_EQ(available(202), 9);
  EXPECT_EQ(count(fmt::format("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation' AND "
                              "order_id = {}",
                              order_id)),
            2);
  expect_invariants_hold(*db);
}

// A batch whose answer is lost after its COMMIT went out: whether it committed is unknown, so
// no request of it runs again (a request run again past its deadline would be answered busy,
// "nothing was written", for an order that exists): each is answered `unavailable`, and its
// replay with the same key finds the order the batch placed.
TEST_P(IntakeDefenceTest, ABatchWhoseAnswerIsLostRunsNothingAgain) {
  Faults faults;
  auto db = faulty(faults);
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 10, defence_deadline()).ok());
  ASSERT_TRUE(intake.node_id().ok());
  const std::vector<PlaceRequest> reqs{{7, 1, {{101, 1}}, "lost-a"},
                                       {8, 1, {{101, 2}}, "lost-b"},
                                       {9, 1, {{101, 20}}, "lost-c"}};  // out of stock
  faults.lose_commit = true;
  auto answers = intake.place_batch(reqs, defence_deadline());
  EXPECT_FALSE(faults.lose_commit.load()) << "no COMMIT was sent";
  ASSERT_EQ(answers.size(), reqs.size());
  for (const auto& a : answers) {
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), Code::unavailable) << a.status().to_string();
  }
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 2) << "placed once, by the batch";
  EXPECT_EQ(available(101), 7);
  for (const PlaceRequest& r : reqs) {
    auto again = intake.place(r, defence_deadline());
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_TRUE(again->replayed) << r.idempotency_key;
    EXPECT_EQ(again->out_of_stock, r.idempotency_key == "lost-c") << r.idempotency_key;
  }
  EXPECT_EQ(available(101), 7);
  expect_invariants_hold(*db);
}

// Seed 002's lock-wait signal: two carts queued behind placements of their row find it held
// by another transaction when their batch locks it (SKIP LOCKED) and wait for it: each is
// counted once in Intake::lock_waits, however often it is handed back meanwhile.
TEST_P(IntakeDefenceTest, PlacementsThatFindTheirRowHeldAreCountedOnceAsLockWaits) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "SQLite's one write lock holds no row";
  RawPg holder(tdb_.url());
  std::latch first_in_flight{1}, others_queued{1};
  std::atomic<bool> pause_first{true}, hold_row{true};
  std::thread releaser;
  store::DatabaseOptions options{.pool_size = 4};
  options.statement_hook = [&](std::string_view statement) {
    if (statement == "in_place_all" && pause_first.exchange(false)) {
      first_in_flight.count_down();
      others_queued.wait();
    }
    // The queued carts' batch is about to lock the row: another transaction takes it first,
    // and lets it go a moment later.
    if ((statement == "in_insert_receipts_lock_stock" || statement == "in_place_known") &&
        hold_row.exchange(false)) {
      holder.exec("BEGIN; SELECT 1 FROM stock WHERE sku_id = 101 FOR UPDATE");
      releaser = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        holder.exec("COMMIT");
      });
    }
  };
  auto db = tdb_.open(options);
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 100, 10, defence_deadline()).ok());
  const auto place = [&](const char* key) {
    return intake.place({7, 1, {{101, 1}}, key}, defence_deadline());
  };
  // The first cart runs alone in its own lane and stops before its writes; the second shares
  // its row, so runs in the warehouse's lane, alone, and waits for the row (FOR UPDATE: not
  // counted); the third and fourth queue behind it and run as one batch.
  auto first = std::async(std::launch::async, place, "first");
  first_in_flight.wait();
  auto second = std::async(std::launch::async, place, "second");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto third = std::async(std::launch::async, place, "third");
  auto fourth = std::async(std::launch::async, place, "fourth");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  others_queued.count_down();
  for (auto* f : {&first, &second, &third, &fourth}) {
    auto r = f->get();
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_FALSE(r->out_of_stock);
  }
  if (releaser.joinable()) releaser.join();
  EXPECT_FALSE(hold_row.load()) << "the queued carts never ran as a batch";
  EXPECT_GE(intake.held_back(), 2u);
  EXPECT_EQ(intake.lock_waits(), 2u);
  EXPECT_EQ(available(101), 6);
}

INSTANTIATE_TEST_SUITE_P(Engines, IntakeDefenceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
