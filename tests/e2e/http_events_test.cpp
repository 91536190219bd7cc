// The outbox over HTTP (API.md "Events, consumers and endpoints") on every engine, through the
// real server: the feed pages without repeating or skipping, filters by type and refuses bad
// input; the long poll answers soon after an event, empty after its wait, at once when the
// server stops, and holds no worker while it waits; consumers, endpoints and deliveries with
// their errors; who may call what; the audit trail without an endpoint's secret.
#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "e2e/http_fixture.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = store::Clock;

constexpr const char* kEndpointSecret = "a-secret-of-at-least-16-bytes";

class EventsHttpTest : public HttpTest {
 protected:
  void SetUp() override {
    HttpTest::SetUp();
    if (HasFatalFailure()) return;
    auto sku = Stock(db()).put_sku(1, 101, 100, 1000000, later());
    ASSERT_TRUE(sku.ok()) << sku.status().to_string();
  }

  static Clock::time_point later() { return Clock::now() + 10s; }

  // An order of customer 7 placed under `key`: its order.placed event is in the feed.
  std::int64_t place(const std::string& key) {
    auto placed = intake().place({7, 1, {{101, 1}}, key}, later());
    EXPECT_TRUE(placed.ok()) << placed.status().to_string();
    return placed.ok() ? placed->order.order_id : 0;
  }
  std::vector<Event> feed() {
    auto page = Outbox(db()).read({}, {}, EventLimits::kFeedPage, later());
    EXPECT_TRUE(page.ok()) << page.status().to_string();
    return page.ok() ? page->events : std::vector<Event>{};
  }
  std::string head() {
    auto at = Outbox(db()).head(later());
    EXPECT_TRUE(at.ok()) << at.status().to_string();
    return at.ok() ? cursor_text(*at) : "0";
  }
  // A GET on a connection of its own, in the background (a long poll).
  std::future<HttpResponse> get_async(const std::string& target) {
    return std::async(std::launch::async, [target, p = port()] {
      HttpClient c(p, 60s);
      return c.get(target);
    });
  }
  // The fields a problem names, sorted.
  static std::vector<std::string> problem_fields(const HttpResponse& r) {
    std::vector<std::string> out;
    const json body = json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("errors")) {
      for (const json& e : body["errors"]) out.push_back(e.value("field", ""));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string endpoint_body(const std::string& url, json more = json::object()) {
    more["url"] = url;
    if (!more.contains("secret")) more["secret"] = kEndpointSecret;
    return more.dump();
  }
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST_P(EventsHttpTest, FeedPagesNeverRepeatOrSkip) {
  for (int i = 0; i < 7; ++i) place("o" + std::to_string(i));
  ASSERT_EQ(client().put("/v1/scopes/S", R"({"width": 4})").status, 201);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(client().post("/v1/scopes/S/documents", R"({"title": "t"})").status, 201);
  }
  const std::vector<Event> all = feed();
  ASSERT_EQ(all.size(), 10u);

  std::vector<std::int64_t> seen;
  std::string after = "0";
  for (int page = 0; page < 10; ++page) {
    const auto r = client().get("/v1/events?limit=3&after=" + after);
    ASSERT_EQ(r.status, 200) << r.body;
    const json body = r.json();
    for (const json& e : body["events"]) seen.push_back(e["id"].get<std::int64_t>());
    after = body["next_after"].get<std::string>();
    if (body["events"].empty()) break;
    EXPECT_LE(body["events"].size(), 3u);
  }
  std::vector<std::int64_t> want;
  for (const Event& e : all) want.push_back(e.id);
  EXPECT_EQ(seen, want);
  EXPECT_EQ(after, head());

  // Each event is sent as stored: event_json's bytes, the same as every delivery's.
  const auto whole = client().get("/v1/events");
  ASSERT_EQ(whole.status, 200);
  for (const Event& e : all) {
    EXPECT_NE(whole.body.find(event_json(e)), std::string::npos) << event_json(e);
  }
  EXPECT_EQ(whole.json()["next_after"], head());
  EXPECT_EQ(whole.json()["events"][0]["type"], "order.placed");
  EXPECT_EQ(whole.json()["events"][0]["data"]["customer_id"], 7);
}

TEST_P(EventsHttpTest, TypesTakeOnlyTheirEventsAndMovePastTheRest) {
  place("a");
  ASSERT_EQ(client().put("/v1/scopes/S", R"({"width": 4})").status, 201);
  ASSERT_EQ(client().post("/v1/scopes/S/documents", R"({"title": "t"})").status, 201);
  place("b");
  const auto r = client().get("/v1/events?types=document.issued");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json()["events"].size(), 1u) << r.body;
  EXPECT_EQ(r.json()["events"][0]["type"], "document.issued");
  // The page ends at the newest event, past the order placed after the document.
  EXPECT_EQ(r.json()["next_after"], head());
  const auto again = client().get("/v1/events?types=document.issued&after=" + head());
  EXPECT_TRUE(again.json()["events"].empty()) << again.body;
  const auto both = client().get("/v1/events?types=order.placed,document.issued,order.placed");
  EXPECT_EQ(both.json()["events"].size(), 3u) << both.body;
  EXPECT_TRUE(client().get("/v1/events?types=run.finished").json()["events"].empty());
}

