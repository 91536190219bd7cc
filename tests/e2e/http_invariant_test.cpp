// A broken in-memory invariant (onceorder/core/invariant.hpp) over HTTP: the request is answered
// 500 with the reference of the log line that says what broke, and nothing of it is stored.
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "e2e/http_fixture.hpp"
#include "onceorder/core/invariant.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

using InvariantHttpTest = HttpTest;

TEST_P(InvariantHttpTest, ATrippedInvariantAnswers500WithItsReferenceAndStoresNothing) {
  const auto put = client().put("/v1/warehouses/1/skus/101",
                                json{{"price_cents", 100}, {"available", 5}}.dump());
  ASSERT_EQ(put.status, 201) << put.body;
  IntakeOptions options;
  // Tripped inside the placement's transaction, after its deductions were written.
  options.fault_after_deduction = []() -> Status {
    OO_INVARIANT(false, "planted by the test");
    return Status::Ok();
  };
  use_intake(std::move(options));
  std::ostringstream captured;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured)));
  const auto r = client().post(
      "/v1/orders",
      json{{"customer_id", 7}, {"warehouse_id", 1}, {"lines", {{{"sku_id", 101}, {"quantity", 2}}}}}
          .dump(),
      {{"Idempotency-Key", "k1"}});
  spdlog::set_default_logger(previous);
  ASSERT_EQ(r.status, 500) << r.body;
  const json problem = r.json();
  EXPECT_EQ(problem["code"], "internal");
  const std::string detail = problem["detail"].get<std::string>();
  const auto at = detail.find("reference inv-");
  ASSERT_NE(at, std::string::npos) << detail;
  const std::string reference = detail.substr(at + 10, detail.find(')', at) - at - 10);
  const std::string log = captured.str();
  EXPECT_NE(log.find("reference=" + reference), std::string::npos) << reference << "\n" << log;
  EXPECT_EQ(detail.find("planted"), std::string::npos) << "the log's words stay in the log";
  // Nothing of the placement was stored.
  const auto sku = client().get("/v1/warehouses/1/skus/101");
  ASSERT_EQ(sku.status, 200) << sku.body;
  EXPECT_EQ(sku.json()["available"], 5);
  EXPECT_EQ(sku.json()["reserved"], 0);
  // Nor its receipt: the same key places afresh once the invariant holds.
  use_intake({});
  const auto again = client().post(
      "/v1/orders",
      json{{"customer_id", 7}, {"warehouse_id", 1}, {"lines", {{{"sku_id", 101}, {"quantity", 2}}}}}
          .dump(),
      {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_FALSE(again.has_header("idempotent-replayed"));
}

INSTANTIATE_TEST_SUITE_P(Engines, InvariantHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
