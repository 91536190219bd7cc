// The operator console's read-only lists (API.md additions): orders by status, customer and
// warehouse; the receipts of an order; a warehouse's stock with its reservations; the
// document scopes with their gap audit. Each list is one read transaction over an index and
// pages by a key (`next_after` in the API); none takes a lock.
//
// Thread-safety: stateless; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/document_types.hpp"
#include "onceorder/core/event_types.hpp"
#include "onceorder/core/order_types.hpp"
#include "onceorder/core/schedule_types.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

// Orders newest first, `filter.limit` at most (1–1000).
Result<std::vector<OrderSummary>> list_orders(store::Database& db, const OrderFilter& filter,
                                              store::Clock::time_point deadline);

// The most order.placed events one page of a filtered follow reads (filters leave some out): a
// page costs at most this many, and ends where the read stopped, so the next page goes on
// from there.
inline constexpr int kFollowScan = 10000;

// A follower's page: orders in the order they became visible (the event feed's order), and
// where the next page starts (nullopt: the read found nothing after `after`; ask again with
// the same position).
struct OrderFollowPage {
  std::vector<OrderSummary> orders;
  std::optional<FeedPosition> next_after;
};

// The orders whose order.placed event comes after `after` in the feed and that match
// `filter` (its `before` is not used), `filter.limit` at most (1–1000). Only what the feed
// can show is read: no order can commit later at a place before the page's end
// (docs/EVENTS.md, "The feed never skips").
Result<OrderFollowPage> follow_orders(store::Database& db, const OrderFilter& filter,
                                      FeedPosition after, store::Clock::time_point deadline);

// The warehouses with a stock row and warehouse_id > `after`, ascending, `limit` at most.
Result<std::vector<WarehouseSummary>> list_warehouses(store::Database& db, std::int64_t after,
                                                      int limit, store::Clock::time_point deadline);

// The receipts that point at `order_id`, oldest first. not_found when the order does not
// exist or, with `only_customer`, belongs to another customer (so that ids cannot be probed).
Result<std::vector<OrderReceiptView>> list_order_receipts(store::Database& db,
                                                          std::int64_t order_id,
                                                          std::optional<std::int64_t> only_customer,
                                                          store::Clock::time_point deadline);

// The SKUs of a warehouse with sku_id > `after_sku`, ascending, `limit` at most.
Result<std::vector<Sku>> list_skus(store::Database& db, std::int64_t warehouse_id,
                                   std::int64_t after_sku, int limit,
                                   store::Clock::time_point deadline);

// Processing items (item_id > `after_item`, ascending) whose lease has ended or ends within
// `within`: the stuck claims an operator looks at, with owner, attempt and lease end.
Result<std::vector<ClaimView>> list_claims(store::Database& db, std::chrono::milliseconds within,
                                           std::int64_t after_item, int limit,
                                           store::Clock::time_point deadline);

// Every scope whose name sorts after `after` ("" for the first page), by name, with its audit.
Result<std::vector<ScopeAudit>> list_scopes(store::Database& db, std::string_view after, int limit,
                                            store::Clock::time_point deadline);

// The most events a timeline holds (an item's, or an order's items' together); the answer says
// `truncated` when there were more (API.md, "Timelines").
inline constexpr int kTimelineLimit = 1000;

// `item_id` with its events, oldest first. not_found for an unknown item.
Result<ItemTimeline> item_timeline(store::Database& db, std::int64_t item_id,
                                   store::Clock::time_point deadline);

// One entry of an order's timeline. `kind`: placed, receipt (`idempotency_key`, `outcome`),
// source_order (`lot_no`, `quantity`), an item event's kind (`event`; `lot_no` is its line),
// cancelled.
struct OrderTimelineEntry {
  std::string at = {};
  std::string kind = {};
  std::string lot_no = {};
  std::optional<ItemEvent> event = std::nullopt;
  std::string idempotency_key = {};
  std::string outcome = {};
  std::int64_t quantity = 0;
};

struct OrderTimeline {
  std::int64_t order_id = 0;
  std::string order_no;
  std::int64_t customer_id = 0;
  std::string status;                       // placed | cancelled
  std::vector<OrderTimelineEntry> entries;  // by `at`, ties in the order they happened
  bool truncated = false;                   // more than kTimelineLimit item events
};

// The order's life: placed, its receipts, its lines' source orders, every event of their
// schedule items (with the production order's number), cancelled; one read transaction.
// not_found as list_order_receipts.
Result<OrderTimeline> order_timeline(store::Database& db, std::int64_t order_id,
                                     std::optional<std::int64_t> only_customer,
                                     store::Clock::time_point deadline);

}  // namespace onceorder