TEST_P(EventsHttpTest, BadFeedQueriesAreRefusedNamingEachParameter) {
  place("a");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"after=abc", {"after"}},
      {"after=1:2:3", {"after"}},
      {"after=01:2", {"after"}},
      {"after=", {"after"}},
      {"limit=0", {"limit"}},
      {"limit=1001", {"limit"}},
      {"limit=x", {"limit"}},
      {"wait=31", {"wait"}},
      {"wait=-1", {"wait"}},
      {"wait=1.5", {"wait"}},
      {"types=order.shipped", {"types"}},
      {"types=order.placed,", {"types"}},
      {"types=", {"types"}},
      {"x=1", {"x"}},
      {"after=abc&limit=0&wait=99&types=no&y=2", {"after", "limit", "types", "wait", "y"}},
  };
  for (const auto& [query, fields] : cases) {
    const auto r = client().get("/v1/events?" + query);
    expect_problem(r, 400, "invalid_request");
    EXPECT_EQ(problem_fields(r), fields) << query << " " << r.body;
  }
  EXPECT_EQ(client().get("/v1/events?limit=1000&wait=0&after=0&types=order.placed").status, 200);
}

TEST_P(EventsHttpTest, ALongPollAnswersSoonAfterAnEventArrives) {
  const std::string after = head();
  auto poll = get_async("/v1/events?wait=10&after=" + after);
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(poll.wait_for(0s), std::future_status::timeout) << "answered without an event";
  const auto placed_at = Clock::now();
  const std::int64_t order_id = place("late");
  const HttpResponse r = poll.get();
  const double took = seconds_since(placed_at);
  EXPECT_LT(took, 1.0);
  RecordProperty("answered_after_event_ms", static_cast<int>(took * 1000));
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json()["events"].size(), 1u) << r.body;
  EXPECT_EQ(r.json()["events"][0]["key"], std::to_string(order_id));
  EXPECT_EQ(r.json()["next_after"], head());
}

TEST_P(EventsHttpTest, ALongPollAnswersEmptyAfterItsWait) {
  place("a");
  const std::string after = head();
  const auto start = Clock::now();
  const auto r = client().get("/v1/events?wait=1&after=" + after);
  const double took = seconds_since(start);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.json()["events"].empty()) << r.body;
  EXPECT_EQ(r.json()["next_after"], after);
  EXPECT_GE(took, 0.95);
  EXPECT_LT(took, 2.0);
  // Without wait, and with events to answer, nothing waits.
  const auto at_once = Clock::now();
  EXPECT_EQ(client().get("/v1/events?wait=5").json()["events"].size(), 1u);
  EXPECT_TRUE(client().get("/v1/events?after=" + after).json()["events"].empty());
  EXPECT_LT(seconds_since(at_once), 1.0);
}

TEST_P(EventsHttpTest, StoppingTheServerAnswersWaitingLongPollsAtOnce) {
  auto poll = get_async("/v1/events?wait=30&after=" + head());
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(poll.wait_for(0s), std::future_status::timeout);
  const auto stop_at = Clock::now();
  server().stop();
  const HttpResponse r = poll.get();
  EXPECT_LT(seconds_since(stop_at), 1.0);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.json()["events"].empty()) << r.body;
  EXPECT_FALSE(r.keep_alive);
  server().wait();
}

