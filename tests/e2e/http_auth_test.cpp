// Bearer tokens and the loopback-only rule without them.
#include <sys/stat.h>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

class AuthHttpTest : public HttpTest {
 protected:
  void start_with_tokens(const std::string& listen = "127.0.0.1:0") {
    ServerOptions options;
    options.listen = listen;
    options.behind_tls_proxy = true;  // the tokens rules alone are under test here
    options.tokens_file = write_tokens(R"(# OnceOrder tokens
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

// No open admin: without a tokens file the server does not start, loopback or not.
TEST_P(AuthHttpTest, RefusesToStartWithoutTokens) {
  for (const std::string listen : {"127.0.0.1:0", "localhost:0", "0.0.0.0:0"}) {
    ServerOptions options;
    options.listen = listen;
    options.behind_tls_proxy = true;  // TLS is not what is missing
    auto server = Server::start(db(), scheduler(), intake(), options);
    ASSERT_FALSE(server.ok()) << listen;
    EXPECT_NE(server.status().message().find("tokens file is required"), std::string::npos)
        << server.status().to_string();
  }
}

// A tokens file others may read is a start error, and so is a plain token too short to be one.
TEST_P(AuthHttpTest, ExposedFilesAndShortTokensAreStartErrors) {
  const std::string long_token(http::kMinPlainTokenLength, 'k');
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tokens_file = write_file("tokens", long_token + " admin\n");
  for (const auto mode : {0640, 0604, 0620, 0602}) {
    ASSERT_EQ(::chmod(options.tokens_file->c_str(), static_cast<mode_t>(mode)), 0);
    auto server = Server::start(db(), scheduler(), intake(), options);
    ASSERT_FALSE(server.ok()) << mode;
    EXPECT_NE(server.status().message().find("group or others"), std::string::npos)
        << server.status().to_string();
  }
  ASSERT_EQ(::chmod(options.tokens_file->c_str(), 0600), 0);
  EXPECT_TRUE(Server::start(db(), scheduler(), intake(), options).ok());
  const std::string short_token = long_token.substr(1);
  options.tokens_file = write_file("tokens", "# c\n" + short_token + " admin\n");
  ASSERT_EQ(::chmod(options.tokens_file->c_str(), 0600), 0);
  auto server = Server::start(db(), scheduler(), intake(), options);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("line 2"), std::string::npos);
  EXPECT_NE(server.status().message().find("at least 32"), std::string::npos);
  EXPECT_EQ(server.status().to_string().find(short_token), std::string::npos);
}

// After `limit` different unknown tokens from one address, 429 with Retry-After for every
// request that needs a token, a valid one included, until the window has passed; open routes
// still answer.
TEST_P(AuthHttpTest, ManyBadTokensFromOneAddressAreRefusedForAWhile) {
  ServerOptions options;
  options.auth_failure_limit = 3;
  options.auth_failure_window = std::chrono::seconds(2);
  options.tokens_file = write_tokens("admin-secret admin\n");
  start_server(options);
  // No token, or the same wrong one again and again, is no guess: a console without a token,
  // or with a stale one, sends a dozen requests at once.
  for (int i = 0; i < 5; ++i) {
    expect_problem(client().get("/v1/scopes/A"), 401, "unauthorized");
    expect_problem(client().get("/v1/scopes/A", bearer("wrong-0")), 401, "unauthorized");
  }
  for (int i = 1; i < 3; ++i) {
    expect_problem(client().get("/v1/scopes/A", bearer("wrong-" + std::to_string(i))), 401,
                   "unauthorized");
  }
  const auto refused = client().get("/v1/scopes/A", bearer("admin-secret"));
  expect_problem(refused, 429, "too_many_requests");
  EXPECT_EQ(refused.header("retry-after"), "2");
  expect_problem(client().get("/v1/scopes/A", bearer("wrong-3")), 429, "too_many_requests");
  EXPECT_EQ(client().get("/healthz").status, 200);
  const std::string metrics = client().get("/metrics").body;
  EXPECT_NE(metrics.find("onceorder_auth_failures_total 12\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("onceorder_auth_refusals_total 2\n"), std::string::npos) << metrics;
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  expect_problem(client().get("/v1/scopes/A", bearer("admin-secret")), 404, "not_found");
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
    options.tokens_file = write_tokens(c.text);
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
