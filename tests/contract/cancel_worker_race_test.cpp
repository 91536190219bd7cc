// The cancel against a worker that has fenced its claim and is producing, on every engine,
// without the interleaving explorer: the worker's production step holds until the cancel
// waits behind it, then writes its production order and commits. The cancel must wait for
// the worker on the source order it locks, then see the production order and answer
// in_production. End states alone cannot tell a lock that went missing (the production
// order's foreign key, or the cancel trigger, would still refuse the wrong outcome, and
// the answer is mapped to the same in_production): the test also counts deadlocks and
// second-line refusals, which must be zero.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <future>
#include <latch>
#include <thread>

#include "common/refusals.hpp"
#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

store::Clock::time_point race_deadline() { return store::Clock::now() + 30s; }

// A production step that signals it runs (its claim fenced, inside the worker's
// transaction), waits to be let go, then numbers its production order.
class HeldProductionStep final : public ProductionStep {
 public:
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    producing_.count_down();
    go_.wait();
    return issuer.issue(production_scope(claim.key.site_code), "held production");
  }
  void wait_producing() { producing_.wait(); }
  void let_go() { go_.count_down(); }

 private:
  std::latch producing_{1};
  std::latch go_{1};
};

class CancelWorkerRaceTest : public ::testing::TestWithParam<Engine> {};

TEST_P(CancelWorkerRaceTest, ACancelBehindAProducingWorkerWaitsAndAnswersInProductionRace) {
  TestDb tdb(GetParam());
  (void)tdb.open();  // migrated
  auto url = parse_db_url(tdb.url());
  ASSERT_TRUE(url.ok());
  Refusals seen;
  auto cancel_db = open_counting_refusals(*url, {.pool_size = 2}, seen);
  auto worker_db = open_counting_refusals(*url, {.pool_size = 2}, seen);
  Intake intake(*cancel_db);
  Stock stock(*cancel_db);
  auto step = std::make_shared<HeldProductionStep>();
  SchedulerOptions options;
  options.default_step = step;
  Scheduler scheduler(*worker_db, options);

  ASSERT_TRUE(stock.put_sku(1, 101, 100, 10, race_deadline()).ok());
  auto placed = intake.place({7, 1, {{101, 1}}, "held"}, race_deadline());
  ASSERT_TRUE(placed.ok()) << placed.status().to_string();
  const Order order = placed->order;
  auto run = scheduler.create_run(
      RunKind::manual, std::vector<OrderKey>{{"W1", order.order_no, "1"}}, race_deadline());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  seen.reset();

  auto worker =
      std::async(std::launch::async, [&] { return scheduler.process_run(run->run.run_id); });
  step->wait_producing();
  auto cancel = std::async(std::launch::async,
                           [&] { return intake.cancel(order.order_id, race_deadline()); });
  // The cancel must be waiting behind the worker before the worker goes on: on PostgreSQL
  // a lock wait the server reports; SQLite's one writer waits for the worker's transaction.
  if (GetParam() == Engine::postgres) {
    const auto give_up = store::Clock::now() + 10s;
    while (tdb.sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                   "AND wait_event_type = 'Lock'")
               .at(0)
               .i64(0) == 0) {
      ASSERT_LT(store::Clock::now(), give_up) << "the cancel never waited for the worker";
      std::this_thread::sleep_for(5ms);
    }
  } else {
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_EQ(cancel.wait_for(0s), std::future_status::timeout) << "the cancel did not wait";
  step->let_go();
  auto done = worker.get();
  auto cancelled = cancel.get();

  ASSERT_TRUE(done.ok()) << done.status().to_string();
  ASSERT_FALSE(cancelled.ok()) << "a produced order was cancelled";
  EXPECT_EQ(cancelled.status().code(), Code::in_production) << cancelled.status().to_string();
  EXPECT_EQ(tdb.sql(fmt::format("SELECT count(*) FROM production_orders WHERE order_no = '{}'",
                                order.order_no))
                .at(0)
                .i64(0),
            1);
  EXPECT_EQ(seen.deadlocks, 0) << seen.describe();
  EXPECT_EQ(seen.second_line, 0) << "the second line had to refuse: " << seen.describe();
  expect_invariants_hold(*cancel_db);
}

INSTANTIATE_TEST_SUITE_P(Engines, CancelWorkerRaceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
