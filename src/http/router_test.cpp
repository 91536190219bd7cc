#include "http/router.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

RouteId id_of(std::string_view path) { return match_route(path).value().route->id; }

TEST(Router, MatchesPatterns) {
  EXPECT_EQ(id_of("/v1/scopes/S-1"), RouteId::scope);
  EXPECT_EQ(match_route("/v1/scopes/S-1")->scope, "S-1");
  EXPECT_EQ(id_of("/v1/scopes/S-1/documents"), RouteId::scope_documents);
  EXPECT_EQ(match_route("/v1/scopes/a b/documents")->scope, "a b");  // handler rejects it
  EXPECT_EQ(id_of("/v1/invariants"), RouteId::invariants);
  EXPECT_EQ(id_of("/healthz"), RouteId::healthz);
  EXPECT_EQ(id_of("/readyz"), RouteId::readyz);
  EXPECT_EQ(id_of("/metrics"), RouteId::metrics);
  EXPECT_EQ(match_route("/v1/scopes/S")->route->pattern, "/v1/scopes/{scope}");
}

TEST(Router, MatchesIdRoutes) {
  const auto sku = match_route("/v1/warehouses/1/skus/101");
  EXPECT_EQ(sku->route->id, RouteId::sku);
  EXPECT_EQ(sku->ids, (std::vector<std::string>{"1", "101"}));
  EXPECT_EQ(sku->route->pattern, "/v1/warehouses/{warehouse_id}/skus/{sku_id}");
  EXPECT_EQ(id_of("/v1/warehouses/1/skus/101/adjustments"), RouteId::sku_adjustments);
  EXPECT_EQ(match_route("/v1/warehouses/x/skus/01")->ids,
            (std::vector<std::string>{"x", "01"}));  // the handler rejects them
  EXPECT_EQ(id_of("/v1/orders"), RouteId::orders);
  EXPECT_EQ(id_of("/v1/orders/42"), RouteId::order);
  EXPECT_EQ(match_route("/v1/orders/42/cancel")->ids, (std::vector<std::string>{"42"}));
  EXPECT_EQ(id_of("/v1/orders/42/cancel"), RouteId::order_cancel);
  EXPECT_EQ(id_of("/v1/source-orders"), RouteId::source_orders);
  EXPECT_EQ(id_of("/v1/schedule/runs"), RouteId::schedule_runs);
  EXPECT_EQ(id_of("/v1/schedule/runs/7"), RouteId::schedule_run);
  EXPECT_EQ(id_of("/v1/schedule/items"), RouteId::schedule_items);
  EXPECT_EQ(id_of("/v1/schedule/claims"), RouteId::schedule_claims);
  EXPECT_EQ(id_of("/v1/orders/42/receipts"), RouteId::order_receipts);
  EXPECT_EQ(id_of("/v1/warehouses/1/skus"), RouteId::warehouse_skus);
  EXPECT_EQ(id_of("/v1/warehouses"), RouteId::warehouses);
  EXPECT_EQ(id_of("/v1/scopes"), RouteId::scopes);
  EXPECT_EQ(id_of("/v1/production-orders"), RouteId::production_orders);
  EXPECT_EQ(id_of("/v1/maintenance/reap"), RouteId::reap);
}

