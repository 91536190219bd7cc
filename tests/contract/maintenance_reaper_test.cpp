// The maintenance leader's reaper keeps its own schedule while the leader's batch run lasts:
// an orphan made during a long batch is aborted at the next reaper tick, not after the batch.
#include <gtest/gtest.h>

#include <thread>

#include "common/test_db.hpp"
#include "onceorder/service/maintenance.hpp"

namespace onceorder::testing {
namespace {

// The standard production order, a few milliseconds late: a batch that lasts.
class SlowStep final : public ProductionStep {
 public:
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return standard_production_step()->produce(claim, issuer);
  }
};

class MaintenanceReaperTest : public ::testing::TestWithParam<Engine> {};

TEST_P(MaintenanceReaperTest, TheReaperRunsOnItsScheduleWhileABatchRuns) {
  TestDb tdb(GetParam());
  auto db = tdb.open({.pool_size = 8});
  auto scalar = [&](const std::string& sql) { return tdb.sql(sql).at(0).i64(0); };
  SchedulerOptions o;
  o.claim_batch = 1;
  o.workers = 1;
  o.default_step = std::make_shared<SlowStep>();
  Scheduler scheduler(*db, o);
  constexpr int kOrders = 600;  // at 5 ms and more each: seconds of batch
  std::vector<SourceOrder> orders;
  for (int i = 0; i < kOrders; ++i) orders.push_back({{"B1", "O" + std::to_string(i), "1"}, 1});
  ASSERT_TRUE(scheduler.import_source_orders(orders, soon()).ok());
  Maintenance m(*db, scheduler, {std::chrono::milliseconds(50), std::chrono::milliseconds(100)});
  m.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (scalar("SELECT count(*) FROM production_orders") == 0 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GT(scalar("SELECT count(*) FROM production_orders"), 0) << "the batch never started";

  // An orphan made while the batch runs: a run (not the batch's) that ended with an item
  // waiting.
  Scheduler other(*db);
  const std::vector<SourceOrder> late = {{{"B2", "X", "1"}, 1}};
  ASSERT_TRUE(other.import_source_orders(late, soon()).ok());
  auto run = other.create_run(RunKind::manual, std::vector<OrderKey>{{"B2", "X", "1"}}, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  tdb.sql("UPDATE schedule_runs SET status = 'done' WHERE run_id = " +
          std::to_string(run->run.run_id));
  const std::string orphan =
      "SELECT count(*) FROM schedule_items WHERE site_code = 'B2' AND "
      "status = 'aborted'";
  while (scalar(orphan) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto produced = scalar("SELECT count(*) FROM production_orders");
  const auto batch_running =
      scalar("SELECT count(*) FROM schedule_runs WHERE kind = 'batch' AND status = 'running'");
  m.stop();
  EXPECT_EQ(scalar(orphan), 1) << "the reaper never aborted the orphan";
  EXPECT_EQ(batch_running, 1) << "the orphan was reaped only after the batch (" << produced
                              << " of " << kOrders << " produced)";
  EXPECT_LT(produced, kOrders);
}

INSTANTIATE_TEST_SUITE_P(Engines, MaintenanceReaperTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
