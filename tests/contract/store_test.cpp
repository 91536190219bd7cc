// The store on every engine: migrations (their start-up race: store_race_test.cpp), the
// transaction helper's whole-transaction retry, lock timeouts that give up as `busy` without
// writing, and the pool's deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <thread>

#include "common/test_db.hpp"
#include "contract/store_fixture.hpp"
#include "onceorder/service/numbering.hpp"
#include "store/dialect.hpp"

namespace onceorder::testing {
namespace {

TEST_P(StoreTest, MigrationsGoDownAndUpAgain) {
  auto db = tdb_.open();
  ASSERT_TRUE(store::migrate_down(*db, 0).ok());
  EXPECT_EQ(*store::current_schema_version(*db), 0);
  auto v = store::migrate(*db);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(*v, store::latest_schema_version(GetParam()));
  Numbering numbering(*db);
  EXPECT_TRUE(numbering.issue({"S", "after re-migration", {}}, soon()).ok());
}

TEST_P(StoreTest, RetryableFailureRerunsTheWholeTransaction) {
  auto db = tdb_.open();
  Numbering numbering(*db);
  ASSERT_TRUE(numbering.issue({"S", "seed", {}}, soon()).ok());
  static constexpr store::Statement kBump{
      "t_bump", "UPDATE doc_scopes SET last_value = last_value WHERE scope = 'S'"};
  int runs = 0;
  auto r = store::transact<int>(*db, store::TxOptions{soon(), 3},
                                [&](store::Connection& c) -> Result<int> {
                                  ++runs;
                                  OO_RETURN_IF_ERROR(c.query(kBump, {}).status());
                                  if (runs == 1)
                                    return Status(Code::deadlock, "simulated deadlock");
                                  return runs;
                                });
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, 2);
  EXPECT_EQ(db->metrics().retries_deadlock.load(), 1u);

  int always = 0;
  auto gave_up = store::transact<int>(*db, store::TxOptions{soon(), 3},
                                      [&](store::Connection&) -> Result<int> {
                                        ++always;
                                        return Status(Code::serialization_failure, "simulated");
                                      });
  ASSERT_FALSE(gave_up.ok());
  EXPECT_EQ(gave_up.status().code(), Code::busy);
  EXPECT_EQ(always, 3);

