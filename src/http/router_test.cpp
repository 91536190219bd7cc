#include "http/router.hpp"
#include "http/routes.hpp"

#include <gtest/gtest.h>

#include <set>

namespace onceorder::http {
namespace {

// The pattern of the route `path` falls under (the route's identity in logs and metrics).
std::string_view pattern_of(std::string_view path) { return match_route(path).value().pattern; }

// The audit action of `method` on `path`, "-" when none.
std::string_view action_of(std::string_view path, bhttp::verb method) {
  const auto m = match_route(path);
  const Route* row = m ? m->find(method) : nullptr;
  const AuditSpec* spec = row ? route_audit(*row) : nullptr;
  return spec ? spec->action : std::string_view("-");
}

TEST(Router, MatchesPatterns) {
  EXPECT_EQ(pattern_of("/v1/scopes/S-1"), "/v1/scopes/{scope}");
  EXPECT_EQ(match_route("/v1/scopes/S-1")->scope, "S-1");
  EXPECT_EQ(pattern_of("/v1/scopes/S-1/documents"), "/v1/scopes/{scope}/documents");
  EXPECT_EQ(match_route("/v1/scopes/a b/documents")->scope, "a b");  // handler rejects it
  EXPECT_EQ(pattern_of("/v1/invariants"), "/v1/invariants");
  EXPECT_EQ(pattern_of("/healthz"), "/healthz");
  EXPECT_EQ(pattern_of("/readyz"), "/readyz");
  EXPECT_EQ(pattern_of("/metrics"), "/metrics");
  EXPECT_EQ(match_route("/v1/scopes/S")->pattern, "/v1/scopes/{scope}");
}

TEST(Router, MatchesIdRoutes) {
  const auto sku = match_route("/v1/warehouses/1/skus/101");
  EXPECT_EQ(sku->pattern, "/v1/warehouses/{warehouse_id}/skus/{sku_id}");
  EXPECT_EQ(sku->ids, (std::vector<std::string>{"1", "101"}));
  EXPECT_EQ(sku->pattern, "/v1/warehouses/{warehouse_id}/skus/{sku_id}");
  EXPECT_EQ(pattern_of("/v1/warehouses/1/skus/101/adjustments"),
            "/v1/warehouses/{warehouse_id}/skus/{sku_id}/adjustments");
  EXPECT_EQ(match_route("/v1/warehouses/x/skus/01")->ids,
            (std::vector<std::string>{"x", "01"}));  // the handler rejects them
  EXPECT_EQ(pattern_of("/v1/orders"), "/v1/orders");
  EXPECT_EQ(pattern_of("/v1/orders/42"), "/v1/orders/{order_id}");
  EXPECT_EQ(match_route("/v1/orders/42/cancel")->ids, (std::vector<std::string>{"42"}));
  EXPECT_EQ(pattern_of("/v1/orders/42/cancel"), "/v1/orders/{order_id}/cancel");
  EXPECT_EQ(pattern_of("/v1/source-orders"), "/v1/source-orders");
  EXPECT_EQ(pattern_of("/v1/schedule/runs"), "/v1/schedule/runs");
  EXPECT_EQ(pattern_of("/v1/schedule/runs/7"), "/v1/schedule/runs/{run_id}");
  EXPECT_EQ(pattern_of("/v1/schedule/items"), "/v1/schedule/items");
  EXPECT_EQ(pattern_of("/v1/schedule/claims"), "/v1/schedule/claims");
  EXPECT_EQ(pattern_of("/v1/orders/42/receipts"), "/v1/orders/{order_id}/receipts");
  EXPECT_EQ(pattern_of("/v1/warehouses/1/skus"), "/v1/warehouses/{warehouse_id}/skus");
  EXPECT_EQ(pattern_of("/v1/warehouses"), "/v1/warehouses");
  EXPECT_EQ(pattern_of("/v1/scopes"), "/v1/scopes");
  EXPECT_EQ(pattern_of("/v1/production-orders"), "/v1/production-orders");
  EXPECT_EQ(pattern_of("/v1/maintenance/reap"), "/v1/maintenance/reap");
}

TEST(Router, MatchesTheOutboxRoutesAndAuditsEachMethodApart) {
  EXPECT_EQ(pattern_of("/v1/events"), "/v1/events");
  EXPECT_EQ(pattern_of("/v1/consumers"), "/v1/consumers");
  EXPECT_EQ(pattern_of("/v1/consumers/erp"), "/v1/consumers/{name}");
  EXPECT_EQ(match_route("/v1/consumers/erp")->ids, (std::vector<std::string>{"erp"}));
  EXPECT_EQ(pattern_of("/v1/endpoints"), "/v1/endpoints");
  EXPECT_EQ(pattern_of("/v1/endpoints/mes"), "/v1/endpoints/{name}");
  EXPECT_EQ(pattern_of("/v1/endpoints/mes/deliveries"), "/v1/endpoints/{name}/deliveries");
  EXPECT_EQ(pattern_of("/v1/endpoints/mes/resolve"), "/v1/endpoints/{name}/resolve");
  EXPECT_EQ(pattern_of("/v1/endpoints/mes/redeliver"), "/v1/endpoints/{name}/redeliver");
  EXPECT_EQ(match_route("/v1/endpoints/mes/redeliver")->ids, (std::vector<std::string>{"mes"}));
  const auto endpoint = match_route("/v1/endpoints/mes");
  EXPECT_EQ(action_of("/v1/endpoints/mes", bhttp::verb::get), "-");
  EXPECT_EQ(action_of("/v1/endpoints/mes", bhttp::verb::put), "endpoint.put");
  EXPECT_EQ(endpoint->find(bhttp::verb::put)->audit.secret_field, "secret");
  EXPECT_EQ(action_of("/v1/endpoints/mes", bhttp::verb::delete_), "endpoint.delete");
  EXPECT_EQ(endpoint->find(bhttp::verb::post), nullptr);
  EXPECT_EQ(action_of("/v1/consumers/erp", bhttp::verb::put), "consumer.put");
  EXPECT_EQ(action_of("/v1/consumers/erp", bhttp::verb::delete_), "consumer.delete");
  EXPECT_EQ(action_of("/v1/endpoints/mes/resolve", bhttp::verb::post), "delivery.resolve");
  EXPECT_EQ(action_of("/v1/endpoints/mes/redeliver", bhttp::verb::post), "delivery.redeliver");
  EXPECT_EQ(action_of("/v1/events", bhttp::verb::get), "-");
}

TEST(Router, DashboardFilesStayInsideTheWebDirectory) {
  EXPECT_EQ(pattern_of("/"), "/");
  EXPECT_EQ(match_route("/")->pattern, "/");
  EXPECT_EQ(pattern_of("/index.html"), "/{file}");
  EXPECT_EQ(pattern_of("/openapi.json"), "/openapi.json");
  EXPECT_EQ(match_route("/openapi.json")->pattern, "/openapi.json");
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
  EXPECT_EQ(allow_header(match_route("/v1/scopes/S")->rows), "GET, HEAD, PUT");
  EXPECT_EQ(allow_header(match_route("/v1/scopes/S/documents")->rows), "GET, HEAD, POST");
  EXPECT_EQ(allow_header(match_route("/v1/scopes/S/documents/12")->rows), "GET, HEAD");
  EXPECT_EQ(allow_header(match_route("/v1/consumers/erp")->rows), "GET, HEAD, PUT, DELETE");
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
  EXPECT_EQ(pattern_of("/v1/actions"), "/v1/actions");
  EXPECT_EQ(pattern_of("/v1/stats/activity"), "/v1/stats/activity");
  EXPECT_FALSE(match_route("/v1/stats").has_value());
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
    EXPECT_NE(r.method, verb::get) << r.pattern << " is audited but only reads";
  }
  // What an operator may change is audited: a new staff route that changes state and is not
  // marked fails here. Document numbers are the one exception (above).
  for (const Route& r : routes()) {
    if (r.access == Access::staff && r.method != verb::get &&
        r.pattern != "/v1/scopes/{scope}/documents") {
      EXPECT_FALSE(r.audit.action.empty()) << r.pattern << " changes state but is not audited";
    }
  }
}

}  // namespace
}  // namespace onceorder::http

