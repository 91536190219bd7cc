// Run creation through real `serve` processes, on every engine:
// - the seed's orphans made for real: a serve killed (SIGKILL) in the middle of its batch run
//   leaves `wait` items of a run nobody heart-beats; the next manual run, sent to another serve
//   that is not the leader (no reaper runs anywhere), takes their keys and counts them;
// - a manual run of thousands of orders on a new database (PostgreSQL: tables never analyzed)
//   answers `?wait=false` within the request deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/test_db.hpp"
#include "e2e/http_client.hpp"
#include "e2e/serve_process.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

class RunCreationTest : public ::testing::TestWithParam<Engine> {
 protected:
  RunCreationTest() : tdb_(GetParam()) {}
  std::int64_t scalar(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  // `n` source orders F<first>…F<first+n-1> of site `site` in one SQL statement.
  void source_orders(const std::string& site, int first, int n) {
    tdb_.sql("WITH RECURSIVE n(i) AS (SELECT " + std::to_string(first) +
             " UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(first + n - 1) +
             ") INSERT INTO source_orders (site_code, order_no, lot_no, quantity) SELECT '" + site +
             "', 'F' || i, '1', 1 FROM n");
  }
  template <class Pred>
  static bool eventually(Pred pred, int seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (pred()) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return pred();
  }
  TestDb tdb_;
};

TEST_P(RunCreationTest, TheNextManualRunTakesTheOrphansOfAServeKilledMidRun) {
  // The leader's lease outlives the test: once this process is killed, no other serve leads,
  // so no reaper passes.
  ServeProcess killed(tdb_.url(), {"--batch-interval", "300ms", "--reap-interval", "1h",
                                   "--run-timeout", "1s", "--leader-lease", "10m"});
  ASSERT_NE(killed.port(), 0) << killed.output();
  constexpr int kOrders = 4000;
  source_orders("K1", 1, kOrders);
  ASSERT_TRUE(eventually([&] { return scalar("SELECT count(*) FROM production_orders") > 0; }, 30))
      << "the batch run never started\n"
      << killed.output();
  killed.signal(SIGKILL);
  ASSERT_TRUE(killed.wait_exit(milliseconds(10000)).has_value());
  const std::int64_t dead = scalar(
      "SELECT coalesce(max(run_id), 0) FROM schedule_runs WHERE "
      "kind = 'batch' AND status = 'running'");
  ASSERT_GT(dead, 0) << "the batch run finished before the kill: make it longer";
  const std::string of_dead =
      "SELECT count(*) FROM schedule_items WHERE run_id = " + std::to_string(dead) +
      " AND status = 'wait'";
  const std::int64_t waiting = scalar(of_dead);
  ASSERT_GT(waiting, 100);

  ServeProcess next(tdb_.url(),
                    {"--batch-interval", "1h", "--reap-interval", "1h", "--run-timeout", "1s"});
  const auto port = next.port();
  ASSERT_NE(port, 0) << next.output();
  std::this_thread::sleep_for(milliseconds(1200));  // the dead run's heartbeat is older than 1s
  json keys = json::array();
  for (const auto& r :
       tdb_.sql("SELECT site_code, order_no, lot_no FROM schedule_items WHERE "
                "run_id = " +
                std::to_string(dead) + " AND status = 'wait' ORDER BY item_id LIMIT 100"))
    keys.push_back({{"site_code", r.text(0)}, {"order_no", r.text(1)}, {"lot_no", r.text(2)}});
  HttpClient client(port);
  auto res = client.post("/v1/schedule/runs?wait=false", json{{"orders", keys}}.dump());
  ASSERT_EQ(res.status, 201) << res.body;
  const json body = res.json();
  EXPECT_EQ(body["skipped"].size(), 0u) << "skipped, e.g. " << body["skipped"][0].dump();
  EXPECT_EQ(body["orphans_aborted"], 100);
  EXPECT_EQ(body["counts"]["wait"].get<int>() + body["counts"]["processing"].get<int>() +
                body["counts"]["success"].get<int>(),
            100);
  // No reaper did it: the dead run is as the kill left it, but for the keys the run took.
  EXPECT_EQ(scalar("SELECT count(*) FROM schedule_runs WHERE run_id = " + std::to_string(dead) +
                   " AND status = 'running'"),
            1);
  EXPECT_EQ(scalar(of_dead), waiting - 100);
  EXPECT_EQ(scalar("SELECT count(*) FROM schedule_items WHERE run_id = " + std::to_string(dead) +
                   " AND status = 'aborted' AND error = 'run is not alive'"),
            100);
  next.signal(SIGTERM);
  EXPECT_TRUE(next.wait_exit(milliseconds(30000)).has_value());
}

// A manual run of `n` listed orders, `?wait=false`, on a new database: 201 within the request
// deadline (5 s by default), every order waiting.
void expect_answer_within_deadline(HttpClient& client, const std::string& site, int n) {
  json orders = json::array();
  for (int i = 1; i <= n; ++i)
    orders.push_back({{"site_code", site}, {"order_no", "F" + std::to_string(i)}, {"lot_no", "1"}});
  const auto started = std::chrono::steady_clock::now();
  auto res = client.post("/v1/schedule/runs?wait=false", json{{"orders", orders}}.dump());
  const auto took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
  ASSERT_EQ(res.status, 201) << n << " orders, after " << took.count() << " ms: " << res.body;
  EXPECT_LT(took.count(), 5000) << n << " orders";
  EXPECT_EQ(res.json()["counts"]["wait"].get<int>() +
                res.json()["counts"]["processing"].get<int>() +
                res.json()["counts"]["success"].get<int>(),
            n);
  EXPECT_EQ(res.json()["skipped"].size(), 0u);
  std::printf("[ run creation ] %d listed orders answered in %lld ms\n", n,
              static_cast<long long>(took.count()));
}

TEST_P(RunCreationTest, AManualRunOfThousandsOfOrdersOnANewDatabaseAnswersWithinTheDeadline) {
  ServeProcess serve(tdb_.url(), {"--batch-interval", "1h", "--workers", "1"});
  const auto port = serve.port();
  ASSERT_NE(port, 0) << serve.output();
  if (GetParam() == Engine::postgres) {
    // Nor does autovacuum analyze them while the test runs.
    for (const char* table : {"source_orders", "schedule_items", "schedule_runs"})
      tdb_.sql(std::string("ALTER TABLE ") + table + " SET (autovacuum_enabled = off)");
  }
  source_orders("N1", 1, 2000);
  source_orders("N2", 1, 10000);  // the most one request may name
  if (GetParam() == Engine::postgres) {
    // Never analyzed: the planner has no statistics of the tables' columns.
    EXPECT_EQ(scalar("SELECT count(*) FROM pg_stats WHERE tablename IN ('source_orders', "
                     "'schedule_items', 'schedule_runs')"),
              0);
  }
  HttpClient client(port);
  expect_answer_within_deadline(client, "N1", 2000);
  // The second run alone, not beside the first one's processing (on SQLite, one writer).
  ASSERT_TRUE(eventually(
      [&] {
        return scalar(
                   "SELECT count(*) FROM schedule_runs WHERE status IN ('creating', "
                   "'running')") == 0;
      },
      120));
  expect_answer_within_deadline(client, "N2", 10000);
  serve.signal(SIGTERM);
  EXPECT_TRUE(serve.wait_exit(milliseconds(60000)).has_value());
}

INSTANTIATE_TEST_SUITE_P(Engines, RunCreationTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
