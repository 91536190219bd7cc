// The audit trail (API.md "The audit trail") and the activity charts ("Activity per minute")
// over HTTP on every engine: each audited request leaves exactly one operator_actions row
// naming its principal (never the token), a refusal before the handler none, a customer's
// order none; the access log names the principal; the per-minute counts have every minute.
#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>

#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e/http_fixture.hpp"
#include "http/auth.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

constexpr const char* kTokens =
    "secret-admin-token admin alice\n"
    "secret-operator-token operator\n"
    "secret-customer-token customer:7 shop7\n"
    "secret-viewer-token viewer viv\n";

Headers bearer(const std::string& token, Headers more = {}) {
  more.push_back({"Authorization", "Bearer " + token});
  return more;
}

class AuditHttpTest : public HttpTest {
 protected:
  void SetUp() override {
    HttpTest::SetUp();
    if (HasFatalFailure()) return;
    ServerOptions options;
    options.tokens_file = write_tokens(kTokens);
    start_server(options);
  }

  // Every row of the audit trail, newest first, read as the viewer.
  std::vector<json> actions(const std::string& query = "") {
    const auto r = client().get("/v1/actions?limit=1000" + query, bearer("secret-viewer-token"));
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<json> out;
    if (r.status == 200) {
      const json body = r.json();  // kept: a loop over a temporary's member would dangle
      for (const json& a : body["actions"]) out.push_back(a);
    }
    return out;
  }

  // The rows written since `before` (a count of actions()), oldest first.
  std::vector<json> since(size_t before) {
    auto all = actions();
    std::vector<json> out(all.begin(), all.end() - static_cast<std::ptrdiff_t>(before));
    std::reverse(out.begin(), out.end());
    return out;
  }

  // The operator's line has no name: it goes by its role and line, nothing of its token.
  std::string operator_name() const { return http::unnamed_principal_name("operator", 2); }
};

TEST_P(AuditHttpTest, EveryActionLeavesOneRowWithItsPrincipal) {
  const Headers admin = bearer("secret-admin-token");
  const Headers op = bearer("secret-operator-token");
  const Headers customer = bearer("secret-customer-token");
  ASSERT_EQ(actions().size(), 0u);

  // Stock: set up by the admin, adjusted by the operator.
  ASSERT_EQ(client()
                .put("/v1/warehouses/1/skus/101", R"({"price_cents": 100, "available": 10})", admin)
                .status,
            201);
  auto rows = since(0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "stock.put");
  EXPECT_EQ(rows[0]["principal"], "alice");
  EXPECT_EQ(rows[0]["role"], "admin");
  EXPECT_EQ(rows[0]["target"], "1/101");
  EXPECT_EQ(rows[0]["status"], 201);

  size_t count = actions().size();
  ASSERT_EQ(
      client()
          .post("/v1/warehouses/1/skus/101/adjustments", R"({"delta": 5, "reason": "restock"})",
                bearer("secret-operator-token", {{"Idempotency-Key", "adj-1"}}))
          .status,
      201);
  rows = since(count);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "stock.adjust");
  EXPECT_EQ(rows[0]["principal"], operator_name());
  EXPECT_EQ(rows[0]["role"], "operator");
  EXPECT_EQ(rows[0]["target"], "1/101");
  EXPECT_EQ(rows[0]["status"], 201);
  EXPECT_EQ(rows[0]["summary"]["request"]["delta"], 5);
  EXPECT_EQ(rows[0]["summary"]["idempotency_key"], "adj-1");
  EXPECT_EQ(rows[0]["summary"]["answer"]["available"], 15);

  // A customer's order: no row (its receipt is its record).
  count = actions().size();
  const json cart = {
      {"customer_id", 7}, {"warehouse_id", 1}, {"lines", {{{"sku_id", 101}, {"quantity", 2}}}}};
  const auto placed = client().post("/v1/orders", cart.dump(),
                                    bearer("secret-customer-token", {{"Idempotency-Key", "o1"}}));
  ASSERT_EQ(placed.status, 201) << placed.body;
  const std::string order_id = placed.json()["order_id"];
  EXPECT_EQ(actions().size(), count);

  // The admin cancels it: one row, on the order.
  ASSERT_EQ(client().post("/v1/orders/" + order_id + "/cancel", "", admin).status, 200);
  rows = since(count);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "order.cancel");
  EXPECT_EQ(rows[0]["principal"], "alice");
  EXPECT_EQ(rows[0]["target"], order_id);
  EXPECT_EQ(rows[0]["status"], 200);

  // A run by the operator: its target is the new run.
  count = actions().size();
  const auto run = client().post("/v1/schedule/runs", "", op);
  ASSERT_EQ(run.status, 201) << run.body;
  rows = since(count);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "run.create");
  EXPECT_EQ(rows[0]["principal"], operator_name());
  EXPECT_EQ(rows[0]["target"], std::to_string(run.json()["run_id"].get<std::int64_t>()));

  // A reap by the admin: no target.
  count = actions().size();
  ASSERT_EQ(client().post("/v1/maintenance/reap", "", admin).status, 200);
  rows = since(count);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "maintenance.reap");
  EXPECT_TRUE(rows[0]["target"].is_null());
  EXPECT_TRUE(rows[0]["summary"]["answer"].contains("aborted_waiting")) << rows[0].dump();

  // A scope configured.
  count = actions().size();
  ASSERT_EQ(client().put("/v1/scopes/INV", R"({"width": 4})", op).status, 201);
  rows = since(count);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "scope.configure");
  EXPECT_EQ(rows[0]["target"], "INV");

  // Nothing the trail shows holds a token.
  const auto page = client().get("/v1/actions?limit=1000", admin);
  EXPECT_EQ(page.body.find("secret-"), std::string::npos) << page.body;
  expect_invariants_hold(db());
}

