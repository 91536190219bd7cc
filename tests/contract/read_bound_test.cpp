// Every read transaction is bounded by its deadline (Connection::bound_statements): a read
// still running then is cancelled and answered busy with a message that says so, on both
// engines, and the bound is the transaction's alone: the connection's next transaction runs
// under its own.
#include <gtest/gtest.h>

#include <chrono>

#include "common/test_db.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

class ReadBoundTest : public ::testing::TestWithParam<Engine> {
 protected:
  ReadBoundTest() : tdb_(GetParam()) {}
  TestDb tdb_;
};

// Counts to `n` the slow way (a recursive query, on both engines): seconds of work for the
// long one, a few hundred milliseconds for the short one.
constexpr store::Statement kLongCount{
    "t_bound_long",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000000) "
    "SELECT count(*) FROM c"};
constexpr store::Statement kShortCount{
    "t_bound_short",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500000) "
    "SELECT count(*) FROM c"};

constexpr store::Statement kWriteCount{
    "t_bound_write",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000) "
    "SELECT count(*) FROM c"};

Result<std::string> count_in(store::Database& db, store::TxMode mode,
                             store::Clock::time_point deadline, const store::Statement& stmt) {
  return store::transact<std::string>(db, store::TxOptions{deadline, 3, mode},
                                      [&](store::Connection& c) -> Result<std::string> {
                                        OO_ASSIGN_OR_RETURN(auto rows, c.query(stmt, {}));
                                        return rows.at(0).text(0);
                                      });
}

TEST_P(ReadBoundTest, AReadIsCancelledAtItsDeadline) {
  auto db = tdb_.open({.pool_size = 1});  // one connection: every transaction below shares it
  const auto started = store::Clock::now();
  auto cut = count_in(*db, store::TxMode::read, started + 300ms, kLongCount);
  const auto took = store::Clock::now() - started;
  ASSERT_FALSE(cut.ok()) << "the long read finished: " << *cut;
  EXPECT_EQ(cut.status().code(), Code::busy) << cut.status().to_string();
  EXPECT_NE(cut.status().message().find("deadline"), std::string::npos) << cut.status().message();
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s) << "the read ran on past its deadline";

  // The next read on that connection has a bound of its own: time enough for a shorter count
  // that takes longer than the first one's 300 ms would have allowed.
  const auto again = store::Clock::now();
  auto whole = count_in(*db, store::TxMode::read, again + 20s, kShortCount);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ(*whole, "1500000");
}

TEST_P(ReadBoundTest, AWriteTransactionKeepsTheSessionBound) {
  auto db = tdb_.open({.pool_size = 1});
  // A read cut short first leaves nothing behind on the connection.
  ASSERT_FALSE(count_in(*db, store::TxMode::read, store::Clock::now() + 50ms, kLongCount).ok());
  // Writes are not cut at their deadline (a write past it may have to finish what it began);
  // their answer is awaited a little longer (Connection::answer_by, a grace of seconds): the
  // count runs out its time, longer than this deadline.
  const auto started = store::Clock::now();
  auto whole = count_in(*db, store::TxMode::write, started + 20ms, kWriteCount);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ(*whole, "400000");
  EXPECT_GT(store::Clock::now() - started, 20ms) << "the count was too quick to show anything";
}

INSTANTIATE_TEST_SUITE_P(Engines, ReadBoundTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
