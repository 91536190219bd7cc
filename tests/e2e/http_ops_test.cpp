// Operations endpoints, the dashboard, invariants, and routing errors over HTTP.
#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

class OpsHttpTest : public HttpTest {};

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST_P(OpsHttpTest, Healthz) {
  const auto r = client().get("/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json(), (json{{"status", "ok"}}));
}

TEST_P(OpsHttpTest, ReadyzFollowsTheSchema) {
  const auto ready = client().get("/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(ready.json()["status"], "ready");

  ASSERT_TRUE(store::migrate_down(db(), 0).ok());
  expect_problem(client().get("/readyz"), 503, "unavailable");
  // Health only says the process is up.
  EXPECT_EQ(client().get("/healthz").status, 200);

  ASSERT_TRUE(store::migrate(db()).ok());
  EXPECT_EQ(client().get("/readyz").status, 200);
}

TEST_P(OpsHttpTest, MetricsExposeTheExpectedSeries) {
  ASSERT_EQ(client().post("/v1/scopes/M/documents", R"({"title":"m"})").status, 201);
  ASSERT_EQ(client().get("/v1/scopes/M").status, 200);
  ASSERT_EQ(client().get("/v1/scopes/M/documents").status, 200);
  ASSERT_EQ(client().get("/v1/nowhere").status, 404);
  ASSERT_EQ(client().raw("BREW /v1/scopes/M HTTP/1.1\r\nHost: x\r\n\r\n").status, 405);

  const auto r = client().get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.header("content-type").starts_with("text/plain; version=0.0.4"));
  const std::string& m = r.body;
  const std::vector<std::string> expected = {
      R"(onceorder_http_requests_total{route="/v1/scopes/{scope}/documents",method="POST",status="201"} 1)",
      R"(onceorder_http_requests_total{route="/v1/scopes/{scope}",method="GET",status="200"} 1)",
      R"(onceorder_http_requests_total{route="/v1/scopes/{scope}/documents",method="GET",status="200"} 1)",
      R"(onceorder_http_requests_total{route="unmatched",method="GET",status="404"} 1)",
      "# TYPE onceorder_http_request_duration_seconds histogram",
      R"(onceorder_http_request_duration_seconds_bucket{route="/v1/scopes/{scope}/documents",le="+Inf"} 2)",
      R"(onceorder_http_request_duration_seconds_count{route="/v1/scopes/{scope}"} 2)",
      "\nonceorder_db_connections_in_use ",
      fmt::format("\nonceorder_db_pool_size {}\n", db().options().pool_size),
      R"(onceorder_tx_retries_total{cause="deadlock"} )",
      R"(onceorder_tx_retries_total{cause="lock_timeout"} )",
      R"(onceorder_tx_retries_total{cause="serialization_failure"} )",
      R"(onceorder_tx_retries_total{cause="requested"} )",
      R"(onceorder_invariant_violations{id="I7"} 0)",
  };
  for (const std::string& series : expected) {
    EXPECT_TRUE(contains(m, series)) << "missing: " << series << "\n" << m;
  }
  // Raw paths never become labels.
  EXPECT_FALSE(contains(m, "/v1/scopes/M")) << m;
  EXPECT_FALSE(contains(m, "BREW")) << m;
}

TEST_P(OpsHttpTest, InvariantsHold) {
  ASSERT_EQ(client().post("/v1/scopes/I/documents", R"({"title":"i"})").status, 201);
  const auto r = client().get("/v1/invariants");
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json();
  EXPECT_EQ(body["ok"], true) << r.body;
  ASSERT_FALSE(body["checks"].empty());
  bool saw_i7 = false;
  for (const auto& c : body["checks"]) {
    EXPECT_TRUE(c.contains("id") && c.contains("name") && c.contains("sample")) << c;
    EXPECT_EQ(c["violations"], 0) << c;
    saw_i7 = saw_i7 || c["id"] == "I7";
  }
  EXPECT_TRUE(saw_i7) << r.body;
}

TEST_P(OpsHttpTest, DashboardIsServed) {
  const auto page = client().get("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_TRUE(contains(page.body, "OnceOrder"));
  EXPECT_TRUE(contains(page.header("content-security-policy"), "default-src 'self'"));
  const auto script = client().get("/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_TRUE(contains(script.body, "/v1/invariants"));
  EXPECT_TRUE(contains(script.body, "/readyz"));
  EXPECT_TRUE(contains(script.body, "/v1/schedule/runs"));
  EXPECT_TRUE(contains(script.body, "/v1/orders/"));
  EXPECT_TRUE(contains(page.body, "id=\"runs\""));
  EXPECT_TRUE(contains(page.body, "id=\"order-form\""));
  expect_problem(client().get("/missing.html"), 404, "not_found");
  expect_problem(client().get("/../CMakeLists.txt"), 404, "not_found");
  expect_problem(client().get("/.hidden"), 404, "not_found");
}

TEST_P(OpsHttpTest, UnknownPathsAndWrongMethods) {
  expect_problem(client().get("/v1/nothing"), 404, "not_found");
  expect_problem(client().get("/v1/scopes/S/documents/1"), 404, "not_found");
  expect_problem(client().get("/v1/scopes//documents"), 404, "not_found");

  const auto del = client().request(boost::beast::http::verb::delete_, "/v1/scopes/S");
  expect_problem(del, 405, "method_not_allowed");
  EXPECT_EQ(del.header("allow"), "GET, PUT");
  const auto post = client().post("/healthz", "{}");
  expect_problem(post, 405, "method_not_allowed");
  EXPECT_EQ(post.header("allow"), "GET");
  expect_problem(client().put("/v1/scopes/S/documents", "{}"), 405, "method_not_allowed");
  expect_problem(client().post("/v1/invariants", "{}"), 405, "method_not_allowed");
}

INSTANTIATE_TEST_SUITE_P(Engines, OpsHttpTest, ::testing::ValuesIn(test_engines()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