// Fifty long polls wait on a server with two workers (in-flight limit ten): none holds a
// worker or a database connection, so other requests are answered at once, and one event
// answers them all.
TEST_P(EventsHttpTest, WaitingLongPollsHoldNoWorker) {
  ServerOptions options;
  options.workers = 2;
  start_server(options);
  const std::string after = head();
  constexpr int kPolls = 50;
  std::vector<std::future<HttpResponse>> polls;
  for (int i = 0; i < kPolls; ++i) {
    polls.push_back(std::async(std::launch::async, [after, p = port()] {
      HttpClient c(p, 60s);
      HttpResponse r;
      for (int attempt = 0; attempt < 50; ++attempt) {  // a burst may find the queue full
        r = c.get("/v1/events?wait=20&after=" + after);
        if (r.status != 503) break;
        std::this_thread::sleep_for(20ms);
      }
      return r;
    }));
    std::this_thread::sleep_for(5ms);
  }
  // Every poll connected and none on a worker.
  const auto metric = [&](const std::string& name) {
    const std::string text = client().get("/metrics").body;
    const size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + name.size() + 2));
  };
  for (int i = 0; i < 100 && metric("onceorder_http_connections") < kPolls + 1; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(metric("onceorder_http_connections"), kPolls + 1);
  EXPECT_EQ(metric("onceorder_http_requests_in_flight"), 0);
  for (auto& p : polls) ASSERT_EQ(p.wait_for(0s), std::future_status::timeout);

  double slowest = 0;
  for (int i = 0; i < 10; ++i) {
    const auto start = Clock::now();
    EXPECT_EQ(client().get("/v1/orders").status, 200);
    EXPECT_EQ(client().get("/v1/events").status, 200);
    slowest = std::max(slowest, seconds_since(start));
  }
  EXPECT_LT(slowest, 0.5);
  RecordProperty("slowest_get_while_50_wait_ms", static_cast<int>(slowest * 1000));

  const auto placed_at = Clock::now();
  const std::int64_t order_id = place("for-all");
  for (auto& p : polls) {
    const HttpResponse r = p.get();
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["events"].size(), 1u) << r.body;
    EXPECT_EQ(r.json()["events"][0]["key"], std::to_string(order_id));
  }
  const double all_answered = seconds_since(placed_at);
  EXPECT_LT(all_answered, 1.5);
  RecordProperty("all_50_answered_after_event_ms", static_cast<int>(all_answered * 1000));
}

TEST_P(EventsHttpTest, RolesDecideWhoReadsAndWhoChanges) {
  ServerOptions options;
  options.tokens_file = write_tokens("a admin\no operator\nv viewer\nc customer:7\n");
  start_server(options);
  for (const std::string path : {"/v1/events", "/v1/consumers", "/v1/endpoints"}) {
    EXPECT_EQ(client().get(path, bearer("v")).status, 200) << path;
    EXPECT_EQ(client().get(path, bearer("o")).status, 200) << path;
    expect_problem(client().get(path, bearer("c")), 403, "forbidden");
    expect_problem(client().get(path), 401, "unauthorized");
  }
  const std::string consumer = R"({"after": "0"})";
  expect_problem(client().put("/v1/consumers/c1", consumer, bearer("v")), 403, "forbidden");
  expect_problem(client().put("/v1/consumers/c1", consumer, bearer("c")), 403, "forbidden");
  EXPECT_EQ(client().put("/v1/consumers/c1", consumer, bearer("o")).status, 201);
  EXPECT_EQ(client().get("/v1/consumers/c1", bearer("v")).status, 200);
  expect_problem(client().request(Method::delete_, "/v1/consumers/c1", "", bearer("v")), 403,
                 "forbidden");
  EXPECT_EQ(client().request(Method::delete_, "/v1/consumers/c1", "", bearer("a")).status, 204);
  const std::string hook = endpoint_body("http://127.0.0.1:9/hook");
  expect_problem(client().put("/v1/endpoints/h", hook, bearer("v")), 403, "forbidden");
  expect_problem(client().put("/v1/endpoints/h", hook, bearer("c")), 403, "forbidden");
  EXPECT_EQ(client().put("/v1/endpoints/h", hook, bearer("o")).status, 201);
  EXPECT_EQ(client().get("/v1/endpoints/h/deliveries", bearer("v")).status, 200);
  expect_problem(client().get("/v1/endpoints/h/deliveries", bearer("c")), 403, "forbidden");
  const std::string resolve = R"({"event_id": 1, "delivered": true})";
  expect_problem(client().post("/v1/endpoints/h/resolve", resolve, bearer("v")), 403, "forbidden");
  expect_problem(client().post("/v1/endpoints/h/redeliver", R"({"event_ids": [1]})", bearer("v")),
                 403, "forbidden");
  expect_problem(client().post("/v1/endpoints/h/resolve", resolve, bearer("o")), 404, "not_found");
}