  int once = 0;
  auto permanent = store::transact<int>(*db, store::TxOptions{soon(), 3},
                                        [&](store::Connection&) -> Result<int> {
                                          ++once;
                                          return Status(Code::invalid_request, "not retried");
                                        });
  EXPECT_EQ(permanent.status().code(), Code::invalid_request);
  EXPECT_EQ(once, 1);
}

// Waiting releases what it holds: between two attempts the connection is back in the pool
// (another request can take it) and no transaction is open (the first attempt's write is
// gone, so nothing holds its locks while the retry sleeps).
TEST_P(StoreTest, ARetrysPauseHoldsNoConnectionAndNoTransaction) {
  auto db = tdb_.open({.pool_size = 1});
  Numbering numbering(*db);
  ASSERT_TRUE(numbering.issue({"S", "seed", {}}, soon()).ok());
  static constexpr store::Statement kBump{
      "t_bump_pause", "UPDATE doc_scopes SET last_value = last_value + 100 WHERE scope = 'S'"};
  int pauses = 0;
  store::TxOptions options{soon(), 3};
  options.before_pause = [&] {
    ++pauses;
    EXPECT_EQ(db->metrics().connections_in_use.load(), 0) << "the pause holds a connection";
    auto other = db->acquire(store::Clock::now() + std::chrono::milliseconds(100));
    EXPECT_TRUE(other.ok()) << "another request could not get the only connection";
    // A second client sees no trace of the rolled-back attempt and takes its lock at once.
    auto rows = tdb_.sql("SELECT last_value FROM doc_scopes WHERE scope = 'S'");
    EXPECT_EQ(rows.at(0).i64(0), 1);
  };
  int runs = 0;
  auto r = store::transact<int>(*db, options, [&](store::Connection& c) -> Result<int> {
    OO_RETURN_IF_ERROR(c.query(kBump, {}).status());
    if (++runs == 1) return Status(Code::deadlock, "simulated deadlock");
    return runs;
  });
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(pauses, 1);
  EXPECT_EQ(tdb_.sql("SELECT last_value FROM doc_scopes WHERE scope = 'S'").at(0).i64(0), 101);
}

TEST_P(StoreTest, LockTimeoutGivesUpAsBusyWritesNothingAndFreesTheConnection) {
  auto db = tdb_.open({.pool_size = 1, .lock_timeout = std::chrono::milliseconds(200)});
  Numbering numbering(*db);
  ASSERT_TRUE(numbering.issue({"L", "first", {}}, soon()).ok());

  // Another client holds the lock the allocation needs.
  auto holder_db = tdb_.open({.pool_size = 1}, false);
  auto holder = holder_db->acquire(soon());
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE((*holder)->begin(store::TxMode::write).ok());
  static constexpr store::Statement kHold{
      "t_hold", "UPDATE doc_scopes SET last_value = last_value WHERE scope = 'L'"};
  ASSERT_TRUE((*holder)->query(kHold, {}).ok());

  // configure waits for the counter's row lock (on SQLite, for the one write lock): each wait
  // ends at the lock timeout and is retried, and the request gives up as busy.
  auto blocked = numbering.configure("L", ScopeFormat{5, 10, 99999}, soon(5));
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), Code::busy) << blocked.status().to_string();
  EXPECT_GE(db->metrics().retries_lock_timeout.load(), 1u);
  // A number for the held scope is busy too (on PostgreSQL it waits outside the combining
  // lane, without queueing on the lock, until its deadline).
  auto r = numbering.issue({"L", "blocked", std::string("key-L")}, soon(2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::busy) << r.status().to_string();
  (*holder)->rollback();

  // The single pooled connection came back with no open transaction: it works again, the
  // format is as before, and the same key now succeeds with the next value (nothing was
  // stored before).
  auto again = numbering.issue({"L", "blocked", std::string("key-L")}, soon());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_FALSE(again->replayed);
  EXPECT_EQ(again->document.value, 2);
  EXPECT_EQ(tdb_.sql("SELECT max_value FROM doc_scopes WHERE scope = 'L'").at(0).i64(0), 9999);
}

TEST_P(StoreTest, PoolAnswersBusyWhenNoConnectionFreesInTime) {
  auto db = tdb_.open({.pool_size = 2});
  auto a = db->acquire(soon());
  auto b = db->acquire(soon());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(db->metrics().connections_in_use.load(), 2);
  auto c = db->acquire(store::Clock::now() + std::chrono::milliseconds(100));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::busy);
  // A freed connection is handed to a waiter.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto gone = std::move(*a);
  });
  auto d = db->acquire(soon());
  release.join();
  EXPECT_TRUE(d.ok());
}

TEST_P(StoreTest, ErrorsAreClassified) {
  auto db = tdb_.open();
  Numbering numbering(*db);
  ASSERT_TRUE(numbering.issue({"U", "one", {}}, soon()).ok());
  auto conn = db->acquire(soon());
  ASSERT_TRUE(conn.ok());
  static constexpr store::Statement kDup{
      "t_dup",
      "INSERT INTO documents (scope, value, number, origin, scheme, title, principal) "
      "VALUES ('U', 1, '0001', 'issued', 'r10w4', 'dup', 'test')"};
  EXPECT_EQ((*conn)->query(kDup, {}).status().code(), Code::unique_violation);
  static constexpr store::Statement kCheck{
      "t_check", "UPDATE doc_scopes SET last_value = -1 WHERE scope = 'U'"};
  EXPECT_EQ((*conn)->query(kCheck, {}).status().code(), Code::check_violation);
}

