// Orders over HTTP (API.md "Orders"), seed 004's scenario included: all-or-nothing carts,
// replays that repeat the first answer byte for byte, cancellation, and customer isolation.
#include <future>
#include <thread>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

Headers key(const std::string& k) { return {{"Idempotency-Key", k}}; }

class OrdersHttpTest : public HttpTest {
 protected:
  void put_sku(std::int64_t sku, std::int64_t available, std::int64_t price = 100,
               const Headers& headers = {}) {
    const auto r =
        client().put(fmt::format("/v1/warehouses/1/skus/{}", sku),
                     json{{"price_cents", price}, {"available", available}}.dump(), headers);
    ASSERT_EQ(r.status, 201) << r.body;
  }

  void adjust(std::int64_t sku, std::int64_t delta) {
    const auto r = client().post(fmt::format("/v1/warehouses/1/skus/{}/adjustments", sku),
                                 json{{"delta", delta}, {"reason", "restock"}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // {available, reserved} of a SKU in warehouse 1.
  std::pair<std::int64_t, std::int64_t> stock(std::int64_t sku, const Headers& headers = {}) {
    const auto r = client().get(fmt::format("/v1/warehouses/1/skus/{}", sku), headers);
    EXPECT_EQ(r.status, 200) << r.body;
    if (r.status != 200) return {-1, -1};
    const json j = r.json();
    return {j["available"].get<std::int64_t>(), j["reserved"].get<std::int64_t>()};
  }

  static std::string cart(std::int64_t customer, const std::vector<std::pair<int, int>>& lines) {
    json l = json::array();
    for (const auto& [sku, qty] : lines) l.push_back({{"sku_id", sku}, {"quantity", qty}});
    return json{{"customer_id", customer}, {"warehouse_id", 1}, {"lines", l}}.dump();
  }

  HttpResponse place(const std::string& k, const std::string& body, const Headers& extra = {}) {
    Headers headers = key(k);
    headers.insert(headers.end(), extra.begin(), extra.end());
    return client().post("/v1/orders", body, headers);
  }
};

TEST_P(OrdersHttpTest, PlaceReadAndReplay) {
  put_sku(101, 5, 1200);
  put_sku(202, 3, 500);
  const auto placed = place("k1", cart(7, {{202, 1}, {101, 2}}));
  ASSERT_EQ(placed.status, 201) << placed.body;
  EXPECT_EQ(placed.header("content-type"), "application/json");
  EXPECT_FALSE(placed.has_header("idempotent-replayed"));
  const json order = placed.json();
  ASSERT_TRUE(order["order_id"].is_string()) << placed.body;
  const std::string id = order["order_id"];
  EXPECT_FALSE(id.empty());
  EXPECT_TRUE(std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }));
  EXPECT_FALSE(order["order_no"].get<std::string>().empty());
  EXPECT_FALSE(order["created_at"].get<std::string>().empty());
  EXPECT_EQ(order["status"], "placed");
  EXPECT_EQ(order["customer_id"], 7);
  EXPECT_EQ(order["warehouse_id"], 1);
  // Lines in ascending sku_id order, numbered from 1, at the price of the moment.
  EXPECT_EQ(order["lines"],
            (json{{{"line_no", 1}, {"sku_id", 101}, {"quantity", 2}, {"unit_price_cents", 1200}},
                  {{"line_no", 2}, {"sku_id", 202}, {"quantity", 1}, {"unit_price_cents", 500}}}));
  EXPECT_EQ(order["total_cents"], 2900);
  EXPECT_EQ(order["principal"], "test-admin") << "the name of the token that placed it";
  EXPECT_EQ(order.size(), 9u) << placed.body;
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{3, 2}));
  EXPECT_EQ(stock(202), (std::pair<std::int64_t, std::int64_t>{2, 1}));

  const auto read = client().get("/v1/orders/" + id);
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.body, placed.body);

  // The same key and cart (lines in another order) replays the first answer, even after a
  // price change; nothing is reserved twice.
  ASSERT_EQ(client().put("/v1/warehouses/1/skus/101", R"({"price_cents": 9999})").status, 200);
  const auto replay = place("k1", cart(7, {{101, 2}, {202, 1}}));
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, placed.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{3, 2}));

  // Keys belong to their customer: another customer's same key is a new order.
  const auto other = place("k1", cart(8, {{101, 1}}));
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_NE(other.json()["order_id"], order["order_id"]);
  EXPECT_FALSE(other.has_header("idempotent-replayed"));
}

