// The outbox's contract tests (outbox_test.cpp) and races (outbox_race_test.cpp): a database
// with the services that write facts, the Outbox, and a Sender whose answers a test scripts.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/outbox.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {

// Records every request and answers from a script (then `otherwise`).
class ScriptedSender : public Sender {
 public:
  std::vector<SendReport> send(std::span<const SendRequest> requests,
                               std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    std::vector<SendReport> out;
    for (const SendRequest& r : requests) {
      sent.push_back(r);
      if (script.empty()) {
        out.push_back(otherwise);
      } else {
        out.push_back(script.front());
        script.pop_front();
      }
    }
    return out;
  }
  // The event ids sent, in order (a re-send appears again).
  std::vector<std::int64_t> sent_ids() {
    std::lock_guard lock(mu_);
    std::vector<std::int64_t> ids;
    for (const SendRequest& r : sent) ids.push_back(nlohmann::json::parse(r.body)["id"]);
    return ids;
  }

  std::mutex mu_;
  std::vector<SendRequest> sent;
  std::deque<SendReport> script;
  SendReport otherwise{SendResult::delivered, 200, ""};
};

// How many outcomes Outbox::settle recorded (their fence held).
inline std::size_t recorded(const Result<std::vector<bool>>& r) {
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? static_cast<std::size_t>(std::count(r->begin(), r->end(), true)) : 0;
}

inline SendReport answered(int status) {
  return {status >= 200 && status < 300 ? SendResult::delivered : SendResult::refused, status,
          status >= 300 ? "answered " + std::to_string(status) : ""};
}
inline SendReport unknown_outcome() { return {SendResult::unknown, std::nullopt, "broken"}; }

// PostgreSQL's feed holds back every event above the oldest transaction still running in the
// whole cluster (docs/EVENTS.md, "The feed never skips"), and the other test programs share the
// cluster: before a test reads what it just wrote, it waits until every committed event is
// below that horizon (at most 30 s). SQLite: nothing to wait for.
inline void wait_feed_settled(TestDb& tdb, Engine engine) {
  if (engine != Engine::postgres) return;
  const auto until = store::Clock::now() + std::chrono::seconds(30);
  while (tdb.sql("SELECT count(*) FROM events WHERE tx >= oo_event_horizon()")[0].i64(0) > 0) {
    ASSERT_LT(store::Clock::now(), until) << "the feed's horizon did not pass the last event";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class OutboxTest : public ::testing::TestWithParam<Engine> {
 protected:
  OutboxTest() : tdb_(GetParam()), db_(tdb_.open()), outbox_(*db_) {}

  Intake& intake() {
    if (!intake_) {
      intake_ = std::make_unique<Intake>(*db_);
      EXPECT_TRUE(Stock(*db_).put_sku(1, 101, 100, 1000000, soon()).ok());
    }
    return *intake_;
  }
  // A placed order of SKU 101 (plenty in stock) for `customer` under `key`.
  std::int64_t place(std::int64_t customer, const std::string& key, std::int64_t quantity = 1) {
    auto placed = intake().place({customer, 1, {{101, quantity}}, key}, soon());
    EXPECT_TRUE(placed.ok()) << placed.status().to_string();
    return placed.ok() ? placed->order.order_id : 0;
  }
  void settle_feed() { wait_feed_settled(tdb_, GetParam()); }
  // One worker pass, once what was written is readable.
  Result<int> run(DeliveryWorker& w) {
    settle_feed();
    return w.run_once();
  }
  std::vector<Event> all_events() {
    settle_feed();
    auto page = outbox_.read({}, {}, EventLimits::kFeedPage, soon());
    EXPECT_TRUE(page.ok()) << page.status().to_string();
    return page.ok() ? page->events : std::vector<Event>{};
  }
  EndpointSpec endpoint(const std::string& name, DeliveryMode mode = DeliveryMode::at_least_once) {
    EndpointSpec s;
    s.name = name;
    s.url = "http://127.0.0.1:9/hook";
    s.secret = "0123456789abcdef-secret";
    s.mode = mode;
    s.max_attempts = 3;
    s.backoff_seconds = 1;
    s.after = FeedPosition{};  // from the start
    return s;
  }
  DeliveryWorker worker(ScriptedSender& sender,
                        std::chrono::milliseconds lease = std::chrono::seconds(30)) {
    DeliveryWorkerOptions o;
    o.owner = "test-worker";
    o.lease = lease;
    o.send_timeout = std::min(lease / 2, std::chrono::milliseconds(10000));
    o.sweep_interval = std::chrono::milliseconds(0);
    return DeliveryWorker(*db_, sender, o, metrics_);
  }
  std::string status_of(const std::string& ep, std::int64_t event_id) {
    auto rows = tdb_.sql("SELECT status FROM deliveries WHERE endpoint = '" + ep +
                         "' AND event_id = " + std::to_string(event_id));
    return rows.empty() ? "missing" : rows.front().text(0);
  }
  // Makes every pending delivery due now (a retry's backoff is seconds); one set aside to wait
  // for an earlier one of its key (PostgreSQL's next_at 'infinity') stays set aside.
  void make_due() {
    tdb_.sql(
        "UPDATE deliveries SET next_at = created_at WHERE status = 'pending' AND next_at <> "
        "'infinity'");
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Outbox outbox_;
  std::unique_ptr<Intake> intake_;
  DeliveryMetrics metrics_;
};

}  // namespace onceorder::testing