// Then::with_next: a held statement is part of its transaction as if sent on its own, just
// later: it runs before the next statement, commits and rolls back with the transaction, and
// its error fails the transaction.
TEST_P(StoreTest, AHeldStatementRunsWithItsTransaction) {
  auto db = tdb_.open();
  tdb_.sql("CREATE TABLE t_held (n integer NOT NULL CHECK (n > 0))");
  static constexpr store::Statement kAdd{"t_held_add", "INSERT INTO t_held (n) VALUES (1)"};
  static constexpr store::Statement kBad{"t_held_bad", "INSERT INTO t_held (n) VALUES (-1)"};
  static constexpr store::Statement kCount{"t_held_count", "SELECT count(*) FROM t_held"};
  const auto stored = [&] { return tdb_.sql("SELECT count(*) FROM t_held").at(0).i64(0); };
  auto conn = db->acquire(soon());
  ASSERT_TRUE(conn.ok());
  store::Connection& c = **conn;

  // Held, then read by the next statement of its transaction, then committed.
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  auto held = c.query(kAdd, {}, store::Then::with_next);
  ASSERT_TRUE(held.ok()) << held.status().to_string();
  EXPECT_TRUE(held->empty());
  auto seen = c.query(kCount, {});
  ASSERT_TRUE(seen.ok()) << seen.status().to_string();
  EXPECT_EQ(seen->at(0).i64(0), 1);
  ASSERT_TRUE(c.commit().ok());
  EXPECT_EQ(stored(), 1);

  // Held, then the transaction rolled back: nothing of it stays.
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.query(kAdd, {}, store::Then::with_next).ok());
  c.rollback();
  EXPECT_EQ(stored(), 1);
  EXPECT_FALSE(c.in_transaction());

  // Held, then COMMIT with nothing in between: it goes with the COMMIT.
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.query(kAdd, {}, store::Then::with_next).ok());
  ASSERT_TRUE(c.commit().ok());
  EXPECT_EQ(stored(), 2);

  // A held statement that fails: the transaction fails (on PostgreSQL at the next statement,
  // which never runs; on SQLite at once), and rolled back it leaves nothing.
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  auto bad = c.query(kBad, {}, store::Then::with_next);
  auto next = bad.ok() ? c.query(kAdd, {}, store::Then::commit) : Result<store::Rows>(bad.status());
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), Code::check_violation) << next.status().to_string();
  c.rollback();
  EXPECT_EQ(stored(), 2);
  auto after = c.query(kCount, {});
  ASSERT_TRUE(after.ok()) << after.status().to_string();
  EXPECT_EQ(after->at(0).i64(0), 2);
}

// On PostgreSQL a held statement costs no round trip of its own: it is not sent when held
// (its lock is not taken yet), only with the next statement.
TEST_P(StoreTest, AHeldStatementIsSentWithTheNextOne) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no round trips on this engine";
  auto db = tdb_.open();
  RawPg other(tdb_.url());
  static constexpr store::Statement kLock{"t_held_lock", "SELECT pg_advisory_xact_lock(7310)"};
  static constexpr store::Statement kOne{"t_held_one", "SELECT 1"};
  const auto locks = [&] {
    return other.scalar(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = "
        "7310 AND granted");
  };
  auto conn = db->acquire(soon());
  ASSERT_TRUE(conn.ok());
  store::Connection& c = **conn;
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.query(kLock, {}, store::Then::with_next).ok());
  EXPECT_EQ(locks(), "0") << "the held statement was sent alone";
  auto one = c.query(kOne, {});
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->at(0).i64(0), 1) << "the next statement's rows are its own";
  EXPECT_EQ(locks(), "1") << "the held statement was not sent with the next one";
  c.rollback();
  EXPECT_EQ(locks(), "0");
}

// Connection::open_next: the next transaction's first statements go out behind this one's
// COMMIT and run once, for the transaction that asks for exactly them; anything else finds
// them rolled back. A bug here would run a statement twice (a receipt inserted twice, a
// stock row locked by a transaction nobody reads) or commit what nobody asked for.
class OpeningTest : public StoreTest {
 protected:
  static constexpr store::Statement kAdd{"t_open_add",
                                         "INSERT INTO t_open (n) VALUES ($1::integer) RETURNING n"};
  static constexpr store::Statement kSetting{
      "t_open_setting", "SELECT set_config('application_name', 'opened', true)"};

