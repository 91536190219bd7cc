// The audit row of an action is in the database as soon as its effect is, on every engine: a
// real `serve` (ServeProcess) killed with SIGKILL in the middle of `POST /v1/schedule/runs`
// (wait=true: its answer comes at the end of the run) leaves the run's production orders and
// the `run.create` row that names who started it, written in the run's creating transaction.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/test_db.hpp"
#include "e2e/http_client.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

// Enough candidates that the run is still going when its first production orders show.
constexpr int kRunOrders = 4000;
constexpr const char* kAdminToken = "audit-crash-admin-token-0123456789abcdef";

class AuditCrashTest : public ::testing::TestWithParam<Engine> {};

TEST_P(AuditCrashTest, KilledMidRunTheRunCreateRowIsThere) {
  TestDb tdb(GetParam());
  tdb.open();  // created and migrated
  tdb.sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
          std::to_string(kRunOrders) +
          ") INSERT INTO source_orders (site_code, order_no, lot_no, quantity) "
          "SELECT 'K1', 'ORD-' || i, '1', 1 FROM n");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("onceorder-audit-crash-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string tokens = (dir / "tokens").string();
  std::ofstream(tokens) << kAdminToken << " admin alice\n";
  chmod(tokens.c_str(), 0600);

  ServeProcess serve(tdb.url(), {"--tokens", tokens});
  const std::uint16_t port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  std::thread starter([port] {
    // No answer comes: the process is killed first.
    try {
      HttpClient c(port, 120s);
      c.post("/v1/schedule/runs?wait=true", "{}",
             {{"Authorization", std::string("Bearer ") + kAdminToken},
              {"Content-Type", "application/json"}});
    } catch (const std::exception&) {
    }
  });
  const auto count = [&](const std::string& q) { return std::stol(tdb.sql(q).at(0).text(0)); };
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (count("SELECT count(*) FROM production_orders") == 0 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  serve.signal(SIGKILL);
  EXPECT_EQ(serve.wait_exit(10s), -1);
  starter.join();
  std::filesystem::remove_all(dir);

  const long made = count("SELECT count(*) FROM production_orders");
  ASSERT_GT(made, 0) << "the run never made a production order";
  ASSERT_LT(made, kRunOrders) << "the run ended before the kill: make it longer";
  ASSERT_EQ(count("SELECT count(*) FROM schedule_runs"), 1);
  const auto rows = tdb.sql(
      "SELECT action, principal, role, outcome, status IS NULL, summary FROM operator_actions");
  ASSERT_EQ(rows.size(), 1u) << "the action's effect is there and its audit row is not";
  EXPECT_EQ(rows[0].text(0), "run.create");
  EXPECT_EQ(rows[0].text(1), "alice");
  EXPECT_EQ(rows[0].text(2), "admin");
  EXPECT_EQ(rows[0].text(3), "applied");
  EXPECT_TRUE(rows[0].boolean(4)) << "no answer was given, yet a status is recorded";
  EXPECT_NE(rows[0].text(5).find("wait=true"), std::string::npos) << rows[0].text(5);
}

INSTANTIATE_TEST_SUITE_P(Engines, AuditCrashTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
