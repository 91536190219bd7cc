// The console's actions over HTTP (API.md "Console actions"): the orders that reached the
// attempt limit, re-queueing them, and stopping a run, with roles and bad input, on every
// engine.
#include <thread>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

class ActionsHttpTest : public HttpTest {
 protected:
  // Site BAD always fails, at most 2 attempts; BAD/O/1 and BAD/O/2 used them up, A/O/1 made.
  void exhaust() {
    SchedulerOptions options;
    options.max_attempts = 2;
    options.site_steps["BAD"] = std::make_shared<SlowOrFailingStep>(0ms, /*fail=*/true);
    open_database({}, options);
    if (HasFatalFailure()) return;
    start_server({});
    const json orders = {
        {{"site_code", "BAD"}, {"order_no", "O"}, {"lot_no", "1"}, {"quantity", 1}},
        {{"site_code", "BAD"}, {"order_no", "O"}, {"lot_no", "2"}, {"quantity", 1}},
        {{"site_code", "A"}, {"order_no", "O"}, {"lot_no", "1"}, {"quantity", 1}}};
    ASSERT_EQ(client().post("/v1/source-orders", json{{"orders", orders}}.dump()).status, 200);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(client().post("/v1/schedule/runs", "").status, 201);
  }
  json get_json(const std::string& target, const Headers& headers = {}) {
    const auto r = client().get(target, headers);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return r.status == 200 ? r.json() : json();
  }
  json requeue_body(const std::vector<json>& keys, bool dry_run) {
    return {{"orders", json(keys)}, {"dry_run", dry_run}};
  }
  // How many orders are at the attempt limit now.
  size_t exhausted_count() {
    const json page = get_json("/v1/schedule/exhausted");
    return page.is_object() ? page["orders"].size() : 0;
  }
};

TEST_P(ActionsHttpTest, ExhaustedOrdersAreListedPagedAndRequeued) {
  ASSERT_NO_FATAL_FAILURE(exhaust());
  const json all = get_json("/v1/schedule/exhausted");
  EXPECT_EQ(all["max_attempts"], 2);
  ASSERT_EQ(all["orders"].size(), 2u) << all;
  EXPECT_EQ(all["orders"][0], (json{{"site_code", "BAD"},
                                    {"order_no", "O"},
                                    {"lot_no", "1"},
                                    {"attempts", 2},
                                    {"failed_total", 2},
                                    {"last_error", all["orders"][0]["last_error"]},
                                    {"last_failed_at", all["orders"][0]["last_failed_at"]},
                                    {"requeued_at", nullptr}}));
  EXPECT_NE(all["orders"][0]["last_error"].get<std::string>().find("cannot produce"),
            std::string::npos);
  EXPECT_EQ(all["next_after"], nullptr);
  const json first = get_json("/v1/schedule/exhausted?site_code=BAD&limit=1");
  ASSERT_EQ(first["next_after"], "BAD O 1") << first;
  const json second = get_json("/v1/schedule/exhausted?site_code=BAD&limit=1&after=BAD+O+1");
  ASSERT_EQ(second["orders"].size(), 1u);
  EXPECT_EQ(second["orders"][0]["lot_no"], "2");
  const json site_a = get_json("/v1/schedule/exhausted?site_code=A");
  EXPECT_TRUE(site_a["orders"].empty());

  // Preview, then the real thing: the same answer; the dry run changed nothing.
  const std::vector<json> keys = {source_key("BAD", "O", "1"), source_key("A", "O", "1"),
                                  source_key("BAD", "NONE", "1")};
  const auto dry = client().post("/v1/schedule/requeue", requeue_body(keys, true).dump());
  ASSERT_EQ(dry.status, 200) << dry.body;
  EXPECT_EQ(dry.json()["dry_run"], true);
  EXPECT_EQ(dry.json()["requeued"], (json::array({source_key("BAD", "O", "1")})));
  EXPECT_EQ(dry.json()["skipped"].size(), 2u);
  EXPECT_EQ(exhausted_count(), 2u);
  const auto done = client().post("/v1/schedule/requeue", requeue_body(keys, false).dump());
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json()["dry_run"], false);
  EXPECT_EQ(done.json()["requeued"], dry.json()["requeued"]);
  EXPECT_EQ(done.json()["skipped"], dry.json()["skipped"]);
  const json rest = get_json("/v1/schedule/exhausted");
  ASSERT_EQ(rest["orders"].size(), 1u);
  EXPECT_EQ(rest["orders"][0]["lot_no"], "2");
  // Nothing started; the next run picks it (and it fails again: a fresh budget of two).
  const json waiting = get_json("/v1/schedule/items?status=wait");
  EXPECT_TRUE(waiting["items"].empty());
  const auto next = client().post("/v1/schedule/runs", "");
  ASSERT_EQ(next.status, 201) << next.body;
  EXPECT_EQ(next.json()["counts"]["failed"], 1) << next.body;
  EXPECT_EQ(exhausted_count(), 1u);
  expect_invariants_hold(db());
}

