// The end-to-end fixture: a fresh database per test on every engine under test (the one
// fixture, common/test_db.hpp), migrated, with the process's Scheduler and Intake, an
// in-process Server on a free loopback port and a client talking to it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/test_db.hpp"
#include "e2e/http_client.hpp"
#include "http/auth.hpp"
#include "onceorder/http/http_server.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::testing {

inline std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// A source order's business key, as the scheduling and console routes take it.
inline nlohmann::json source_key(const std::string& site, const std::string& order,
                                 const std::string& lot) {
  return {{"site_code", site}, {"order_no", order}, {"lot_no", lot}};
}

// Production that takes its time (to catch a run in progress, or stop one) or fails (to use
// up attempts); otherwise it produces as the product does.
class SlowOrFailingStep final : public ProductionStep {
 public:
  SlowOrFailingStep(std::chrono::milliseconds delay, bool fail) : delay_(delay), fail_(fail) {}
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    std::this_thread::sleep_for(delay_);
    if (fail_) return Status(Code::invalid_request, "this site cannot produce");
    return inner_->produce(claim, issuer);
  }

 private:
  std::chrono::milliseconds delay_;
  bool fail_;
  std::shared_ptr<ProductionStep> inner_ = standard_production_step();
};

class HttpTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    spdlog::set_level(std::getenv("ONCEORDER_TEST_LOG") ? spdlog::level::info
                                                        : spdlog::level::warn);
    scratch_ = std::make_unique<TestDb>(GetParam());
    open_database({});
    if (HasFatalFailure()) return;
    start_server({});
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    intake_.reset();
    scheduler_.reset();
    db_.reset();
    scratch_.reset();
  }

  // (Re)opens the database with `options` (stops the server first), with a new Scheduler
  // (`scheduling` options) and Intake.
  void open_database(store::DatabaseOptions options, SchedulerOptions scheduling = {}) {
    client_.reset();
    server_.reset();
    intake_.reset();
    scheduler_.reset();
    db_.reset();
    auto url = parse_db_url(scratch_->migrated_url());
    ASSERT_TRUE(url.ok()) << url.status().to_string();
    auto db = store::Database::open(*url, options);
    ASSERT_TRUE(db.ok()) << db.status().to_string();
    db_ = std::move(db).value();
    auto version = store::migrate(*db_);
    ASSERT_TRUE(version.ok()) << version.status().to_string();
    scheduler_ = std::make_unique<Scheduler>(*db_, std::move(scheduling));
    intake_ = std::make_unique<Intake>(*db_);
  }

  // (Re)starts the server on a free loopback port; without a tokens file of the test's own,
  // with one admitting kTestAdminToken, which the client then sends by default.
  void start_server(ServerOptions options) {
    client_.reset();
    server_.reset();
    if (options.listen == ServerOptions{}.listen) options.listen = "127.0.0.1:0";
    const bool own_tokens = options.tokens_file.has_value();
    if (!own_tokens) options.tokens_file = write_tokens(test_tokens_text());
    // Tests send 401s on purpose: the refusal after many (AuthThrottle) is tested where a
    // test sets its own limit.
    if (options.auth_failure_limit == kAuthFailureLimit) options.auth_failure_limit = 1000000;
    auto server = Server::start(*db_, *scheduler_, *intake_, std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().to_string();
    server_ = std::move(server).value();
    client_ = std::make_unique<HttpClient>(server_->port());
    // With the test's own tokens, a request without a header of its own carries none.
    if (own_tokens) client_->set_token(std::nullopt);
  }

  // Replaces the Intake (a test's seams), restarting the server with `options`.
  void use_intake(IntakeOptions intake_options, ServerOptions options = {}) {
    client_.reset();
    server_.reset();
    intake_ = std::make_unique<Intake>(*db_, std::move(intake_options));
    start_server(std::move(options));
  }

  HttpClient& client() { return *client_; }
  store::Database& db() { return *db_; }
  Scheduler& scheduler() { return *scheduler_; }
  Intake& intake() { return *intake_; }
  Server& server() { return *server_; }
  const TestDb& scratch() const { return *scratch_; }
  std::uint16_t port() const { return server_->port(); }

  std::string write_file(const std::string& name, const std::string& text) {
    const auto path =
        (std::filesystem::temp_directory_path() / fmt::format("{}_{}", random_suffix(), name))
            .string();
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }

  // A tokens file (mode 0600) from `text` in `token role [name]` lines, each token too short
  // to rest in a file in plain text written in its sha256: form: tests keep short, readable
  // tokens and the sha256: entries are exercised everywhere.
  std::string write_tokens(const std::string& text) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const auto space = line.find(' ');
      const std::string token = line.substr(0, space);
      if (space != std::string::npos && !token.starts_with("#") && !token.starts_with("sha256:") &&
          token.size() < http::kMinPlainTokenLength) {
        line = "sha256:" + http::sha256_hex(token) + line.substr(space);
      }
      out += line + "\n";
    }
    const std::string path = write_file("tokens", out);
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
  }

  ~HttpTest() override {
    for (const auto& f : files_) std::filesystem::remove(f);
  }

 private:
  std::unique_ptr<TestDb> scratch_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Intake> intake_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpClient> client_;
  std::vector<std::string> files_;
};

// Checks a problem+json answer: status, code, and (when given) exactly these field names.
inline void expect_problem(const HttpResponse& r, int status, const std::string& code,
                           const std::vector<std::string>& fields = {}) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/problem+json") << r.body;
  const auto body = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << r.body;
  EXPECT_EQ(body.value("code", ""), code) << r.body;
  EXPECT_EQ(body.value("status", 0), status) << r.body;
  EXPECT_TRUE(body.contains("type") && body.contains("title") && body.contains("detail")) << r.body;
  if (!fields.empty()) {
    std::vector<std::string> got;
    for (const auto& e : body.value("errors", nlohmann::json::array())) {
      got.push_back(e.value("field", ""));
      EXPECT_FALSE(e.value("message", "").empty()) << r.body;
    }
    EXPECT_EQ(got, fields) << r.body;
  }
}

}  // namespace onceorder::testing