TEST_P(EventsHttpTest, ConsumersKeepTheirPlace) {
  place("a");
  place("b");
  EXPECT_EQ(client().get("/v1/consumers").json(), json::parse(R"({"consumers": []})"));
  const auto created = client().put("/v1/consumers/erp", R"({"after": "0"})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.json()["name"], "erp");
  EXPECT_EQ(created.json()["after"], "0:0");
  EXPECT_EQ(created.json()["lag_events"], 2);
  EXPECT_GE(created.json()["lag_seconds"].get<double>(), 0.0);
  const auto moved = client().put("/v1/consumers/erp", json{{"after", head()}}.dump());
  ASSERT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(moved.json()["after"], head());
  EXPECT_EQ(moved.json()["lag_events"], 0);
  EXPECT_EQ(moved.json()["lag_seconds"], 0);
  EXPECT_EQ(client().get("/v1/consumers/erp").json(), moved.json());
  EXPECT_EQ(client().get("/v1/consumers").json()["consumers"], json::array({moved.json()}));

  // Past the head: refused, nothing moved.
  auto at = Outbox(db()).head(later());
  ASSERT_TRUE(at.ok());
  const std::string past = cursor_text({at->tx, at->event_id + 1000});
  const auto refused = client().put("/v1/consumers/erp", json{{"after", past}}.dump());
  expect_problem(refused, 400, "invalid_request", {"after"});
  expect_problem(client().put("/v1/consumers/new", json{{"after", past}}.dump()), 400,
                 "invalid_request", {"after"});
  for (const auto& [body, field] :
       std::vector<std::pair<std::string, std::string>>{{R"({"after": "x"})", "after"},
                                                        {R"({"after": 0})", "after"},
                                                        {"{}", "after"},
                                                        {R"({"after": "0", "from": 1})", "from"}}) {
    expect_problem(client().put("/v1/consumers/erp", body), 400, "invalid_request", {field});
  }
  expect_problem(client().put("/v1/consumers/erp", "{"), 400, "invalid_json");
  expect_problem(client().put("/v1/consumers/b@d", R"({"after": "0"})"), 400, "invalid_request",
                 {"name"});
  expect_problem(client().put(std::string("/v1/consumers/") + std::string(65, 'n'), "{}"), 400,
                 "invalid_request", {"name"});
  EXPECT_EQ(client().get("/v1/consumers").json()["consumers"], json::array({moved.json()}));
  expect_problem(client().get("/v1/consumers/erp?x=1"), 400, "invalid_request", {"x"});

  EXPECT_EQ(client().request(Method::delete_, "/v1/consumers/erp").status, 204);
  expect_problem(client().get("/v1/consumers/erp"), 404, "not_found");
  expect_problem(client().request(Method::delete_, "/v1/consumers/erp"), 404, "not_found");
  expect_problem(client().request(Method::delete_, "/v1/consumers/erp", R"({"x": 1})"), 400,
                 "invalid_request");
}

// At most EventLimits::kMaxConsumers named consumers (each is a metric label): the next one is
// 409 and nothing is made; one that exists still moves, and a delete makes room.
TEST_P(EventsHttpTest, AConsumerPastTheLimitIsRefused) {
  place("a");
  for (int i = 0; i < EventLimits::kMaxConsumers; ++i) {
    ASSERT_EQ(client().put(fmt::format("/v1/consumers/c{}", i), R"({"after": "0"})").status, 201);
  }
  const auto refused = client().put("/v1/consumers/one-too-many", R"({"after": "0"})");
  expect_problem(refused, 409, "conflict");
  EXPECT_NE(refused.body.find("64 consumers"), std::string::npos) << refused.body;
  expect_problem(client().get("/v1/consumers/one-too-many"), 404, "not_found");
  EXPECT_EQ(client().get("/v1/consumers").json()["consumers"].size(),
            static_cast<std::size_t>(EventLimits::kMaxConsumers));
  const auto moved = client().put("/v1/consumers/c0", json{{"after", head()}}.dump());
  EXPECT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(client().request(Method::delete_, "/v1/consumers/c1").status, 204);
  EXPECT_EQ(client().put("/v1/consumers/one-too-many", R"({"after": "0"})").status, 201);
}

TEST_P(EventsHttpTest, EndpointsAreCheckedAndNeverShowTheirSecret) {
  place("a");
  const auto created = client().put(
      "/v1/endpoints/mes", endpoint_body("http://127.0.0.1:9/hook", {{"types", {"order.placed"}},
                                                                     {"delivery", "at_most_once"},
                                                                     {"max_attempts", 3},
                                                                     {"backoff_seconds", 5}}));
  ASSERT_EQ(created.status, 201) << created.body;
  const json ep = created.json();
  EXPECT_FALSE(ep.contains("secret"));
  EXPECT_EQ(created.body.find(kEndpointSecret), std::string::npos);
  EXPECT_EQ(ep["after"], head());  // a new endpoint starts at the head
  EXPECT_EQ(ep["types"], json::array({"order.placed"}));
  EXPECT_EQ(ep["delivery"], "at_most_once");
  EXPECT_EQ(ep["max_attempts"], 3);
  EXPECT_EQ(ep["deliveries"], json::parse(R"({"pending": 0, "sending": 0, "dead": 0,
                                             "in_doubt": 0, "lag_seconds": 0})"));
  place("b");
  // Changed: its position and creation stay; the defaults apply to what is not given.
  const auto changed = client().put("/v1/endpoints/mes", endpoint_body("https://mes.example/in"));
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(changed.json()["after"], ep["after"]);
  EXPECT_EQ(changed.json()["created_at"], ep["created_at"]);
  EXPECT_EQ(changed.json()["url"], "https://mes.example/in");
  EXPECT_EQ(changed.json()["types"], json::array());
  EXPECT_EQ(changed.json()["delivery"], "at_least_once");
  EXPECT_EQ(changed.json()["max_attempts"], 10);
  EXPECT_EQ(changed.json()["backoff_seconds"], 10);
  const auto one = client().get("/v1/endpoints/mes");
  const auto all = client().get("/v1/endpoints");
  EXPECT_EQ(one.json(), changed.json());
  EXPECT_EQ(all.json()["endpoints"], json::array({changed.json()}));
  for (const auto* r : {&one, &all}) EXPECT_EQ(r->body.find(kEndpointSecret), std::string::npos);
  const auto from_start =
      client().put("/v1/endpoints/erp", endpoint_body("http://127.0.0.1:9/", {{"after", "0"}}));
  EXPECT_EQ(from_start.json()["after"], "0:0") << from_start.body;

  const std::string good = "http://127.0.0.1:9/hook";
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {endpoint_body("ftp://127.0.0.1/x"), {"url"}},
      {endpoint_body("nope"), {"url"}},
      {endpoint_body(good, {{"secret", "short"}}), {"secret"}},
      {endpoint_body(good, {{"types", {"order.shipped"}}}), {"types"}},
      {endpoint_body(good, {{"types", "order.placed"}}), {"types"}},
      {endpoint_body(good, {{"types", {1}}}), {"types[0]"}},
      {endpoint_body(good, {{"max_attempts", 0}}), {"max_attempts"}},
      {endpoint_body(good, {{"max_attempts", 101}}), {"max_attempts"}},
      {endpoint_body(good, {{"backoff_seconds", 0}}), {"backoff_seconds"}},
      {endpoint_body(good, {{"delivery", "twice"}}), {"delivery"}},
      {endpoint_body(good, {{"after", "later"}}), {"after"}},
      {endpoint_body(good, {{"name", "x"}}), {"name"}},
      {"{}", {"secret", "url"}},
      {endpoint_body("nope", {{"secret", "s"}, {"max_attempts", 0}, {"types", {"x"}}}),
       {"max_attempts", "secret", "types", "url"}},
  };
  for (const auto& [body, fields] : bad) {
    const auto r = client().put("/v1/endpoints/new", body);
    expect_problem(r, 400, "invalid_request");
    EXPECT_EQ(problem_fields(r), fields) << body << " " << r.body;
  }
  expect_problem(client().put("/v1/endpoints/b@d", endpoint_body(good)), 400, "invalid_request",
                 {"name"});
  expect_problem(client().get("/v1/endpoints/new"), 404, "not_found");
  EXPECT_EQ(client().get("/v1/endpoints").json()["endpoints"].size(), 2u);

  EXPECT_EQ(client().request(Method::delete_, "/v1/endpoints/mes").status, 204);
  expect_problem(client().get("/v1/endpoints/mes"), 404, "not_found");
  expect_problem(client().request(Method::delete_, "/v1/endpoints/mes"), 404, "not_found");
}

