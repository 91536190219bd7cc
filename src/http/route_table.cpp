// The route table: one row per method and pattern, with its handler, who may call it and its
// audit action. Matching (router.cpp), dispatch, the access check and the audit decision
// (api.cpp) all read these rows, and the OpenAPI document is checked against them.
#include <type_traits>

#include "http/problem.hpp"
#include "http/routes.hpp"

namespace onceorder::http {
namespace {

using bhttp::verb;

// A handler as the table holds it: `F` called with the parts of the request it takes.
template <auto F>
Response on(const RouteCall& c) {
  using Fn = decltype(F);
  if constexpr (std::is_invocable_v<Fn, Services&, const RouteMatch&, const Request&, Deadline>) {
    return F(c.s, c.m, c.req, c.deadline);
  } else if constexpr (std::is_invocable_v<Fn, Services&, const Request&, Deadline>) {
    return F(c.s, c.req, c.deadline);
  } else if constexpr (std::is_invocable_v<Fn, Services&, const Principal&, const RouteMatch&,
                                           const Request&, Deadline>) {
    return F(c.s, c.who, c.m, c.req, c.deadline);
  } else if constexpr (std::is_invocable_v<Fn, Services&, const Principal&, const Request&,
                                           Deadline>) {
    return F(c.s, c.who, c.req, c.deadline);
  } else if constexpr (std::is_invocable_v<Fn, Services&, const Request&, Deadline, FeedWait*>) {
    return F(c.s, c.req, c.deadline, c.wait);
  } else if constexpr (std::is_invocable_v<Fn, const Services&>) {
    return F(c.s);
  } else {
    return F();
  }
}

Response serve_invariants(const RouteCall& c) {
  if (Status st = no_query_parameters(sv(c.req.target())); !st.ok()) return problem_response(st);
  return get_invariants(c.s, c.deadline);
}

Response index_file(const RouteCall& c) { return get_embedded_file(c.req, "/index.html"); }
Response openapi_file(const RouteCall& c) { return get_embedded_file(c.req, "/openapi.json"); }
Response dashboard_file(const RouteCall& c) { return get_embedded_file(c.req, "/" + c.m.file); }

constexpr Access kStaff = Access::staff;
constexpr Access kOpen = Access::open;

// Matched in this order: the first pattern that fits wins ("/{file}" last). A state-changing
// staff row is audited unless it is a hot path with receipts of its own (document numbers).
constexpr Route kRoutes[] = {
    // Document numbers (routes_scopes.cpp).
    {verb::get, "/v1/scopes/{scope}", on<get_scope>, kStaff},
    {verb::put, "/v1/scopes/{scope}", on<put_scope>, kStaff, {"scope.configure"}},
    {verb::get, "/v1/scopes/{scope}/documents", on<list_documents>, kStaff},
    {verb::post, "/v1/scopes/{scope}/documents", on<post_document>, kStaff},
    {verb::get, "/v1/scopes/{scope}/documents/{value}", on<get_document>, kStaff},
    // Stock (routes_stock.cpp) and the console's lists (routes_lists.cpp).
    {verb::get, "/v1/warehouses/{warehouse_id}/skus/{sku_id}", on<get_sku>, kStaff},
    {verb::put, "/v1/warehouses/{warehouse_id}/skus/{sku_id}", on<put_sku>, kStaff, {"stock.put"}},
    {verb::post,
     "/v1/warehouses/{warehouse_id}/skus/{sku_id}/adjustments",
     on<post_adjustment>,
     kStaff,
     {"stock.adjust"}},
    {verb::get, "/v1/scopes", on<list_scopes>, kStaff},
    {verb::get, "/v1/warehouses/{warehouse_id}/skus", on<list_skus>, kStaff},
    {verb::get, "/v1/warehouses", on<list_warehouses>, kStaff},
    // Orders (routes_orders.cpp, routes_lists.cpp): listing admits operators, placing does not.
    {verb::get, "/v1/orders", on<list_orders>, Access::readers},
    {verb::post, "/v1/orders", on<post_order>, Access::orders},
    {verb::get, "/v1/orders/{order_id}/receipts", on<list_order_receipts>, Access::readers},
    {verb::get, "/v1/orders/{order_id}/timeline", on<get_order_timeline>, Access::readers},
    {verb::get, "/v1/orders/{order_id}", on<get_order>, Access::orders},
    {verb::post,
     "/v1/orders/{order_id}/cancel",
     on<cancel_order>,
     Access::orders,
     {"order.cancel"}},
    // Scheduling (routes_scheduling.cpp).
    {verb::post, "/v1/source-orders", on<post_source_orders>, kStaff, {"source_orders.import"}},
    {verb::get, "/v1/schedule/runs", on<list_runs>, kStaff},
    {verb::post, "/v1/schedule/runs", on<post_run>, kStaff, {"run.create", "run_id"}},
    {verb::get, "/v1/schedule/runs/{run_id}", on<get_run>, kStaff},
    {verb::get, "/v1/schedule/items", on<list_items>, kStaff},
    {verb::get, "/v1/schedule/items/{item_id}/timeline", on<get_item_timeline>, kStaff},
    {verb::get, "/v1/schedule/claims", on<list_claims>, kStaff},
    {verb::post, "/v1/schedule/runs/{run_id}/stop", on<post_run_stop>, kStaff, {"run.stop"}},
    {verb::get, "/v1/schedule/exhausted", on<list_exhausted>, kStaff},
    {verb::post, "/v1/schedule/requeue", on<post_requeue>, kStaff, {"schedule.requeue"}},
    {verb::get, "/v1/production-orders", on<list_production_orders>, kStaff},
    {verb::post, "/v1/maintenance/reap", on<post_reap>, kStaff, {"maintenance.reap"}},
    // Operations and the audit trail (routes_ops.cpp, routes_audit.cpp).
    {verb::get, "/v1/invariants", serve_invariants, kStaff},
    {verb::get, "/v1/actions", on<list_actions>, kStaff},
    {verb::get, "/v1/stats/activity", on<get_activity>, kStaff},
    // The outbox (routes_events.cpp): the feed, consumers, endpoints and their deliveries.
    {verb::get, "/v1/events", on<get_events>, kStaff},
    {verb::get, "/v1/consumers", on<list_consumers>, kStaff},
    {verb::get, "/v1/consumers/{name}", on<get_consumer>, kStaff},
    {verb::put, "/v1/consumers/{name}", on<put_consumer>, kStaff, {"consumer.put"}},
    {verb::delete_, "/v1/consumers/{name}", on<delete_consumer>, kStaff, {"consumer.delete"}},
    {verb::get, "/v1/endpoints", on<list_endpoints>, kStaff},
    {verb::get, "/v1/endpoints/{name}", on<get_endpoint>, kStaff},
    {verb::put, "/v1/endpoints/{name}", on<put_endpoint>, kStaff, {"endpoint.put", {}, "secret"}},
    {verb::delete_, "/v1/endpoints/{name}", on<delete_endpoint>, kStaff, {"endpoint.delete"}},
    {verb::get, "/v1/endpoints/{name}/deliveries", on<list_deliveries>, kStaff},
    {verb::post, "/v1/endpoints/{name}/resolve", on<post_resolve>, kStaff, {"delivery.resolve"}},
    {verb::post,
     "/v1/endpoints/{name}/redeliver",
     on<post_redeliver>,
     kStaff,
     {"delivery.redeliver"}},
    // Open: they never touch the database, and run on the I/O thread.
    {verb::get, "/healthz", on<get_healthz>, kOpen},
    {verb::get, "/readyz", on<get_readyz>, kOpen, {}, RouteKind::readiness},
    {verb::get, "/metrics", on<get_metrics>, kOpen, {}, RouteKind::metrics},
    {verb::get, "/openapi.json", openapi_file, kOpen},
    {verb::get, "/", index_file, kOpen},
    {verb::get, "/{file}", dashboard_file, kOpen},
};

}  // namespace

std::span<const Route> routes() { return kRoutes; }

}  // namespace onceorder::http
