// Production scheduling over HTTP (API.md "Scheduling"): source orders, manual runs (also in
// the background), the operator's listings and the reaper, on every engine.
#include <thread>

#include "e2e/http_fixture.hpp"
#include "http/run_executor.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

json source(const std::string& site, const std::string& order, const std::string& lot,
            std::int64_t quantity) {
  json k = source_key(site, order, lot);
  k["quantity"] = quantity;
  return k;
}

class SchedulingHttpTest : public HttpTest {
 protected:
  // A vector: `{one}` would not make a one-element JSON array from a json.
  HttpResponse import(const std::vector<json>& orders) {
    return client().post("/v1/source-orders", json{{"orders", json(orders)}}.dump());
  }

  HttpResponse run(const std::string& body, const std::string& query = "") {
    return client().post("/v1/schedule/runs" + query, body);
  }

  void restart_with(SchedulerOptions options) {
    open_database({}, std::move(options));
    if (HasFatalFailure()) return;
    start_server({});
  }

  json get_json(const std::string& target) {
    const auto r = client().get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return r.status == 200 ? r.json() : json();
  }
};

TEST_P(SchedulingHttpTest, SourceOrdersAreIdempotentAndConflictsWriteNothing) {
  const std::vector<json> two = {source("A", "O-1", "1", 5), source("A", "O-1", "2", 7)};
  const auto first = import(two);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json(), (json{{"created", 2}, {"existing", 0}}));
  EXPECT_EQ(import(two).json(), (json{{"created", 0}, {"existing", 2}}));

  // One new order and one with another quantity: 409, and the new one is not written.
  const auto conflict = import({source("A", "O-2", "1", 1), source("A", "O-1", "1", 6)});
  expect_problem(conflict, 409, "source_order_conflict");
  EXPECT_EQ(import({source("A", "O-2", "1", 1)}).json(), (json{{"created", 1}, {"existing", 0}}));
}

