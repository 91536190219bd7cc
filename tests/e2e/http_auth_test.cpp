// Bearer tokens and the loopback-only rule without them.
#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

class AuthHttpTest : public HttpTest {
 protected:
  void start_with_tokens(const std::string& listen = "127.0.0.1:0") {
    ServerOptions options;
    options.listen = listen;
    options.behind_tls_proxy = true;  // the tokens rule alone is under test here
    options.tokens_file = write_file("tokens", R"(# OnceOrder tokens
admin-secret admin

operator-secret   operator
customer-secret customer:7
)");
    start_server(options);
  }
};

TEST_P(AuthHttpTest, TokensAreRequired) {
  start_with_tokens();
  const auto none = client().get("/v1/scopes/A");
  expect_problem(none, 401, "unauthorized");
  EXPECT_EQ(none.header("www-authenticate"), "Bearer");
  expect_problem(client().get("/v1/scopes/A", bearer("wrong")), 401, "unauthorized");
  expect_problem(client().get("/v1/scopes/A", bearer("admin-secre")), 401, "unauthorized");
  expect_problem(client().get("/v1/scopes/A", {{"Authorization", "Basic YWRtaW46eA=="}}), 401,
                 "unauthorized");
  expect_problem(client().post("/v1/scopes/A/documents", R"({"title":"x"})"), 401, "unauthorized");
  expect_problem(client().get("/v1/invariants"), 401, "unauthorized");
}

TEST_P(AuthHttpTest, CustomersMayNotTouchDocuments) {
  start_with_tokens();
  const auto customer = bearer("customer-secret");
  expect_problem(client().put("/v1/scopes/A", "{}", customer), 403, "forbidden");
  expect_problem(client().post("/v1/scopes/A/documents", R"({"title":"x"})", customer), 403,
                 "forbidden");
  expect_problem(client().get("/v1/scopes/A", customer), 403, "forbidden");
  expect_problem(client().get("/v1/scopes/A/documents", customer), 403, "forbidden");
  expect_problem(client().get("/v1/invariants", customer), 403, "forbidden");
  // Nothing was written.
  expect_problem(client().get("/v1/scopes/A", bearer("admin-secret")), 404, "not_found");
}

TEST_P(AuthHttpTest, AdminAndOperatorAreAllowed) {
  start_with_tokens();
  EXPECT_EQ(client().put("/v1/scopes/A", "{}", bearer("admin-secret")).status, 201);
  EXPECT_EQ(
      client().post("/v1/scopes/A/documents", R"({"title":"x"})", bearer("operator-secret")).status,
      201);
  EXPECT_EQ(client().get("/v1/scopes/A", {{"Authorization", "bearer operator-secret"}}).status,
            200);
  EXPECT_EQ(client().get("/v1/invariants", bearer("admin-secret")).status, 200);
  // Health, readiness, metrics and the dashboard stay open.
  EXPECT_EQ(client().get("/healthz").status, 200);
  EXPECT_EQ(client().get("/readyz").status, 200);
  EXPECT_EQ(client().get("/metrics").status, 200);
  EXPECT_EQ(client().get("/").status, 200);
}

