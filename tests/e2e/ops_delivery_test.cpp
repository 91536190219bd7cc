// The outbox on /metrics (docs/OPERATIONS.md, "Events and delivery"), on every engine: the
// monitor's background read shows every endpoint and named consumer, and forgets a deleted one;
// the feed's horizon age shows a transaction left open (PostgreSQL; always 0 on SQLite); a real
// `serve` (ONCEORDER_BIN) whose endpoint's receiver is not there counts the dead delivery in
// its counter and in onceorder_deliveries_dead{endpoint}, and drops the endpoint's series once
// it is deleted.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/test_db.hpp"
#include "e2e/http_client.hpp"
#include "e2e/serve_process.hpp"
#include "http/metrics.hpp"
#include "http/ops_monitor.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/outbox.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kGaugeSecret = "ops-delivery-secret-0123456789";
// Nothing listens on the discard port of the loopback: a connection is refused at once.
constexpr const char* kClosedUrl = "http://127.0.0.1:9/hook";

// True once `done` holds, false after `wait`.
bool gauges_eventually(const std::function<bool()>& done, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// The outbox's gauges as /metrics writes them from the monitor's last read.
std::string gauges_text(const http::OpsMonitor& monitor) {
  std::string out;
  http::prom_outbox_gauges(out, monitor.outbox());
  return out;
}

bool gauges_contain(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// Every sample of a scrape by its series text (`name{labels}`).
std::map<std::string, double> gauges_samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space != std::string::npos) out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

EndpointSpec gauge_endpoint(const std::string& name, std::optional<FeedPosition> after) {
  EndpointSpec spec;
  spec.name = name;
  spec.url = kClosedUrl;
  spec.secret = kGaugeSecret;
  spec.after = after;
  return spec;
}

class OpsOutboxGaugesTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    tdb_ = std::make_unique<TestDb>(GetParam());
    db_ = tdb_->open();
    intake_ = std::make_unique<Intake>(*db_);
    auto sku = Stock(*db_).put_sku(1, 101, 100, 1000, soon());
    ASSERT_TRUE(sku.ok()) << sku.status().to_string();
  }
  void place(const std::string& key) {
    auto placed = intake_->place({7, 1, {{101, 1}}, key}, soon());
    ASSERT_TRUE(placed.ok()) << placed.status().to_string();
  }

  std::unique_ptr<TestDb> tdb_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<Intake> intake_;
};

TEST_P(OpsOutboxGaugesTest, EveryEndpointAndConsumerShowsUntilItIsDeleted) {
  place("g-1");
  place("g-2");
  Outbox outbox(*db_);
  ASSERT_TRUE(outbox.put_endpoint(gauge_endpoint("stays", FeedPosition{}), soon()).ok());
  ASSERT_TRUE(outbox.put_endpoint(gauge_endpoint("gone", std::nullopt), soon()).ok());
  ASSERT_TRUE(outbox.dispatch(500, soon()).ok());  // "stays" takes both events
  ASSERT_TRUE(outbox.put_consumer("erp", FeedPosition{}, soon()).ok());
  ASSERT_TRUE(outbox.put_consumer("gone-reader", FeedPosition{}, soon()).ok());

  http::OpsMonitor monitor(*db_, 0ms, nullptr, 50ms);
  std::string text;
  ASSERT_TRUE(gauges_eventually(
      [&] {
        text = gauges_text(monitor);
        return text.find("consumer=\"gone-reader\"") != std::string::npos;
      },
      10s))
      << text;
  for (const char* line : {
           "onceorder_deliveries_pending{endpoint=\"stays\"} 2",
           "onceorder_deliveries_dead{endpoint=\"stays\"} 0",
           "onceorder_deliveries_in_doubt{endpoint=\"stays\"} 0",
           "onceorder_deliveries_pending{endpoint=\"gone\"} 0",  // none yet: zeros, not absent
           "onceorder_delivery_lag_seconds{endpoint=\"gone\"} 0",
           "onceorder_consumer_lag_events{consumer=\"erp\"} 2",
           "onceorder_consumer_lag_events{consumer=\"gone-reader\"} 2",
       }) {
    EXPECT_TRUE(gauges_contain(text, line)) << line << "\n" << text;
  }
  EXPECT_GE(gauges_samples(text)["onceorder_delivery_lag_seconds{endpoint=\"stays\"}"], 0.0);

  ASSERT_TRUE(outbox.delete_endpoint("gone", soon()).ok());
  ASSERT_TRUE(outbox.delete_consumer("gone-reader", soon()).ok());
  gauges_eventually(
      [&] {
        text = gauges_text(monitor);
        return text.find("\"gone") == std::string::npos;
      },
      10s);
  EXPECT_EQ(text.find("endpoint=\"gone\""), std::string::npos) << text;
  EXPECT_EQ(text.find("consumer=\"gone-reader\""), std::string::npos) << text;
  EXPECT_TRUE(gauges_contain(text, "onceorder_deliveries_pending{endpoint=\"stays\"} 2")) << text;
  EXPECT_TRUE(gauges_contain(text, "onceorder_consumer_lag_events{consumer=\"erp\"} 2")) << text;
  monitor.request_stop();
  monitor.join();
}