TEST_P(SchedulingHttpTest, BadSourceOrdersWriteNothing) {
  struct Case {
    json body;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {json::object(), {"orders"}},
      {{{"orders", json::array()}}, {"orders"}},
      {{{"orders", "A"}}, {"orders"}},
      {{{"orders", {1}}}, {"orders[0]"}},
      {{{"orders", {source_key("A", "O", "1")}}}, {"orders[0].quantity"}},
      {{{"orders", {source("A", "O", "1", 1), source("A", "O", "2", 1), source("A", "O", "3", 0)}}},
       {"orders[2].quantity"}},
      {{{"orders", {source("A", "O", "1", 1000000001)}}}, {"orders[0].quantity"}},
      {{{"orders", {source("a b", "O", "1", 1)}}}, {"orders[0].site_code"}},
      {{{"orders", {source(std::string(33, 's'), "O", "1", 1)}}}, {"orders[0].site_code"}},
      {{{"orders", {source("A", "", "1", 1)}}}, {"orders[0].order_no"}},
      {{{"orders", {source("A", "O", std::string(33, 'l'), 1)}}}, {"orders[0].lot_no"}},
      {{{"orders", {json{{"site_code", "A"}, {"order_no", 5}, {"quantity", 1}}}}},
       {"orders[0].order_no", "orders[0].lot_no"}},
      {{{"orders",
         {json{{"site_code", "A"}, {"order_no", "O"}, {"lot_no", "1"}, {"quantity", 1.5}}}}},
       {"orders[0].quantity"}},
      {{{"orders", {source("A", "O", "1", 1)}}, {"extra", true}}, {"extra"}},
      {{{"orders", {[] {
           json o = source("A", "O", "1", 1);
           o["qty"] = 1;
           return o;
         }()}}},
       {"orders[0].qty"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.dump());
    expect_problem(client().post("/v1/source-orders", c.body.dump()), 400, "invalid_request",
                   c.fields);
  }
  expect_problem(client().post("/v1/source-orders", "{"), 400, "invalid_json");
  expect_problem(
      client().post("/v1/source-orders", json{{"orders", {source("A", "O", "1", 1)}}}.dump(),
                    {{"Idempotency-Key", "bad key"}}),
      400, "invalid_request", {"Idempotency-Key"});
  // None of them was written.
  EXPECT_EQ(
      import({source("A", "O", "1", 1), source("A", "O", "2", 1), source("A", "O", "3", 1)}).json(),
      (json{{"created", 3}, {"existing", 0}}));
}

TEST_P(SchedulingHttpTest, ManualRunForGivenOrders) {
  ASSERT_EQ(import({source("A", "O-1", "1", 5), source("A", "O-1", "2", 7)}).status, 200);
  const auto r =
      run(json{{"orders", {source_key("A", "O-1", "1"), source_key("A", "NOPE", "1")}}}.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const json body = r.json();
  EXPECT_GT(body["run_id"].get<std::int64_t>(), 0);
  EXPECT_EQ(body["kind"], "manual");
  EXPECT_EQ(body["status"], "done");
  EXPECT_EQ(body["counts"],
            (json{{"wait", 0}, {"processing", 0}, {"success", 1}, {"failed", 0}, {"aborted", 0}}));
  EXPECT_EQ(body["skipped"], (json{{{"site_code", "A"},
                                    {"order_no", "NOPE"},
                                    {"lot_no", "1"},
                                    {"reason", "unknown_order"}}}));
  EXPECT_FALSE(body["created_at"].get<std::string>().empty());
  EXPECT_FALSE(body["finished_at"].get<std::string>().empty());
  EXPECT_FALSE(body.contains("error"));

  // The same order again is already scheduled; a run of every candidate takes the other.
  const auto again = run(json{{"orders", {source_key("A", "O-1", "1")}}}.dump());
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(again.json()["skipped"][0]["reason"], "already_scheduled");
  EXPECT_EQ(again.json()["counts"]["success"], 0);

  const auto all = run("");
  ASSERT_EQ(all.status, 201) << all.body;
  EXPECT_EQ(all.json()["counts"]["success"], 1) << all.body;
  EXPECT_EQ(all.json()["skipped"], json::array());
  const auto none = run("{}");
  ASSERT_EQ(none.status, 201) << none.body;
  EXPECT_EQ(none.json()["counts"]["success"], 0) << none.body;
  EXPECT_EQ(none.json()["status"], "done");

  // The run reads back the same; listings are newest first.
  const json read = get_json(fmt::format("/v1/schedule/runs/{}", body["run_id"].get<int>()));
  json expected = body;
  expected.erase("skipped");  // the creation's report, not the run's
  expected.erase("orphans_aborted");
  EXPECT_EQ(read, expected);
  const json runs = get_json("/v1/schedule/runs?limit=2")["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["run_id"], none.json()["run_id"]);
  EXPECT_EQ(runs[1]["run_id"], all.json()["run_id"]);
  EXPECT_EQ(get_json("/v1/schedule/runs?status=done")["runs"].size(), 4u);
  EXPECT_EQ(get_json("/v1/schedule/runs?status=running")["runs"].size(), 0u);
}

TEST_P(SchedulingHttpTest, SkippedReasons) {
  SchedulerOptions options;
  options.max_attempts = 1;
  options.site_steps["BAD"] = std::make_shared<SlowOrFailingStep>(0ms, /*fail=*/true);
  restart_with(options);
  ASSERT_EQ(import({source("A", "O", "1", 1), source("BAD", "O", "1", 1)}).status, 200);

  // A live item elsewhere: in progress.
  auto live = scheduler().create_run(RunKind::manual, std::vector<OrderKey>{{"A", "O", "1"}},
                                     store::Clock::now() + 5s);
  ASSERT_TRUE(live.ok()) << live.status().to_string();
  const auto busy = run(json{{"orders", {source_key("A", "O", "1")}}}.dump());
  ASSERT_EQ(busy.status, 201) << busy.body;
  EXPECT_EQ(busy.json()["skipped"][0]["reason"], "in_progress");

  // A failed attempt used up the only one allowed.
  const auto failing = run(json{{"orders", {source_key("BAD", "O", "1")}}}.dump());
  ASSERT_EQ(failing.status, 201) << failing.body;
  EXPECT_EQ(failing.json()["counts"]["failed"], 1) << failing.body;
  const auto stuck = run(json{{"orders", {source_key("BAD", "O", "1")}}}.dump());
  EXPECT_EQ(stuck.json()["skipped"][0]["reason"], "max_attempts_reached") << stuck.body;
  const json items = get_json("/v1/schedule/items?site_code=BAD")["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["status"], "failed");
  EXPECT_NE(items[0]["error"].get<std::string>().find("cannot produce"), std::string::npos);
}

TEST_P(SchedulingHttpTest, CancelledOrdersAreSkipped) {
  ASSERT_EQ(
      client().put("/v1/warehouses/3/skus/9", R"({"price_cents": 10, "available": 5})").status,
      201);
  const auto placed = client().post(
      "/v1/orders",
      R"({"customer_id": 1, "warehouse_id": 3, "lines": [{"sku_id": 9, "quantity": 1}]})",
      {{"Idempotency-Key", "k"}});
  ASSERT_EQ(placed.status, 201) << placed.body;
  const std::string order_no = placed.json()["order_no"];
  const std::string id = placed.json()["order_id"];
  ASSERT_EQ(client().post("/v1/orders/" + id + "/cancel", "").status, 200);
  const auto r = run(json{{"orders", {source_key("W3", order_no, "1")}}}.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.json()["skipped"][0]["reason"], "order_cancelled");
  EXPECT_EQ(r.json()["counts"]["success"], 0);
}

TEST_P(SchedulingHttpTest, BackgroundRunAnswersAtOnceAndCompletes) {
  SchedulerOptions options;
  options.default_step = std::make_shared<SlowOrFailingStep>(20ms, false);
  options.claim_batch = 2;
  restart_with(options);
  std::vector<json> orders;
  for (int i = 1; i <= 10; ++i) orders.push_back(source("B", "O", std::to_string(i), 1));
  ASSERT_EQ(import(orders).status, 200);

  const auto started = run("", "?wait=false");
  ASSERT_EQ(started.status, 201) << started.body;
  EXPECT_EQ(started.json()["status"], "running");
  EXPECT_EQ(started.json()["counts"]["wait"], 10) << started.body;
  const int run_id = started.json()["run_id"];

  json now;
  const auto until = std::chrono::steady_clock::now() + 30s;
  do {
    std::this_thread::sleep_for(50ms);
    now = get_json(fmt::format("/v1/schedule/runs/{}", run_id));
  } while (now["status"] == "running" && std::chrono::steady_clock::now() < until);
  EXPECT_EQ(now["status"], "done") << now;
  EXPECT_EQ(now["counts"]["success"], 10) << now;
  EXPECT_EQ(get_json("/v1/production-orders?site_code=B")["production_orders"].size(), 10u);
}

TEST_P(SchedulingHttpTest, StoppingTheServerEndsABackgroundRunCleanly) {
  SchedulerOptions options;
  options.default_step = std::make_shared<SlowOrFailingStep>(50ms, false);
  options.claim_batch = 1;
  restart_with(options);
  // Long enough (10 s) to be still running when the answer comes: on SQLite the answer's audit
  // row waits behind the run's write lock (a step runs inside its claim's transaction), up to
  // the lock timeout.
  constexpr int kOrders = 200;
  std::vector<json> orders;
  for (int i = 1; i <= kOrders; ++i) orders.push_back(source("S", "O", std::to_string(i), 1));
  ASSERT_EQ(import(orders).status, 200);
  const auto started = run("", "?wait=false");
  ASSERT_EQ(started.status, 201) << started.body;
  const std::int64_t run_id = started.json()["run_id"];
  std::this_thread::sleep_for(150ms);

  server().stop();
  server().wait();
  auto ended = scheduler().get_run(run_id, store::Clock::now() + 5s);
  ASSERT_TRUE(ended.ok()) << ended.status().to_string();
  EXPECT_EQ(ended->status, RunStatus::error);
  EXPECT_NE(ended->error.find("shutting down"), std::string::npos) << ended->error;
  EXPECT_EQ(ended->counts.wait, 0);
  EXPECT_EQ(ended->counts.processing, 0);
  EXPECT_GT(ended->counts.success, 0);
  EXPECT_LT(ended->counts.success, kOrders);
  // Its orders are candidates again at once.
  auto next = scheduler().create_run(RunKind::manual, std::nullopt, store::Clock::now() + 5s);
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  EXPECT_EQ(next->run.counts.wait, kOrders - ended->counts.success);
}

// The background executor behind `?wait=false`: a place is taken before the run is
// created, so a full executor (503 busy) or a stopping one writes nothing.
TEST_P(SchedulingHttpTest, RunExecutorRefusesWhenFullAndWhenStopping) {
  http::RunExecutor executor(scheduler());
  std::vector<http::RunExecutor::Slot> held;
  for (int i = 0; i < http::RunExecutor::kMaxBackground; ++i) {
    auto slot = executor.reserve();
    ASSERT_TRUE(slot.ok()) << slot.status().to_string();
    held.push_back(std::move(*slot));
  }
  EXPECT_EQ(executor.reserve().status().code(), Code::busy);
  held.pop_back();  // given back unused

  ASSERT_EQ(import({source("E", "O", "1", 1)}).status, 200);
  auto created = scheduler().create_run(RunKind::manual, std::nullopt, store::Clock::now() + 5s);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  auto slot = executor.reserve();
  ASSERT_TRUE(slot.ok()) << slot.status().to_string();
  executor.launch(std::move(*slot), created->run.run_id);
  EXPECT_EQ(executor.reserve().status().code(), Code::busy);

  onceorder::Run done;
  const auto until = std::chrono::steady_clock::now() + 30s;
  do {
    std::this_thread::sleep_for(20ms);
    done = *scheduler().get_run(created->run.run_id, store::Clock::now() + 5s);
  } while (done.status == RunStatus::running && std::chrono::steady_clock::now() < until);
  EXPECT_EQ(done.status, RunStatus::done);
  EXPECT_EQ(done.counts.success, 1);
  // A finished run's place is free again.
  auto again = executor.reserve();
  EXPECT_TRUE(again.ok()) << again.status().to_string();

  executor.stop();
  EXPECT_EQ(executor.reserve().status().code(), Code::unavailable);
  executor.join();
}

TEST_P(SchedulingHttpTest, ItemsAndProductionOrdersArePaged) {
  ASSERT_EQ(
      import({source("P", "O", "1", 3), source("P", "O", "2", 4), source("Q", "O", "1", 5)}).status,
      200);
  const auto r = run("");
  ASSERT_EQ(r.status, 201) << r.body;
  const int run_id = r.json()["run_id"];

  const json first = get_json("/v1/schedule/items?limit=2");
  ASSERT_EQ(first["items"].size(), 2u) << first;
  const json item = first["items"][0];
  EXPECT_EQ(item["run_id"], run_id);
  EXPECT_EQ(item["status"], "success");
  EXPECT_EQ(item["attempt"], 1);
  EXPECT_TRUE(item["error"].is_null());
  for (const char* member :
       {"item_id", "site_code", "order_no", "lot_no", "created_at", "updated_at"}) {
    EXPECT_TRUE(item.contains(member)) << member << " in " << item;
  }
  ASSERT_FALSE(first["next_after"].is_null());
  const json rest = get_json(
      fmt::format("/v1/schedule/items?limit=2&after={}", first["next_after"].get<std::int64_t>()));
  ASSERT_EQ(rest["items"].size(), 1u) << rest;
  EXPECT_TRUE(rest["next_after"].is_null());
  EXPECT_EQ(get_json(fmt::format("/v1/schedule/items?run_id={}&status=success&site_code=P",
                                 run_id))["items"]
                .size(),
            2u);
  EXPECT_EQ(get_json("/v1/schedule/items?order_no=O&lot_no=2")["items"].size(), 1u);
  EXPECT_EQ(get_json("/v1/schedule/items?status=WAIT")["items"].size(), 0u);
  EXPECT_EQ(get_json("/v1/schedule/items?run_id=999")["items"].size(), 0u);

  const json page = get_json("/v1/production-orders?limit=1");
  ASSERT_EQ(page["production_orders"].size(), 1u);
  const json po = page["production_orders"][0];
  EXPECT_EQ(po["site_code"], "P");
  EXPECT_EQ(po["lot_no"], "1");
  EXPECT_EQ(po["quantity"], 3);
  EXPECT_EQ(po["document_number"], "000000001");
  EXPECT_EQ(po["item_id"], page["next_after"]);
  EXPECT_FALSE(po["created_at"].get<std::string>().empty());
  const json after = get_json(
      fmt::format("/v1/production-orders?after={}", page["next_after"].get<std::int64_t>()));
  EXPECT_EQ(after["production_orders"].size(), 2u);
  EXPECT_TRUE(after["next_after"].is_null());
  const json q = get_json("/v1/production-orders?site_code=Q")["production_orders"];
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0]["document_number"], "000000001");  // numbered per site
}

// Issue 8: `?site_code=%FF` was a 500 on PostgreSQL and `NU%00x` matched `NU`. Query
// parameters are UTF-8 text without control characters, checked where the query is read.
TEST_P(SchedulingHttpTest, QueryTextMustBeUtf8WithoutControlCharacters) {
  ASSERT_EQ(import({source("NU", "O", "1", 3)}).status, 200);
  ASSERT_EQ(run("").status, 201);
  ASSERT_EQ(get_json("/v1/production-orders?site_code=NU")["production_orders"].size(), 1u);
  for (const std::string route : {"/v1/schedule/items", "/v1/production-orders"}) {
    for (const std::string value : {"%FF", "NU%00x", "NU%00", "%C3%28", "a%0Ab", "%ED%A0%80"}) {
      SCOPED_TRACE(route + "?site_code=" + value);
      expect_problem(client().get(route + "?site_code=" + value), 400, "invalid_request",
                     {"site_code"});
    }
  }
  for (const std::string name : {"order_no", "lot_no", "status"}) {
    SCOPED_TRACE(name);
    expect_problem(client().get("/v1/schedule/items?" + name + "=O%00"), 400, "invalid_request",
                   {name});
  }
  // A parameter name that is not text is refused too (it could not even be named back).
  expect_problem(client().get("/v1/schedule/items?%FF=1"), 400, "invalid_request");
  // Non-ASCII text is a valid (if unknown) site.
  EXPECT_EQ(get_json("/v1/schedule/items?site_code=%C3%A9")["items"].size(), 0u);
}

TEST_P(SchedulingHttpTest, BadRunsAndQueriesWriteNothing) {
  ASSERT_EQ(import({source("A", "O", "1", 1)}).status, 200);
  struct Case {
    std::string target;
    std::string body;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {"/v1/schedule/runs", R"({"orders": []})", {"orders"}},
      {"/v1/schedule/runs", R"({"orders": null})", {"orders"}},
      {"/v1/schedule/runs",
       R"({"orders": [{"site_code": "A", "order_no": "O"}]})",
       {"orders[0].lot_no"}},
      {"/v1/schedule/runs",
       R"({"orders": [{"site_code": "A", "order_no": "O", "lot_no": "1", "quantity": 1}]})",
       {"orders[0].quantity"}},
      {"/v1/schedule/runs",
       R"({"orders": [{"site_code": "a/b", "order_no": "O", "lot_no": "1"}]})",
       {"orders[0].site_code"}},
      {"/v1/schedule/runs", R"({"order": []})", {"order"}},
      {"/v1/schedule/runs?wait=maybe", "", {"wait"}},
      {"/v1/schedule/runs?now=1", "", {"now"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target + " " + c.body);
    expect_problem(client().post(c.target, c.body), 400, "invalid_request", c.fields);
  }
  expect_problem(client().post("/v1/schedule/runs", "[]"), 400, "invalid_request");
  expect_problem(client().post("/v1/schedule/runs", "{"), 400, "invalid_json");
  expect_problem(client().post("/v1/schedule/runs", "", {{"Idempotency-Key", "bad key"}}), 400,
                 "invalid_request", {"Idempotency-Key"});
  expect_problem(client().post("/v1/schedule/runs", R"({"orders": 5})",
                               {{"Idempotency-Key", std::string(256, 'k')}}),
                 400, "invalid_request", {"Idempotency-Key", "orders"});
  EXPECT_EQ(get_json("/v1/schedule/runs")["runs"], json::array());

  const std::vector<Case> queries = {
      {"/v1/schedule/runs?status=finished", "", {"status"}},
      {"/v1/schedule/runs?limit=0", "", {"limit"}},
      {"/v1/schedule/runs?limit=1001", "", {"limit"}},
      {"/v1/schedule/runs?limit=x&sort=asc", "", {"limit", "sort"}},
      {"/v1/schedule/items?status=done", "", {"status"}},
      {"/v1/schedule/items?run_id=0", "", {"run_id"}},
      {"/v1/schedule/items?after=-1", "", {"after"}},
      {"/v1/schedule/items?site_code=", "", {"site_code"}},
      {"/v1/schedule/items?item=1", "", {"item"}},
      {"/v1/production-orders?limit=5000", "", {"limit"}},
      {"/v1/production-orders?after=1.5", "", {"after"}},
      {"/v1/production-orders?site=A", "", {"site"}},
      {"/v1/schedule/runs/1?x=1", "", {"x"}},
  };
  for (const Case& c : queries) {
    SCOPED_TRACE(c.target);
    expect_problem(client().get(c.target), 400, "invalid_request", c.fields);
  }
  for (const std::string bad : {"0", "01", "x", "-1", "9223372036854775808"}) {
    expect_problem(client().get("/v1/schedule/runs/" + bad), 400, "invalid_request", {"run_id"});
  }
  expect_problem(client().get("/v1/schedule/runs/12345"), 404, "not_found");
}

TEST_P(SchedulingHttpTest, ReapEndsRunsWhoseOwnerWentSilent) {
  SchedulerOptions options;
  options.run_timeout = 100ms;
  restart_with(options);
  const auto idle = client().post("/v1/maintenance/reap", "");
  ASSERT_EQ(idle.status, 200) << idle.body;
  EXPECT_EQ(idle.json(),
            (json{{"aborted_waiting", 0}, {"released_processing", 0}, {"dead_runs", 0}}));

  // A run that was created and then never processed (its process died).
  ASSERT_EQ(import({source("R", "O", "1", 1)}).status, 200);
  auto orphan = scheduler().create_run(RunKind::manual, std::nullopt, store::Clock::now() + 5s);
  ASSERT_TRUE(orphan.ok()) << orphan.status().to_string();
  std::this_thread::sleep_for(1500ms);
  const auto reaped = client().post("/v1/maintenance/reap", "{}");
  ASSERT_EQ(reaped.status, 200) << reaped.body;
  EXPECT_EQ(reaped.json()["dead_runs"], 1) << reaped.body;
  const json run = get_json(fmt::format("/v1/schedule/runs/{}", orphan->run.run_id));
  EXPECT_EQ(run["status"], "error");
  EXPECT_FALSE(run["error"].get<std::string>().empty());
  EXPECT_EQ(run["counts"]["wait"], 0);

  expect_problem(client().post("/v1/maintenance/reap", R"({"force": true})"), 400,
                 "invalid_request", {"force"});
  expect_problem(client().get("/v1/maintenance/reap"), 405, "method_not_allowed");
}

// Issue 11 item 5: keyed source orders and runs answer once; a replay is the same status and
// body with Idempotent-Replayed, and nothing is imported or scheduled again.
TEST_P(SchedulingHttpTest, IdempotencyKeyReplaysSourceOrdersAndRuns) {
  const Headers k = {{"Idempotency-Key", "imp-1"}};
  const std::string orders =
      json{{"orders", {source("K", "O", "1", 2), source("K", "O", "2", 3)}}}.dump();
  const auto first = client().post("/v1/source-orders", orders, k);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_FALSE(first.has_header("idempotent-replayed"));
  const auto replay = client().post("/v1/source-orders", orders, k);
  ASSERT_EQ(replay.status, 200) << replay.body;
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(replay.body, first.body);  // {"created": 2, "existing": 0}, not "existing": 2
  expect_problem(
      client().post("/v1/source-orders", json{{"orders", {source("K", "O", "1", 2)}}}.dump(), k),
      422, "idempotency_key_reused");

  const Headers r = {{"Idempotency-Key", "run-1"}};
  const std::string body =
      json{{"orders",
            {source_key("K", "O", "1"), source_key("K", "O", "2"), source_key("K", "none", "1")}}}
          .dump();
  const auto ran = client().post("/v1/schedule/runs", body, r);
  ASSERT_EQ(ran.status, 201) << ran.body;
  EXPECT_EQ(ran.json()["status"], "done");
  const auto again = client().post("/v1/schedule/runs", body, r);
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(again.body, ran.body);
  // Without waiting, the replay answers the run as it is now: the same, since it ended.
  const auto at_once = client().post("/v1/schedule/runs?wait=false", body, r);
  ASSERT_EQ(at_once.status, 201) << at_once.body;
  EXPECT_EQ(at_once.body, ran.body);
  expect_problem(client().post("/v1/schedule/runs", "", r), 422, "idempotency_key_reused");
  EXPECT_EQ(get_json("/v1/schedule/runs")["runs"].size(), 1u);
}

// A replay that arrives while the first request still processes its run waits for the run to
// end and answers the same bytes: one run, two identical answers.
TEST_P(SchedulingHttpTest, ReplayDuringTheRunWaitsForItsEnd) {
  SchedulerOptions options;
  options.default_step = std::make_shared<SlowOrFailingStep>(40ms, false);
  options.claim_batch = 1;
  restart_with(options);
  std::vector<json> orders;
  for (int i = 1; i <= 4; ++i) orders.push_back(source("P", "O", std::to_string(i), 1));
  ASSERT_EQ(import(orders).status, 200);
  const Headers k = {{"Idempotency-Key", "slow-run"}};
  HttpResponse answers[2];
  std::thread first([&] { answers[0] = HttpClient(port()).post("/v1/schedule/runs", "", k); });
  std::this_thread::sleep_for(60ms);  // the run is committed and being processed
  answers[1] = HttpClient(port()).post("/v1/schedule/runs", "", k);
  first.join();
  ASSERT_EQ(answers[0].status, 201) << answers[0].body;
  ASSERT_EQ(answers[1].status, 201) << answers[1].body;
  EXPECT_EQ(answers[0].body, answers[1].body);
  EXPECT_EQ(answers[0].json()["status"], "done");
  EXPECT_EQ(answers[0].json()["counts"]["success"], 4);
  EXPECT_NE(answers[0].has_header("idempotent-replayed"),
            answers[1].has_header("idempotent-replayed"));
  EXPECT_EQ(get_json("/v1/schedule/runs")["runs"].size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Engines, SchedulingHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