TEST_P(ActionsHttpTest, BadActionRequestsChangeNothing) {
  ASSERT_NO_FATAL_FAILURE(exhaust());
  struct Case {
    std::string body;
    std::vector<std::string> fields;
    std::string code = "invalid_request";
  };
  const std::vector<Case> cases = {
      {R"({})", {"orders"}},
      {R"({"orders": []})", {"orders"}},
      {R"({"orders": [{"site_code": "BAD", "order_no": "O", "lot_no": "1"}], "dry_run": 1})",
       {"dry_run"}},
      {R"({"orders": [{"site_code": "BAD", "order_no": "O", "lot_no": "1"},
                      {"site_code": "b d", "order_no": "O"}]})",
       {"orders[1].lot_no", "orders[1].site_code"}},
      {R"({"orders": [{"site_code": "BAD", "order_no": "O", "lot_no": "1"}], "extra": 1})",
       {"extra"}},
      {R"({"orders": )", {}, "invalid_json"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_problem(client().post("/v1/schedule/requeue", c.body), 400, c.code, c.fields);
  }
  expect_problem(client().post("/v1/schedule/requeue?x=1", R"({"orders": []})"), 400,
                 "invalid_request", {"x"});
  expect_problem(
      client().post("/v1/schedule/requeue",
                    R"({"orders": [{"site_code": "BAD", "order_no": "O", "lot_no": "1"}]})",
                    {{"Idempotency-Key", "a key"}}),
      400, "invalid_request", {"Idempotency-Key"});
  EXPECT_EQ(exhausted_count(), 2u);  // nothing re-queued
  for (const std::string& q :
       std::vector<std::string>{"limit=0", "after=BAD", "after=BAD+O", "after=b%20d+O+1", "x=1",
                                "site_code=" + std::string(65, 'S')}) {
    SCOPED_TRACE(q);
    const auto r = client().get("/v1/schedule/exhausted?" + q);
    EXPECT_EQ(r.status, 400) << r.body;
  }
  expect_problem(client().post("/v1/schedule/runs/abc/stop", ""), 400, "invalid_request");
  expect_problem(client().post("/v1/schedule/runs/999999/stop", ""), 404, "not_found");
  const json runs = get_json("/v1/schedule/runs");
  const std::int64_t done_run = runs["runs"][0]["run_id"];
  expect_problem(client().post(fmt::format("/v1/schedule/runs/{}/stop", done_run), ""), 409,
                 "conflict");
}

