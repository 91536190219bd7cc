// A server that stops answering in the middle of a transaction (cut off by a partition, or
// frozen) costs the transaction its deadline plus a short grace, never more
// (Connection::answer_by): the connection is then dropped, never cancelled, the call fails
// unavailable, and the pool opens a new connection for the next transaction. Once a COMMIT was
// sent the outcome is unknown, and the message says so: the server may still commit it.
// The server is frozen with SIGSTOP on its backend process, which needs the database on this
// machine (as the tests' own PostgreSQL is). SQLite has no network: nothing to test there.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/frozen.hpp"
#include "common/test_db.hpp"
#include "onceorder/core/db_url.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

constexpr store::Statement kPid{"t_backend_pid", "SELECT pg_backend_pid()::text"};
constexpr store::Statement kInsert{"t_unanswered_insert",
                                   "INSERT INTO t_unanswered (v) VALUES ($1::text)"};

class UnansweredTest : public ::testing::TestWithParam<Engine> {
 protected:
  UnansweredTest() : tdb_(GetParam()) {}
  void SetUp() override {
    if (GetParam() != Engine::postgres) GTEST_SKIP() << "SQLite has no server to cut off";
    db_ = tdb_.open({.pool_size = 1});  // one connection: the frozen one is the one used
    RawPg(tdb_.url()).exec("CREATE TABLE t_unanswered (v text PRIMARY KEY)");
  }
  pid_t backend_pid() {
    auto pid = store::transact<std::string>(*db_, store::read_tx(store::Clock::now() + 5s),
                                            [](store::Connection& c) -> Result<std::string> {
                                              OO_ASSIGN_OR_RETURN(auto rows, c.query(kPid, {}));
                                              return rows.at(0).text(0);
                                            });
    return pid.ok() ? static_cast<pid_t>(std::stol(*pid)) : -1;
  }
  // Inserts `v` in a write transaction with `deadline`; `before_commit` runs after the insert
  // was answered, before the COMMIT is sent.
  Status insert(const std::string& v, store::Clock::time_point deadline,
                const std::function<void()>& before_commit = {}) {
    store::TxOptions options = store::write_tx(deadline);
    options.max_attempts = 1;
    return store::transact<bool>(*db_, options,
                                 [&](store::Connection& c) -> Result<bool> {
                                   OO_RETURN_IF_ERROR(c.query(kInsert, {v}).status());
                                   if (before_commit) before_commit();
                                   return true;
                                 })
        .status();
  }
  long rows(const std::string& v) {
    return std::stol(
        RawPg(tdb_.url()).scalar("SELECT count(*) FROM t_unanswered WHERE v = '" + v + "'"));
  }
  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
};

TEST_P(UnansweredTest, AFrozenServerCostsTheDeadlineAndTheGraceAndNothingIsWritten) {
  const pid_t pid = backend_pid();
  ASSERT_GT(pid, 0);
  Frozen frozen({pid});
  ASSERT_TRUE(frozen.frozen());
  const auto started = store::Clock::now();
  const Status st = insert("before-commit", started + 300ms);
  const auto took = store::Clock::now() - started;
  frozen.wake();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::unavailable) << st.to_string();
  EXPECT_NE(st.message().find("no answer by the transaction's deadline"), std::string::npos)
      << st.message();
  EXPECT_EQ(st.message().find("outcome is unknown"), std::string::npos) << st.message();
  EXPECT_GE(took, 2s) << "dropped before the grace past the deadline";
  EXPECT_LT(took, 4s) << "waited on past the deadline and its grace";
  // The insert's statement went out, its COMMIT never did: the woken server rolls it back.
  EXPECT_EQ(rows("before-commit"), 0);
  // The pool dropped the connection: the next transaction runs on a new one.
  ASSERT_TRUE(insert("after", store::Clock::now() + 5s).ok());
  EXPECT_NE(backend_pid(), pid);
  EXPECT_EQ(rows("after"), 1);
}

TEST_P(UnansweredTest, AFreezeAfterTheCommitWasSentLeavesTheOutcomeUnknown) {
  const pid_t pid = backend_pid();
  ASSERT_GT(pid, 0);
  std::unique_ptr<Frozen> frozen;
  const auto started = store::Clock::now();
  const Status st = insert("in-doubt", started + 300ms,
                           [&] { frozen = std::make_unique<Frozen>(std::vector<pid_t>{pid}); });
  const auto took = store::Clock::now() - started;
  ASSERT_TRUE(frozen && frozen->frozen());
  frozen.reset();  // woken: it reads the COMMIT that waits on its socket
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::unavailable) << st.to_string();
  EXPECT_NE(st.message().find("the outcome is unknown"), std::string::npos) << st.message();
  EXPECT_LT(took, 4s);
  // Unknown, not failed: the server commits what it had received before the connection's end.
  long committed = 0;
  for (int i = 0; i < 50 && committed == 0; ++i) {
    committed = rows("in-doubt");
    if (committed == 0) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(committed, 1);
}

// A new connection that takes longer than the deadline to open (a host cut off costs the
// URL's connect_timeout for each host it lists): the caller gets `unavailable` by its
// deadline, the attempt goes on, and the connection it opens serves the next caller.
TEST(SlowConnect, AConnectionOpenedPastTheDeadlineJoinsThePool) {
  for (Engine engine : engines_under_test()) {
    SCOPED_TRACE(engine == Engine::postgres ? "postgresql" : "sqlite");
    TestDb tdb(engine);
    (void)tdb.open();  // migrated
    auto url = parse_db_url(tdb.url());
    ASSERT_TRUE(url.ok());
    const store::DatabaseOptions options{.pool_size = 1};
    std::atomic<int> opened{0};
    auto slow = std::make_shared<std::atomic<bool>>(true);
    store::Database db(
        url->engine, options,
        [u = *url, options, slow, &opened]() -> Result<std::unique_ptr<store::Connection>> {
          if (slow->load()) std::this_thread::sleep_for(1500ms);
          ++opened;
          return store::dialect_for(u.engine).connect(u.target, options);
        });
    const auto started = store::Clock::now();
    auto cut = db.acquire(started + 200ms);
    const auto took = store::Clock::now() - started;
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.status().code(), Code::unavailable) << cut.status().to_string();
    EXPECT_LT(took, 1000ms) << "the caller waited for the whole attempt";
    // The next caller, with time enough, gets the connection the first attempt opened: no
    // second attempt is made (the pool's one slot was the first attempt's until it ended).
    slow->store(false);
    auto next = db.acquire(store::Clock::now() + 5s);
    ASSERT_TRUE(next.ok()) << next.status().to_string();
    EXPECT_EQ(opened.load(), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, UnansweredTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