// API.md's role lists: Stock and Scheduling (admin, operator), Orders (admin, customer).
TEST_P(AuthHttpTest, RolesPerRouteGroup) {
  start_with_tokens();
  struct Call {
    Method method;
    std::string target;
    std::string body;
  };
  using verb = Method;
  const std::vector<Call> staff = {
      {verb::put, "/v1/warehouses/1/skus/1", "{}"},
      {verb::get, "/v1/warehouses/1/skus/1", ""},
      {verb::post, "/v1/warehouses/1/skus/1/adjustments", R"({"delta": 1, "reason": "x"})"},
      {verb::post, "/v1/source-orders", R"({"orders": []})"},
      {verb::post, "/v1/schedule/runs", R"({"orders": []})"},
      {verb::get, "/v1/schedule/runs", ""},
      {verb::get, "/v1/schedule/runs/1", ""},
      {verb::get, "/v1/schedule/items", ""},
      {verb::get, "/v1/production-orders", ""},
      {verb::post, "/v1/maintenance/reap", "[]"},
  };
  const std::vector<Call> orders = {
      {verb::post, "/v1/orders", "{}"},
      {verb::get, "/v1/orders/1", ""},
      {verb::post, "/v1/orders/1/cancel", ""},
  };
  for (const Call& c : staff) {
    SCOPED_TRACE(c.target);
    expect_problem(client().request(c.method, c.target, c.body), 401, "unauthorized");
    expect_problem(client().request(c.method, c.target, c.body, bearer("customer-secret")), 403,
                   "forbidden");
    for (const std::string token : {"admin-secret", "operator-secret"}) {
      const auto r = client().request(c.method, c.target, c.body, bearer(token));
      EXPECT_NE(r.status, 401) << r.body;
      EXPECT_NE(r.status, 403) << r.body;
    }
  }
  for (const Call& c : orders) {
    SCOPED_TRACE(c.target);
    expect_problem(client().request(c.method, c.target, c.body), 401, "unauthorized");
    expect_problem(client().request(c.method, c.target, c.body, bearer("operator-secret")), 403,
                   "forbidden");
    for (const std::string token : {"admin-secret", "customer-secret"}) {
      const auto r = client().request(c.method, c.target, c.body, bearer(token));
      EXPECT_NE(r.status, 401) << r.body;
      EXPECT_NE(r.status, 403) << r.body;
    }
  }
  // Nothing above was written.
  expect_problem(client().get("/v1/warehouses/1/skus/1", bearer("admin-secret")), 404, "not_found");
  EXPECT_EQ(client().get("/v1/schedule/runs", bearer("admin-secret")).body, R"({"runs":[]})");
}

TEST_P(AuthHttpTest, WithTokensAnyAddressIsAllowed) {
  start_with_tokens("0.0.0.0:0");
  EXPECT_EQ(client().get("/healthz").status, 200);
}

TEST_P(AuthHttpTest, RefusesNonLoopbackWithoutTokens) {
  for (const std::string listen : {"0.0.0.0:0", "[::]:0"}) {
    ServerOptions options;
    options.listen = listen;
    options.behind_tls_proxy = true;  // TLS is not what is missing
    auto server = Server::start(db(), scheduler(), intake(), options);
    ASSERT_FALSE(server.ok()) << listen;
    EXPECT_NE(server.status().message().find("--tokens"), std::string::npos)
        << server.status().to_string();
  }
  for (const std::string listen : {"127.0.0.1:0", "127.1.2.3:0", "localhost:0"}) {
    ServerOptions options;
    options.listen = listen;
    auto server = Server::start(db(), scheduler(), intake(), options);
    EXPECT_TRUE(server.ok()) << listen << ": " << server.status().to_string();
  }
}

TEST_P(AuthHttpTest, MalformedTokensFileIsAStartError) {
  struct Case {
    std::string text;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {"good admin\n# comment\nbad-line-without-role\n", "line 3"},
           {"a admin\nb superuser\n", "line 2"},
           {"a customer:x\n", "line 1"},
           {"a admin\na operator\n", "line 2"},
           {"# only comments\n\n", "no token"},
       }) {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.tokens_file = write_file("tokens", c.text);
    auto server = Server::start(db(), scheduler(), intake(), options);
    ASSERT_FALSE(server.ok()) << c.text;
    EXPECT_NE(server.status().message().find(c.expect), std::string::npos)
        << server.status().to_string();
  }
  ServerOptions missing;
  missing.listen = "127.0.0.1:0";
  missing.tokens_file = "/nonexistent/tokens";
  EXPECT_FALSE(Server::start(db(), scheduler(), intake(), missing).ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, AuthHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