TEST(Router, MatchesTheOutboxRoutesAndAuditsEachMethodApart) {
  EXPECT_EQ(id_of("/v1/events"), RouteId::events);
  EXPECT_EQ(id_of("/v1/consumers"), RouteId::consumers);
  EXPECT_EQ(id_of("/v1/consumers/erp"), RouteId::consumer);
  EXPECT_EQ(match_route("/v1/consumers/erp")->ids, (std::vector<std::string>{"erp"}));
  EXPECT_EQ(id_of("/v1/endpoints"), RouteId::endpoints);
  EXPECT_EQ(id_of("/v1/endpoints/mes"), RouteId::endpoint);
  EXPECT_EQ(id_of("/v1/endpoints/mes/deliveries"), RouteId::endpoint_deliveries);
  EXPECT_EQ(id_of("/v1/endpoints/mes/resolve"), RouteId::endpoint_resolve);
  EXPECT_EQ(id_of("/v1/endpoints/mes/redeliver"), RouteId::endpoint_redeliver);
  EXPECT_EQ(match_route("/v1/endpoints/mes/redeliver")->ids, (std::vector<std::string>{"mes"}));
  const Route& endpoint = *match_route("/v1/endpoints/mes")->route;
  EXPECT_EQ(route_audit(endpoint, bhttp::verb::get), nullptr);
  ASSERT_NE(route_audit(endpoint, bhttp::verb::put), nullptr);
  EXPECT_EQ(route_audit(endpoint, bhttp::verb::put)->action, "endpoint.put");
  EXPECT_EQ(route_audit(endpoint, bhttp::verb::put)->secret_field, "secret");
  ASSERT_NE(route_audit(endpoint, bhttp::verb::delete_), nullptr);
  EXPECT_EQ(route_audit(endpoint, bhttp::verb::delete_)->action, "endpoint.delete");
  const Route& consumer = *match_route("/v1/consumers/erp")->route;
  EXPECT_EQ(route_audit(consumer, bhttp::verb::put)->action, "consumer.put");
  EXPECT_EQ(route_audit(consumer, bhttp::verb::delete_)->action, "consumer.delete");
  EXPECT_EQ(
      route_audit(*match_route("/v1/endpoints/mes/resolve")->route, bhttp::verb::post)->action,
      "delivery.resolve");
  EXPECT_EQ(
      route_audit(*match_route("/v1/endpoints/mes/redeliver")->route, bhttp::verb::post)->action,
      "delivery.redeliver");
  EXPECT_EQ(route_audit(*match_route("/v1/events")->route, bhttp::verb::get), nullptr);
}

TEST(Router, DashboardFilesStayInsideTheWebDirectory) {
  EXPECT_EQ(id_of("/"), RouteId::index);
  EXPECT_EQ(match_route("/")->route->pattern, "/");
  EXPECT_EQ(match_route("/")->file, "index.html");
  EXPECT_EQ(id_of("/index.html"), RouteId::dashboard);
  EXPECT_EQ(id_of("/openapi.json"), RouteId::openapi);
  EXPECT_EQ(match_route("/openapi.json")->route->pattern, "/openapi.json");
  EXPECT_EQ(match_route("/app.js")->file, "app.js");
  EXPECT_EQ(match_route("/img/logo.svg")->file, "img/logo.svg");
  for (std::string_view bad : {"/../etc/passwd", "/a/../../b", "/.git/config", "/a//b", "/a%2e%2e",
                               "/a\\b", "/app.js/", ""}) {
    EXPECT_FALSE(match_route(bad).has_value()) << bad;
  }
}

TEST(Router, UnknownApiPathsDoNotMatch) {
  for (std::string_view p : {"/v1",
                             "/v1/",
                             "/v1/scopes/",
                             "/v1/scopes//documents",
                             "/v1/scopes/S/documents/1/x",
                             "/v1/scopes/S/documents/",
                             "/v1/scopes/S/other",
                             "/v1/x",
                             "/v1/orders/",
                             "/v1/orders//cancel",
                             "/v1/orders/1/cancel/x",
                             "/v1/warehouses/1",
                             "/v1/warehouses//skus",
                             "/v1/orders/1/receipts/x",
                             "/v1/schedule/claims/1",
                             "/v1/warehouses//skus/1",
                             "/v1/warehouses/1/sku/1",
                             "/v1/warehouses/1/skus/1/other",
                             "/v1/schedule",
                             "/v1/schedule/runs/",
                             "/v1/schedule/runs/1/items",
                             "/v1/maintenance",
                             "/v1/source-orders/1"}) {
    EXPECT_FALSE(match_route(p).has_value()) << p;
  }
}