// Seed 004: the second SKU is out of stock after the first was checked; nothing may be
// deducted, and the refusal is replayed even after restocking.
TEST_P(OrdersHttpTest, Seed004OutOfStockIsAllOrNothingAndReplayed) {
  put_sku(101, 5);
  put_sku(202, 0);
  const std::string body = cart(7, {{101, 2}, {202, 1}});
  const auto refused = place("seed-004", body);
  expect_problem(refused, 409, "out_of_stock");
  EXPECT_FALSE(refused.has_header("idempotent-replayed"));
  EXPECT_EQ(refused.json()["shortages"],
            (json{{{"sku_id", 202}, {"requested", 1}, {"available", 0}}}));
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));
  EXPECT_EQ(stock(202), (std::pair<std::int64_t, std::int64_t>{0, 0}));

  adjust(202, 5);
  const auto replay = place("seed-004", body);
  EXPECT_EQ(replay.status, 409);
  EXPECT_EQ(replay.body, refused.body);
  EXPECT_EQ(replay.header("content-type"), "application/problem+json");
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));

  const auto fresh = place("seed-004-retry", body);
  ASSERT_EQ(fresh.status, 201) << fresh.body;
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{3, 2}));
  EXPECT_EQ(stock(202), (std::pair<std::int64_t, std::int64_t>{4, 1}));

  const auto invariants = client().get("/v1/invariants");
  EXPECT_EQ(invariants.json()["ok"], true) << invariants.body;
}

TEST_P(OrdersHttpTest, DuplicateLinesAreMergedBeforeTheCheck) {
  put_sku(101, 2);
  const auto refused = place("dup-1", cart(7, {{101, 1}, {101, 2}}));
  expect_problem(refused, 409, "out_of_stock");
  EXPECT_EQ(refused.json()["shortages"],
            (json{{{"sku_id", 101}, {"requested", 3}, {"available", 2}}}));

  adjust(101, 1);
  const auto placed = place("dup-2", cart(7, {{101, 1}, {101, 2}}));
  ASSERT_EQ(placed.status, 201) << placed.body;
  EXPECT_EQ(placed.json()["lines"],
            (json{{{"line_no", 1}, {"sku_id", 101}, {"quantity", 3}, {"unit_price_cents", 100}}}));
  // The merged cart is what the key stands for: one line of 3 replays it.
  const auto replay = place("dup-2", cart(7, {{101, 3}}));
  EXPECT_EQ(replay.body, placed.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
}

TEST_P(OrdersHttpTest, SameKeyForAnotherCartIsRejected) {
  put_sku(101, 10);
  ASSERT_EQ(place("k", cart(7, {{101, 1}})).status, 201);
  expect_problem(place("k", cart(7, {{101, 2}})), 422, "idempotency_key_reused");
  expect_problem(place("k", json{{"customer_id", 7},
                                 {"warehouse_id", 2},
                                 {"lines",
                                  {{
                                      {"sku_id", 101},
                                      {"quantity", 1},
                                  }}}}
                                .dump()),
                 422, "idempotency_key_reused");
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{9, 1}));
  // A stored refusal is bound to its cart too.
  expect_problem(place("oos", cart(7, {{101, 50}})), 409, "out_of_stock");
  expect_problem(place("oos", cart(7, {{101, 1}})), 422, "idempotency_key_reused");
}

TEST_P(OrdersHttpTest, ConcurrentRequestsWithOneKeyMakeOneOrder) {
  put_sku(101, 100);
  put_sku(202, 100);
  const std::string body = cart(7, {{101, 2}, {202, 3}});
  constexpr int kThreads = 8;
  std::vector<std::future<HttpResponse>> answers;
  std::promise<void> go;
  std::shared_future<void> start = go.get_future().share();
  for (int i = 0; i < kThreads; ++i) {
    answers.push_back(std::async(std::launch::async, [port = port(), body, start] {
      HttpClient c(port);
      start.wait();
      return c.post("/v1/orders", body, key("race"));
    }));
  }
  go.set_value();
  std::vector<HttpResponse> got;
  for (auto& a : answers) got.push_back(a.get());
  int first = 0;
  for (const auto& r : got) {
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(r.body, got[0].body);
    if (!r.has_header("idempotent-replayed")) ++first;
  }
  EXPECT_EQ(first, 1);
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{98, 2}));
  EXPECT_EQ(stock(202), (std::pair<std::int64_t, std::int64_t>{97, 3}));
}

