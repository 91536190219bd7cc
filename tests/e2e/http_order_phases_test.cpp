// Seed 004's breakdown of where a placement's time goes (onceorder_order_phase_seconds), on
// every engine: placements are counted under their cart size; time in database calls is
// round trips; a placement that waits for a lock another transaction holds (a stock row on
// PostgreSQL, the write lock on SQLite) shows that wait as lock_wait.
#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

class OrderPhasesHttpTest : public HttpTest {
 protected:
  HttpResponse place(const std::string& key, const std::string& lines) {
    return client().post("/v1/orders",
                         R"({"customer_id": 7, "warehouse_id": 1, "lines": )" + lines + "}",
                         {{"Idempotency-Key", key}});
  }
  DurationSnapshot phase(std::size_t p, std::size_t size) {
    return intake().phases()[p][size].snapshot();
  }
};

TEST_P(OrderPhasesHttpTest, PlacementsAreBrokenDownByCartSizeAndALockWaitShows) {
  for (int sku = 101; sku <= 103; ++sku) {
    ASSERT_EQ(client()
                  .put(fmt::format("/v1/warehouses/1/skus/{}", sku),
                       R"({"price_cents": 100, "available": 100})")
                  .status,
              201);
  }
  ASSERT_EQ(place("one", R"([{"sku_id": 101, "quantity": 1}])").status, 201);
  ASSERT_EQ(place("three", R"([{"sku_id": 101, "quantity": 1}, {"sku_id": 102, "quantity": 1},)"
                           R"( {"sku_id": 103, "quantity": 1}])")
                .status,
            201);
  constexpr std::size_t kLockWait = 0, kRoundTrips = 1, kOther = 2, kOne = 0, kFew = 1;
  EXPECT_EQ(phase(kRoundTrips, kOne).count, 1u);
  EXPECT_EQ(phase(kRoundTrips, kFew).count, 1u);
  EXPECT_EQ(phase(kOther, kFew).count, 1u);
  EXPECT_GT(phase(kRoundTrips, kOne).sum_seconds, 0.0);
  EXPECT_LT(phase(kLockWait, kOne).sum_seconds, 0.2);

  // Another transaction holds what the next placement needs, for 300 ms.
  auto holder = db().acquire(soon());
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE((*holder)->begin(store::TxMode::write).ok());
  if (GetParam() == Engine::postgres) {
    static constexpr store::Statement kHold{
        "t_hold_stock", "SELECT 1 FROM stock WHERE warehouse_id = 1 AND sku_id = 101 FOR UPDATE"};
    ASSERT_TRUE((*holder)->query(kHold, {}).ok());
  }
  std::thread placing([&] {
    HttpClient other(port());
    const auto r = other.post("/v1/orders",
                              R"({"customer_id": 7, "warehouse_id": 1, "lines": )"
                              R"([{"sku_id": 101, "quantity": 1}]})",
                              {{"Idempotency-Key", "waits"}});
    EXPECT_EQ(r.status, 201) << r.body;
  });
  std::this_thread::sleep_for(300ms);
  (*holder)->rollback();
  placing.join();
  EXPECT_EQ(phase(kLockWait, kOne).count, 2u);
  EXPECT_GT(phase(kLockWait, kOne).sum_seconds, 0.2) << "the 300 ms the row or lock was held";

  const auto metrics = client().get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(
      metrics.body.find(R"(onceorder_order_phase_seconds_count{phase="lock_wait",lines="1"} 2)"),
      std::string::npos);
  EXPECT_NE(metrics.body.find(
                R"(onceorder_order_phase_seconds_count{phase="round_trips",lines="11-20"} 0)"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, OrderPhasesHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
