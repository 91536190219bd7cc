#include "onceorder/service/listings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "onceorder/core/limits.hpp"
#include "store/intake_store.hpp"
#include "store/listing_store.hpp"
#include "store/scheduling_store.hpp"

namespace onceorder {
namespace {

Status check_limit(int limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return Status(
        Code::invalid_request, "invalid request",
        {FieldError{"limit", fmt::format("must be an integer from 1 to {}", kMaxListLimit)}});
  }
  return Status();
}

}  // namespace

Result<std::vector<OrderSummary>> list_orders(store::Database& db, const OrderFilter& filter,
                                              store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(filter.limit));
  if (filter.status && *filter.status != "placed" && *filter.status != "cancelled") {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"status", "must be placed or cancelled"}});
  }
  OrderFilter f = filter;
  // Order ids are positive and below 2^63-1: "before the largest" is "no cursor", and one
  // statement shape keeps the index range scan.
  if (f.before <= 0) f.before = std::numeric_limits<std::int64_t>::max();
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<OrderSummary>>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<std::vector<OrderSummary>> {
        return listing.orders(c, f);
      });
}

Result<OrderFollowPage> follow_orders(store::Database& db, const OrderFilter& filter,
                                      FeedPosition after, store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(filter.limit));
  const bool filtered = filter.status || filter.customer_id || filter.warehouse_id;
  // Unfiltered, every event read is an order of the page: reading more would be waste.
  const int scan = filtered ? kFollowScan : filter.limit;
  store::ListingStore listing(db.dialect());
  return store::transact<OrderFollowPage>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<OrderFollowPage> {
        OO_ASSIGN_OR_RETURN(auto rows, listing.follow_orders(c, filter, after, scan));
        OrderFollowPage page;
        // A full page ends at its last order; otherwise at the last event read, so that the
        // orders the filters left out are not read again.
        if (static_cast<int>(rows.orders.size()) == filter.limit)
          page.next_after = rows.orders.back().first;
        else
          page.next_after = rows.last_read;
        for (auto& [at, order] : rows.orders) page.orders.push_back(std::move(order));
        return page;
      });
}

Result<std::vector<WarehouseSummary>> list_warehouses(store::Database& db, std::int64_t after,
                                                      int limit,
                                                      store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<WarehouseSummary>>(
      db, store::read_tx(deadline),
      [&](store::Connection& c) -> Result<std::vector<WarehouseSummary>> {
        return listing.warehouses(c, after, limit);
      });
}

Result<std::vector<OrderReceiptView>> list_order_receipts(store::Database& db,
                                                          std::int64_t order_id,
                                                          std::optional<std::int64_t> only_customer,
                                                          store::Clock::time_point deadline) {
  store::ListingStore listing(db.dialect());
  store::IntakeStore intake(db.dialect());
  return store::transact<std::vector<OrderReceiptView>>(
      db, store::read_tx(deadline),
      [&](store::Connection& c) -> Result<std::vector<OrderReceiptView>> {
        OO_ASSIGN_OR_RETURN(auto order, intake.get_order(c, order_id));
        if (!order || (only_customer && order->customer_id != *only_customer)) {
          return Status(Code::not_found, fmt::format("order {} does not exist", order_id));
        }
        // Receipts are keyed by customer first: the order's customer bounds the search.
        return listing.order_receipts(c, order->customer_id, order_id);
      });
}

Result<std::vector<Sku>> list_skus(store::Database& db, std::int64_t warehouse_id,
                                   std::int64_t after_sku, int limit,
                                   store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<Sku>>(db, store::read_tx(deadline),
                                           [&](store::Connection& c) -> Result<std::vector<Sku>> {
                                             return listing.skus(c, warehouse_id, after_sku, limit);
                                           });
}

Result<std::vector<ClaimView>> list_claims(store::Database& db, std::chrono::milliseconds within,
                                           std::int64_t after_item, int limit,
                                           store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  if (within.count() < 0) {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"within", "must not be negative"}});
  }
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<ClaimView>>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<std::vector<ClaimView>> {
        return listing.claims(c, within.count(), after_item, limit);
      });
}