TEST_P(OrdersHttpTest, CancelRestoresStockOnce) {
  put_sku(101, 5);
  put_sku(202, 5);
  const auto placed = place("c1", cart(7, {{101, 2}, {202, 1}}));
  ASSERT_EQ(placed.status, 201) << placed.body;
  const std::string id = placed.json()["order_id"];
  const std::string path = "/v1/orders/" + id + "/cancel";

  const auto cancelled = client().post(path, "");
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  json expected = placed.json();
  expected["status"] = "cancelled";
  EXPECT_EQ(cancelled.json(), expected);
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));
  EXPECT_EQ(stock(202), (std::pair<std::int64_t, std::int64_t>{5, 0}));

  const auto again = client().post(path, "{}");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body, cancelled.body);
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));
  EXPECT_EQ(client().get("/v1/orders/" + id).json()["status"], "cancelled");

  // The placing answer is replayed as it was.
  const auto replay = place("c1", cart(7, {{101, 2}, {202, 1}}));
  EXPECT_EQ(replay.body, placed.body);
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));

  expect_problem(client().post(path, R"({"reason": "x"})"), 400, "invalid_request", {"reason"});
  expect_problem(client().post("/v1/orders/12345/cancel", ""), 404, "not_found");
  EXPECT_EQ(client().get("/v1/invariants").json()["ok"], true);
}

// Placing creates one source order per line (W<warehouse>/<order_no>/<line_no>); a manual
// run produces them, and from then on the order cannot be cancelled.
TEST_P(OrdersHttpTest, PlacedLinesAreScheduledAndThenNotCancellable) {
  put_sku(101, 5);
  put_sku(202, 5);
  const auto placed = place("p1", cart(7, {{101, 2}, {202, 1}}));
  ASSERT_EQ(placed.status, 201) << placed.body;
  const json order = placed.json();
  const std::string order_no = order["order_no"];

  const json keys = {{{"site_code", "W1"}, {"order_no", order_no}, {"lot_no", "1"}},
                     {{"site_code", "W1"}, {"order_no", order_no}, {"lot_no", "2"}}};
  const auto run = client().post("/v1/schedule/runs", json{{"orders", keys}}.dump());
  ASSERT_EQ(run.status, 201) << run.body;
  EXPECT_EQ(run.json()["status"], "done");
  EXPECT_EQ(run.json()["counts"]["success"], 2) << run.body;
  EXPECT_EQ(run.json()["skipped"], json::array());

  const auto produced = client().get("/v1/production-orders?site_code=W1");
  ASSERT_EQ(produced.status, 200) << produced.body;
  const json list = produced.json()["production_orders"];
  ASSERT_EQ(list.size(), 2u) << produced.body;
  EXPECT_EQ(list[0]["order_no"], order_no);
  EXPECT_EQ(list[0]["lot_no"], "1");
  EXPECT_EQ(list[0]["quantity"], 2);
  EXPECT_EQ(list[1]["lot_no"], "2");
  EXPECT_EQ(list[1]["quantity"], 1);

  const std::string id = order["order_id"];
  expect_problem(client().post("/v1/orders/" + id + "/cancel", ""), 409, "in_production");
  EXPECT_EQ(client().get("/v1/orders/" + id).json()["status"], "placed");
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{3, 2}));
}

TEST_P(OrdersHttpTest, MissingIdempotencyKeyIs400) {
  put_sku(101, 5);
  expect_problem(client().post("/v1/orders", cart(7, {{101, 1}})), 400, "missing_idempotency_key");
  for (const std::string& bad : {std::string(256, 'k'), std::string("has space"),
                                 std::string("caf\xc3\xa9"), std::string()}) {
    SCOPED_TRACE(bad);
    expect_problem(place(bad, cart(7, {{101, 1}})), 400, "invalid_request", {"Idempotency-Key"});
  }
  // The key's problem and the body's come in one answer.
  expect_problem(place("bad key", R"({"customer_id": 0, "warehouse_id": 1, "lines": []})"), 400,
                 "invalid_request", {"Idempotency-Key", "customer_id", "lines"});
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));
}