  void SetUp() override {
    db_ = tdb_.open({.pool_size = 2});
    tdb_.sql("CREATE TABLE t_open (n integer NOT NULL CHECK (n > 0))");
  }
  // Rows with value n, as another connection sees them (committed).
  std::int64_t stored(int n) {
    return tdb_.sql("SELECT count(*) FROM t_open WHERE n = " + std::to_string(n)).at(0).i64(0);
  }
  // An opener for `token` that sends kSetting (held) and kAdd(n); counts its calls.
  store::Connection::Opener opener(std::uint64_t token, int n) {
    return [this, token, n](const store::Connection::SendOpening& send) {
      ++asked_;
      const std::vector<store::Call> calls{{kSetting, {}}, {kAdd, {std::int64_t{n}}}};
      send(token, calls);
    };
  }
  // One transaction on `c` that adds `n` (its statements prepared), opening `next` behind
  // its COMMIT.
  Result<store::Rows> add_and_open(store::Connection& c, int n, store::Connection::Opener next) {
    OO_RETURN_IF_ERROR(c.begin(store::TxMode::write));
    OO_RETURN_IF_ERROR(c.query(kSetting, {}, store::Then::with_next).status());
    if (!c.open_next(std::move(next))) return Status(Code::internal, "cannot open");
    return c.query(kAdd, {std::int64_t{n}}, store::Then::commit);
  }
  std::unique_ptr<store::Database> db_;
  int asked_ = 0;
};

TEST_P(OpeningTest, TheTransactionItWasOpenedForGetsItsAnswerAndItRunsOnce) {
  auto conn = db_->acquire(soon());
  ASSERT_TRUE(conn.ok());
  store::Connection* raw = &**conn;
  if (GetParam() != Engine::postgres) {
    EXPECT_FALSE((*conn)->open_next(opener(1, 1))) << "only PostgreSQL opens behind a COMMIT";
    return;
  }
  auto first = add_and_open(**conn, 1, opener(41, 2));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(asked_, 1);
  EXPECT_EQ((*conn)->opened_for(), 41u);
  EXPECT_FALSE((*conn)->in_transaction());
  EXPECT_EQ(stored(1), 1) << "the transaction committed";
  EXPECT_EQ(stored(2), 0) << "the opening is not committed";

  // Back in the pool it waits for its token: an acquire without it gets another connection.
  { auto gone = std::move(*conn); }
  auto other = db_->acquire(soon());
  ASSERT_TRUE(other.ok());
  EXPECT_NE(&**other, raw);
  auto opened = db_->acquire(soon(), false, 41);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(&**opened, raw);
  EXPECT_EQ(db_->metrics().openings_taken.load(), 1u);

  // Its transaction asks for exactly what was sent: the answer is the opening's own.
  store::Connection& c = **opened;
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.query(kSetting, {}, store::Then::with_next).ok());
  auto rows = c.query(kAdd, {std::int64_t{2}});
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->at(0).i64(0), 2);
  EXPECT_EQ((*opened)->opened_for(), 0u);
  auto name = c.query({"t_open_name", "SELECT current_setting('application_name')"}, {});
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(name->at(0).text(0), "opened") << "the held statement ran in the opening";
  ASSERT_TRUE(c.commit().ok());
  EXPECT_EQ(stored(2), 1) << "run once, committed by its transaction";
}

TEST_P(OpeningTest, AnythingElseFindsTheOpeningRolledBack) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "only PostgreSQL opens behind a COMMIT";
  auto conn = db_->acquire(soon());
  ASSERT_TRUE(conn.ok());
  store::Connection& c = **conn;

  // Another first statement (other parameters): the opening is rolled back, the statement
  // runs in a transaction of its own, which commits.
  ASSERT_TRUE(add_and_open(c, 1, opener(51, 2)).ok());
  ASSERT_EQ(c.opened_for(), 51u);
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  auto three = c.query(kAdd, {std::int64_t{3}}, store::Then::commit);
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  EXPECT_EQ(stored(2), 0);
  EXPECT_EQ(stored(3), 1);

  // Without the held statement before it: rolled back too.
  ASSERT_TRUE(add_and_open(c, 1, opener(52, 4)).ok());
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  auto four = c.query(kAdd, {std::int64_t{4}});
  ASSERT_TRUE(four.ok()) << four.status().to_string();
  ASSERT_TRUE(c.commit().ok());
  EXPECT_EQ(stored(4), 1) << "run once: the opening's run was rolled back";

  // Begun and committed with nothing sent, or rolled back: nothing of the opening stays.
  ASSERT_TRUE(add_and_open(c, 1, opener(53, 5)).ok());
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.commit().ok());
  ASSERT_TRUE(add_and_open(c, 1, opener(54, 5)).ok());
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  c.rollback();
  EXPECT_EQ(stored(5), 0);
  EXPECT_EQ(c.opened_for(), 0u);

  // Left in the pool and discarded by its token: rolled back, the connection idle again.
  ASSERT_TRUE(add_and_open(c, 1, opener(55, 6)).ok());
  { auto gone = std::move(*conn); }
  db_->discard_opened(55);
  db_->discard_opened(55);  // once only
  EXPECT_EQ(db_->metrics().openings_discarded.load(), 1u);
  EXPECT_EQ(stored(6), 0);
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in%' AND "
                     "datname = current_database()")
                .at(0)
                .i64(0),
            0)
      << "a transaction was left open";
  auto again = db_->acquire(soon(), false, 55);  // gone: any connection
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->opened_for(), 0u);
  EXPECT_EQ(stored(1), 5) << "every transaction that opened one committed";
}

