// `--request-timeout-ms` bounds a request whose database stops answering mid-request (a node
// cut off by a partition, or frozen): it answers 503 `unavailable` at its deadline plus the
// store's short grace, instead of waiting for the node to come back, and a retry with the
// same key, once the node answers again, gives the order exactly once. The node is frozen
// with SIGSTOP on the backends of the server's connections (the tests' PostgreSQL runs on
// this machine). SQLite has no network: nothing to cut off.
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "common/frozen.hpp"
#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

class UnansweredHttpTest : public HttpTest {};

TEST_P(UnansweredHttpTest, AFrozenNodeCostsTheRequestItsDeadlineAndTheRetryPlacesOnce) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "SQLite has no node to cut off";
  ServerOptions options;
  options.request_deadline = 1000ms;
  start_server(options);
  ASSERT_EQ(
      client().put("/v1/warehouses/1/skus/101", R"({"price_cents": 100, "available": 10})").status,
      201);
  const std::string order = R"({"customer_id": 7, "warehouse_id": 1, "lines": )"
                            R"([{"sku_id": 101, "quantity": 1}]})";
  ASSERT_EQ(client().post("/v1/orders", order, {{"Idempotency-Key", "warm"}}).status, 201);

  // Every backend of the server's pool, frozen: idle connections look alive, and the next
  // request's statements go out to one of them and are never answered.
  RawPg raw(scratch().url());
  std::istringstream pids(raw.scalar(
      "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE datname = "
      "current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"));
  std::vector<pid_t> backends;
  for (long pid; pids >> pid;) backends.push_back(static_cast<pid_t>(pid));
  Frozen frozen(backends);
  ASSERT_GT(frozen.frozen(), 0u);

  const auto started = std::chrono::steady_clock::now();
  const auto cut = client().post("/v1/orders", order, {{"Idempotency-Key", "in-doubt"}});
  const auto took = std::chrono::steady_clock::now() - started;
  frozen.wake();
  expect_problem(cut, 503, "unavailable");
  EXPECT_LT(took, 4500ms) << "the request waited on past its deadline and the grace";
  EXPECT_GE(took, 1000ms);

  // The node answers again: the retry with the same key gives the one order, whether or not
  // the first attempt's COMMIT had gone out.
  const auto again = client().post("/v1/orders", order, {{"Idempotency-Key", "in-doubt"}});
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(client().post("/v1/orders", order, {{"Idempotency-Key", "in-doubt"}}).body, again.body);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM order_receipts WHERE idempotency_key = 'in-doubt'"),
            "1");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM orders"), "2");
  EXPECT_EQ(raw.scalar("SELECT available FROM stock WHERE sku_id = 101"), "8");
}

INSTANTIATE_TEST_SUITE_P(Engines, UnansweredHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
