// Maps a request path to one of the server's routes. The route's pattern
// ("/v1/scopes/{scope}/documents") labels metrics and logs, so a raw path never does.
// Pure and thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/auth.hpp"
#include "http/message.hpp"
#include "onceorder/status.hpp"

namespace onceorder::http {

enum class RouteId {
  scope,
  scope_documents,
  scope_document,  // one document with its body
  sku,
  sku_adjustments,
  orders,
  order,
  order_cancel,
  order_receipts,
  order_timeline,
  warehouse_skus,
  warehouses,
  scopes,
  source_orders,
  schedule_runs,
  schedule_run,
  schedule_items,
  item_timeline,
  schedule_claims,
  schedule_run_stop,
  schedule_exhausted,
  schedule_requeue,
  production_orders,
  reap,
  invariants,
  actions,   // the audit trail of operator actions
  activity,  // per-minute counts for the console's charts
  healthz,
  readyz,
  metrics,
  dashboard,
  index,    // "/": the dashboard's index.html
  openapi,  // the OpenAPI document (docs/openapi.json) that describes every route here
  // The outbox (docs/EVENTS.md): the feed, named consumers, endpoints and their deliveries.
  events,
  consumers,
  consumer,
  endpoints,
  endpoint,
  endpoint_deliveries,
  endpoint_resolve,
  endpoint_redeliver,
};

// How the audit trail (table operator_actions, http/api.cpp) records a route's state-changing
// method (every method but GET): `action` names the action (`order.cancel`); empty: the route
// is not audited. `target_field`: the answer's JSON member naming the target when the path
// has no id segment (a new run's `run_id`). `secret_field`: a request member the summary
// never holds (an endpoint's secret), shown as "***". Marking a route here is all it takes.
struct AuditSpec {
  std::string_view action = {};
  std::string_view target_field = {};
  std::string_view secret_field = {};
};

struct Route {
  RouteId id;
  std::string_view pattern;
  std::span<const bhttp::verb> methods;
  Access access;
  // GET's access where it differs from the other methods' (listing orders admits operators;
  // placing one does not).
  std::optional<Access> get_access = std::nullopt;
  AuditSpec audit = {};
  // DELETE's audit on a route that also takes another state-changing method (PUT a consumer,
  // DELETE it): each is its own action.
  AuditSpec delete_audit = {};
};

// The audit action of `method` on `route`, or nullptr when that request is not audited.
inline const AuditSpec* route_audit(const Route& route, bhttp::verb method) {
  if (method == bhttp::verb::get) return nullptr;
  const AuditSpec& spec = method == bhttp::verb::delete_ && !route.delete_audit.action.empty()
                              ? route.delete_audit
                              : route.audit;
  return spec.action.empty() ? nullptr : &spec;
}

// Who may call `route` with `method`.
inline Access route_access(const Route& route, bhttp::verb method) {
  return method == bhttp::verb::get && route.get_access ? *route.get_access : route.access;
}

struct RouteMatch {
  const Route* route = nullptr;
  std::string scope;  // the {scope} segment, as sent (validated by the handler)
  std::string file;   // dashboard and index: the file's path relative to web/
  // The id segments in path order, as sent (validated by the handler): {warehouse_id}
  // and {sku_id}, {order_id}, {run_id}, or a consumer's or endpoint's {name}.
  std::vector<std::string> ids;
};

// The route `path` (without query) belongs to, or nullopt (404).
std::optional<RouteMatch> match_route(std::string_view path);

// Every route, in matching order: what docs/openapi.json must describe, no more, no less
// (tests/e2e/http_openapi_test.cpp).
std::span<const Route> routes();

// Label for requests that matched no route.
inline constexpr std::string_view kUnmatchedRoute = "unmatched";

// "GET, PUT" for the Allow header of a 405.
std::string allow_header(const Route& route);

// Splits "a?b" into path and query.
std::pair<std::string_view, std::string_view> split_target(std::string_view target);

// Decodes `a=1&b=2` (percent escapes, '+' as space). invalid_request on a bad escape or
// a repeated name.
Result<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view query);

}  // namespace onceorder::http
