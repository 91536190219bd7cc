// Reads cannot starve writes, as a real `serve` process shows it (docs/SECURITY.md): parallel
// `GET /v1/invariants` calls while orders are placed, the per-principal rate limit
// (--rate-limit, --rate-burst) with its 429 and metric, and /metrics on a listener of its own
// (--metrics-listen).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

// Tokens long enough for any length rule of the tokens file.
const std::string kEdgeViewerToken = "viewer-token-0123456789abcdef0123456789";
const std::string kEdgeOperatorToken = "operator-token-0123456789abcdef012345678";

class EdgeLimitsTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override { scratch_ = std::make_unique<TestDb>(GetParam()); }
  void TearDown() override {
    if (!tokens_.empty()) std::filesystem::remove(tokens_);
  }
  const std::string& url() const { return scratch_->url(); }

  // A tokens file readable by its owner alone: a viewer and an operator.
  const std::string& tokens_file() {
    tokens_ = (std::filesystem::temp_directory_path() /
               ("edge_tokens_" + std::to_string(::getpid()) + "_" + std::to_string(++made_)))
                  .string();
    std::ofstream(tokens_) << kEdgeViewerToken << " viewer watcher\n"
                           << kEdgeOperatorToken << " operator floor\n";
    ::chmod(tokens_.c_str(), 0600);
    return tokens_;
  }

 private:
  std::unique_ptr<TestDb> scratch_;
  std::string tokens_;
  int made_ = 0;
};

// A loopback port nothing listens on now (bound, read, released).
std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Everything a connection receives until the server closes it (at most 5 s).
std::string read_until_closed(int fd) {
  timeval limit{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  return out;
}

// The output of a process that exited, once its reader has taken all of it (at most 5 s).
std::string output_containing(ServeProcess& p, const std::string& what) {
  for (int i = 0; i < 100 && p.output().find(what) == std::string::npos; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  return p.output();
}

// The value of one series in a /metrics text (-1 when absent).
double series_value(const std::string& text, const std::string& series) {
  const std::string line = "\n" + series + " ";
  const auto at = text.find(line);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + line.size()));
}

