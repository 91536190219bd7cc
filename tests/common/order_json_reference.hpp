// An order's answer as nlohmann writes it, member by member: what `serve` sent before
// http::order_json_text, kept as the oracle of its unit test (src/http/order_json_test.cpp)
// and the baseline of its benchmark (bench/order_json_bench.cpp). Header-only, pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "onceorder/core/order_types.hpp"

namespace onceorder::testing {

inline std::string order_json_reference(const Order& o) {
  using json = nlohmann::json;
  json lines = json::array();
  for (const OrderLine& l : o.lines) {
    lines.push_back({{"line_no", l.line_no},
                     {"sku_id", l.sku_id},
                     {"quantity", l.quantity},
                     {"unit_price_cents", l.unit_price_cents}});
  }
  const json body = {{"order_id", std::to_string(o.order_id)},
                     {"order_no", o.order_no},
                     {"principal", o.principal.empty() ? json(nullptr) : json(o.principal)},
                     {"status", o.status},
                     {"customer_id", o.customer_id},
                     {"warehouse_id", o.warehouse_id},
                     {"lines", std::move(lines)},
                     {"total_cents", o.total_cents},
                     {"created_at", o.created_at}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A placed order of `lines` lines (one of each SKU from 101 on, 2 × 1,250 cents each).
inline Order sample_order(int lines) {
  Order o;
  o.order_id = 7390000000000012345;
  o.order_no = "ORD-20261206-000042";
  o.status = "placed";
  o.customer_id = 17;
  o.warehouse_id = 1;
  for (int l = 1; l <= lines; ++l) o.lines.push_back({l, 100 + l, 2, 1250});
  o.total_cents = 2500 * lines;
  o.created_at = "2026-12-06T03:40:00.123456Z";
  o.principal = "shop-frontend";
  return o;
}

}  // namespace onceorder::testing
