// `onceorder serve` as a process: slow clients beyond the descriptor limit, SIGTERM with a
// client still sending its request (the built binary, ONCEORDER_BIN, on every engine), and a
// copy of the binary alone in an empty directory serving the dashboard and the OpenAPI
// document from itself, byte for byte as they are in the source tree.
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "e2e/http_fixture.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

class ServeProcessTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override { scratch_ = std::make_unique<TestDb>(GetParam()); }
  const std::string& url() const { return scratch_->url(); }

 private:
  std::unique_ptr<TestDb> scratch_;
};

// The review's finding: connections trickling headers used up the descriptors and a new
// client waited for one of them to time out (30 s). Here the server may have 256
// descriptors and 400 slow clients connect first.
TEST_P(ServeProcessTest, SlowClientsBeyondTheDescriptorLimitDoNotStallANewOne) {
  rlimit own{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &own), 0);
  if (own.rlim_cur < 1024) GTEST_SKIP() << "this test needs 1024 descriptors of its own";
  ServeProcess serve(url(), {}, /*nofile=*/256);
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();

  std::vector<SlowClient> slow;
  for (int i = 0; i < 400; ++i) {
    slow.emplace_back(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ");
    ASSERT_GE(slow.back().fd(), 0) << "connection " << i;
  }
  std::this_thread::sleep_for(300ms);

  const auto start = std::chrono::steady_clock::now();
  HttpClient fresh(port, 4s);
  int status = 0;
  try {
    status = fresh.get("/healthz").status;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "a new client was not served: " << e.what();
  }
  EXPECT_EQ(status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);

  serve.signal(SIGTERM);
  const auto code = serve.wait_exit(10s);
  ASSERT_TRUE(code.has_value()) << serve.output().substr(0, 4000);
  EXPECT_EQ(*code, 0);
}

// `serve` answers a replayed order from memory by default (--replay-memory 30s), with the
// body the receipt gives; `--replay-memory off` reads the receipt every time; a value that is
// not a duration is refused before anything starts.
TEST_P(ServeProcessTest, ReplayMemoryIsOnByDefaultAndCanBeTurnedOff) {
  const auto replays_from_memory = [](HttpClient& c) {
    const std::string text = c.get("/metrics").body;
    const std::string name = "\nonceorder_order_replays_from_memory_total ";
    const auto at = text.find(name);
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + name.size()));
  };
  const std::string body =
      R"({"customer_id":7,"warehouse_id":1,"lines":[{"sku_id":101,"quantity":1}]})";
  const Headers key{{"Idempotency-Key", "mem"}};
  std::string first_body;
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "default" : "off");
    ServeProcess serve(url(), on ? std::vector<std::string>{}
                                 : std::vector<std::string>{"--replay-memory", "off"});
    ASSERT_NE(serve.port(), 0) << serve.output();
    HttpClient c(serve.port());
    if (on) {
      ASSERT_EQ(c.put("/v1/warehouses/1/skus/101", R"({"price_cents":100,"available":5})").status,
                201);
    }
    const auto first = c.post("/v1/orders", body, key);
    ASSERT_EQ(first.status, 201) << first.body;
    if (on) {
      EXPECT_FALSE(first.has_header("idempotent-replayed"));
      first_body = first.body;
    } else {
      EXPECT_EQ(first.header("idempotent-replayed"), "true") << "the first server's order";
    }
    const auto again = c.post("/v1/orders", body, key);
    ASSERT_EQ(again.status, 201) << again.body;
    EXPECT_EQ(again.header("idempotent-replayed"), "true");
    EXPECT_EQ(again.body, first_body);
    // A stored out_of_stock answers alike.
    const std::string big =
        R"({"customer_id":7,"warehouse_id":1,"lines":[{"sku_id":101,"quantity":50}]})";
    const Headers oos_key{{"Idempotency-Key", on ? "oos-on" : "oos-off"}};
    const auto refused = c.post("/v1/orders", big, oos_key);
    ASSERT_EQ(refused.status, 409) << refused.body;
    const auto refused_again = c.post("/v1/orders", big, oos_key);
    EXPECT_EQ(refused_again.status, 409);
    EXPECT_EQ(refused_again.body, refused.body);
    EXPECT_EQ(refused_again.header("idempotent-replayed"), "true");
    EXPECT_EQ(replays_from_memory(c), on ? 2 : 0);
  }
  for (const std::string bad : {"0s", "soon", "-1s"}) {
    ServeProcess refused(url(), {"--replay-memory", bad});
    const auto code = refused.wait_exit(10s);
    ASSERT_TRUE(code.has_value()) << "it started serving with --replay-memory " << bad;
    EXPECT_NE(*code, 0);
    EXPECT_NE(refused.output().find("--replay-memory"), std::string::npos) << refused.output();
  }
}

