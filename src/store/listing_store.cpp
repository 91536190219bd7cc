#include "store/listing_store.hpp"

#include "store/events_store.hpp"

#include <algorithm>

namespace onceorder::store {
namespace {

Param optional_text(const std::optional<std::string>& v) {
  return v ? Param(std::string_view(*v)) : Param(nullptr);
}

Param optional_id(const std::optional<std::int64_t>& v) { return v ? Param(*v) : Param(nullptr); }

// The item_events / order_events columns.
ItemEvent event_from(const Row& r) {
  ItemEvent e;
  e.event_id = r.i64(0);
  e.item_id = r.i64(1);
  e.run_id = r.i64(2);
  e.lot_no = r.text(3);
  e.kind = r.text(4);
  e.status = r.text(5);
  e.attempt = static_cast<int>(r.i64(6));
  e.owner = r.text(7);
  e.lease_until = r.text(8);
  e.detail = r.text(9);
  e.at = r.text(10);
  e.document_number = r.text(11);
  return e;
}

}  // namespace

ListingStore::ListingStore(const Dialect& dialect)
    : sql_(dialect.listing), feed_prime_(dialect.events.prime) {}

Result<std::vector<OrderSummary>> ListingStore::orders(store::Connection& c, const OrderFilter& f) {
  const Param status = optional_text(f.status);
  const Param warehouse = optional_id(f.warehouse_id);
  const Param limit = std::int64_t{f.limit};
  Result<Rows> rows =
      f.customer_id
          ? c.query(sql_.list_customer_orders, {*f.customer_id, status, warehouse, f.before, limit})
          : c.query(sql_.list_orders, {status, warehouse, f.before, limit});
  OO_RETURN_IF_ERROR(rows.status());
  std::vector<OrderSummary> out;
  out.reserve(rows->size());
  for (const Row& r : *rows) {
    out.push_back(OrderSummary{r.i64(0), r.text(1), r.text(2), r.i64(3), r.i64(4), r.i64(5),
                               r.text(6), r.is_null(7) ? "" : r.text(7)});
  }
  return out;
}

Result<std::vector<WarehouseSummary>> ListingStore::warehouses(store::Connection& c,
                                                               std::int64_t after_warehouse,
                                                               int limit) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.list_warehouses, {after_warehouse, std::int64_t{limit}}));
  std::vector<WarehouseSummary> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.i64(0), r.i64(1), r.i64(2), r.i64(3)});
  return out;
}

Result<OrderFollowRows> ListingStore::follow_orders(store::Connection& c, const OrderFilter& f,
                                                    FeedPosition after, int scan) {
  OO_RETURN_IF_ERROR(c.query(feed_prime_, {}, Then::with_next).status());
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.follow_orders,
                                         {after.tx, after.event_id, optional_text(f.status),
                                          optional_id(f.customer_id), optional_id(f.warehouse_id),
                                          std::int64_t{f.limit}, std::int64_t{scan}}));
  OrderFollowRows out;
  for (const Row& r : rows) {
    const FeedPosition at{r.i64(1), r.i64(2)};
    if (r.text(0) == "p") {
      out.last_read = at;
      continue;
    }
    out.orders.emplace_back(at, OrderSummary{r.i64(3), r.text(4), r.text(5), r.i64(6), r.i64(7),
                                             r.i64(8), r.text(9), r.is_null(10) ? "" : r.text(10)});
  }
  // A UNION ALL keeps no order of its own: the page is in feed order.
  std::sort(out.orders.begin(), out.orders.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

Result<std::vector<OrderReceiptView>> ListingStore::order_receipts(store::Connection& c,
                                                                   std::int64_t customer_id,
                                                                   std::int64_t order_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.order_receipts, {customer_id, order_id}));
  std::vector<OrderReceiptView> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back(OrderReceiptView{r.text(0), r.i64(1), r.text(2), static_cast<int>(r.i64(3)),
                                   r.text(4), r.text(5)});
  }
  return out;
}

Result<std::vector<Sku>> ListingStore::skus(store::Connection& c, std::int64_t warehouse_id,
                                            std::int64_t after_sku, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.list_skus, {warehouse_id, after_sku, std::int64_t{limit}}));
  std::vector<Sku> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back(Sku{warehouse_id, r.i64(0), r.i64(1), r.i64(2), r.i64(3)});
  }
  return out;
}

Result<std::vector<ScopeAudit>> ListingStore::scopes(store::Connection& c, std::string_view after,
                                                     int limit) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.list_scopes, {after, std::int64_t{limit}}));
  std::vector<ScopeAudit> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    ScopeAudit a;
    a.info.scope = r.text(0);
    a.info.format = ScopeFormat{static_cast<int>(r.i64(1)), static_cast<int>(r.i64(2)), r.i64(3)};
    a.info.last_value = r.i64(4);
    a.info.issued = r.i64(5);
    a.info.imported = r.i64(6);
    a.gaps = r.i64(7);
    a.missing = r.i64(8);
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<ClaimView>> ListingStore::claims(store::Connection& c, std::int64_t within_ms,
                                                    std::int64_t after_item, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.list_claims, {within_ms, after_item, std::int64_t{limit}}));
  std::vector<ClaimView> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    ClaimView v;
    v.item_id = r.i64(0);
    v.run_id = r.i64(1);
    v.run_kind = r.text(2);
    v.key = OrderKey{r.text(3), r.text(4), r.text(5)};
    v.attempt = static_cast<int>(r.i64(6));
    v.owner = r.text(7);
    v.lease_until = r.text(8);
    v.expired = r.i64(9) != 0;
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::vector<ItemEvent>> ListingStore::item_events(store::Connection& c, std::int64_t item_id,
                                                         int limit) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.item_events, {item_id, std::int64_t{limit}}));
  std::vector<ItemEvent> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(event_from(r));
  return out;
}

Result<std::optional<OrderTimelineHead>> ListingStore::order_head(store::Connection& c,
                                                                  std::int64_t order_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.order_head, {order_id}));
  if (rows.empty()) return std::optional<OrderTimelineHead>();
  const Row& r = rows.front();
  return std::optional<OrderTimelineHead>(
      OrderTimelineHead{r.text(0), r.i64(1), r.i64(2), r.text(3), r.text(4), r.text(5)});
}

Result<std::vector<SourceOrderView>> ListingStore::order_sources(store::Connection& c,
                                                                 std::string_view site_code,
                                                                 std::string_view order_no) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.order_sources, {site_code, order_no}));
  std::vector<SourceOrderView> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.text(0), r.i64(1), r.text(2), r.text(3)});
  return out;
}

Result<std::vector<ItemEvent>> ListingStore::order_events(store::Connection& c,
                                                          std::string_view site_code,
                                                          std::string_view order_no, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.order_events, {site_code, order_no, std::int64_t{limit}}));
  std::vector<ItemEvent> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(event_from(r));
  return out;
}

}  // namespace onceorder::store