TEST_P(OpeningTest, AFailedCommitTakesItsOpeningWithIt) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "only PostgreSQL opens behind a COMMIT";
  // A constraint checked at COMMIT: the statement succeeds, the COMMIT fails.
  tdb_.sql("CREATE TABLE t_late (n integer UNIQUE DEFERRABLE INITIALLY DEFERRED)");
  tdb_.sql("INSERT INTO t_late VALUES (1)");
  static constexpr store::Statement kLate{"t_late_add", "INSERT INTO t_late (n) VALUES (1)"};
  auto conn = db_->acquire(soon());
  ASSERT_TRUE(conn.ok());
  store::Connection& c = **conn;
  ASSERT_TRUE(add_and_open(c, 1, opener(61, 9)).ok());  // kAdd prepared
  c.rollback();                                         // the opening goes

  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.open_next(opener(62, 7)));
  auto late = c.query(kLate, {}, store::Then::commit);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), Code::unique_violation) << late.status().to_string();
  EXPECT_EQ(asked_, 2) << "asked once the statement ran";
  EXPECT_EQ(c.opened_for(), 0u);
  c.rollback();
  EXPECT_EQ(stored(7), 0);
  EXPECT_EQ(stored(9), 0);

  // A statement that fails before the COMMIT: never asked.
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.open_next(opener(63, 8)));
  auto bad = c.query(kAdd, {std::int64_t{-1}}, store::Then::commit);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(asked_, 2);
  c.rollback();

  // The connection works as before.
  auto fine = add_and_open(c, 10, opener(64, 11));
  ASSERT_TRUE(fine.ok()) << fine.status().to_string();
  c.rollback();
  EXPECT_EQ(stored(10), 1);
  EXPECT_EQ(stored(11), 0);
  EXPECT_EQ(stored(8), 0);
}

// An opening sent with a statement this connection has not prepared yet is not sent: the
// transaction commits as if none had been asked for.
TEST_P(OpeningTest, AnUnpreparedStatementIsNotOpened) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "only PostgreSQL opens behind a COMMIT";
  static constexpr store::Statement kFresh{"t_open_fresh", "INSERT INTO t_open (n) VALUES (12)"};
  auto conn = db_->acquire(soon());
  ASSERT_TRUE(conn.ok());
  store::Connection& c = **conn;
  ASSERT_TRUE(c.begin(store::TxMode::write).ok());
  ASSERT_TRUE(c.open_next([&](const store::Connection::SendOpening& send) {
    const std::vector<store::Call> calls{{kFresh, {}}};
    send(71, calls);
  }));
  ASSERT_TRUE(c.query(kAdd, {std::int64_t{13}}, store::Then::commit).ok());
  EXPECT_EQ(c.opened_for(), 0u);
  EXPECT_EQ(stored(13), 1);
  EXPECT_EQ(stored(12), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, OpeningTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

TEST(StoreOpenTest, BadUrlsAndUnreachableDatabasesSayWhat) {
  EXPECT_FALSE(parse_db_url("mysql://x").ok());
  auto missing_dir = store::Database::open(*parse_db_url("sqlite:/proc/nope/x.db"));
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.status().code(), Code::unavailable);
  auto pg = store::Database::open(*parse_db_url("postgresql://127.0.0.1:1/none?connect_timeout=2"));
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), Code::unavailable);
  EXPECT_NE(pg.status().message().find("cannot connect to PostgreSQL"), std::string::npos);
}