// A request that reached its handler leaves a row whatever its status (400, 404, 409); one
// refused before it (401, 403, 405) leaves none: it never got that far, and is in the access log.
TEST_P(AuditHttpTest, RefusalsAfterTheHandlerAreRecordedBeforeItNot) {
  const Headers admin = bearer("secret-admin-token");
  ASSERT_EQ(client()
                .put("/v1/warehouses/1/skus/101", R"({"price_cents": 100, "available": 1})", admin)
                .status,
            201);
  size_t count = actions().size();
  expect_problem(client().post("/v1/warehouses/1/skus/101/adjustments", R"({"delta": 0})", admin),
                 400, "invalid_request");
  expect_problem(client().post("/v1/warehouses/1/skus/999/adjustments",
                               R"({"delta": 1, "reason": "x"})", admin),
                 404, "not_found");
  expect_problem(client().post("/v1/warehouses/1/skus/101/adjustments",
                               R"({"delta": -5, "reason": "x"})", admin),
                 409, "insufficient_stock");
  auto rows = since(count);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["status"], 400);
  EXPECT_EQ(rows[0]["summary"]["code"], "invalid_request");
  EXPECT_EQ(rows[1]["status"], 404);
  EXPECT_EQ(rows[1]["target"], "1/999");
  EXPECT_EQ(rows[2]["status"], 409);
  EXPECT_EQ(rows[2]["summary"]["code"], "insufficient_stock");

  count = actions().size();
  EXPECT_EQ(client().post("/v1/maintenance/reap", "").status, 401);
  EXPECT_EQ(client().post("/v1/maintenance/reap", "", bearer("wrong")).status, 401);
  EXPECT_EQ(client().post("/v1/maintenance/reap", "", bearer("secret-viewer-token")).status, 403);
  EXPECT_EQ(client().post("/v1/maintenance/reap", "", bearer("secret-customer-token")).status, 403);
  EXPECT_EQ(client().request(Method::delete_, "/v1/maintenance/reap", {}, admin).status, 405);
  EXPECT_EQ(client().get("/v1/schedule/runs", admin).status, 200);  // reads are not actions
  EXPECT_EQ(actions().size(), count);
}

