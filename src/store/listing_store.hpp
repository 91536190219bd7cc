// SQL for the operator's read-only lists (orders, an order's receipts, a warehouse's stock,
// the document scopes with their gap audit): one engine-neutral class over per-engine
// statements (store/<engine>/listing_sql.cpp). Every list pages by a key an index holds, so a
// page costs its size, not the table's. Methods run inside the caller's transaction.
//
// Thread-safety: a ListingStore holds only its dialect; share it freely, one call per
// connection at a time.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "onceorder/document_types.hpp"
#include "onceorder/order_types.hpp"
#include "onceorder/schedule_types.hpp"
#include "onceorder/store.hpp"
#include "store/dialect.hpp"

// The scope list with its gap audit, the same text on both engines but for the placeholders
// (`after` scope, `limit`). The audit counts per scope what invariant I7
// (store/invariants_sql.cpp, OO_I7_SQL) reports: issued values whose predecessor has no
// document, and a counter that is not the largest value. `missing` counts every hole below
// the counter, legacy ones included.
#define OO_LIST_SCOPES_SQL(AFTER, LIMIT)                                             \
  "SELECT s.scope, s.width, s.radix, s.max_value, s.last_value, (SELECT count(*) "   \
  "FROM documents d WHERE d.scope = s.scope AND d.origin = 'issued'), (SELECT "      \
  "count(*) FROM documents d WHERE d.scope = s.scope AND d.origin = 'legacy'), "     \
  "(SELECT count(*) FROM documents d WHERE d.scope = s.scope AND d.origin = "        \
  "'issued' AND d.value > 1 AND NOT EXISTS (SELECT 1 FROM documents p WHERE p.scope" \
  " = d.scope AND p.value = d.value - 1)) + CASE WHEN s.last_value <> "              \
  "coalesce((SELECT max(d.value) FROM documents d WHERE d.scope = s.scope), 0) THEN" \
  " 1 ELSE 0 END, s.last_value - (SELECT count(*) FROM documents d WHERE d.scope = " \
  "s.scope AND d.value <= s.last_value) FROM doc_scopes s WHERE s.scope > " AFTER    \
  " ORDER BY s.scope LIMIT " LIMIT

namespace onceorder::store {

struct ListingSql {
  // (status|null, warehouse|null, before (0: none), limit) → order summary columns, newest
  // first. Without a customer the primary key orders the scan.
  store::Statement list_orders;
  // (customer, status|null, warehouse|null, before, limit): the same through
  // orders_by_customer; a statement of its own so that a generic plan still uses it.
  store::Statement list_customer_orders;
  // (customer, order) → key, warehouse, normalized, normalization, outcome, created_at
  store::Statement order_receipts;
  // (warehouse, after sku, limit) → sku, available, reserved, price
  store::Statement list_skus;
  // (after scope, limit) → scope, width, radix, max, last, issued, imported, gaps, missing
  store::Statement list_scopes;
  // (within ms, after item, limit) → item, run, run kind, site, order, lot, attempt, owner,
  // lease_until, expired: processing items whose lease ends within `within` or has ended,
  // through the partial index schedule_items_processing.
  store::Statement list_claims;
};

class ListingStore {
 public:
  explicit ListingStore(const Dialect& dialect);
  Result<std::vector<OrderSummary>> orders(store::Connection& c, const OrderFilter& filter);
  // The receipts of `customer_id` that point at `order_id`, oldest first.
  Result<std::vector<OrderReceiptView>> order_receipts(store::Connection& c,
                                                       std::int64_t customer_id,
                                                       std::int64_t order_id);
  Result<std::vector<Sku>> skus(store::Connection& c, std::int64_t warehouse_id,
                                std::int64_t after_sku, int limit);
  Result<std::vector<ClaimView>> claims(store::Connection& c, std::int64_t within_ms,
                                        std::int64_t after_item, int limit);
  Result<std::vector<ScopeAudit>> scopes(store::Connection& c, std::string_view after, int limit);

 private:
  const ListingSql& sql_;
};

}  // namespace onceorder::store