namespace onceorder::http {
namespace {

// Matching finds a pattern's rows as one group, so they must sit together, each method once.
TEST(Router, TheTableHoldsEachPatternsRowsTogetherEachMethodOnce) {
  const auto table = routes();
  std::set<std::string_view> seen;
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_NE(table[i].handler, nullptr) << table[i].pattern;
    const bool continues = i > 0 && table[i].pattern == table[i - 1].pattern;
    if (!continues) {
      EXPECT_TRUE(seen.insert(table[i].pattern).second) << table[i].pattern << " is split";
    }
    for (size_t j = i + 1; j < table.size() && table[j].pattern == table[i].pattern; ++j) {
      EXPECT_NE(table[i].method, table[j].method) << table[i].pattern;
    }
  }
}

TEST(Router, AccessAndKindAreThoseOfTheMethodsRow) {
  using bhttp::verb;
  EXPECT_EQ(match_route("/v1/orders")->find(verb::get)->access, Access::readers);
  EXPECT_EQ(match_route("/v1/orders")->find(verb::post)->access, Access::orders);
  EXPECT_EQ(match_route("/v1/orders")->find(verb::delete_), nullptr);
  EXPECT_EQ(match_route("/v1/scopes/S")->find(verb::put)->access, Access::staff);
  EXPECT_EQ(match_route("/healthz")->find(verb::get)->access, Access::open);
  EXPECT_EQ(match_route("/readyz")->find(verb::get)->kind, RouteKind::readiness);
  EXPECT_EQ(match_route("/metrics")->find(verb::get)->kind, RouteKind::metrics);
  EXPECT_EQ(match_route("/v1/invariants")->find(verb::get)->kind, RouteKind::plain);
}

// The matcher reads any table: captures by name, literals exactly, `{file}` the rest.
TEST(Router, MatchesAGivenTable) {
  using bhttp::verb;
  static constexpr Route kTable[] = {
      {verb::get, "/a/{scope}/b/{id}", nullptr, Access::staff},
      {verb::get, "/a/{scope}", nullptr, Access::staff},
      {verb::post, "/a/{scope}", nullptr, Access::staff},
      {verb::get, "/files/{file}", nullptr, Access::open},
  };
  const auto m = match_route("/a/S/b/7", kTable);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pattern, "/a/{scope}/b/{id}");
  EXPECT_EQ(m->scope, "S");
  EXPECT_EQ(m->ids, std::vector<std::string>{"7"});
  EXPECT_EQ(match_route("/a/S", kTable)->rows.size(), 2u);
  EXPECT_EQ(match_route("/files/x/y.js", kTable)->file, "x/y.js");
  for (std::string_view bad : {"/a", "/a/S/b", "/a//b/7", "/a/S/c/7", "/files", "/files/.x"}) {
    EXPECT_FALSE(match_route(bad, kTable).has_value()) << bad;
  }
}

}  // namespace
}  // namespace onceorder::http