TEST_P(OrdersHttpTest, BadOrderInputWritesNothing) {
  put_sku(101, 5);
  struct Case {
    std::string body;
    std::vector<std::string> fields;
  };
  const std::string line = R"([{"sku_id": 101, "quantity": 1}])";
  auto with = [&](const std::string& customer, const std::string& warehouse,
                  const std::string& lines) {
    return fmt::format(R"({{"customer_id": {}, "warehouse_id": {}, "lines": {}}})", customer,
                       warehouse, lines);
  };
  std::vector<Case> cases = {
      {R"({})", {"customer_id", "warehouse_id", "lines"}},
      {with("7", "1", "[]"), {"lines"}},
      {with("7", "1", "{}"), {"lines"}},
      {with("7", "1", "null"), {"lines"}},
      {with("7", "1", "[1]"), {"lines[0]"}},
      {with("7", "1", R"([{"sku_id": 101}])"), {"lines[0].quantity"}},
      {with("7", "1", R"([{"quantity": 1}])"), {"lines[0].sku_id"}},
      {with("7", "1", R"([{"sku_id": 101, "quantity": 0}])"), {"lines[0].quantity"}},
      {with("7", "1", R"([{"sku_id": 101, "quantity": -1}])"), {"lines[0].quantity"}},
      {with("7", "1", R"([{"sku_id": 101, "quantity": 1.0}])"), {"lines[0].quantity"}},
      {with("7", "1", R"([{"sku_id": 101, "quantity": 1000001}])"), {"lines[0].quantity"}},
      {with("7", "1", R"([{"sku_id": "101", "quantity": 1}])"), {"lines[0].sku_id"}},
      {with("7", "1", R"([{"sku_id": 101, "quantity": 1, "qty": 1}])"), {"lines[0].qty"}},
      {with("7", "1", R"([{"sku_id": 101, "quantity": 1}, {"sku_id": 0, "quantity": 1}])"),
       {"lines[1].sku_id"}},
      {with("7", "1",
            R"([{"sku_id": 101, "quantity": 600000}, {"sku_id": 101, "quantity": 600000}])"),
       {"lines"}},
      {R"({"customer_id": 7, "warehouse_id": 1, "lines": [], "note": 1})", {"lines", "note"}},
  };
  for (const std::string bad : {"1.0", "1e3", "\"7\"", "-7", "0", "9223372036854775808",
                                "18446744073709551616", "null", "true", "[7]"}) {
    cases.push_back({with(bad, "1", line), {"customer_id"}});
    cases.push_back({with("7", bad, line), {"warehouse_id"}});
    cases.push_back({with("7", "1", fmt::format(R"([{{"sku_id": {}, "quantity": 1}}])", bad)),
                     {"lines[0].sku_id"}});
  }
  json many = json::array();
  for (int sku = 1; sku <= 21; ++sku) many.push_back({{"sku_id", sku}, {"quantity", 1}});
  cases.push_back({with("7", "1", many.dump()), {"lines"}});

  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_problem(place("bad", c.body), 400, "invalid_request", c.fields);
  }
  expect_problem(place("bad", "{"), 400, "invalid_json");
  expect_problem(place("bad", "[]"), 400, "invalid_request");
  expect_problem(client().post("/v1/orders?dry_run=1", cart(7, {{101, 1}}), key("bad")), 400,
                 "invalid_request", {"dry_run"});
  // Nothing was stored for the key, and no stock moved.
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));
  const auto later = place("bad", cart(7, {{101, 1}}));
  EXPECT_EQ(later.status, 201) << later.body;
  EXPECT_FALSE(later.has_header("idempotent-replayed"));
}

TEST_P(OrdersHttpTest, UnknownSkuIs422AndNotStored) {
  put_sku(101, 5);
  const auto r = place("u", cart(7, {{101, 1}, {999, 1}}));
  expect_problem(r, 422, "unknown_sku");
  EXPECT_EQ(stock(101), (std::pair<std::int64_t, std::int64_t>{5, 0}));
  // Not stored: once the SKU exists, the same key places the order.
  put_sku(999, 1);
  const auto later = place("u", cart(7, {{101, 1}, {999, 1}}));
  EXPECT_EQ(later.status, 201) << later.body;
  EXPECT_FALSE(later.has_header("idempotent-replayed"));
}