// Deliveries are made the way the delivery worker makes them (dispatch, claim, settle), with
// an outcome nobody knows: an at_most_once delivery is left in doubt, an at_least_once one
// with a single attempt is dead.
TEST_P(EventsHttpTest, DeliveriesAreListedResolvedAndRedelivered) {
  const auto hook = [&](const std::string& name, const std::string& mode) {
    const auto r = client().put(
        "/v1/endpoints/" + name,
        endpoint_body("http://127.0.0.1:9/", {{"delivery", mode}, {"max_attempts", 1}}));
    ASSERT_EQ(r.status, 201) << r.body;
  };
  hook("most", "at_most_once");
  hook("least", "at_least_once");
  const std::int64_t order_id = place("a");
  const Event event = feed().back();
  ASSERT_EQ(event.key, std::to_string(order_id));
  Outbox outbox(db());
  ASSERT_TRUE(outbox.dispatch(500, later()).ok());
  auto claims = outbox.claim("http-test", 32, 30s, later());
  ASSERT_TRUE(claims.ok()) << claims.status().to_string();
  ASSERT_EQ(claims->size(), 2u);
  std::vector<DeliveryOutcome> outcomes;
  for (const DeliveryClaim& c : *claims) {
    outcomes.push_back(decide_outcome(c, SendResult::unknown, std::nullopt, "broken", 0.5));
  }
  auto settled = outbox.settle(outcomes, later());
  ASSERT_TRUE(settled.ok()) << settled.status().to_string();
  ASSERT_EQ(std::count(settled->begin(), settled->end(), true), 2);

  const auto most = client().get("/v1/endpoints/most/deliveries");
  ASSERT_EQ(most.status, 200) << most.body;
  ASSERT_EQ(most.json()["deliveries"].size(), 1u);
  const json d = most.json()["deliveries"][0];
  EXPECT_EQ(d["event_id"], event.id);
  EXPECT_EQ(d["status"], "in_doubt");
  EXPECT_EQ(d["mode"], "at_most_once");
  EXPECT_EQ(d["attempt"], 1);
  EXPECT_EQ(d["last_error"], "broken");
  EXPECT_TRUE(d["blocked_by"].is_null());
  EXPECT_NE(most.body.find("\"event\":" + event_json(event)), std::string::npos) << most.body;
  EXPECT_TRUE(most.json()["next_after"].is_null());
  const auto page = client().get("/v1/endpoints/least/deliveries?status=dead&limit=1");
  ASSERT_EQ(page.json()["deliveries"].size(), 1u) << page.body;
  EXPECT_EQ(page.json()["next_after"], event.id);
  EXPECT_TRUE(client()
                  .get(fmt::format("/v1/endpoints/least/deliveries?after={}", event.id))
                  .json()["deliveries"]
                  .empty());
  EXPECT_TRUE(
      client().get("/v1/endpoints/least/deliveries?status=in_doubt").json()["deliveries"].empty());
  EXPECT_EQ(client().get("/v1/endpoints/most").json()["deliveries"]["in_doubt"], 1);
  EXPECT_EQ(client().get("/v1/endpoints/least").json()["deliveries"]["dead"], 1);
  expect_problem(client().get("/v1/endpoints/none/deliveries"), 404, "not_found");
  expect_problem(client().get("/v1/endpoints/most/deliveries?status=lost"), 400, "invalid_request",
                 {"status"});
  expect_problem(client().get("/v1/endpoints/most/deliveries?limit=0&after=-1"), 400,
                 "invalid_request", {"after", "limit"});

  // Resolve: only an in_doubt delivery takes an operator's word.
  const auto resolve = [&](const std::string& name, std::int64_t id, bool delivered) {
    return client().post("/v1/endpoints/" + name + "/resolve",
                         json{{"event_id", id}, {"delivered", delivered}}.dump());
  };
  expect_problem(resolve("least", event.id, true), 409, "conflict");
  expect_problem(resolve("most", event.id + 999, true), 404, "not_found");
  expect_problem(resolve("none", event.id, true), 404, "not_found");
  expect_problem(client().post("/v1/endpoints/most/resolve", json{{"event_id", event.id}}.dump()),
                 400, "invalid_request", {"delivered"});
  expect_problem(client().post("/v1/endpoints/most/resolve", R"({"event_id": 0, "delivered": 1})"),
                 400, "invalid_request", {"event_id", "delivered"});
  const auto resolved = resolve("most", event.id, true);
  ASSERT_EQ(resolved.status, 200) << resolved.body;
  EXPECT_EQ(resolved.json()["status"], "delivered");
  EXPECT_EQ(resolved.json()["resolution"], "delivered");
  EXPECT_NE(resolved.body.find(event_json(event)), std::string::npos);
  expect_problem(resolve("most", event.id, false), 409, "conflict");

  // Redeliver: all or nothing, only dead deliveries.
  const auto redeliver = [&](const std::string& name, const std::string& body) {
    return client().post("/v1/endpoints/" + name + "/redeliver", body);
  };
  const std::string ids = json{{"event_ids", {event.id}}}.dump();
  expect_problem(redeliver("least", json{{"event_ids", {event.id, event.id + 999}}}.dump()), 404,
                 "not_found");
  expect_problem(redeliver("none", ids), 404, "not_found");
  expect_problem(redeliver("most", ids), 409, "conflict");  // delivered
  expect_problem(redeliver("least", R"({"event_ids": []})"), 400, "invalid_request", {"event_ids"});
  expect_problem(redeliver("least", R"({"event_ids": [0, "1"]})"), 400, "invalid_request",
                 {"event_ids[0]", "event_ids[1]"});
  const auto done = redeliver("least", json{{"event_ids", {event.id, event.id}}}.dump());
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json(), json({{"redelivered", {event.id}}}));
  expect_problem(redeliver("least", ids), 409, "conflict");  // pending now
  const auto pending = client().get("/v1/endpoints/least/deliveries?status=pending");
  ASSERT_EQ(pending.json()["deliveries"].size(), 1u) << pending.body;
  EXPECT_EQ(pending.json()["deliveries"][0]["resolution"], "redeliver");
}

