// Re-queueing's races (API.md "Console actions"): two re-queues of the same orders at once,
// and re-queues racing the runs that pick the orders. Their own program (race_tests).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "contract/scheduling_fixture.hpp"

namespace onceorder::testing {
namespace {

// Fails every order while `failing` is set (to use up attempts), then produces.
class UntilToldFailStep final : public ProductionStep {
 public:
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    if (failing.load()) return Status(Code::internal, "machine jammed");
    return standard_production_step()->produce(claim, issuer);
  }
  std::atomic<bool> failing{true};
};

class RequeueRaceTest : public SchedulingTest {
 protected:
  SchedulerOptions exhausting_opts(int workers = 1) {
    SchedulerOptions o = opts(workers);
    o.max_attempts = 1;
    o.claim_batch = 8;
    o.default_step = step_;
    return o;
  }
  // `n` orders, each with its one attempt failed.
  std::vector<OrderKey> exhausted(Scheduler& s, const std::string& prefix, int n) {
    step_->failing = true;
    auto orders = make_orders("S1", prefix, n);
    EXPECT_TRUE(s.import_source_orders(orders, soon()).ok());
    std::vector<OrderKey> keys;
    for (const auto& o : orders) keys.push_back(o.key);
    // A manual run of these only: an earlier round's re-queued orders keep their attempt.
    auto run = s.create_run(RunKind::manual, keys, soon(60));
    EXPECT_TRUE(run.ok());
    if (run.ok()) {
      EXPECT_TRUE(s.process_run(run->run.run_id).ok());
    }
    step_->failing = false;
    return keys;
  }
  std::shared_ptr<UntilToldFailStep> step_ = std::make_shared<UntilToldFailStep>();
};

TEST_P(RequeueRaceTest, TwoRequeuesOfTheSameOrdersAtOnceCountOnceRace) {
  constexpr int kOrders = 200, kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    Scheduler setup(*db_, exhausting_opts());
    const auto keys = exhausted(setup, "Q" + std::to_string(round) + "-", kOrders);
    Scheduler a(*db_, exhausting_opts()), b(*db_, exhausting_opts());  // two processes
    std::barrier start(2);
    Result<RequeueOutcome> ra = Status(Code::internal, "not run"), rb = ra;
    std::thread ta([&] {
      start.arrive_and_wait();
      ra = a.requeue(keys, false, soon(60));
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      rb = b.requeue(keys, false, soon(60));
    });
    ta.join();
    tb.join();
    ASSERT_TRUE(ra.ok()) << ra.status().to_string();
    ASSERT_TRUE(rb.ok()) << rb.status().to_string();
    // Each key re-queued by exactly one of them; the other says it was not exhausted.
    EXPECT_EQ(ra->requeued.size() + rb->requeued.size(), static_cast<size_t>(kOrders));
    EXPECT_EQ(ra->skipped.size() + rb->skipped.size(), static_cast<size_t>(kOrders));
    for (const auto* r : {&*ra, &*rb})
      for (const Skipped& sk : r->skipped) EXPECT_EQ(sk.reason, "not_exhausted");
    // One fresh attempt each, not two: a run picks each once, and a failure ends it again.
    const std::string like = " LIKE 'Q" + std::to_string(round) + "-%'";
    EXPECT_EQ(count("SELECT count(*) FROM source_orders WHERE requeued_failures = 1 AND "
                    "order_no" +
                    like),
              kOrders);
  }
  Scheduler s(*db_, exhausting_opts());
  auto run = s.create_run(RunKind::batch, std::nullopt, soon(60));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->run.counts.wait, kOrders * kRounds);
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  EXPECT_EQ(count("SELECT count(*) FROM production_orders"), kOrders * kRounds);
  expect_invariants_hold();
}

TEST_P(RequeueRaceTest, RequeuesRacingRunsNeverProduceAnOrderTwiceRace) {
  constexpr int kOrders = 300, kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::string prefix = "P" + std::to_string(round) + "-";
    Scheduler setup(*db_, exhausting_opts());
    const auto keys = exhausted(setup, prefix, kOrders);
    // Two re-queues and two runs (a batch over every candidate, a manual one naming the
    // orders) at the same instant, each in a process of its own; then runs until none is
    // left. Whichever order they meet in, each order is produced once.
    Scheduler q1(*db_, exhausting_opts()), q2(*db_, exhausting_opts());
    Scheduler batch(*db_, exhausting_opts(2)), manual(*db_, exhausting_opts(2));
    std::barrier start(4);
    Status s1, s2, s3, s4;
    std::thread t1([&] {
      start.arrive_and_wait();
      s1 = q1.requeue(keys, false, soon(60)).status();
    });
    std::thread t2([&] {
      start.arrive_and_wait();
      // Half the keys, in reverse: another lock order is still one (the service sorts).
      std::vector<OrderKey> half(keys.rbegin(), keys.rbegin() + kOrders / 2);
      s2 = q2.requeue(half, false, soon(60)).status();
    });
    std::thread t3([&] {
      start.arrive_and_wait();
      for (int i = 0; i < 3 && s3.ok(); ++i) {
        auto run = batch.create_run(RunKind::batch, std::nullopt, soon(60));
        s3 = run.ok() ? batch.process_run(run->run.run_id).status() : run.status();
      }
    });
    std::thread t4([&] {
      start.arrive_and_wait();
      for (int i = 0; i < 3 && s4.ok(); ++i) {
        auto run = manual.create_run(RunKind::manual, keys, soon(60));
        s4 = run.ok() ? manual.process_run(run->run.run_id).status() : run.status();
      }
    });
    for (auto* t : {&t1, &t2, &t3, &t4}) t->join();
    ASSERT_TRUE(s1.ok()) << s1.to_string();
    ASSERT_TRUE(s2.ok()) << s2.to_string();
    ASSERT_TRUE(s3.ok()) << s3.to_string();
    ASSERT_TRUE(s4.ok()) << s4.to_string();
    // What the racing runs did not take, the next run does.
    Scheduler rest(*db_, exhausting_opts());
    auto run = rest.create_run(RunKind::batch, std::nullopt, soon(60));
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE(rest.process_run(run->run.run_id).ok());
    const std::string like = " LIKE '" + prefix + "%'";
    EXPECT_EQ(count("SELECT count(*) FROM production_orders WHERE order_no" + like), kOrders);
    EXPECT_EQ(count("SELECT count(*) FROM (SELECT order_no FROM schedule_items WHERE status = "
                    "'success' GROUP BY site_code, order_no, lot_no HAVING count(*) > 1) x"),
              0);
    EXPECT_EQ(count("SELECT count(*) FROM source_orders WHERE requeued_failures > 1"), 0);
  }
  expect_invariants_hold();
}

INSTANTIATE_TEST_SUITE_P(Engines, RequeueRaceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