TEST_P(OrdersHttpTest, OrderIdsInThePath) {
  for (const std::string bad : {"0", "01", "-1", "abc", "1.0", "9223372036854775808"}) {
    SCOPED_TRACE(bad);
    expect_problem(client().get("/v1/orders/" + bad), 400, "invalid_request", {"order_id"});
    expect_problem(client().post("/v1/orders/" + bad + "/cancel", ""), 400, "invalid_request",
                   {"order_id"});
  }
  expect_problem(client().get("/v1/orders/9223372036854775807"), 404, "not_found");
  expect_problem(client().get("/v1/orders/1/other"), 404, "not_found");
  const auto wrong = client().request(Method::delete_, "/v1/orders/1");
  expect_problem(wrong, 405, "method_not_allowed");
  EXPECT_EQ(wrong.header("allow"), "GET, HEAD");
  // GET /v1/orders lists orders (http_lists_test.cpp); other methods are still refused.
  const auto wrong_list = client().request(Method::delete_, "/v1/orders");
  expect_problem(wrong_list, 405, "method_not_allowed");
  EXPECT_EQ(wrong_list.header("allow"), "GET, HEAD, POST");
}

class OrdersAuthHttpTest : public OrdersHttpTest {
 protected:
  void SetUp() override {
    OrdersHttpTest::SetUp();
    if (HasFatalFailure()) return;
    ServerOptions options;
    options.tokens_file = write_tokens(
        "adm admin\nop operator\nc7 customer:7\n"
        "c8 customer:8\n");
    start_server(options);
  }
};

TEST_P(OrdersAuthHttpTest, CustomersSeeOnlyTheirOwnOrders) {
  put_sku(101, 5, 100, bearer("op"));
  const auto placed = place("k", cart(7, {{101, 1}}), bearer("c7"));
  ASSERT_EQ(placed.status, 201) << placed.body;
  const std::string id = placed.json()["order_id"];

  // Placing for someone else, or as an operator, is forbidden; nothing is written.
  expect_problem(place("k2", cart(8, {{101, 1}}), bearer("c7")), 403, "forbidden");
  expect_problem(place("k3", cart(7, {{101, 1}}), bearer("op")), 403, "forbidden");
  expect_problem(client().post("/v1/orders", cart(7, {{101, 1}}), key("k4")), 401, "unauthorized");
  EXPECT_EQ(stock(101, bearer("adm")), (std::pair<std::int64_t, std::int64_t>{4, 1}));

  // Another customer's order does not exist for it: the same 404 as a missing order.
  const auto theirs = client().get("/v1/orders/" + id, bearer("c8"));
  expect_problem(theirs, 404, "not_found");
  const auto missing = client().get("/v1/orders/123456789", bearer("c8"));
  std::string detail = theirs.json()["detail"];
  detail.replace(detail.find(id), id.size(), "123456789");
  EXPECT_EQ(detail, missing.json()["detail"]);
  expect_problem(client().post("/v1/orders/" + id + "/cancel", "", bearer("c8")), 404, "not_found");
  expect_problem(client().get("/v1/orders/" + id, bearer("op")), 403, "forbidden");
  expect_problem(client().post("/v1/orders/" + id + "/cancel", "", bearer("op")), 403, "forbidden");
  EXPECT_EQ(client().get("/v1/orders/" + id, bearer("c7")).body, placed.body);
  EXPECT_EQ(client().get("/v1/orders/" + id, bearer("adm")).body, placed.body);
  EXPECT_EQ(stock(101, bearer("adm")), (std::pair<std::int64_t, std::int64_t>{4, 1}));

  // Customers may not touch stock; the owner may cancel.
  expect_problem(client().get("/v1/warehouses/1/skus/101", bearer("c7")), 403, "forbidden");
  expect_problem(client().post("/v1/warehouses/1/skus/101/adjustments",
                               R"({"delta": 5, "reason": "x"})", bearer("c7")),
                 403, "forbidden");
  const auto cancelled = client().post("/v1/orders/" + id + "/cancel", "", bearer("c7"));
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(cancelled.json()["status"], "cancelled");
  // An admin acts for any customer.
  EXPECT_EQ(place("k5", cart(8, {{101, 1}}), bearer("adm")).status, 201);
}

INSTANTIATE_TEST_SUITE_P(Engines, OrdersHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);
INSTANTIATE_TEST_SUITE_P(Engines, OrdersAuthHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
