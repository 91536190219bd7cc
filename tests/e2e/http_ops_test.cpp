// Operations endpoints, the dashboard, invariants, and routing errors over HTTP.
#include <future>
#include <thread>

#include "e2e/http_fixture.hpp"
#include "http/ops_monitor.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

class OpsHttpTest : public HttpTest {};

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// Readiness is cached for about a second: polls until /readyz answers `status`.
HttpResponse readyz_until(HttpClient& c, int status) {
  HttpResponse r;
  for (int i = 0; i < 60; ++i) {
    r = c.get("/readyz");
    if (r.status == status) break;
    std::this_thread::sleep_for(100ms);
  }
  return r;
}

// The invariants behind /metrics run in the background: polls until a run has finished.
std::string metrics_with_invariants(HttpClient& c) {
  std::string m;
  for (int i = 0; i < 60; ++i) {
    m = c.get("/metrics").body;
    if (contains(m, "\nonceorder_invariants_age_seconds ")) break;
    std::this_thread::sleep_for(100ms);
  }
  return m;
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
  expect_problem(readyz_until(client(), 503), 503, "unavailable");
  // Health only says the process is up.
  EXPECT_EQ(client().get("/healthz").status, 200);

  ASSERT_TRUE(store::migrate(db()).ok());
  EXPECT_EQ(readyz_until(client(), 200).status, 200);
}

TEST_P(OpsHttpTest, MetricsExposeTheExpectedSeries) {
  ASSERT_EQ(client().post("/v1/scopes/M/documents", R"({"title":"m"})").status, 201);
  ASSERT_EQ(client().get("/v1/scopes/M").status, 200);
  ASSERT_EQ(client().get("/v1/scopes/M/documents").status, 200);
  ASSERT_EQ(client().get("/v1/nowhere").status, 404);
  ASSERT_EQ(client().raw("BREW /v1/scopes/M HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").status, 405);

  const auto r = client().get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.header("content-type").starts_with("text/plain; version=0.0.4"));
  const std::string m = r.body + metrics_with_invariants(client());
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
      "onceorder_db_reconnects_total 0",
      R"(onceorder_db_openings_total{outcome="taken"} 0)",
      R"(onceorder_db_openings_total{outcome="discarded"} 0)",
      "onceorder_order_id_collisions_total 0",
      // The one POST above ran alone: a batch of one.
      "# TYPE onceorder_numbering_batch_size histogram",
      R"(onceorder_numbering_batch_size_bucket{le="1"} 1)",
      "\nonceorder_numbering_batch_size_count 1\n",
      R"(onceorder_invariant_violations{id="I7"} 0)",
      "\nonceorder_invariants_run_seconds ",
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
  // The console is ES modules: app.js (the routes) imports one module per section.
  const auto script = client().get("/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_TRUE(contains(script.body, "./view-orders.js"));
  const auto overview = client().get("/view-overview.js");
  EXPECT_EQ(overview.status, 200);
  EXPECT_TRUE(contains(overview.body, "/v1/invariants"));
  EXPECT_TRUE(contains(overview.body, "/readyz"));
  EXPECT_TRUE(contains(client().get("/view-production.js").body, "/v1/schedule/runs"));
  EXPECT_TRUE(contains(client().get("/view-orders.js").body, "/v1/orders/"));
  EXPECT_TRUE(contains(page.body, "id=\"nav\""));
  EXPECT_TRUE(contains(page.body, "<script type=\"module\" src=\"app.js\">"));
  expect_problem(client().get("/missing.html"), 404, "not_found");
  expect_problem(client().get("/../CMakeLists.txt"), 404, "not_found");
  expect_problem(client().get("/.hidden"), 404, "not_found");
}

TEST_P(OpsHttpTest, UnknownPathsAndWrongMethods) {
  expect_problem(client().get("/v1/nothing"), 404, "not_found");
  expect_problem(client().get("/v1/scopes/S/documents/1"), 404, "not_found");
  expect_problem(client().get("/v1/scopes//documents"), 404, "not_found");

  const auto del = client().request(Method::delete_, "/v1/scopes/S");
  expect_problem(del, 405, "method_not_allowed");
  EXPECT_EQ(del.header("allow"), "GET, HEAD, PUT");
  const auto post = client().post("/healthz", "{}");
  expect_problem(post, 405, "method_not_allowed");
  EXPECT_EQ(post.header("allow"), "GET, HEAD");
  expect_problem(client().put("/v1/scopes/S/documents", "{}"), 405, "method_not_allowed");
  expect_problem(client().post("/v1/invariants", "{}"), 405, "method_not_allowed");
}

