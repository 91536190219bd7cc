// The route table (route_table.cpp) and its handlers, one file per group: routes_scopes.cpp
// (document numbers), routes_stock.cpp (SKUs and adjustments), routes_orders.cpp (orders),
// routes_scheduling.cpp (source orders, runs, items, production orders, reaper),
// routes_ops.cpp (health, readiness, metrics, invariants), routes_events.cpp (the outbox's
// feed, consumers, endpoints and deliveries), static_files.cpp (dashboard and OpenAPI
// document, from the binary).
// Each turns one request into one response; errors come back as problem+json. Handlers
// that block on the database run on the worker pool; the open ones (health, readiness,
// metrics, embedded files) never touch it and run on the I/O thread. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "http/auth.hpp"
#include "http/message.hpp"
#include "http/metrics.hpp"
#include "http/ops_monitor.hpp"
#include "http/router.hpp"
#include "http/run_executor.hpp"
#include "onceorder/core/event_types.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::http {

// What the handlers work with; owned by the server, outlives every request.
struct Services {
  store::Database& db;
  Numbering& numbering;
  Scheduler& scheduler;
  Intake& intake;
  Stock& stock;
  RunExecutor& runs;
  HttpMetrics& metrics;
  OpsMonitor& monitor;  // cached readiness and invariants; runs GET /v1/invariants's checks
};

using Deadline = store::Clock::time_point;

// What a long poll (GET /v1/events?wait=) leaves the server when its page came back empty:
// the server holds the request without a worker or a database connection, and runs the
// handler again once the feed's head has moved past `seen`, or answers the empty page when
// `wait` has passed since the request arrived.
struct FeedWait {
  std::chrono::seconds wait{0};  // 0: answer now
  FeedPosition seen;             // the newest position the empty read could see
};

// One request as its handler sees it: what a Route's Handler takes.
struct RouteCall {
  Services& s;
  const Principal& who;
  const RouteMatch& m;
  const Request& req;
  Deadline deadline;
  FeedWait* wait;  // null: the request is answered as it is
};

// The route table: every route the server serves, one row per method, in matching order.
// Matching, dispatch, the access check and the audit decision all read it, and
// docs/openapi.json must describe it, no more, no less (tests/e2e/http_openapi_test.cpp).
std::span<const Route> routes();

// The route `path` (without query) belongs to, or nullopt (404).
inline std::optional<RouteMatch> match_route(std::string_view path) {
  return match_route(path, routes());
}

// A recorded principal (an order's, a document's) as JSON: null for a row from before
// principals were recorded.
inline nlohmann::json principal_json(const std::string& name) {
  return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name);
}

Response put_scope(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response get_scope(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response get_document(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response post_document(Services& s, const Principal& who, const RouteMatch& m, const Request& req,
                       Deadline deadline);
Response list_documents(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);

Response put_sku(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response get_sku(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response post_adjustment(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);

Response post_order(Services& s, const Principal& who, const Request& req, Deadline deadline);
Response get_order(Services& s, const Principal& who, const RouteMatch& m, const Request& req,
                   Deadline deadline);
Response cancel_order(Services& s, const Principal& who, const RouteMatch& m, const Request& req,
                      Deadline deadline);

// The console's lists (routes_lists.cpp).
Response list_orders(Services& s, const Principal& who, const Request& req, Deadline deadline);
Response list_order_receipts(Services& s, const Principal& who, const RouteMatch& m,
                             const Request& req, Deadline deadline);
Response list_skus(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response list_warehouses(Services& s, const Request& req, Deadline deadline);
Response list_scopes(Services& s, const Request& req, Deadline deadline);
Response list_claims(Services& s, const Request& req, Deadline deadline);
// Timelines (API.md, "Timelines"): an item's events; an order's life with its items' events.
Response get_item_timeline(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response get_order_timeline(Services& s, const Principal& who, const RouteMatch& m,
                            const Request& req, Deadline deadline);

Response post_source_orders(Services& s, const Request& req, Deadline deadline);
Response post_run(Services& s, const Request& req, Deadline deadline);
Response get_run(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response list_runs(Services& s, const Request& req, Deadline deadline);
Response list_items(Services& s, const Request& req, Deadline deadline);
Response list_production_orders(Services& s, const Request& req, Deadline deadline);
Response post_reap(Services& s, const Request& req, Deadline deadline);
Response post_run_stop(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response list_exhausted(Services& s, const Request& req, Deadline deadline);
Response post_requeue(Services& s, const Request& req, Deadline deadline);

// The audit trail and the console's activity charts (routes_audit.cpp).
Response list_actions(Services& s, const Request& req, Deadline deadline);
Response get_activity(Services& s, const Request& req, Deadline deadline);

Response get_invariants(Services& s, Deadline deadline);
Response get_healthz();
// These two never touch the database: they answer from OpsMonitor's cache.
Response get_readyz(const Services& s);
Response get_metrics(const Services& s);

// A file built into the binary (http/embedded_files.hpp), by its URL path: 404 when there is
// none, 304 when If-None-Match names its ETag.
Response get_embedded_file(const Request& req, std::string_view path);

// The outbox (routes_events.cpp; API.md "Events, consumers and endpoints").
// `wait` may be null (the request is answered as it is).
Response get_events(Services& s, const Request& req, Deadline deadline, FeedWait* wait);
Response list_consumers(Services& s, const Request& req, Deadline deadline);
Response get_consumer(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response put_consumer(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response delete_consumer(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response list_endpoints(Services& s, const Request& req, Deadline deadline);
Response get_endpoint(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response put_endpoint(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response delete_endpoint(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response list_deliveries(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response post_resolve(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);
Response post_redeliver(Services& s, const RouteMatch& m, const Request& req, Deadline deadline);

// invalid_request naming every query parameter when a route takes none.
Status no_query_parameters(std::string_view target);

}  // namespace onceorder::http
