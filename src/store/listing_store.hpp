// SQL for the operator's read-only lists (orders, an order's receipts, a warehouse's stock,
// the document scopes with their gap audit): one engine-neutral class over per-engine
// statements (store/<engine>/listing.sql). Every list pages by a key an index holds, so a
// page costs its size, not the table's. Methods run inside the caller's transaction.
//
// Thread-safety: a ListingStore holds only its dialect; share it freely, one call per
// connection at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onceorder/core/document_types.hpp"
#include "onceorder/core/event_types.hpp"
#include "onceorder/core/order_types.hpp"
#include "onceorder/core/schedule_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

// The scope list with its gap audit, the same text on both engines but for the placeholders
// (`after` scope, `limit`). The audit counts per scope what invariant I7
// (inv_i7 in store/<engine>/invariants.sql) reports: issued values whose predecessor has no
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
  // (after warehouse, limit) → warehouse, SKU rows, sum of available, sum of reserved: the
  // warehouses of the stock rows, ascending. There is no warehouse table; the stock primary key
  // is walked from one warehouse to the next (a skip scan), so a page costs its warehouses' rows.
  store::Statement list_warehouses;
  // (after tx, after event, status|null, customer|null, warehouse|null, limit, scan) → rows
  // 'o', tx, event_id, then the order summary columns: the orders whose order.placed event is
  // among the first `scan` after the feed position and matches the filters, `limit` at most, in
  // feed order; then one row 'p', tx, event_id (the summary columns empty): the last of those
  // `scan` events, matching or not (no row when there is none). Only events below the feed's
  // visibility horizon are read (docs/EVENTS.md), so no order can still appear before the
  // position a page ends at; ListingStore sends EventsSql::prime first.
  store::Statement follow_orders;
  // (after scope, limit) → scope, width, radix, max, last, issued, imported, gaps, missing
  store::Statement list_scopes;
  // (within ms, after item, limit) → item, run, run kind, site, order, lot, attempt, owner,
  // lease_until, expired: processing items whose lease ends within `within` or has ended,
  // through the partial index schedule_items_processing.
  store::Statement list_claims;
  // (item, limit) → the item's events oldest first: event, item, run, lot, kind, status,
  // attempt, owner, lease_until, detail, at, document number (schedule_item_events_by_item).
  store::Statement item_events;
  // (order) → order_no, customer, warehouse, status, created_at, cancelled_at
  store::Statement order_head;
  // (site, order_no) → lot, quantity, created_at, cancelled_at: an order's source orders
  store::Statement order_sources;
  // (site, order_no, limit) → the item_events columns for every item of the order's keys,
  // oldest first (schedule_items_by_key, then the events by item).
  store::Statement order_events;
};

// What follow_orders read: each matching order at its place in the feed, and the place of the
// last order.placed event it read.
struct OrderFollowRows {
  std::vector<std::pair<FeedPosition, OrderSummary>> orders;
  std::optional<FeedPosition> last_read;
};

// An order as its timeline starts: when it was placed and, if so, cancelled.
struct OrderTimelineHead {
  std::string order_no;
  std::int64_t customer_id = 0;
  std::int64_t warehouse_id = 0;
  std::string status;
  std::string created_at;
  std::string cancelled_at;  // "" while placed
};

// A source order of an order line, as the order's timeline shows it.
struct SourceOrderView {
  std::string lot_no;
  std::int64_t quantity = 0;
  std::string created_at;
  std::string cancelled_at;
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
  Result<std::vector<WarehouseSummary>> warehouses(store::Connection& c,
                                                   std::int64_t after_warehouse, int limit);
  // follow_orders: the matching orders with their feed positions, and the last position read
  // (nullopt when the read found no order.placed event after `after`).
  Result<OrderFollowRows> follow_orders(store::Connection& c, const OrderFilter& filter,
                                        FeedPosition after, int scan);
  Result<std::vector<ClaimView>> claims(store::Connection& c, std::int64_t within_ms,
                                        std::int64_t after_item, int limit);
  Result<std::vector<ScopeAudit>> scopes(store::Connection& c, std::string_view after, int limit);
  // The events of `item_id`, oldest first, `limit` at most.
  Result<std::vector<ItemEvent>> item_events(store::Connection& c, std::int64_t item_id, int limit);
  Result<std::optional<OrderTimelineHead>> order_head(store::Connection& c, std::int64_t order_id);
  Result<std::vector<SourceOrderView>> order_sources(store::Connection& c,
                                                     std::string_view site_code,
                                                     std::string_view order_no);
  // The events of every item of (site_code, order_no, any lot), oldest first, `limit` at most.
  Result<std::vector<ItemEvent>> order_events(store::Connection& c, std::string_view site_code,
                                              std::string_view order_no, int limit);

 private:
  const ListingSql& sql_;
  const Statement& feed_prime_;  // EventsSql::prime, sent before follow_orders
};

}  // namespace onceorder::store
