// Receipts live for a published retention (issue 12 item 6, API.md "How long a key lives"):
// within it a key replays its first answer; past it the receipt is gone and the key is a new
// request. Expiry deletes receipts only, in batches, never orders or documents.
#include <gtest/gtest.h>

#include <thread>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/maintenance.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/receipts.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

using std::chrono::milliseconds;

class ReceiptsTest : public ::testing::TestWithParam<Engine> {
 protected:
  ReceiptsTest() : tdb_(GetParam()), db_(tdb_.open()), intake_(*db_), numbering_(*db_) {
    auto r = stock_.put_sku(1, 101, 100, 1000, soon());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
  }
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  Placed place(const std::string& key) {
    auto r = intake_.place({7, 1, {{101, 1}}, key}, soon());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : Placed{};
  }
  Issued issue(const std::string& key) {
    auto r = numbering_.issue({"R", "invoice", key}, soon());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : Issued{};
  }
  void expect_invariants_hold() { onceorder::testing::expect_invariants_hold(*db_); }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Intake intake_;
  Stock stock_{*db_};
  Numbering numbering_;
};

TEST_P(ReceiptsTest, WithinTheRetentionAKeyReplaysPastItTheKeyIsANewRequest) {
  const Placed first = place("K");
  const Issued doc = issue("D");
  // Within the lifetime: the same answer.
  auto kept = expire_receipts(*db_, std::chrono::hours(1), soon());
  ASSERT_TRUE(kept.ok()) << kept.status().to_string();
  EXPECT_EQ(kept->order_receipts + kept->document_receipts, 0);
  const Placed replay = place("K");
  EXPECT_TRUE(replay.replayed);
  EXPECT_EQ(replay.order.order_id, first.order.order_id);
  const Issued doc_replay = issue("D");
  EXPECT_TRUE(doc_replay.replayed);
  EXPECT_EQ(doc_replay.document.value, doc.document.value);

  // Past it: the receipts are gone, the order and the document stay.
  std::this_thread::sleep_for(milliseconds(30));
  auto expired = expire_receipts(*db_, milliseconds(1), soon());
  ASSERT_TRUE(expired.ok()) << expired.status().to_string();
  EXPECT_EQ(expired->order_receipts, 1);
  EXPECT_EQ(expired->document_receipts, 1);
  EXPECT_TRUE(expired->complete);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM documents"), 1);
  expect_invariants_hold();  // I6 and I15 check the receipts that exist

  // The same key now is a new request: a new order, a new number.
  const Placed again = place("K");
  EXPECT_FALSE(again.replayed);
  EXPECT_NE(again.order.order_id, first.order.order_id);
  const Issued doc_again = issue("D");
  EXPECT_FALSE(doc_again.replayed);
  EXPECT_EQ(doc_again.document.value, doc.document.value + 1);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 2);
  expect_invariants_hold();
}

TEST_P(ReceiptsTest, ExpiresInBatchesUntilNoneIsLeftAndOnlyOldOnes) {
  for (int i = 0; i < 5; ++i) place("old-" + std::to_string(i));
  std::this_thread::sleep_for(milliseconds(300));
  place("new");
  auto r = expire_receipts(*db_, milliseconds(150), soon(), 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->order_receipts, 5);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 6);
  EXPECT_TRUE(place("new").replayed);
}

TEST_P(ReceiptsTest, TheMaintenanceLeaderExpiresReceipts) {
  place("K");
  issue("D");
  std::this_thread::sleep_for(milliseconds(30));
  Scheduler scheduler(*db_);
  MaintenanceOptions options;
  options.batch_interval = std::chrono::hours(1);
  options.reap_interval = milliseconds(50);
  options.receipt_retention = milliseconds(10);
  options.expiry_interval = milliseconds(50);
  Maintenance m(*db_, scheduler, options);
  m.start();
  bool done = false;
  for (int i = 0; i < 250 && !done; ++i) {
    done = m.receipts_expired() == 2;
    if (!done) std::this_thread::sleep_for(milliseconds(20));
  }
  m.stop();
  EXPECT_TRUE(done);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM document_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, ReceiptsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
