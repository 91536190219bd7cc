// Idempotency-Keys on the creating requests other than orders and documents (issue 11 item 5):
// the first answer is stored with its effect and replayed; another body under the key is
// idempotency_key_reused; a refused request stores nothing, so its retry is a new request.
#include <gtest/gtest.h>

#include <thread>

#include "contract/request_receipts_fixture.hpp"
#include "onceorder/service/receipts.hpp"

namespace onceorder::testing {
namespace {

TEST_P(RequestReceiptsTest, AdjustmentReplaysItsAnswerAndChangesNothing) {
  stock(101, 10);
  stock(102, 10);
  auto first = adjust(101, -3, "K");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_FALSE(first->replayed);
  EXPECT_EQ(first->sku.available, 7);
  ASSERT_TRUE(adjust(101, 5, std::nullopt).ok());  // the stock moves on without a key
  const auto ledger = count("SELECT count(*) FROM stock_ledger");

  auto replay = adjust(101, -3, "K");
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_TRUE(replay->replayed);
  EXPECT_TRUE(same_sku(replay->sku, first->sku));  // the answer as it was, available 7
  EXPECT_EQ(available(101), 12);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger"), ledger);

  EXPECT_EQ(adjust(101, -4, "K").status().code(), Code::idempotency_key_reused);
  EXPECT_EQ(adjust(101, -3, "K", "damaged").status().code(), Code::idempotency_key_reused);
  // The key's scope is the SKU: the same key on another SKU is its own request.
  auto other = adjust(102, -3, "K");
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  EXPECT_FALSE(other->replayed);
  EXPECT_EQ(available(102), 7);
  EXPECT_EQ(available(101), 12);

  auto bad = adjust(101, -3, "bad key");
  EXPECT_EQ(bad.status().code(), Code::invalid_request);
  ASSERT_EQ(bad.status().fields().size(), 1u);
  EXPECT_EQ(bad.status().fields()[0].field, "Idempotency-Key");

  // A refusal stores nothing, not even the receipt: the retry after restocking goes through.
  const auto receipts = count("SELECT count(*) FROM request_receipts");
  EXPECT_EQ(adjust(102, -50, "R").status().code(), Code::insufficient_stock);
  EXPECT_EQ(count("SELECT count(*) FROM request_receipts"), receipts);
  ASSERT_TRUE(adjust(102, 100, std::nullopt).ok());
  auto retry = adjust(102, -50, "R");
  ASSERT_TRUE(retry.ok()) << retry.status().to_string();
  EXPECT_FALSE(retry->replayed);
  EXPECT_EQ(available(102), 57);
  expect_invariants_hold();
}

TEST_P(RequestReceiptsTest, SourceOrdersReplayTheirCountsInAnyOrder) {
  const std::vector<SourceOrder> ab = {source("A"), source("B")};
  auto first = scheduler_.import_source_orders(ab, soon(), std::string("S"));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->created, 2);
  EXPECT_FALSE(first->replayed);
  const std::vector<SourceOrder> ba = {source("B"), source("A")};
  auto replay = scheduler_.import_source_orders(ba, soon(), std::string("S"));
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->created, 2);  // not "existing": the first answer
  EXPECT_EQ(replay->existing, 0);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 2);
  const std::vector<SourceOrder> abc = {source("A"), source("B"), source("C")};
  EXPECT_EQ(scheduler_.import_source_orders(abc, soon(), std::string("S")).status().code(),
            Code::idempotency_key_reused);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 2);

  // A conflict writes nothing, not even the receipt: the corrected retry goes through.
  const std::vector<SourceOrder> conflicting = {source("C"), source("A", 6)};
  EXPECT_EQ(scheduler_.import_source_orders(conflicting, soon(), std::string("T")).status().code(),
            Code::source_order_conflict);
  const std::vector<SourceOrder> corrected = {source("C"), source("A", 5)};
  auto retry = scheduler_.import_source_orders(corrected, soon(), std::string("T"));
  ASSERT_TRUE(retry.ok()) << retry.status().to_string();
  EXPECT_FALSE(retry->replayed);
  EXPECT_EQ(retry->created, 1);
  EXPECT_EQ(retry->existing, 1);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 3);
}