// Each row says what became of its action: `applied` (written in the effect's transaction),
// `refused` (a 4xx decided inside, nothing written); a refused action changes nothing.
TEST_P(AuditHttpTest, ARefusedActionLeavesItsRowAndNoEffect) {
  const Headers admin = bearer("secret-admin-token");
  ASSERT_EQ(client()
                .put("/v1/warehouses/1/skus/101", R"({"price_cents": 100, "available": 1})", admin)
                .status,
            201);
  auto rows = since(0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["outcome"], "applied");
  EXPECT_EQ(rows[0]["status"], 201);

  expect_problem(client().post("/v1/warehouses/1/skus/101/adjustments",
                               R"({"delta": -5, "reason": "x"})", admin),
                 409, "insufficient_stock");
  rows = since(1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["action"], "stock.adjust");
  EXPECT_EQ(rows[0]["outcome"], "refused");
  EXPECT_EQ(rows[0]["status"], 409);
  EXPECT_EQ(client().get("/v1/warehouses/1/skus/101", admin).json()["available"], 1);

  ASSERT_EQ(
      client()
          .post("/v1/warehouses/1/skus/101/adjustments", R"({"delta": 2, "reason": "x"})", admin)
          .status,
      201);
  rows = since(2);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["outcome"], "applied");
  EXPECT_EQ(client().get("/v1/warehouses/1/skus/101", admin).json()["available"], 3);
}

TEST_P(AuditHttpTest, TheTrailFiltersAndPagesNewestFirst) {
  const Headers admin = bearer("secret-admin-token");
  const Headers op = bearer("secret-operator-token");
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(client().post("/v1/maintenance/reap", "", admin).status, 200);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(client().post("/v1/maintenance/reap", "", op).status, 200);
  ASSERT_EQ(client().put("/v1/scopes/A", "{}", op).status, 201);

  EXPECT_EQ(actions("&principal=alice").size(), 3u);
  EXPECT_EQ(actions("&principal=" + operator_name()).size(), 3u);
  EXPECT_EQ(actions("&action=maintenance.reap").size(), 5u);
  EXPECT_EQ(actions("&action=scope.configure&principal=alice").size(), 0u);
  EXPECT_EQ(actions("&principal=nobody").size(), 0u);

  // Newest first, one per page, to the end: every row once.
  std::vector<std::int64_t> ids;
  std::string after;
  for (int guard = 0; guard < 20; ++guard) {
    const auto r = client().get("/v1/actions?limit=1" + after, op);
    ASSERT_EQ(r.status, 200) << r.body;
    const json body = r.json();
    for (const json& a : body["actions"]) ids.push_back(a["action_id"]);
    if (body["next_after"].is_null()) break;
    after = "&after=" + body["next_after"].dump();
  }
  ASSERT_EQ(ids.size(), 6u);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i - 1], ids[i]);

  for (const std::string& bad :
       std::vector<std::string>{"limit=0", "limit=1001", "after=-1", "after=x", "who=alice",
                                "principal=%01", "action=" + std::string(101, 'a')}) {
    const auto r = client().get("/v1/actions?" + bad, op);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
  }
  EXPECT_EQ(client().get("/v1/actions", bearer("secret-customer-token")).status, 403);
  EXPECT_EQ(client().get("/v1/actions").status, 401);
}

// The access log names the principal, never the token.
TEST_P(AuditHttpTest, TheAccessLogNamesThePrincipal) {
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(client().get("/v1/scopes", bearer("secret-admin-token")).status, 200);
  EXPECT_EQ(client().get("/v1/scopes", bearer("secret-operator-token")).status, 200);
  EXPECT_EQ(client().post("/v1/maintenance/reap", "", bearer("secret-viewer-token")).status, 403);
  EXPECT_EQ(client().get("/v1/scopes", bearer("wrong")).status, 401);
  EXPECT_EQ(client().get("/healthz").status, 200);
  spdlog::set_default_logger(previous);
  spdlog::set_level(spdlog::level::warn);
  const std::string log = captured.str();
  EXPECT_NE(log.find("route=/v1/scopes principal=alice status=200"), std::string::npos) << log;
  EXPECT_NE(log.find("principal=" + operator_name() + " status=200"), std::string::npos) << log;
  EXPECT_NE(log.find("principal=viv status=403"), std::string::npos) << log;
  EXPECT_NE(log.find("principal=- status=401"), std::string::npos) << log;
  EXPECT_NE(log.find("route=/healthz principal=anonymous"), std::string::npos) << log;
  EXPECT_EQ(log.find("secret-"), std::string::npos) << log;
}

