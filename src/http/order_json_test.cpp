#include "http/order_json.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "common/order_json_reference.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

using onceorder::testing::order_json_reference;

Order sample() { return onceorder::testing::sample_order(2); }

TEST(OrderJson, AsNlohmannWritesIt) {
  const Order o = sample();
  EXPECT_EQ(order_json_text(o), order_json_reference(o));
  EXPECT_EQ(
      order_json_text(o),
      R"({"created_at":"2026-12-06T03:40:00.123456Z","customer_id":17,"lines":[)"
      R"({"line_no":1,"quantity":2,"sku_id":101,"unit_price_cents":1250},)"
      R"({"line_no":2,"quantity":2,"sku_id":102,"unit_price_cents":1250}],)"
      R"("order_id":"7390000000000012345","order_no":"ORD-20261206-000042",)"
      R"("principal":"shop-frontend","status":"placed","total_cents":5000,"warehouse_id":1})");
  Order before = o;
  before.principal.clear();  // placed before principals were recorded
  EXPECT_EQ(order_json_text(before), order_json_reference(before));
  EXPECT_NE(order_json_text(before).find(R"("principal":null)"), std::string::npos);
}

TEST(OrderJson, NoLinesAndIntegerBounds) {
  Order o = sample();
  o.lines.clear();
  EXPECT_EQ(order_json_text(o), order_json_reference(o));
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  o.order_id = kMin;
  o.customer_id = kMax;
  o.warehouse_id = kMin;
  o.total_cents = kMax;
  o.lines = {{std::numeric_limits<int>::max(), kMax, kMin, kMax}, {0, 0, 0, 0}};
  EXPECT_EQ(order_json_text(o), order_json_reference(o));
}

TEST(OrderJson, StringsThatNeedEscapingOrReplacing) {
  for (const std::string& s :
       {std::string(""), std::string("quote\" and \\ backslash"), std::string("tab\tnew\nline"),
        std::string("nul\0byte", 8), std::string("\x7f del"), std::string("é ü 中文"),
        std::string("bad \xff\xfe utf-8"), std::string("cut \xe4\xb8"), std::string("\x1f")}) {
    Order o = sample();
    o.order_no = s;
    o.principal = s;
    o.status = s;
    o.created_at = s;
    EXPECT_EQ(order_json_text(o), order_json_reference(o))
        << json(s).dump(-1, ' ', true, json::error_handler_t::replace);
  }
}

TEST(OrderJson, RandomOrders) {
  std::mt19937_64 rng(20261206);
  std::uniform_int_distribution<int> byte(0, 255);
  auto text = [&] {
    std::string s(rng() % 12, ' ');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? byte(rng) : 'a' + byte(rng) % 26);
    return s;
  };
  for (int i = 0; i < 500; ++i) {
    Order o;
    o.order_id = static_cast<std::int64_t>(rng());
    o.order_no = text();
    o.status = text();
    o.customer_id = static_cast<std::int64_t>(rng());
    o.warehouse_id = static_cast<std::int64_t>(rng());
    for (int n = static_cast<int>(rng() % 21), l = 1; l <= n; ++l)
      o.lines.push_back({l, static_cast<std::int64_t>(rng()), static_cast<std::int64_t>(rng()),
                         static_cast<std::int64_t>(rng())});
    o.total_cents = static_cast<std::int64_t>(rng());
    o.created_at = text();
    ASSERT_EQ(order_json_text(o), order_json_reference(o)) << i;
  }
}

}  // namespace
}  // namespace onceorder::http