// The review's finding: every anonymous scrape ran the invariant queries on a request
// worker, so scrapers filled the queue and admin orders were turned away as busy. Here
// the only database connection is held: scrapes and readiness probes must still answer
// at once, and an admin's request must wait its turn instead of being refused.
TEST_P(OpsHttpTest, AnonymousProbesDoNotStarveAuthenticatedRequests) {
  store::DatabaseOptions db_options;
  db_options.pool_size = 1;
  open_database(db_options);
  ServerOptions options;
  options.workers = 1;  // four more requests may wait for it
  options.request_deadline = 10s;
  options.tokens_file = write_tokens("admin-token admin\n");
  start_server(options);
  const Headers admin{{"Authorization", "Bearer admin-token"}};

  struct Probe {
    int status = 0;
    std::string body;
    std::chrono::duration<double> took{};
  };
  std::vector<std::future<Probe>> probes;
  std::future<HttpResponse> order;
  {
    auto held = db().acquire(store::Clock::now() + 1s);
    ASSERT_TRUE(held.ok());
    for (int i = 0; i < 12; ++i) {
      probes.push_back(std::async(std::launch::async, [port = port(), i] {
        HttpClient c(port, 10s);
        const auto start = std::chrono::steady_clock::now();
        const auto r = c.get(i % 3 == 0 ? "/readyz" : i % 3 == 1 ? "/metrics" : "/");
        return Probe{r.status, r.body, std::chrono::steady_clock::now() - start};
      }));
    }
    std::this_thread::sleep_for(300ms);
    order = std::async(std::launch::async, [port = port(), admin] {
      HttpClient c(port, 15s);
      return c.post("/v1/scopes/A/documents", R"({"title":"admin"})", admin);
    });
    std::this_thread::sleep_for(1200ms);
  }
  const auto r = order.get();
  EXPECT_EQ(r.status, 201) << r.body;
  for (auto& f : probes) {
    const Probe p = f.get();
    EXPECT_EQ(p.status, 200) << p.body;
    EXPECT_LT(p.took.count(), 1.0) << p.body.substr(0, 300);
  }
  const auto metrics = client().get("/metrics").body;
  EXPECT_TRUE(contains(metrics, "\nonceorder_invariants_age_seconds ")) << metrics;
}

// The review's finding: /readyz and 503 answers carried libpq's text (host, port, socket).
// A server whose database cannot be reached says so in general terms, with a reference
// to the log line that has the detail.
TEST_P(OpsHttpTest, AnUnreachableDatabaseIsNotDescribedToClients) {
  const std::string bad = GetParam() == Engine::sqlite
                              ? "sqlite:/dev/null/oo/unreachable.db"
                              : "postgresql://127.0.0.1:1/oo_unreachable?connect_timeout=2";
  auto url = parse_db_url(bad);
  ASSERT_TRUE(url.ok());
  store::Database broken(GetParam(), {},
                         [url = *url]() -> Result<std::unique_ptr<store::Connection>> {
                           auto db = store::Database::open(url);
                           if (db.ok())
                             return Status(Code::internal, "the unreachable database was reached");
                           return db.status();
                         });
  Scheduler scheduler(broken);
  Intake intake(broken);
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tokens_file = write_tokens(test_tokens_text());
  auto server = Server::start(broken, scheduler, intake, options);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  HttpClient c((*server)->port(), 10s);

  const std::vector<std::string> secrets = {"127.0.0.1", "port",           "postgres",  "connect",
                                            "socket",    "5432",           "/dev/null", "sqlite",
                                            "SQLite",    "unreachable.db", "cannot"};
  auto expect_generic = [&](const HttpResponse& r, const std::string& what) {
    EXPECT_EQ(r.status, 503) << what << ": " << r.body;
    for (const auto& s : secrets) EXPECT_FALSE(contains(r.body, s)) << what << ": " << r.body;
    EXPECT_TRUE(contains(r.body, "reference")) << what << ": " << r.body;
  };
  expect_generic(c.get("/readyz"), "readyz");
  expect_generic(c.get("/v1/invariants"), "invariants");
  expect_generic(c.post("/v1/scopes/S/documents", R"({"title":"t"})"), "document");
  expect_generic(c.get("/v1/warehouses/1/skus/2"), "sku");
  expect_generic(c.post("/v1/orders",
                        R"({"customer_id":1,"warehouse_id":1,"lines":[{"sku_id":2,"quantity":1}]})",
                        {{"Idempotency-Key", "k1"}}),
                 "order");
  const auto metrics = c.get("/metrics");
  EXPECT_EQ(metrics.status, 200);
  for (const std::string s : {"127.0.0.1", "postgresql:", "/dev/null", "cannot"}) {
    EXPECT_FALSE(contains(metrics.body, s)) << metrics.body;
  }
  (*server)->stop();
  (*server)->wait();
}

// A slow background invariant run is followed by a rest nine times its length, whatever the
// interval: on a big database the checks keep at most a tenth of one session busy instead of
// running back to back. Planted: another session holds a lock the first run waits for.
TEST(OpsMonitorTest, ASlowRunIsFollowedByARestNineTimesItsLength) {
  if (!postgres_configured()) GTEST_SKIP() << "needs a lock another session holds";
  TestDb tdb(Engine::postgres);
  auto db = tdb.open();
  RawPg holder(tdb.url());
  holder.exec("BEGIN");
  holder.exec("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE");
  http::OpsMonitor monitor(*db, 20ms);  // without the rest, a run every 20 ms
  std::this_thread::sleep_for(500ms);
  holder.exec("COMMIT");
  std::optional<store::Clock::time_point> first;
  for (int i = 0; i < 100 && !first; ++i) {
    std::this_thread::sleep_for(50ms);
    first = monitor.invariants().at;
  }
  ASSERT_TRUE(first) << "the first run never succeeded";
  const auto took = monitor.invariants().last_run_seconds;
  ASSERT_TRUE(took);
  EXPECT_GE(*took, 0.45);
  std::this_thread::sleep_for(1500ms);  // within the rest of at least 9 × 0.45 s
  EXPECT_EQ(monitor.invariants().at, first) << "another run came before the rest was over";
  monitor.request_stop();
  monitor.join();
}

INSTANTIATE_TEST_SUITE_P(Engines, OpsHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
