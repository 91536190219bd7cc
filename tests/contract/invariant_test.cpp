// A broken in-memory invariant (onceorder/core/invariant.hpp) thrown inside a transaction, on every
// engine: the transaction rolls back, nothing of it is stored, and the connection it ran on
// goes back to the pool clean.
#include <gtest/gtest.h>

#include "common/test_db.hpp"
#include "contract/intake_fixture.hpp"
#include "contract/store_fixture.hpp"
#include "onceorder/core/invariant.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::testing {
namespace {

using InvariantStoreTest = StoreTest;

TEST_P(InvariantStoreTest, ATrippedInvariantInsideATransactionCommitsNothing) {
  // One connection: the one the tripped transaction ran on is the one used after it.
  auto db = tdb_.open({.pool_size = 1});
  Numbering numbering(*db);
  ASSERT_TRUE(numbering.issue({"S", "seed", {}}, soon()).ok());
  const std::int64_t before =
      tdb_.sql("SELECT last_value FROM doc_scopes WHERE scope = 'S'").at(0).i64(0);
  static constexpr store::Statement kBump{
      "t_bump_invariant", "UPDATE doc_scopes SET last_value = last_value + 100 WHERE scope = 'S'"};
  int runs = 0;
  EXPECT_THROW((void)store::transact<int>(*db, store::TxOptions{soon(), 3, store::TxMode::write},
                                          [&](store::Connection& c) -> Result<int> {
                                            ++runs;
                                            OO_RETURN_IF_ERROR(c.query(kBump, {}).status());
                                            OO_INVARIANT(runs < 0, "planted by the test");
                                            return runs;
                                          }),
               InvariantViolation);
  EXPECT_EQ(runs, 1) << "an invariant is not retried";
  EXPECT_EQ(tdb_.sql("SELECT last_value FROM doc_scopes WHERE scope = 'S'").at(0).i64(0), before);
  // The connection came back without the transaction: the next one commits on its own.
  auto next = store::transact<int>(*db, store::TxOptions{soon(), 3, store::TxMode::write},
                                   [&](store::Connection& c) -> Result<int> {
                                     EXPECT_TRUE(c.in_transaction());
                                     OO_RETURN_IF_ERROR(c.query(kBump, {}).status());
                                     return 1;
                                   });
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  EXPECT_EQ(tdb_.sql("SELECT last_value FROM doc_scopes WHERE scope = 'S'").at(0).i64(0),
            before + 100);
}

using InvariantIntakeTest = IntakeTest;

// Tripped after a placement's deductions were written, before its commit.
TEST_P(InvariantIntakeTest, ATrippedInvariantInAPlacementStoresNothing) {
  stock(101, 5);
  stock(202, 5);
  IntakeOptions options;
  options.fault_after_deduction = []() -> Status {
    OO_INVARIANT(false, "planted by the test");
    return Status::Ok();
  };
  Intake faulty(*db_, options);
  EXPECT_THROW((void)place("f", {{101, 2}, {202, 1}}, 7, &faulty), InvariantViolation);
  EXPECT_EQ(available(101), 5);
  EXPECT_EQ(available(202), 5);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE reserved <> 0"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM source_orders"), 0);
  auto retry = place("f", {{101, 2}, {202, 1}});
  ASSERT_TRUE(retry.ok()) << retry.status().to_string();
  EXPECT_FALSE(retry->replayed);
  expect_invariants_hold();
}

INSTANTIATE_TEST_SUITE_P(Engines, InvariantStoreTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);
INSTANTIATE_TEST_SUITE_P(Engines, InvariantIntakeTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