TEST_P(ActionsHttpTest, AViewerReadsTheListAndMayNotAct) {
  ASSERT_NO_FATAL_FAILURE(exhaust());
  ServerOptions options;
  options.tokens_file = write_tokens("a admin\no operator\nv viewer\nc customer:1\n");
  start_server(options);
  const Headers viewer = {{"Authorization", "Bearer v"}}, op = {{"Authorization", "Bearer o"}},
                customer = {{"Authorization", "Bearer c"}};
  const json seen = get_json("/v1/schedule/exhausted", viewer);
  EXPECT_EQ(seen["orders"].size(), 2u);
  EXPECT_EQ(client().get("/v1/schedule/exhausted", customer).status, 403);
  const std::string body = requeue_body({source_key("BAD", "O", "1")}, false).dump();
  expect_problem(client().post("/v1/schedule/requeue", body, viewer), 403, "forbidden");
  expect_problem(client().post("/v1/schedule/runs/1/stop", "", viewer), 403, "forbidden");
  expect_problem(client().post("/v1/schedule/requeue", body, customer), 403, "forbidden");
  const json unchanged = get_json("/v1/schedule/exhausted", viewer);
  EXPECT_EQ(unchanged["orders"].size(), 2u);
  const auto by_operator = client().post("/v1/schedule/requeue", body, op);
  ASSERT_EQ(by_operator.status, 200) << by_operator.body;
  EXPECT_EQ(by_operator.json()["requeued"].size(), 1u);
}

TEST_P(ActionsHttpTest, ABackgroundRunStoppedMidWayEndsInErrorAndItsOrdersWaitAgain) {
  SchedulerOptions options;
  options.default_step = std::make_shared<SlowOrFailingStep>(50ms, false);
  options.claim_batch = 1;
  open_database({}, options);
  ASSERT_FALSE(HasFatalFailure());
  start_server({});
  // 200 items of 50 ms, one per batch: 10 s, long enough to be stopped mid-way also on SQLite,
  // where the answer to `?wait=false` can wait up to about 2 s for its audit row (the run
  // holds the one writer; OPERATIONS.md, "The audit trail").
  constexpr int kOrders = 200;
  json orders = json::array();
  for (int i = 1; i <= kOrders; ++i)
    orders.push_back(
        {{"site_code", "S"}, {"order_no", "O"}, {"lot_no", std::to_string(i)}, {"quantity", 1}});
  ASSERT_EQ(client().post("/v1/source-orders", json{{"orders", orders}}.dump()).status, 200);
  const auto started = client().post("/v1/schedule/runs?wait=false", "");
  ASSERT_EQ(started.status, 201) << started.body;
  const std::int64_t run_id = started.json()["run_id"];
  const std::string run_path = fmt::format("/v1/schedule/runs/{}", run_id);
  // Stop once some items are made.
  std::this_thread::sleep_for(150ms);
  const auto until = std::chrono::steady_clock::now() + 20s;
  const auto stop = client().post(run_path + "/stop", "");
  ASSERT_EQ(stop.status, 202) << stop.body;
  // The run as it is now: still running (PostgreSQL: the mark waits for the next batch
  // boundary) or already stopped (SQLite: this process saw the stop before the mark could be
  // written, the run holding the one writer).
  const json asked = stop.json();
  EXPECT_TRUE(asked["status"] == "running" ||
              (asked["status"] == "error" && asked["error"] == "stopped by request"))
      << stop.body;
  json now;
  do {
    std::this_thread::sleep_for(20ms);
    now = get_json(run_path);
  } while (now["status"] == "running" && std::chrono::steady_clock::now() < until);
  EXPECT_EQ(now["status"], "error") << now;
  EXPECT_EQ(now["error"], "stopped by request") << now;
  EXPECT_GT(now["counts"]["success"], 0) << now;
  EXPECT_LT(now["counts"]["success"], kOrders) << now;
  EXPECT_EQ(now["counts"]["wait"], 0) << now;
  EXPECT_EQ(now["counts"]["processing"], 0) << now;
  expect_problem(client().post(run_path + "/stop", ""), 409, "conflict");
  expect_invariants_hold(db());
  // Its orders are candidates again at once.
  const std::int64_t made = now["counts"]["success"];
  auto next = scheduler().create_run(RunKind::manual, std::nullopt, store::Clock::now() + 5s);
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  EXPECT_EQ(next->run.counts.wait, kOrders - made);
}

INSTANTIATE_TEST_SUITE_P(Engines, ActionsHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
