// Matches a request path against a route table (the table itself, with its handlers, is
// routes() in routes.hpp), and reads the query string. The route's pattern
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
#include "onceorder/core/status.hpp"

namespace onceorder::http {

struct RouteCall;  // one request as its handler sees it (routes.hpp)
using Handler = Response (*)(const RouteCall&);

// What the server does around a route besides calling its handler.
enum class RouteKind {
  plain,
  readiness,  // GET /readyz: the server first lets the monitor check a stale answer again
  metrics,    // the one route a metrics listener serves (ServerOptions::metrics_listen)
};

// How the audit trail (table operator_actions, http/api.cpp) records a row: `action` names the
// action (`order.cancel`); empty: the row is not audited. `target_field`: the answer's JSON
// member naming the target when the path has no id segment (a new run's `run_id`).
// `secret_field`: a request member the summary never holds (an endpoint's secret), shown as
// "***". Marking a row is all it takes.
struct AuditSpec {
  std::string_view action = {};
  std::string_view target_field = {};
  std::string_view secret_field = {};
};

// One row of the route table (routes(), route_table.cpp): a method on a path pattern, what
// serves it, who may call it and whether it is audited. The rows of one pattern are adjacent,
// in the order the Allow header lists their methods. In a pattern, `{scope}` captures the
// scope, `{file}` (last) the rest of the path as a dashboard file, and any other `{name}` an id.
struct Route {
  bhttp::verb method;
  std::string_view pattern;
  Handler handler;
  Access access;
  AuditSpec audit = {};
  RouteKind kind = RouteKind::plain;
};

// The audit of `row`, or nullptr when it is not audited.
inline const AuditSpec* route_audit(const Route& row) {
  return row.audit.action.empty() ? nullptr : &row.audit;
}

struct RouteMatch {
  std::string_view pattern;     // labels metrics and logs, so a raw path never does
  std::span<const Route> rows;  // the pattern's rows, one per method
  std::string scope;            // the {scope} segment, as sent (validated by the handler)
  std::string file;             // {file}: the dashboard file's path relative to web/
  // The id segments in path order, as sent (validated by the handler): {warehouse_id}
  // and {sku_id}, {order_id}, {run_id}, or a consumer's or endpoint's {name}.
  std::vector<std::string> ids;

  // The row serving `method`, or nullptr (405).
  const Route* find(bhttp::verb method) const;
};

// The first pattern of `table` that `path` (without query) matches, or nullopt (404). Empty
// segments never match, and a path under /v1 is an API route or nothing (never a file).
std::optional<RouteMatch> match_route(std::string_view path, std::span<const Route> table);

// Label for requests that matched no route.
inline constexpr std::string_view kUnmatchedRoute = "unmatched";

// "GET, HEAD, PUT" for the Allow header of a 405: the methods of a pattern's `rows`.
std::string allow_header(std::span<const Route> rows);

// Splits "a?b" into path and query.
std::pair<std::string_view, std::string_view> split_target(std::string_view target);

// Decodes `a=1&b=2` (percent escapes, '+' as space). invalid_request on a bad escape or
// a repeated name.
Result<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view query);

}  // namespace onceorder::http