// Issue 8: after a PostgreSQL restart the first request on each pooled connection failed
// (503 "postgresql: no pipeline sync"). Terminating every backend of the database from a
// second client is what a restart does to the pool.
class ReconnectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto engines = engines_under_test();
    if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end())
      GTEST_SKIP() << "PostgreSQL not configured";
    tdb_ = std::make_unique<TestDb>(Engine::postgres);
    db_ = tdb_->open({.pool_size = kPool});
  }

  // Every connection of the pool open and idle: kPool transactions at once.
  void fill_pool() {
    std::vector<store::PooledConnection> held;
    for (int i = 0; i < kPool; ++i) {
      auto c = db_->acquire(soon());
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      held.push_back(std::move(*c));
    }
  }

  void restart() {
    const std::string others =
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()";
    tdb_->sql("SELECT pg_terminate_backend(pid) " + others);
    // Until they are gone, as after a restart (a backend ends a moment after the signal).
    // Each look is a connection of its own, which also ends a moment after it closed: the
    // look that found none is the answer, not one more look.
    std::int64_t left = 1;
    for (int i = 0; i < 200 && (left = tdb_->sql("SELECT count(*) " + others).at(0).i64(0)) > 0;
         ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ASSERT_EQ(left, 0);
  }

  // A one-statement read transaction (its first statement is sent with BEGIN).
  Result<std::int64_t> select_one() {
    static constexpr store::Statement kOne{"t_one", "SELECT 1"};
    return store::transact<std::int64_t>(*db_, {soon(), 3, store::TxMode::read},
                                         [&](store::Connection& c) -> Result<std::int64_t> {
                                           OO_ASSIGN_OR_RETURN(auto rows, c.query(kOne, {}));
                                           return rows.at(0).i64(0);
                                         });
  }

  static constexpr int kPool = 4;
  std::unique_ptr<TestDb> tdb_;
  std::unique_ptr<store::Database> db_;
};

TEST_F(ReconnectTest, EveryRequestAfterARestartSucceeds) {
  fill_pool();
  ASSERT_TRUE(select_one().ok());
  restart();
  // One after another: each finds a dead connection (or the new one) and succeeds.
  Numbering numbering(*db_);
  for (int i = 0; i < kPool; ++i) {
    auto r = select_one();
    EXPECT_TRUE(r.ok()) << i << ": " << r.status().to_string();
  }
  EXPECT_GE(db_->metrics().reconnects.load(), 1u);
  EXPECT_EQ(db_->metrics().gave_up_busy.load(), 0u);
  restart();
  // A one-statement write transaction (COMMIT pipelined with the statement).
  auto doc = numbering.issue({"R", "after restart", {}}, soon());
  EXPECT_TRUE(doc.ok()) << doc.status().to_string();
}

TEST_F(ReconnectTest, AllConnectionsBrokenAtOnceAreEachReplaced) {
  fill_pool();
  restart();
  // kPool requests at the same time: each takes one of the dead connections.
  std::atomic<int> inside{0};
  std::vector<Status> results(kPool);
  std::vector<std::thread> threads;
  for (int t = 0; t < kPool; ++t) {
    threads.emplace_back([&, t] {
      static constexpr store::Statement kOne{"t_one", "SELECT 1"};
      results[t] = store::transact_status(
          *db_, {soon(), 3, store::TxMode::read}, [&](store::Connection& c) -> Status {
            inside.fetch_add(1);
            // Hold the connection until every request has one (or a moment has passed).
            for (int i = 0; i < 200 && inside.load() < kPool; ++i)
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return c.query(kOne, {}).status();
          });
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kPool; ++t)
    EXPECT_TRUE(results[t].ok()) << t << ": " << results[t].to_string();
  EXPECT_EQ(db_->metrics().reconnects.load(), static_cast<std::uint64_t>(kPool));
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