// PostgreSQL: an event committed after another transaction took its id is held back from the
// feed until that one ends, and the gauge says for how long. SQLite never holds one back.
TEST_P(OpsOutboxGaugesTest, TheHorizonAgeShowsATransactionLeftOpen) {
  std::unique_ptr<RawPg> holder;
  if (GetParam() == Engine::postgres) {
    holder = std::make_unique<RawPg>(tdb_->url());
    holder->exec("BEGIN");
    holder->scalar("SELECT pg_current_xact_id()");  // an id: the horizon stays below it
  }
  place("h-1");
  std::this_thread::sleep_for(1100ms);
  http::OpsMonitor monitor(*db_, 0ms, nullptr, 50ms);
  double held = -1;
  gauges_eventually(
      [&] {
        const auto samples = gauges_samples(gauges_text(monitor));
        const auto it = samples.find("onceorder_feed_horizon_age_seconds");
        if (it != samples.end()) held = it->second;
        return held >= 1.0 || (held >= 0 && GetParam() == Engine::sqlite);
      },
      10s);
  if (GetParam() == Engine::postgres) {
    EXPECT_GE(held, 1.0) << "the order's event is held back behind the open transaction";
    holder->exec("COMMIT");
  } else {
    EXPECT_EQ(held, 0.0);
  }
  monitor.request_stop();
  monitor.join();
}

INSTANTIATE_TEST_SUITE_P(Engines, OpsOutboxGaugesTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

class OpsDeliveryMetricsTest : public ::testing::TestWithParam<Engine> {};

// An endpoint whose receiver is not there, one attempt: the delivery dies, the process's
// counter and the endpoint's gauge say so; once the endpoint is deleted its series are gone.
TEST_P(OpsDeliveryMetricsTest, ADeadDeliveryShowsAndADeletedEndpointGoes) {
  TestDb db(GetParam());
  ServeProcess serve(db.migrated_url(), {"--delivery-workers", "1", "--delivery-timeout", "1s",
                                         "--delivery-lease", "10s"});
  ASSERT_NE(serve.port(), 0) << serve.output();
  HttpClient http(serve.port(), 10s);
  ASSERT_EQ(
      http.put("/v1/warehouses/1/skus/101", R"({"price_cents": 100, "available": 10})").status,
      201);
  const json endpoint = {{"url", kClosedUrl},
                         {"secret", kGaugeSecret},
                         {"types", {"order.placed"}},
                         {"max_attempts", 1}};
  ASSERT_EQ(http.put("/v1/endpoints/x", endpoint.dump()).status, 201);
  ASSERT_EQ(http.post("/v1/orders",
                      R"({"customer_id": 7, "warehouse_id": 1,
                          "lines": [{"sku_id": 101, "quantity": 1}]})",
                      {{"Idempotency-Key", "dead-1"}})
                .status,
            201);

  const std::string dead = R"(onceorder_deliveries_dead{endpoint="x"})";
  std::map<std::string, double> m;
  std::string text;
  gauges_eventually(
      [&] {
        text = http.get("/metrics").body;
        m = gauges_samples(text);
        return m[dead] == 1;
      },
      20s);
  EXPECT_EQ(m[dead], 1) << text;
  EXPECT_EQ(m[R"(onceorder_deliveries_total{outcome="dead"})"], 1) << text;
  EXPECT_EQ(m[R"(onceorder_deliveries_total{outcome="delivered"})"], 0) << text;
  EXPECT_EQ(m[R"(onceorder_deliveries_pending{endpoint="x"})"], 0) << text;
  EXPECT_EQ(m[R"(onceorder_deliveries_in_doubt{endpoint="x"})"], 0) << text;
  EXPECT_EQ(m["onceorder_delivery_latency_seconds_count"], 0) << text;
  const auto listed = http.get("/v1/endpoints/x/deliveries?status=dead");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.json()["deliveries"].size(), 1u) << listed.body;

  ASSERT_EQ(http.request(Method::delete_, "/v1/endpoints/x").status, 204);
  gauges_eventually(
      [&] {
        text = http.get("/metrics").body;
        return text.find("endpoint=\"x\"") == std::string::npos;
      },
      20s);
  EXPECT_EQ(text.find("endpoint=\"x\""), std::string::npos) << text;
  // The process's counters stay: they count what happened, not what is there.
  EXPECT_EQ(gauges_samples(text)[R"(onceorder_deliveries_total{outcome="dead"})"], 1) << text;
}

INSTANTIATE_TEST_SUITE_P(Engines, OpsDeliveryMetricsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