TEST_P(EventsHttpTest, ActionsAreAuditedWithoutTheSecret) {
  ASSERT_EQ(client().put("/v1/consumers/erp", R"({"after": "0"})").status, 201);
  ASSERT_EQ(client().request(Method::delete_, "/v1/consumers/erp").status, 204);
  ASSERT_EQ(client().put("/v1/endpoints/mes", endpoint_body("http://127.0.0.1:9/")).status, 201);
  ASSERT_EQ(client().put("/v1/endpoints/mes", endpoint_body("nope")).status, 400);
  ASSERT_EQ(
      client().post("/v1/endpoints/mes/resolve", R"({"event_id": 1, "delivered": true})").status,
      404);
  ASSERT_EQ(client().post("/v1/endpoints/mes/redeliver", R"({"event_ids": [1]})").status, 404);
  ASSERT_EQ(client().request(Method::delete_, "/v1/endpoints/mes").status, 204);
  ASSERT_EQ(client().get("/v1/endpoints").status, 200);  // reading leaves no row

  const auto r = client().get("/v1/actions?limit=100");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find(kEndpointSecret), std::string::npos) << r.body;
  std::vector<std::string> got;
  const json body = r.json();
  for (const json& a : body["actions"]) {
    got.push_back(fmt::format("{} {} {}", a["action"].get<std::string>(),
                              a["target"].get<std::string>(), a["status"].get<int>()));
    if (a["action"] == "endpoint.put") {
      EXPECT_EQ(a["summary"]["request"]["secret"], "***") << a.dump();
    }
  }
  std::reverse(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"consumer.put erp 201", "consumer.delete erp 204",
                                           "endpoint.put mes 201", "endpoint.put mes 400",
                                           "delivery.resolve mes 404", "delivery.redeliver mes 404",
                                           "endpoint.delete mes 204"}));
}

INSTANTIATE_TEST_SUITE_P(Engines, EventsHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
