// The store on every engine: migrations under a start-up race, the transaction helper's
// whole-transaction retry, lock timeouts that give up as `busy` without writing, and the
// pool's deadline.
#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "contract/test_db.hpp"
#include "onceorder/numbering.hpp"
#include "store/migrations.hpp"

namespace onceorder::testing {
namespace {

class StoreTest : public ::testing::TestWithParam<Engine> {
 protected:
  StoreTest() : tdb_(GetParam()) {}
  TestDb tdb_;
};

TEST_P(StoreTest, ConcurrentMigrationsApplyEachVersionOnce) {
  constexpr int kProcesses = 4;
  std::vector<std::unique_ptr<store::Database>> dbs;
  for (int i = 0; i < kProcesses; ++i) dbs.push_back(tdb_.open({.pool_size = 1}, false));
  std::barrier start(kProcesses);
  std::vector<Result<int>> results(kProcesses, Result<int>(Status(Code::internal, "not run")));
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = store::migrate(*dbs[i]);
    });
  }
  for (auto& t : threads) t.join();
  const int latest = store::latest_schema_version(GetParam());
  for (auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(*r, latest);
  }
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM schema_migrations").at(0).i64(0), latest);
  auto current = store::current_schema_version(*dbs[0]);
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(*current, latest);
}

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

  auto r = numbering.issue({"L", "blocked", std::string("key-L")}, soon(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::busy) << r.status().to_string();
  EXPECT_GE(db->metrics().retries_lock_timeout.load(), 1u);
  (*holder)->rollback();

  // The single pooled connection came back with no open transaction: it works again,
  // and the same key now succeeds with the next value (nothing was stored before).
  auto again = numbering.issue({"L", "blocked", std::string("key-L")}, soon());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_FALSE(again->replayed);
  EXPECT_EQ(again->document.value, 2);
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
      "INSERT INTO documents (scope, value, number, origin, scheme, title) "
      "VALUES ('U', 1, '0001', 'issued', 'r10w4', 'dup')"};
  EXPECT_EQ((*conn)->query(kDup, {}).status().code(), Code::unique_violation);
  static constexpr store::Statement kCheck{
      "t_check", "UPDATE doc_scopes SET last_value = -1 WHERE scope = 'U'"};
  EXPECT_EQ((*conn)->query(kCheck, {}).status().code(), Code::check_violation);
}

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

INSTANTIATE_TEST_SUITE_P(Engines, StoreTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
