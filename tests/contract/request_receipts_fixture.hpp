// The RequestReceiptsTest fixture of request_receipts_test.cpp and of its races in their own
// program (request_receipts_race_test.cpp): Idempotency-Keys on source orders, manual runs and
// stock adjustments (API.md "Idempotency-Key on the other creating POSTs").
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {

class RequestReceiptsTest : public ::testing::TestWithParam<Engine> {
 protected:
  RequestReceiptsTest()
      : tdb_(GetParam()), db_(tdb_.open({.pool_size = 8})), intake_(*db_), scheduler_(*db_) {}

  void stock(std::int64_t sku, std::int64_t available) {
    auto r = stock_.put_sku(1, sku, 100, available, soon());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  std::int64_t available(std::int64_t sku) {
    return count("SELECT available FROM stock WHERE warehouse_id = 1 AND sku_id = " +
                 std::to_string(sku));
  }
  Result<Adjusted> adjust(std::int64_t sku, std::int64_t delta, std::optional<std::string> key,
                          const std::string& reason = "count") {
    return stock_.adjust(AdjustRequest{1, sku, delta, reason, std::move(key)}, soon());
  }
  static SourceOrder source(const std::string& order_no, std::int64_t quantity = 5) {
    return {{"S1", order_no, "1"}, quantity};
  }
  void expect_invariants_hold() { onceorder::testing::expect_invariants_hold(*db_); }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Intake intake_;
  Stock stock_{*db_};
  Scheduler scheduler_;
};

inline bool same_sku(const Sku& a, const Sku& b) {
  return a.warehouse_id == b.warehouse_id && a.sku_id == b.sku_id && a.available == b.available &&
         a.reserved == b.reserved && a.price_cents == b.price_cents;
}

}  // namespace onceorder::testing
