// The connection layer: body limit, malformed requests, saturation (503 busy), keep-alive
// idle timeout and graceful stop.
#include <future>
#include <thread>

#include "e2e/http_fixture.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

class ServerHttpTest : public HttpTest {
 protected:
  // One database connection and one worker: holding the connection blocks every handler.
  void start_saturable(std::chrono::milliseconds deadline) {
    store::DatabaseOptions db_options;
    db_options.pool_size = 1;
    open_database(db_options);
    ServerOptions options;
    options.request_deadline = deadline;
    options.workers = 1;
    start_server(options);
  }

  std::future<HttpResponse> post_async(const std::string& title) {
    return std::async(std::launch::async, [port = port(), title] {
      HttpClient c(port);
      return c.post("/v1/scopes/Q/documents", json{{"title", title}}.dump());
    });
  }
};

TEST_P(ServerHttpTest, BodyOverOneMebibyteIs413) {
  const std::string big(1024 * 1024 + 1, 'x');
  const auto r = client().post("/v1/scopes/S/documents", big);
  expect_problem(r, 413, "payload_too_large");
  EXPECT_FALSE(r.keep_alive);
  // Just under the limit is read and judged on its content (a document's own bound is
  // smaller: a scope's format has none but the server's).
  const std::string width(1024 * 1024 - 32, 'y');
  expect_problem(client().put("/v1/scopes/S", json{{"width", width}}.dump()), 400,
                 "invalid_request", {"width"});
  expect_problem(client().get("/v1/scopes/S"), 404, "not_found");

  const auto metrics = client().get("/metrics").body;
  EXPECT_NE(metrics.find(R"(route="/v1/scopes/{scope}/documents",method="POST",status="413"} 1)"),
            std::string::npos)
      << metrics;
}

TEST_P(ServerHttpTest, ChunkedBodyOverTheLimitIs413) {
  std::string request =
      "POST /v1/scopes/S/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer " +
      std::string(kTestAdminToken) + "\r\n\r\n";
  const std::string chunk(64 * 1024, 'z');
  for (int i = 0; i < 17; ++i) request += fmt::format("{:x}\r\n{}\r\n", chunk.size(), chunk);
  request += "0\r\n\r\n";
  expect_problem(client().raw(request), 413, "payload_too_large");
}

TEST_P(ServerHttpTest, MalformedRequestIs400) {
  const auto r = client().raw("GARBAGE\r\n\r\n");
  expect_problem(r, 400, "invalid_request");
  EXPECT_FALSE(r.keep_alive);
  EXPECT_EQ(client().get("/healthz").status, 200);
}

TEST_P(ServerHttpTest, KeepAliveServesManyRequestsOnOneConnection) {
  for (int i = 0; i < 20; ++i) {
    const auto r = client().get("/healthz");
    ASSERT_EQ(r.status, 200);
    ASSERT_TRUE(r.keep_alive);
  }
}

TEST_P(ServerHttpTest, NoFreeConnectionWithinTheDeadlineIs503Busy) {
  start_saturable(300ms);
  {
    auto held = db().acquire(store::Clock::now() + 1s);
    ASSERT_TRUE(held.ok());
    const auto r = client().post("/v1/scopes/B/documents", R"({"title":"b"})");
    expect_problem(r, 503, "busy");
    EXPECT_EQ(r.header("retry-after"), "1");
  }
  expect_problem(client().get("/v1/scopes/B"), 404, "not_found");
  EXPECT_EQ(client().post("/v1/scopes/B/documents", R"({"title":"b"})").status, 201);
}

TEST_P(ServerHttpTest, FullQueueIsTurnedAwayAtOnce) {
  start_saturable(10s);
  std::vector<std::future<HttpResponse>> waiting;
  {
    auto held = db().acquire(store::Clock::now() + 1s);
    ASSERT_TRUE(held.ok());
    // One worker: one request runs (blocked on the held connection), four wait.
    for (int i = 0; i < 5; ++i) waiting.push_back(post_async("queued " + std::to_string(i)));
    std::this_thread::sleep_for(500ms);
    const auto start = std::chrono::steady_clock::now();
    const auto r = client().post("/v1/scopes/Q/documents", R"({"title":"one too many"})");
    expect_problem(r, 503, "busy");
    EXPECT_EQ(r.header("retry-after"), "1");
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    // Liveness does not queue behind the database.
    EXPECT_EQ(client().get("/healthz").status, 200);
  }
  std::vector<std::int64_t> values;
  for (auto& f : waiting) {
    const auto r = f.get();
    EXPECT_EQ(r.status, 201) << r.body;
    if (r.status == 201) values.push_back(r.json()["value"].get<std::int64_t>());
  }
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
}

TEST_P(ServerHttpTest, StopFinishesRequestsInFlight) {
  start_saturable(10s);
  ASSERT_EQ(client().get("/healthz").status, 200);  // an idle keep-alive connection
  std::future<HttpResponse> in_flight;
  {
    auto held = db().acquire(store::Clock::now() + 1s);
    ASSERT_TRUE(held.ok());
    in_flight = post_async("in flight");
    std::this_thread::sleep_for(300ms);
    server().stop();
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(client().closed_by_server(2s));
    HttpClient probe(port());
    EXPECT_FALSE(probe.can_connect());
  }
  const auto r = in_flight.get();
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_FALSE(r.keep_alive);
  server().wait();
  // The answer was committed before it was sent.
  Numbering numbering(db());
  auto scope = numbering.scope("Q", store::Clock::now() + 5s);
  ASSERT_TRUE(scope.ok()) << scope.status().to_string();
  EXPECT_EQ(scope->issued, 1);
}

TEST_P(ServerHttpTest, IdleConnectionsAreClosed) {
  ServerOptions options;
  options.idle_timeout = 1s;
  start_server(options);
  ASSERT_EQ(client().get("/healthz").status, 200);
  EXPECT_TRUE(client().closed_by_server(3s));
  EXPECT_EQ(client().get("/healthz").status, 200);  // a new connection works
}

TEST_P(ServerHttpTest, BadListenAddressesAreRefused) {
  for (const std::string listen :
       {"127.0.0.1", "127.0.0.1:99999", ":8080", "[::1:80", "::1:80", "127.0.0.1:port"}) {
    ServerOptions options;
    options.listen = listen;
    options.tokens_file = write_tokens(test_tokens_text());  // refused for the address alone
    const auto server = Server::start(db(), scheduler(), intake(), options);
    ASSERT_FALSE(server.ok()) << listen;
    EXPECT_EQ(server.status().message().find("tokens"), std::string::npos) << listen;
  }
  // A port already in use.
  ServerOptions taken;
  taken.listen = fmt::format("127.0.0.1:{}", port());
  taken.tokens_file = write_tokens(test_tokens_text());
  EXPECT_FALSE(Server::start(db(), scheduler(), intake(), taken).ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, ServerHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
