// The intake domain's values: orders, their lines, stock rows and shortages, and the one
// rule that ties an order line to the source order production schedules. Plain data shared
// by the store and the service layers, below both; no I/O. Thread-safety: values only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onceorder/core/schedule_types.hpp"

namespace onceorder {

struct OrderLine {
  int line_no = 0;
  std::int64_t sku_id = 0;
  std::int64_t quantity = 0;
  std::int64_t unit_price_cents = 0;
};

struct Order {
  std::int64_t order_id = 0;
  std::string order_no;
  std::string status;  // placed | cancelled
  std::int64_t customer_id = 0;
  std::int64_t warehouse_id = 0;
  std::vector<OrderLine> lines;  // ascending sku_id, line_no from 1
  std::int64_t total_cents = 0;
  std::string created_at;
  // Who placed it (onceorder/core/principal.hpp); empty for an order placed before principals
  // were recorded.
  std::string principal;
};

// An order without its lines, as lists show it.
struct OrderSummary {
  std::int64_t order_id = 0;
  std::string order_no;
  std::string status;  // placed | cancelled
  std::int64_t customer_id = 0;
  std::int64_t warehouse_id = 0;
  std::int64_t total_cents = 0;
  std::string created_at;
  std::string principal;  // as Order's
};

// Which orders a list holds, newest (largest order id) first; `before` is the exclusive
// cursor (0: from the newest).
struct OrderFilter {
  std::optional<std::string> status;
  std::optional<std::int64_t> customer_id;
  std::optional<std::int64_t> warehouse_id;
  std::int64_t before = 0;
  int limit = 100;
};

// An idempotency receipt of POST /v1/orders that points at an order.
struct OrderReceiptView {
  std::string idempotency_key;
  std::int64_t warehouse_id = 0;
  std::string normalized;  // the normalized cart, "101x3,202x1" (Cart::text)
  int normalization = 0;   // the version of the normalization rules it was made with
  std::string outcome;     // placed | out_of_stock
  std::string created_at;
};

struct Shortage {
  std::int64_t sku_id = 0;
  std::int64_t requested = 0;
  std::int64_t available = 0;
};

struct Sku {
  std::int64_t warehouse_id = 0;
  std::int64_t sku_id = 0;
  std::int64_t available = 0;
  std::int64_t reserved = 0;
  std::int64_t price_cents = 0;
};

// A warehouse as its list shows it: the warehouse of some stock row, with its SKU rows counted
// and their quantities summed.
struct WarehouseSummary {
  std::int64_t warehouse_id = 0;
  std::int64_t skus = 0;
  std::int64_t available = 0;
  std::int64_t reserved = 0;
};

// An order's line becomes one source order for production: site "W<warehouse>", the
// order's number, lot "<line_no>". This is the only place the key is built; the SQL that
// needs it (placement, cancel, the invariants) takes its parts as parameters or follows
// the same rule in the invariant queries that check it.
std::string warehouse_site(std::int64_t warehouse_id);
OrderKey source_order_key(std::int64_t warehouse_id, const std::string& order_no, int line_no);

}  // namespace onceorder