TEST_P(RequestReceiptsTest, ManualRunReplaysTheSameRunAndSkipped) {
  ASSERT_TRUE(scheduler_.import_source_orders({{source("A"), source("B")}}, soon()).ok());
  const std::vector<OrderKey> keys = {{"S1", "B", "1"}, {"S1", "A", "1"}, {"S1", "nope", "1"}};
  auto first = scheduler_.create_run(RunKind::manual, keys, soon(), std::string("R"));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_FALSE(first->replayed);
  EXPECT_EQ(first->run.status, RunStatus::running);
  ASSERT_EQ(first->skipped.size(), 1u);
  ASSERT_TRUE(scheduler_.process_run(first->run.run_id).ok());

  // The same set of orders, in another order and with a repeat: the same run, now done.
  const std::vector<OrderKey> again = {
      {"S1", "nope", "1"}, {"S1", "A", "1"}, {"S1", "B", "1"}, {"S1", "A", "1"}};
  auto replay = scheduler_.create_run(RunKind::manual, again, soon(), std::string("R"));
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->run.run_id, first->run.run_id);
  EXPECT_EQ(replay->run.status, RunStatus::done);
  EXPECT_EQ(replay->run.counts.success, 2);
  ASSERT_EQ(replay->skipped.size(), 1u);
  EXPECT_EQ(replay->skipped[0].key, first->skipped[0].key);
  EXPECT_EQ(replay->skipped[0].reason, "unknown_order");
  EXPECT_EQ(count("SELECT count(*) FROM schedule_runs"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items"), 2);

  EXPECT_EQ(scheduler_.create_run(RunKind::manual, std::nullopt, soon(), std::string("R"))
                .status()
                .code(),
            Code::idempotency_key_reused);
  const std::vector<OrderKey> fewer = {{"S1", "A", "1"}};
  EXPECT_EQ(scheduler_.create_run(RunKind::manual, fewer, soon(), std::string("R")).status().code(),
            Code::idempotency_key_reused);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_runs"), 1);

  // Every candidate under a key: replayed as such, with nothing left to schedule.
  auto all = scheduler_.create_run(RunKind::manual, std::nullopt, soon(), std::string("ALL"));
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  auto all_again = scheduler_.create_run(RunKind::manual, std::nullopt, soon(), std::string("ALL"));
  ASSERT_TRUE(all_again.ok()) << all_again.status().to_string();
  EXPECT_TRUE(all_again->replayed);
  EXPECT_EQ(all_again->run.run_id, all->run.run_id);
  EXPECT_EQ(count("SELECT count(*) FROM schedule_runs"), 2);
  expect_invariants_hold();
}

TEST_P(RequestReceiptsTest, ReceiptsExpireWithTheOthersAndAHeldKeyIsInProgress) {
  stock(101, 10);
  ASSERT_TRUE(adjust(101, 1, "E").ok());
  ASSERT_TRUE(scheduler_.import_source_orders({{source("A")}}, soon(), std::string("E")).ok());
  auto kept = expire_receipts(*db_, std::chrono::hours(1), soon());
  ASSERT_TRUE(kept.ok()) << kept.status().to_string();
  EXPECT_EQ(kept->request_receipts, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  auto expired = expire_receipts(*db_, std::chrono::milliseconds(1), soon());
  ASSERT_TRUE(expired.ok()) << expired.status().to_string();
  EXPECT_EQ(expired->request_receipts, 2);
  EXPECT_TRUE(expired->complete);
  // Past the retention the key is a new request.
  auto again = adjust(101, 1, "E");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_FALSE(again->replayed);
  EXPECT_EQ(available(101), 12);

  // A key another transaction holds for longer than the deadline: request_in_progress, as an
  // order answers, and nothing written. (SQLite has no row lock to hold: one writer.)
  if (GetParam() != Engine::postgres) return;
  auto db = tdb_.open({.pool_size = 2, .lock_timeout = std::chrono::milliseconds(100)});
  Intake intake(*db);
  Stock stock(*db);
  RawPg holder(tdb_.url());
  holder.exec(
      "BEGIN; INSERT INTO request_receipts (route, scope, idempotency_key, request) VALUES "
      "('stock_adjustment', '1/101', 'held', 'x')");
  auto r = stock.adjust(AdjustRequest{1, 101, 1, "count", std::string("held")},
                        store::Clock::now() + std::chrono::milliseconds(600));
  EXPECT_EQ(r.status().code(), Code::request_in_progress) << r.status().to_string();
  holder.exec("ROLLBACK");
  EXPECT_EQ(available(101), 12);
}

INSTANTIATE_TEST_SUITE_P(Engines, RequestReceiptsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