// The review's finding: SIGTERM waited ~30 s for one client trickling a body.
TEST_P(ServeProcessTest, SigtermDoesNotWaitForAClientTricklingItsBody) {
  ServeProcess serve(url());
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  SlowClient trickler(port,
                      "POST /v1/scopes/S/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                      "{\"title\": \"");
  ASSERT_GE(trickler.fd(), 0);
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (int i = 0; i < 100 && !done && trickler.send_bytes("a"); ++i) {
      std::this_thread::sleep_for(100ms);
    }
  });
  // An idle keep-alive connection too, and a server that has answered once.
  HttpClient idle(port, 5s);
  ASSERT_EQ(idle.get("/healthz").status, 200);
  std::this_thread::sleep_for(500ms);

  const auto start = std::chrono::steady_clock::now();
  serve.signal(SIGTERM);
  const auto code = serve.wait_exit(8s);
  const auto took = std::chrono::steady_clock::now() - start;
  done = true;
  trickle.join();
  ASSERT_TRUE(code.has_value()) << "still running 8 s after SIGTERM\n"
                                << serve.output().substr(0, 4000);
  EXPECT_EQ(*code, 0) << serve.output();
  EXPECT_LT(took, 5s);
}

INSTANTIATE_TEST_SUITE_P(Engines, ServeProcessTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

std::string source_tree_file(const std::string& relative) {
  std::ifstream in(std::string(ONCEORDER_SOURCE_DIR) + "/" + relative, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Nothing is read from the source tree at run time: what a copy of the binary serves from
// an empty directory can only come from the binary.
TEST(EmbeddedFilesProcess, ABinaryAloneInAnEmptyDirectoryServesItsDashboard) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("onceorder-alone-" + random_suffix());
  ASSERT_TRUE(fs::create_directory(dir));
  const fs::path binary = dir / "onceorder";
  fs::copy_file(onceorder_bin(), binary);
  {
    ServeProcess serve("sqlite:" + (dir / "alone.db").string(), {}, 0, binary.string(),
                       dir.string(), ServeTokens::own);
    const std::uint16_t port = serve.port();
    ASSERT_NE(port, 0) << serve.output();
    HttpClient c(port, 5s);
    const std::pair<std::string, std::string> files[] = {
        {"/", "web/index.html"},
        {"/index.html", "web/index.html"},
        {"/app.js", "web/app.js"},
        {"/style.css", "web/style.css"},
        {"/openapi.json", "docs/openapi.json"},
    };
    const std::map<std::string, std::string> types = {
        {"web/index.html", "text/html; charset=utf-8"},
        {"web/app.js", "text/javascript; charset=utf-8"},
        {"web/style.css", "text/css; charset=utf-8"},
        {"docs/openapi.json", "application/json"},
    };
    for (const auto& [path, source] : files) {
      const HttpResponse r = c.get(path);
      EXPECT_EQ(r.status, 200) << path;
      EXPECT_EQ(r.header("content-type"), types.at(source)) << path;
      EXPECT_EQ(r.body, source_tree_file(source)) << path;
      EXPECT_EQ(r.header("cache-control"), "no-cache") << path;
      EXPECT_EQ(r.header("etag").size(), 34u) << path;
      EXPECT_NE(r.header("content-security-policy").find("default-src 'self'"), std::string::npos)
          << path;
    }
    EXPECT_EQ(c.get("/missing.js").status, 404);
    EXPECT_EQ(c.get("/CMakeLists.txt").status, 404);  // a file of the source tree
    // Nothing was written beside the binary but its database.
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(name == "onceorder" || name.starts_with("alone.db")) << name;
    }
    serve.signal(SIGTERM);
    EXPECT_EQ(serve.wait_exit(10s), std::optional<int>(0)) << serve.output();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onceorder::testing
