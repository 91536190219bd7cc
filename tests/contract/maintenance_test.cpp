// Periodic jobs: the batch and the reaper run inside `serve` under one leader per
// PostgreSQL database; when the leader goes away another process takes over.
#include <gtest/gtest.h>

#include <thread>

#include "common/test_db.hpp"
#include "onceorder/maintenance.hpp"

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
  a.reset();  // the leader's process goes away: its session lock is released
  EXPECT_TRUE(eventually([&] { return b.is_leader(); })) << "nobody took over";
  b.stop();
}

INSTANTIATE_TEST_SUITE_P(Engines, MaintenanceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