// The review's finding: every call ran each invariant query on the request pool, so about
// --pool-size parallel calls turned everyone else's requests into 503 busy. Here a pool of
// two connections, a 100 ms request deadline, and 32 viewers calling without pause while
// orders are placed: every placement succeeds, and every call is answered from the monitor's
// results with their time and age, without a transaction on the request pool (the pool's
// onceorder_tx_total grows by the placements and the background work, not by the calls).
TEST_P(EdgeLimitsTest, ParallelInvariantCallsDoNotStarveWrites) {
  ServeProcess serve(url(), {"--pool-size", "2", "--request-timeout-ms", "100"});
  ASSERT_NE(serve.port(), 0) << serve.output();
  const std::uint16_t port = serve.port();
  {
    HttpClient setup(port);
    // The setup's own request has the same 100 ms; on a loaded machine the pool's first
    // connection may take longer (503): asked again until the SKU is there (201, or
    // use_adjustment when a try answered 503 had written it after all).
    HttpResponse sku;
    const auto there = [&] {
      return sku.status == 201 || sku.body.find("use_adjustment") != std::string::npos;
    };
    for (int i = 0; i < 100 && !there(); ++i) {
      if (i > 0) std::this_thread::sleep_for(50ms);
      sku = setup.put("/v1/warehouses/1/skus/101", R"({"price_cents":100,"available":100000})");
      ASSERT_TRUE(there() || sku.status == 503) << sku.status << " " << sku.body;
    }
    ASSERT_TRUE(there()) << sku.status << " " << sku.body;
    // The monitor's first run, so that the calls below find results.
    HttpResponse first;
    for (int i = 0; i < 100 && first.status != 200; ++i) {
      if (i > 0) std::this_thread::sleep_for(50ms);
      first = setup.get("/v1/invariants");
    }
    ASSERT_EQ(first.status, 200) << first.body;
  }
  const auto transactions = [port] {
    HttpClient c(port, 10s);
    return series_value(c.get("/metrics").body, "onceorder_tx_total");
  };
  const double tx_before = transactions();
  // Fewer than the requests the server queues (4 workers per connection, 4 waiting per
  // worker: 40), so that only a slow answer can turn the writer away.
  constexpr int kViewers = 32;
  std::atomic<bool> done{false};
  std::atomic<int> calls{0};
  std::mutex mu;
  std::map<int, int> call_statuses;  // guarded by mu
  std::string bad_call;              // guarded by mu
  std::vector<std::thread> viewers;
  for (int i = 0; i < kViewers; ++i) {
    viewers.emplace_back([&] {
      HttpClient c(port, 10s);
      while (!done) {
        const auto r = c.get("/v1/invariants");
        calls.fetch_add(1);
        std::lock_guard lock(mu);
        ++call_statuses[r.status];
        if (r.status == 200) {
          const auto j = r.json();
          if (!j.contains("checked_at") || !j["age_seconds"].is_number() || !j["ok"].get<bool>())
            bad_call = r.body;
        }
      }
    });
  }
  HttpClient writer(port, 10s);
  std::map<int, int> write_statuses;
  std::string last_failure;
  const std::string body =
      R"({"customer_id":7,"warehouse_id":1,"lines":[{"sku_id":101,"quantity":1}]})";
  for (int i = 0; i < 60; ++i) {
    const auto r = writer.post("/v1/orders", body, {{"Idempotency-Key", fmt::format("w{}", i)}});
    ++write_statuses[r.status];
    if (r.status != 201) last_failure = r.body;
  }
  done = true;
  for (auto& t : viewers) t.join();
  const double pool_tx = transactions() - tx_before;
  EXPECT_EQ(write_statuses[201], 60) << "a placement failed: " << last_failure;
  EXPECT_GT(calls.load(), 60);
  EXPECT_LT(pool_tx, 60 + calls.load() / 10) << calls.load() << " calls";
  std::lock_guard lock(mu);
  EXPECT_EQ(call_statuses.size(), 1u) << "every call answered 200";
  EXPECT_GT(call_statuses[200], 0);
  EXPECT_EQ(bad_call, "");
}

// With the background runs off (ServerOptions::invariants_interval 0, as tests and embedders
// may set it) the server runs the checks itself, one run at a time: parallel calls get that
// run's results (one `checked_at` for every 200 within the 10 s they are shared) or 503 busy
// with Retry-After while it runs, never a run each.
class InvariantsRunsOffTest : public HttpTest {};

