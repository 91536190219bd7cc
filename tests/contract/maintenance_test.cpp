// Periodic jobs: the batch and the reaper run inside `serve` under one leader per database (a
// lease in leader_leases); when the leader goes away another process takes over.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/test_db.hpp"
#include "onceorder/service/maintenance.hpp"

namespace onceorder::testing {
namespace {

template <class Pred>
bool eventually(Pred pred, int ms = 5000) {
  for (int waited = 0; waited < ms; waited += 20) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

class MaintenanceTest : public ::testing::TestWithParam<Engine> {};

TEST_P(MaintenanceTest, BatchRunsOnItsIntervalAndTheReaperCleansUp) {
  TestDb tdb(GetParam());
  auto db = tdb.open();
  Scheduler scheduler(*db);
  std::vector<SourceOrder> orders;
  for (int i = 0; i < 20; ++i) orders.push_back({{"M1", "O" + std::to_string(i), "1"}, 1});
  ASSERT_TRUE(scheduler.import_source_orders(orders, soon()).ok());
  Maintenance m(*db, scheduler, {std::chrono::milliseconds(100), std::chrono::milliseconds(50)});
  m.start();
  // The run that produced the last order marks itself done a moment later: wait for both, or a
  // stop() in between would end that run before it is done.
  auto done_runs = [&] {
    return tdb.sql("SELECT count(*) FROM schedule_runs WHERE kind = 'batch' AND status = 'done'")
        .at(0)
        .i64(0);
  };
  EXPECT_TRUE(eventually([&] {
    return tdb.sql("SELECT count(*) FROM production_orders").at(0).i64(0) == 20 && done_runs() >= 1;
  }));
  m.stop();
  EXPECT_TRUE(m.is_leader());
  EXPECT_GE(done_runs(), 1);
}

TEST(MaintenanceLeaderTest, OneLeaderPerPostgresDatabaseAndTakeOver) {
  const auto engines = engines_under_test();
  if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end())
    GTEST_SKIP() << "PostgreSQL not configured";
  TestDb tdb(Engine::postgres);
  auto db_a = tdb.open();
  auto db_b = tdb.open({}, false);
  Scheduler sa(*db_a), sb(*db_b);
  const MaintenanceOptions fast{std::chrono::hours(1), std::chrono::milliseconds(30)};
  auto a = std::make_unique<Maintenance>(*db_a, sa, fast);
  Maintenance b(*db_b, sb, fast);
  a->start();
  ASSERT_TRUE(eventually([&] { return a->is_leader(); }));
  b.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(b.is_leader()) << "two leaders on one database";
  a.reset();  // the leader's process goes away: it hands its lease on
  EXPECT_TRUE(eventually([&] { return b.is_leader(); })) << "nobody took over";
  b.stop();
}

TEST_P(MaintenanceTest, ALeaderWhoseLeaseWasTakenStopsLeading) {
  TestDb tdb(GetParam());
  auto db = tdb.open();
  Scheduler scheduler(*db);
  MaintenanceOptions fast{std::chrono::hours(1), std::chrono::milliseconds(30)};
  fast.leader_lease = std::chrono::milliseconds(400);
  Maintenance m(*db, scheduler, fast);
  m.start();
  ASSERT_TRUE(eventually([&] { return m.is_leader(); }));
  // Another holder in force, as after this process paused past its lease.
  tdb.sql(
      "UPDATE leader_leases SET holder = 'elsewhere', term = term + 1, lease_until_ms = "
      "lease_until_ms + 3600000");
  EXPECT_TRUE(eventually([&] { return !m.is_leader(); }, 2000)) << "kept leading without a lease";
  m.stop();
}

class LeaderLeaseTest : public ::testing::TestWithParam<Engine> {};

TEST_P(LeaderLeaseTest, TakeRenewReleaseAndHandOver) {
  TestDb tdb(GetParam());
  auto db = tdb.open();
  const auto ttl = std::chrono::seconds(30);
  auto a = LeaderLease::try_take(*db, "job", "a", ttl);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_NE(*a, nullptr);
  EXPECT_EQ((*a)->term(), 1);
  EXPECT_TRUE((*a)->valid());
  auto b = LeaderLease::try_take(*db, "job", "b", ttl);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, nullptr) << "taken while another holder's lease is in force";
  EXPECT_TRUE((*a)->renew(*db).ok());
  // Another name is another lease.
  auto other = LeaderLease::try_take(*db, "other-job", "b", ttl);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, nullptr);
  (*a)->release(*db);
  EXPECT_FALSE((*a)->valid());
  b = LeaderLease::try_take(*db, "job", "b", ttl);
  ASSERT_TRUE(b.ok());
  ASSERT_NE(*b, nullptr) << "a released lease was not free";
  EXPECT_EQ((*b)->term(), 2);
  Status lost = (*a)->renew(*db);
  EXPECT_EQ(lost.code(), Code::unavailable);
  EXPECT_EQ(tdb.sql("SELECT holder FROM leader_leases WHERE name = 'job'").at(0).text(0), "b");
}

TEST_P(LeaderLeaseTest, AnExpiredLeaseIsTakenOverAndItsHolderKnowsBeforeTheDatabaseDoes) {
  TestDb tdb(GetParam());
  auto db = tdb.open();
  const auto ttl = std::chrono::milliseconds(400);
  auto a = LeaderLease::try_take(*db, "job", "a", ttl);
  ASSERT_TRUE(a.ok());
  ASSERT_NE(*a, nullptr);
  auto early = LeaderLease::try_take(*db, "job", "b", ttl);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(*early, nullptr);
  // A quarter of the lease before its end in the database, the holder stops counting on it.
  std::this_thread::sleep_for(ttl * 3 / 4 + std::chrono::milliseconds(20));
  EXPECT_FALSE((*a)->valid());
  std::this_thread::sleep_for(ttl / 4 + std::chrono::milliseconds(20));
  auto b = LeaderLease::try_take(*db, "job", "b", ttl);
  ASSERT_TRUE(b.ok());
  ASSERT_NE(*b, nullptr) << "an expired lease was not taken over";
  EXPECT_EQ((*b)->term(), 2);
  EXPECT_EQ((*a)->renew(*db).code(), Code::unavailable) << "renewed a lease taken over";
  EXPECT_TRUE((*b)->renew(*db).ok());
}

TEST_P(LeaderLeaseTest, OfCandidatesRacingForAnExpiredLeaseOneWins) {
  TestDb tdb(GetParam());
  auto setup = tdb.open();
  tdb.sql(
      "INSERT INTO leader_leases (name, holder, lease_until_ms, term) VALUES ('job', 'gone', "
      "0, 7)");
  constexpr int kCandidates = 6;
  std::vector<std::unique_ptr<store::Database>> dbs;
  for (int i = 0; i < kCandidates; ++i) dbs.push_back(tdb.open({}, false));
  std::atomic<int> ready{0};
  std::atomic<int> winners{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kCandidates; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kCandidates) std::this_thread::yield();
      auto r = LeaderLease::try_take(*dbs[static_cast<size_t>(i)], "job",
                                     "candidate-" + std::to_string(i), std::chrono::seconds(30));
      if (!r.ok())
        errors.fetch_add(1);
      else if (*r)
        winners.fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(tdb.sql("SELECT term FROM leader_leases WHERE name = 'job'").at(0).i64(0), 8);
}

INSTANTIATE_TEST_SUITE_P(Engines, LeaderLeaseTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

INSTANTIATE_TEST_SUITE_P(Engines, MaintenanceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