Result<std::vector<ScopeAudit>> list_scopes(store::Database& db, std::string_view after, int limit,
                                            store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<ScopeAudit>>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<std::vector<ScopeAudit>> {
        return listing.scopes(c, after, limit);
      });
}

Result<ItemTimeline> item_timeline(store::Database& db, std::int64_t item_id,
                                   store::Clock::time_point deadline) {
  store::ListingStore listing(db.dialect());
  store::SchedulingStore scheduling(db.dialect());
  return store::transact<ItemTimeline>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<ItemTimeline> {
        ItemFilter one;
        one.after = item_id - 1;
        one.limit = 1;
        OO_ASSIGN_OR_RETURN(auto items, scheduling.list_items(c, one));
        if (items.empty() || items.front().item_id != item_id) {
          return Status(Code::not_found, fmt::format("schedule item {} does not exist", item_id));
        }
        ItemTimeline t;
        t.item = std::move(items.front());
        // One more than shown tells whether there were more.
        OO_ASSIGN_OR_RETURN(t.events, listing.item_events(c, item_id, kTimelineLimit + 1));
        if (t.events.size() > static_cast<size_t>(kTimelineLimit)) {
          t.events.resize(kTimelineLimit);
          t.truncated = true;
        }
        return t;
      });
}

Result<OrderTimeline> order_timeline(store::Database& db, std::int64_t order_id,
                                     std::optional<std::int64_t> only_customer,
                                     store::Clock::time_point deadline) {
  store::ListingStore listing(db.dialect());
  return store::transact<OrderTimeline>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<OrderTimeline> {
        OO_ASSIGN_OR_RETURN(auto head, listing.order_head(c, order_id));
        if (!head || (only_customer && head->customer_id != *only_customer)) {
          return Status(Code::not_found, fmt::format("order {} does not exist", order_id));
        }
        OrderTimeline t;
        t.order_id = order_id;
        t.order_no = head->order_no;
        t.customer_id = head->customer_id;
        t.status = head->status;
        std::vector<OrderTimelineEntry>& out = t.entries;
        out.push_back({.at = head->created_at, .kind = "placed"});
        OO_ASSIGN_OR_RETURN(auto receipts, listing.order_receipts(c, head->customer_id, order_id));
        for (OrderReceiptView& r : receipts) {
          out.push_back({.at = r.created_at,
                         .kind = "receipt",
                         .idempotency_key = std::move(r.idempotency_key),
                         .outcome = std::move(r.outcome)});
        }
        // The lines' keys (source_order_key): site W<warehouse>, the order's number, lot =
        // line number. Every line shares the site and number, so one look-up finds them all.
        const std::string site = source_order_key(head->warehouse_id, head->order_no, 1).site_code;
        OO_ASSIGN_OR_RETURN(auto sources, listing.order_sources(c, site, head->order_no));
        for (store::SourceOrderView& so : sources) {
          out.push_back({.at = so.created_at,
                         .kind = "source_order",
                         .lot_no = so.lot_no,
                         .quantity = so.quantity});
        }
        OO_ASSIGN_OR_RETURN(auto events,
                            listing.order_events(c, site, head->order_no, kTimelineLimit + 1));
        if (events.size() > static_cast<size_t>(kTimelineLimit)) {
          events.resize(kTimelineLimit);
          t.truncated = true;
        }
        for (ItemEvent& e : events) {
          OrderTimelineEntry entry{.at = e.at, .kind = e.kind, .lot_no = e.lot_no};
          entry.event = std::move(e);
          out.push_back(std::move(entry));
        }
        if (!head->cancelled_at.empty()) {
          out.push_back({.at = head->cancelled_at, .kind = "cancelled"});
        }
        // Every time is ISO 8601 UTC text of one width, so text order is time order; entries
        // of one instant (one transaction on PostgreSQL) keep the order they happened in.
        std::stable_sort(
            out.begin(), out.end(),
            [](const OrderTimelineEntry& a, const OrderTimelineEntry& b) { return a.at < b.at; });
        return t;
      });
}

}  // namespace onceorder
