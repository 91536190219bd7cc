// Push delivery for real (docs/EVENTS.md §3): a `serve` process (ONCEORDER_BIN) with one
// delivery worker, an endpoint put over HTTP, orders placed over HTTP, and a local receiver
// (e2e/webhook_receiver.hpp) that logs every POST and answers as each test says: each event
// arrives once, signed, keyed by its id; a 500 is retried with backoff and the same body; a
// connection dropped after the request is sent again (at_least_once) or left in doubt for the
// operator (at_most_once); a stall past the timeout likewise; max_attempts ends in dead and
// redeliver sends it again; a cancel waits for its order's placement. On every engine.
#include <gtest/gtest.h>

#include <ctime>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/test_db.hpp"
#include "e2e/http_client.hpp"
#include "e2e/serve_process.hpp"
#include "e2e/webhook_receiver.hpp"
#include "onceorder/core/signature.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kDeliverySecret = "http-delivery-secret-0123456789";

// True once `done` holds, false after `wait`.
bool delivery_eventually(const std::function<bool()>& done, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// A POST as docs/EVENTS.md "A delivery" says: signed over the raw body with the endpoint's
// secret, keyed by the event's id, typed.
void expect_signed_delivery(const Received& r) {
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/hook");
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(verify_signature(r.header("onceorder-signature"), kDeliverySecret, r.body,
                             static_cast<std::int64_t>(std::time(nullptr))),
            SignatureCheck::ok)
      << r.header("onceorder-signature");
  const auto event = json::parse(r.body);
  EXPECT_EQ(r.header("idempotency-key"), std::to_string(event["id"].get<std::int64_t>()));
  EXPECT_EQ(r.header("onceorder-event-type"), event["type"]);
}

class HttpDeliveryTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDb>(GetParam());
    serve_ = std::make_unique<ServeProcess>(
        db_->migrated_url(),
        std::vector<std::string>{"--delivery-workers", "1", "--delivery-timeout", "1s",
                                 "--delivery-lease", "10s"});
    const std::uint16_t port = serve_->port();
    ASSERT_NE(port, 0) << serve_->output();
    client_ = std::make_unique<HttpClient>(port);
    const auto stock =
        client_->put("/v1/warehouses/1/skus/101", R"({"price_cents":100,"available":100})");
    ASSERT_EQ(stock.status, 201) << stock.body;
  }

  void put_endpoint(const std::string& url, const std::string& mode, int max_attempts = 10) {
    const json body = {{"url", url},
                       {"secret", kDeliverySecret},
                       {"types", {"order.placed", "order.cancelled"}},
                       {"delivery", mode},
                       {"max_attempts", max_attempts},
                       {"backoff_seconds", 1}};
    const auto r = client_->put("/v1/endpoints/erp", body.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  std::string place_order(const std::string& key) {
    const auto r = client_->post(
        "/v1/orders", R"({"customer_id":7,"warehouse_id":1,"lines":[{"sku_id":101,"quantity":1}]})",
        {{"Idempotency-Key", key}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["order_id"].get<std::string>() : std::string();
  }
  json deliveries(const std::string& status = {}) {
    const auto r = client_->get("/v1/endpoints/erp/deliveries" +
                                (status.empty() ? std::string() : "?status=" + status));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json()["deliveries"] : json::array();
  }
  // The one delivery of `status`, once there is one (null after `wait`).
  json one_delivery(const std::string& status, std::chrono::milliseconds wait = 10s) {
    json found;
    delivery_eventually(
        [&] {
          const json list = deliveries(status);
          if (list.size() == 1) found = list[0];
          return list.size() == 1;
        },
        wait);
    return found;
  }

  std::unique_ptr<TestDb> db_;
  std::unique_ptr<ServeProcess> serve_;
  std::unique_ptr<HttpClient> client_;
};

TEST_P(HttpDeliveryTest, EachEventIsDeliveredOnceSignedAndKeyedByItsId) {
  WebhookReceiver receiver;
  put_endpoint(receiver.url(), "at_least_once");
  std::set<std::string> orders;
  for (const char* key : {"o1", "o2", "o3"}) orders.insert(place_order(key));
  ASSERT_TRUE(receiver.wait_for(3, 15s)) << serve_->output();
  std::this_thread::sleep_for(1500ms);  // nothing more comes
  const auto got = receiver.received();
  ASSERT_EQ(got.size(), 3u);
  std::set<std::string> delivered_orders, keys;
  for (const auto& r : got) {
    expect_signed_delivery(r);
    const auto event = json::parse(r.body);
    EXPECT_EQ(event["type"], "order.placed");
    EXPECT_EQ(r.header("onceorder-attempt"), "1");
    delivered_orders.insert(event["data"]["order_id"].get<std::string>());
    keys.insert(r.header("idempotency-key"));
  }
  EXPECT_EQ(delivered_orders, orders);
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_TRUE(delivery_eventually([&] { return deliveries("delivered").size() == 3; }, 5s));
}

TEST_P(HttpDeliveryTest, A500IsRetriedWithBackoffAndTheSameBody) {
  WebhookReceiver receiver(
      [](const Received&, int i) { return Reaction::answer(i == 0 ? 500 : 200); });
  put_endpoint(receiver.url(), "at_least_once");
  place_order("o1");
  ASSERT_TRUE(receiver.wait_for(2, 15s)) << serve_->output();
  const auto got = receiver.received();
  expect_signed_delivery(got[1]);
  EXPECT_EQ(got[1].body, got[0].body);
  EXPECT_EQ(got[1].header("idempotency-key"), got[0].header("idempotency-key"));
  EXPECT_EQ(got[0].header("onceorder-attempt"), "1");
  EXPECT_EQ(got[1].header("onceorder-attempt"), "2");
  // backoff_seconds 1, spread by ±50 %: at least half a second.
  EXPECT_GE(got[1].at - got[0].at, 450ms);
  const json d = one_delivery("delivered");
  ASSERT_FALSE(d.is_null());
  EXPECT_EQ(d["attempt"], 2);
}

TEST_P(HttpDeliveryTest, ADroppedConnectionIsSentAgainAtLeastOnce) {
  WebhookReceiver receiver(
      [](const Received&, int i) { return i == 0 ? Reaction::drop() : Reaction::answer(200); });
  put_endpoint(receiver.url(), "at_least_once");
  place_order("o1");
  ASSERT_TRUE(receiver.wait_for(2, 15s)) << serve_->output();
  const auto got = receiver.received();
  EXPECT_EQ(got[0].status, 0) << "the first was read and dropped";
  EXPECT_EQ(got[1].body, got[0].body);
  EXPECT_EQ(got[1].header("idempotency-key"), got[0].header("idempotency-key"));
  EXPECT_FALSE(one_delivery("delivered").is_null());
}

// The operator's `false`: it did not arrive, so it is sent again — exactly once.
TEST_P(HttpDeliveryTest, ADroppedConnectionIsInDoubtAtMostOnceUntilResolved) {
  WebhookReceiver receiver(
      [](const Received&, int i) { return i == 0 ? Reaction::drop() : Reaction::answer(200); });
  put_endpoint(receiver.url(), "at_most_once");
  place_order("o1");
  ASSERT_TRUE(receiver.wait_for(1, 15s)) << serve_->output();
  const json doubt = one_delivery("in_doubt");
  ASSERT_FALSE(doubt.is_null()) << deliveries().dump();
  std::this_thread::sleep_for(2s);  // past any backoff: never sent again on its own
  EXPECT_EQ(receiver.received().size(), 1u);

  const json resolve = {{"event_id", doubt["event_id"]}, {"delivered", false}};
  const auto r = client_->post("/v1/endpoints/erp/resolve", resolve.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(receiver.wait_for(2, 15s)) << serve_->output();
  EXPECT_FALSE(one_delivery("delivered").is_null());
  std::this_thread::sleep_for(1500ms);
  const auto got = receiver.received();
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].body, got.at(0).body);
}

// The operator's `true`: it did arrive, so nothing is sent again.
TEST_P(HttpDeliveryTest, AStallPastTheTimeoutIsInDoubtAtMostOnce) {
  WebhookReceiver receiver([](const Received&, int) { return Reaction{200, 1500ms}; });
  put_endpoint(receiver.url(), "at_most_once");
  place_order("o1");
  const json doubt = one_delivery("in_doubt", 15s);
  ASSERT_FALSE(doubt.is_null()) << deliveries().dump() << serve_->output();
  EXPECT_NE(doubt["last_error"].get<std::string>().find("timed out"), std::string::npos)
      << doubt.dump();
  const json resolve = {{"event_id", doubt["event_id"]}, {"delivered", true}};
  const auto r = client_->post("/v1/endpoints/erp/resolve", resolve.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["status"], "delivered");
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(receiver.received().size(), 1u);
}

TEST_P(HttpDeliveryTest, MaxAttemptsEndInDeadAndRedeliverSendsAgain) {
  WebhookReceiver receiver(
      [](const Received&, int i) { return Reaction::answer(i < 2 ? 503 : 200); });
  put_endpoint(receiver.url(), "at_least_once", /*max_attempts=*/2);
  place_order("o1");
  ASSERT_TRUE(receiver.wait_for(2, 15s)) << serve_->output();
  const json dead = one_delivery("dead");
  ASSERT_FALSE(dead.is_null()) << deliveries().dump();
  EXPECT_EQ(dead["attempt"], 2);
  EXPECT_EQ(dead["last_status"], 503);
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(receiver.received().size(), 2u) << "a dead delivery is not sent";

  const json ids = {{"event_ids", {dead["event_id"]}}};
  const auto r = client_->post("/v1/endpoints/erp/redeliver", ids.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(receiver.wait_for(3, 15s)) << serve_->output();
  EXPECT_FALSE(one_delivery("delivered").is_null());
  const auto got = receiver.received();
  EXPECT_EQ(got[2].body, got[0].body);
  EXPECT_EQ(got[2].status, 200);
}

TEST_P(HttpDeliveryTest, ACancelArrivesAfterItsPlacementEvenWhenThatFailedFirst) {
  WebhookReceiver receiver(
      [](const Received&, int i) { return Reaction::answer(i == 0 ? 500 : 200); });
  put_endpoint(receiver.url(), "at_least_once");
  const std::string order = place_order("o1");
  const auto cancel = client_->post("/v1/orders/" + order + "/cancel", "");
  ASSERT_EQ(cancel.status, 200) << cancel.body;
  ASSERT_TRUE(receiver.wait_for(3, 15s)) << serve_->output();
  std::this_thread::sleep_for(1s);
  const auto got = receiver.received();
  ASSERT_EQ(got.size(), 3u);
  std::vector<std::string> types;
  for (const auto& r : got) {
    expect_signed_delivery(r);
    types.push_back(json::parse(r.body)["type"].get<std::string>());
  }
  EXPECT_EQ(types, (std::vector<std::string>{"order.placed", "order.placed", "order.cancelled"}));
  EXPECT_EQ(got[0].status, 500);
  EXPECT_EQ(got[1].status, 200);
  EXPECT_GE(got[2].at, got[1].at);
}

INSTANTIATE_TEST_SUITE_P(Engines, HttpDeliveryTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