TEST_P(InvariantsRunsOffTest, ParallelCallsShareOneRun) {
  ServerOptions options;
  options.invariants_interval = std::chrono::milliseconds(0);
  start_server(options);
  std::mutex mu;
  std::set<std::string> checked_at;  // guarded by mu
  std::map<int, int> statuses;       // guarded by mu
  bool busy_without_retry_after = false;
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] {
      HttpClient c(port(), 10s);
      for (int k = 0; k < 5; ++k) {
        const auto r = c.get("/v1/invariants");
        std::lock_guard lock(mu);
        ++statuses[r.status];
        if (r.status == 200) checked_at.insert(r.json()["checked_at"].get<std::string>());
        if (r.status == 503 && r.header("retry-after").empty()) busy_without_retry_after = true;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(statuses[200] + statuses[503], 40);
  EXPECT_GT(statuses[200], 0);
  // Calls that come after a run has finished may start the next one; running the checks per
  // call gave one run per call or nearly (27–30 of 40).
  EXPECT_LE(checked_at.size(), 3u) << "the calls ran the checks once each";
  EXPECT_FALSE(busy_without_retry_after);
}

INSTANTIATE_TEST_SUITE_P(Engines, InvariantsRunsOffTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

// --rate-limit 1 --rate-burst 3: a viewer's fourth request at once is 429 with Retry-After
// and the code rate_limited, counted by role; another principal is not held back by it, the
// open routes are never limited, and without the options nothing is.
TEST_P(EdgeLimitsTest, RateLimitRefusesAPrincipalOverItsBurst) {
  {
    ServeProcess serve(url(),
                       {"--tokens", tokens_file(), "--rate-limit", "1/s", "--rate-burst", "3"});
    ASSERT_NE(serve.port(), 0) << serve.output();
    HttpClient c(serve.port());
    const auto viewer = bearer(kEdgeViewerToken);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(c.get("/v1/orders", viewer).status, 200) << i;
    const auto refused = c.get("/v1/orders", viewer);
    ASSERT_EQ(refused.status, 429) << refused.body;
    EXPECT_EQ(refused.json()["code"], "rate_limited");
    const int retry_after = std::stoi(refused.header("retry-after"));
    EXPECT_GE(retry_after, 1);
    EXPECT_LE(retry_after, 2);
    EXPECT_EQ(c.get("/v1/orders", bearer(kEdgeOperatorToken)).status, 200);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(c.get("/healthz").status, 200);
    const std::string metrics = c.get("/metrics").body;
    EXPECT_EQ(series_value(metrics, R"(onceorder_rate_limited_total{principal_role="viewer"})"), 1)
        << metrics.substr(0, 2000);
    EXPECT_EQ(series_value(metrics, R"(onceorder_rate_limited_total{principal_role="operator"})"),
              0);
    // After the wait it said, the viewer is admitted again.
    std::this_thread::sleep_for(std::chrono::seconds(retry_after));
    EXPECT_EQ(c.get("/v1/orders", viewer).status, 200);
  }
  ServeProcess unlimited(url(), {"--tokens", tokens_file()});
  ASSERT_NE(unlimited.port(), 0) << unlimited.output();
  HttpClient c(unlimited.port());
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(c.get("/v1/orders", bearer(kEdgeViewerToken)).status, 200) << i;
  }
  for (const std::string bad : {"0", "fast", "10/m"}) {
    ServeProcess refused(url(), {"--rate-limit", bad});
    const auto code = refused.wait_exit(10s);
    ASSERT_TRUE(code.has_value()) << "it started with --rate-limit " << bad;
    EXPECT_NE(*code, 0);
    const std::string output = output_containing(refused, "--rate-limit");
    EXPECT_NE(output.find("--rate-limit"), std::string::npos) << output;
  }
}

// --metrics-listen: /metrics on its own loopback port, and nothing else there; the main
// listener then answers /metrics 404 and everything else as before.
TEST_P(EdgeLimitsTest, MetricsListenServesMetricsOnItsOwnPortOnly) {
  const std::uint16_t metrics_port = free_loopback_port();
  ASSERT_NE(metrics_port, 0);
  ServeProcess serve(url(), {"--metrics-listen", std::to_string(metrics_port)});
  ASSERT_NE(serve.port(), 0) << serve.output();
  HttpClient scrape(metrics_port, 5s);
  const auto metrics = scrape.get("/metrics");
  ASSERT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_NE(metrics.body.find("\nonceorder_db_pool_size "), std::string::npos);
  EXPECT_EQ(metrics.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  {
    SlowClient head(metrics_port, "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const std::string answer = read_until_closed(head.fd());
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
    EXPECT_TRUE(answer.ends_with("\r\n\r\n")) << "a HEAD answer has no body: " << answer;
  }
  EXPECT_EQ(scrape.get("/healthz").status, 404);
  EXPECT_EQ(scrape.get("/v1/orders").status, 404);
  const auto post = scrape.post("/metrics", "{}");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("allow"), "GET, HEAD");

  HttpClient main(serve.port());
  EXPECT_EQ(main.get("/metrics").status, 404);
  EXPECT_EQ(main.get("/healthz").status, 200);
  EXPECT_EQ(main.get("/v1/orders").status, 200);

  // An address already taken: serve refuses to start, naming it.
  ServeProcess clash(url(), {"--metrics-listen", fmt::format("127.0.0.1:{}", metrics_port)});
  const auto code = clash.wait_exit(10s);
  ASSERT_TRUE(code.has_value()) << "it started on a taken metrics port";
  EXPECT_NE(*code, 0);
  const std::string output = output_containing(clash, "for metrics");
  EXPECT_NE(output.find("for metrics"), std::string::npos) << output;
}

INSTANTIATE_TEST_SUITE_P(Engines, EdgeLimitsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