TEST(Router, AllowHeader) {
  EXPECT_EQ(allow_header(*match_route("/v1/scopes/S")->route), "GET, HEAD, PUT");
  EXPECT_EQ(allow_header(*match_route("/v1/scopes/S/documents")->route), "GET, HEAD, POST");
  EXPECT_EQ(allow_header(*match_route("/v1/scopes/S/documents/12")->route), "GET, HEAD");
}

TEST(Query, SplitsAndDecodes) {
  EXPECT_EQ(split_target("/a?b=1").first, "/a");
  EXPECT_EQ(split_target("/a?b=1").second, "b=1");
  EXPECT_EQ(split_target("/a").second, "");
  auto q = parse_query("after=5&limit=%31%30&&x=a+b&flag");
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 4u);
  EXPECT_EQ((*q)[1], (std::pair<std::string, std::string>{"limit", "10"}));
  EXPECT_EQ((*q)[2].second, "a b");
  EXPECT_EQ((*q)[3].second, "");
  EXPECT_FALSE(parse_query("a=%zz").ok());
  EXPECT_FALSE(parse_query("a=%4").ok());
  EXPECT_FALSE(parse_query("a=1&a=2").ok());
}

}  // namespace
}  // namespace onceorder::http

namespace onceorder::http {
namespace {

// The audit trail is driven by the router table: a route's action is named there, and only
// its state-changing method is audited.
TEST(Router, AuditedActionsAreMarkedInTheTable) {
  using bhttp::verb;
  EXPECT_EQ(id_of("/v1/actions"), RouteId::actions);
  EXPECT_EQ(id_of("/v1/stats/activity"), RouteId::activity);
  EXPECT_FALSE(match_route("/v1/stats").has_value());
  const auto action_of = [](std::string_view path, verb method) -> std::string_view {
    const auto m = match_route(path);
    const AuditSpec* spec = m ? route_audit(*m->route, method) : nullptr;
    return spec ? spec->action : std::string_view("-");
  };
  EXPECT_EQ(action_of("/v1/orders/1/cancel", verb::post), "order.cancel");
  EXPECT_EQ(action_of("/v1/schedule/runs", verb::post), "run.create");
  EXPECT_EQ(action_of("/v1/schedule/runs", verb::get), "-");
  EXPECT_EQ(action_of("/v1/maintenance/reap", verb::post), "maintenance.reap");
  EXPECT_EQ(action_of("/v1/scopes/S", verb::put), "scope.configure");
  EXPECT_EQ(action_of("/v1/scopes/S", verb::get), "-");
  EXPECT_EQ(action_of("/v1/warehouses/1/skus/2/adjustments", verb::post), "stock.adjust");
  EXPECT_EQ(action_of("/v1/warehouses/1/skus/2", verb::put), "stock.put");
  EXPECT_EQ(action_of("/v1/source-orders", verb::post), "source_orders.import");
  EXPECT_EQ(action_of("/v1/schedule/runs/5/stop", verb::post), "run.stop");
  EXPECT_EQ(action_of("/v1/schedule/requeue", verb::post), "schedule.requeue");
  // Customers' placements and document numbers are the hot paths with receipts of their own.
  EXPECT_EQ(action_of("/v1/orders", verb::post), "-");
  EXPECT_EQ(action_of("/v1/scopes/S/documents", verb::post), "-");
  for (const Route& r : routes()) {
    if (r.audit.action.empty()) continue;
    EXPECT_NE(r.access, Access::open) << r.pattern;
    bool changes = false;
    for (verb v : r.methods) changes |= v != verb::get;
    EXPECT_TRUE(changes) << r.pattern << " is audited but only reads";
  }
  // What an operator may change is audited: a new staff route that changes state and is not
  // marked fails here. Document numbers are the one exception (above).
  for (const Route& r : routes()) {
    bool changes = false;
    for (verb v : r.methods) changes |= v != verb::get;
    if (r.access == Access::staff && changes && r.id != RouteId::scope_documents) {
      EXPECT_FALSE(r.audit.action.empty()) << r.pattern << " changes state but is not audited";
    }
  }
}

}  // namespace
}  // namespace onceorder::http