// A line without a name is named by its role and line number, nothing of its token.
TEST_P(AuditHttpTest, AnUnnamedTokensPrincipalSaysNothingOfTheToken) {
  ASSERT_EQ(client().post("/v1/maintenance/reap", "", bearer("secret-operator-token")).status, 200);
  const auto rows = actions();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["principal"], "operator#2");
  EXPECT_EQ(rows[0]["role"], "operator");
}

// Orders and documents name who made them (docs/SECURITY.md, "Who did what"), also when
// requests from several principals are combined into one transaction: each answer, each
// look-up and each list shows the sender's name, and a replay the first sender's.
TEST_P(AuditHttpTest, OrdersAndDocumentsNameWhoMadeThemEvenWhenCombined) {
  const Headers admin = bearer("secret-admin-token");
  for (int sku = 101; sku <= 104; ++sku) {
    ASSERT_EQ(client()
                  .put(fmt::format("/v1/warehouses/1/skus/{}", sku),
                       R"({"price_cents": 100, "available": 1000})", admin)
                  .status,
              201);
  }
  struct Sender {
    std::string token, name;
  };
  const std::vector<Sender> orderers{{"secret-customer-token", "shop7"},
                                     {"secret-admin-token", "alice"}};
  const std::vector<Sender> issuers{{"secret-admin-token", "alice"},
                                    {"secret-operator-token", operator_name()}};
  constexpr int kEach = 12;
  std::mutex m;
  std::map<std::string, std::string> order_by, document_by;  // id / number → name
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      HttpClient orders(port()), docs(port());
      for (int i = 0; i < kEach; ++i) {
        const Sender& o = orderers[t];
        auto r = orders.post("/v1/orders",
                             fmt::format(R"({{"customer_id": 7, "warehouse_id": 1, "lines": )"
                                         R"([{{"sku_id": {}, "quantity": 1}}]}})",
                                         101 + (i + t) % 4),
                             bearer(o.token, {{"Idempotency-Key", fmt::format("o{}-{}", t, i)}}));
        const Sender& d = issuers[t];
        auto n = docs.post("/v1/scopes/INV/documents", R"({"title": "t"})", bearer(d.token));
        std::lock_guard lock(m);
        EXPECT_EQ(r.status, 201) << r.body;
        EXPECT_EQ(n.status, 201) << n.body;
        if (r.status != 201 || n.status != 201) return;
        EXPECT_EQ(r.json()["principal"], o.name);
        EXPECT_EQ(n.json()["principal"], d.name);
        order_by[r.json()["order_id"].get<std::string>()] = o.name;
        document_by[n.json()["number"].get<std::string>()] = d.name;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(order_by.size(), 2u * kEach);
  ASSERT_EQ(document_by.size(), 2u * kEach);

  const auto listed = client().get("/v1/orders?limit=100", admin);
  ASSERT_EQ(listed.status, 200) << listed.body;
  std::map<std::string, std::string> listed_by;
  const json listed_body = listed.json();  // kept: a loop over a temporary's member dangles
  for (const auto& o : listed_body["orders"])
    listed_by[o["order_id"].get<std::string>()] = o["principal"].get<std::string>();
  EXPECT_EQ(listed_by, order_by);
  const auto& [some_id, some_name] = *order_by.begin();
  EXPECT_EQ(client().get("/v1/orders/" + some_id, admin).json()["principal"], some_name);

  const auto scope = client().get("/v1/scopes/INV/documents?limit=100", admin);
  ASSERT_EQ(scope.status, 200) << scope.body;
  std::map<std::string, std::string> numbered_by;
  const json scope_body = scope.json();
  for (const auto& d : scope_body["documents"])
    numbered_by[d["number"].get<std::string>()] = d["principal"].get<std::string>();
  EXPECT_EQ(numbered_by, document_by);

  // Keys are the customer's: the customer's replay of the key the admin used for it shows
  // the admin's order, naming the admin, and places nothing.
  auto replay = client().post("/v1/orders",
                              R"({"customer_id": 7, "warehouse_id": 1, "lines": )"
                              R"([{"sku_id": 102, "quantity": 1}]})",
                              bearer("secret-customer-token", {{"Idempotency-Key", "o1-0"}}));
  ASSERT_EQ(replay.status, 201) << replay.body;
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(replay.json()["principal"], "alice");
}

INSTANTIATE_TEST_SUITE_P(Engines, AuditHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

class ActivityHttpTest : public HttpTest {};

TEST_P(ActivityHttpTest, CountsEveryMinuteWithZeros) {
  ASSERT_EQ(
      client().put("/v1/warehouses/1/skus/101", R"({"price_cents": 1, "available": 100})").status,
      201);
  const json cart = {
      {"customer_id", 7}, {"warehouse_id", 1}, {"lines", {{{"sku_id", 101}, {"quantity", 1}}}}};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(client()
                  .post("/v1/orders", cart.dump(), {{"Idempotency-Key", "k" + std::to_string(i)}})
                  .status,
              201);
  }
  ASSERT_EQ(client().post("/v1/scopes/S/documents", R"({"title": "a"})").status, 201);
  ASSERT_EQ(client().post("/v1/scopes/S/documents", R"({"title": "b"})").status, 201);
  const auto run = client().post("/v1/schedule/runs", "");
  ASSERT_EQ(run.status, 201) << run.body;

  const auto r = client().get("/v1/stats/activity?minutes=5");
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json();
  EXPECT_EQ(body["minutes"], 5);
  ASSERT_EQ(body["series"].size(), 5u);
  std::int64_t orders = 0, items = 0, numbers = 0, requests = 0;
  std::string previous;
  for (const json& m : body["series"]) {
    const std::string minute = m["minute"];
    ASSERT_EQ(minute.size(), 20u) << minute;  // YYYY-MM-DDTHH:MM:00Z
    EXPECT_EQ(minute.substr(16), ":00Z");
    EXPECT_LT(previous, minute);
    previous = minute;
    orders += m["orders"].get<std::int64_t>();
    items += m["items"].get<std::int64_t>();
    numbers += m["numbers"].get<std::int64_t>();
    requests += m["requests"].get<std::int64_t>();
  }
  EXPECT_EQ(orders, 3);
  EXPECT_EQ(items, 3);        // one production order per order line
  EXPECT_EQ(numbers, 2 + 3);  // the two documents and the production orders' numbers
  EXPECT_GE(requests, 7);
  // The last entry is the current UTC minute.
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char now[32];
  std::strftime(now, sizeof now, "%Y-%m-%dT%H:%M:00Z", &tm);
  EXPECT_LE(previous, std::string(now));

  // A day: every minute there, the old ones zeros.
  const auto day = client().get("/v1/stats/activity?minutes=1440");
  ASSERT_EQ(day.status, 200);
  ASSERT_EQ(day.json()["series"].size(), 1440u);
  EXPECT_EQ(day.json()["series"][0]["orders"], 0);
  EXPECT_EQ(day.json()["series"][0]["requests"], 0);
  EXPECT_EQ(client().get("/v1/stats/activity").json()["series"].size(), 60u);

  for (const std::string bad : {"minutes=0", "minutes=1441", "minutes=abc", "minutes=-1",
                                "minutes=1.5", "minutes=", "minutes=5&x=1", "since=1"}) {
    const auto refused = client().get("/v1/stats/activity?" + bad);
    EXPECT_EQ(refused.status, 400) << bad << ": " << refused.body;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, ActivityHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
