// The capacity alerts' series on /metrics (OPERATIONS.md, "Metrics"; the alerts in
// deploy/prometheus): readiness, orders past the attempt limit, the scopes nearest their max and,
// on PostgreSQL, the synchronous standbys, read by the monitor from a real database, on every
// engine.
#include <thread>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

class CapacityMetricsTest : public HttpTest {
 protected:
  // The line of `series` ("name{labels}") in a scrape, or "" when it has none.
  static std::string capacity_line(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return "";
    return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  }
  // Scrapes until every line of `want` is in the text (the monitor reads every 5 s).
  std::string scrape_until(const std::vector<std::string>& want) {
    std::string text;
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < until) {
      text = client().get("/metrics").body;
      bool all = true;
      for (const auto& w : want) all = all && text.find("\n" + w + "\n") != std::string::npos;
      if (all) return text;
      std::this_thread::sleep_for(200ms);
    }
    return text;
  }
};

TEST_P(CapacityMetricsTest, ExhaustedOrdersFullScopesReadinessAndStandbysAreSeries) {
  // Site BAD always fails, at most 2 attempts: after two runs BAD/O/1 is exhausted.
  SchedulerOptions options;
  options.max_attempts = 2;
  options.site_steps["BAD"] = std::make_shared<SlowOrFailingStep>(0ms, /*fail=*/true);
  open_database({}, options);
  ASSERT_FALSE(HasFatalFailure());
  start_server({});
  const json orders = {{{"site_code", "BAD"}, {"order_no", "O"}, {"lot_no", "1"}, {"quantity", 1}},
                       {{"site_code", "A"}, {"order_no", "O"}, {"lot_no", "1"}, {"quantity", 1}}};
  ASSERT_EQ(client().post("/v1/source-orders", json{{"orders", orders}}.dump()).status, 200);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(client().post("/v1/schedule/runs", "").status, 201);
  // A scope at 95 % of its max, and one far from it.
  ASSERT_EQ(client().put("/v1/scopes/NEAR", R"({"width": 2, "radix": 10, "max": 20})").status, 201);
  for (int i = 0; i < 19; ++i)
    ASSERT_EQ(client().post("/v1/scopes/NEAR/documents", R"({"title": "n"})").status, 201);
  ASSERT_EQ(client().post("/v1/scopes/FAR/documents", R"({"title": "f"})").status, 201);
  ASSERT_EQ(client().get("/readyz").status, 200);

  const std::string text = scrape_until({
      "onceorder_orders_exhausted 1",
      R"(onceorder_scope_last_value{scope="NEAR"} 19)",
      R"(onceorder_scope_max_value{scope="NEAR"} 20)",
      "onceorder_ready 1",
  });
  for (const char* line :
       {"onceorder_orders_exhausted 1", R"(onceorder_scope_last_value{scope="NEAR"} 19)",
        R"(onceorder_scope_max_value{scope="NEAR"} 20)",
        R"(onceorder_scope_last_value{scope="FAR"} 1)", "onceorder_ready 1"}) {
    EXPECT_NE(text.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n"
                                                                             << text;
  }
  // The fullest first: NEAR's series comes before FAR's.
  EXPECT_LT(text.find(R"(onceorder_scope_last_value{scope="NEAR"})"),
            text.find(R"(onceorder_scope_last_value{scope="FAR"})"));
  // The tests' PostgreSQL role may read the standbys' state (it has none); SQLite has none.
  if (GetParam() == Engine::postgres) {
    EXPECT_EQ(capacity_line(text, "onceorder_pg_sync_standbys"), "onceorder_pg_sync_standbys 0")
        << text;
    EXPECT_EQ(capacity_line(text, "onceorder_pg_sync_standbys_named"),
              "onceorder_pg_sync_standbys_named 0")
        << text;
  } else {
    EXPECT_EQ(text.find("onceorder_pg_sync_standbys"), std::string::npos) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, CapacityMetricsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
