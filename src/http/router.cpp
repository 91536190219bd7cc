#include "http/router.hpp"
#include "onceorder/text.hpp"

#include <array>
#include <initializer_list>

namespace onceorder::http {
namespace {

using bhttp::verb;

constexpr std::array kGetPut{verb::get, verb::put};
constexpr std::array kGetPost{verb::get, verb::post};
constexpr std::array kGet{verb::get};
constexpr std::array kPost{verb::post};
constexpr std::array kGetPutDelete{verb::get, verb::put, verb::delete_};

const std::array kRoutes{
    // The last member, where set, marks the route's state-changing method for the audit trail
    // (AuditSpec): a new action route is audited by naming its action here.
    Route{RouteId::scope, "/v1/scopes/{scope}", kGetPut, Access::staff, {}, {"scope.configure"}},
    Route{RouteId::scope_documents, "/v1/scopes/{scope}/documents", kGetPost, Access::staff},
    Route{RouteId::scope_document, "/v1/scopes/{scope}/documents/{value}", kGet, Access::staff},
    Route{RouteId::sku,
          "/v1/warehouses/{warehouse_id}/skus/{sku_id}",
          kGetPut,
          Access::staff,
          {},
          {"stock.put"}},
    Route{RouteId::sku_adjustments,
          "/v1/warehouses/{warehouse_id}/skus/{sku_id}/adjustments",
          kPost,
          Access::staff,
          {},
          {"stock.adjust"}},
    Route{RouteId::scopes, "/v1/scopes", kGet, Access::staff},
    Route{RouteId::warehouse_skus, "/v1/warehouses/{warehouse_id}/skus", kGet, Access::staff},
    Route{RouteId::warehouses, "/v1/warehouses", kGet, Access::staff},
    Route{RouteId::orders, "/v1/orders", kGetPost, Access::orders, Access::readers},
    Route{RouteId::order_receipts, "/v1/orders/{order_id}/receipts", kGet, Access::readers},
    Route{RouteId::order_timeline, "/v1/orders/{order_id}/timeline", kGet, Access::readers},
    Route{RouteId::order, "/v1/orders/{order_id}", kGet, Access::orders},
    Route{RouteId::order_cancel,
          "/v1/orders/{order_id}/cancel",
          kPost,
          Access::orders,
          {},
          {"order.cancel"}},
    Route{RouteId::source_orders,
          "/v1/source-orders",
          kPost,
          Access::staff,
          {},
          {"source_orders.import"}},
    Route{RouteId::schedule_runs,
          "/v1/schedule/runs",
          kGetPost,
          Access::staff,
          {},
          {"run.create", "run_id"}},
    Route{RouteId::schedule_run, "/v1/schedule/runs/{run_id}", kGet, Access::staff},
    Route{RouteId::schedule_items, "/v1/schedule/items", kGet, Access::staff},
    Route{RouteId::item_timeline, "/v1/schedule/items/{item_id}/timeline", kGet, Access::staff},
    Route{RouteId::schedule_claims, "/v1/schedule/claims", kGet, Access::staff},
    Route{RouteId::schedule_run_stop,
          "/v1/schedule/runs/{run_id}/stop",
          kPost,
          Access::staff,
          {},
          {"run.stop"}},
    Route{RouteId::schedule_exhausted, "/v1/schedule/exhausted", kGet, Access::staff},
    Route{RouteId::schedule_requeue,
          "/v1/schedule/requeue",
          kPost,
          Access::staff,
          {},
          {"schedule.requeue"}},
    Route{RouteId::production_orders, "/v1/production-orders", kGet, Access::staff},
    Route{RouteId::reap, "/v1/maintenance/reap", kPost, Access::staff, {}, {"maintenance.reap"}},
    Route{RouteId::invariants, "/v1/invariants", kGet, Access::staff},
    Route{RouteId::actions, "/v1/actions", kGet, Access::staff},
    Route{RouteId::activity, "/v1/stats/activity", kGet, Access::staff},
    Route{RouteId::events, "/v1/events", kGet, Access::staff},
    Route{RouteId::consumers, "/v1/consumers", kGet, Access::staff},
    Route{RouteId::consumer,
          "/v1/consumers/{name}",
          kGetPutDelete,
          Access::staff,
          {},
          {"consumer.put"},
          {"consumer.delete"}},
    Route{RouteId::endpoints, "/v1/endpoints", kGet, Access::staff},
    Route{RouteId::endpoint,
          "/v1/endpoints/{name}",
          kGetPutDelete,
          Access::staff,
          {},
          {"endpoint.put", {}, "secret"},
          {"endpoint.delete"}},
    Route{RouteId::endpoint_deliveries, "/v1/endpoints/{name}/deliveries", kGet, Access::staff},
    Route{RouteId::endpoint_resolve,
          "/v1/endpoints/{name}/resolve",
          kPost,
          Access::staff,
          {},
          {"delivery.resolve"}},
    Route{RouteId::endpoint_redeliver,
          "/v1/endpoints/{name}/redeliver",
          kPost,
          Access::staff,
          {},
          {"delivery.redeliver"}},
    Route{RouteId::healthz, "/healthz", kGet, Access::open},
    Route{RouteId::readyz, "/readyz", kGet, Access::open},
    Route{RouteId::metrics, "/metrics", kGet, Access::open},
    Route{RouteId::openapi, "/openapi.json", kGet, Access::open},
    Route{RouteId::index, "/", kGet, Access::open},
    Route{RouteId::dashboard, "/{file}", kGet, Access::open},
};

const Route& route(RouteId id) {
  for (const Route& r : kRoutes) {
    if (r.id == id) return r;
  }
  return kRoutes.back();
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  path.remove_prefix(1);  // the leading '/'
  for (;;) {
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// A dashboard file name in the shape of web/'s files: no empty, hidden ('.', '..', '.git') or
// escaped segments. Only embedded files are served, so this only keeps odd paths out early.
bool is_safe_file(const std::vector<std::string_view>& segs) {
  for (std::string_view s : segs) {
    if (s.empty() || s.front() == '.') return false;
    for (char c : s) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
  }
  return true;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_digit_value(s[i + 1]);
      const int lo = hex_digit_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

RouteMatch match(RouteId id, std::initializer_list<std::string_view> ids = {}) {
  RouteMatch m;
  m.route = &route(id);
  for (std::string_view s : ids) m.ids.emplace_back(s);
  return m;
}

// The /v1/… routes; `segs` starts after "v1". Empty segments never match.
std::optional<RouteMatch> match_api(std::span<const std::string_view> segs) {
  const size_t n = segs.size();
  if (n == 0) return std::nullopt;
  const std::string_view head = segs[0];
  for (size_t i = 1; i < n; ++i) {
    if (segs[i].empty()) return std::nullopt;
  }
  if (head == "invariants" && n == 1) return match(RouteId::invariants);
  if (head == "actions" && n == 1) return match(RouteId::actions);
  if (head == "stats" && n == 2 && segs[1] == "activity") return match(RouteId::activity);
  if (head == "scopes" && n == 1) return match(RouteId::scopes);
  if (head == "warehouses" && n == 1) return match(RouteId::warehouses);
  if (head == "warehouses" && n == 3 && segs[2] == "skus") {
    return match(RouteId::warehouse_skus, {segs[1]});
  }
  if (head == "scopes" && (n == 2 || (n == 3 && segs[2] == "documents"))) {
    RouteMatch m = match(n == 2 ? RouteId::scope : RouteId::scope_documents);
    m.scope = std::string(segs[1]);
    return m;
  }
  if (head == "scopes" && n == 4 && segs[2] == "documents") {
    RouteMatch m = match(RouteId::scope_document, {segs[3]});
    m.scope = std::string(segs[1]);
    return m;
  }
  if (head == "warehouses" && n >= 4 && n <= 5 && segs[2] == "skus") {
    if (n == 4) return match(RouteId::sku, {segs[1], segs[3]});
    if (segs[4] == "adjustments") return match(RouteId::sku_adjustments, {segs[1], segs[3]});
  }
  if (head == "orders") {
    if (n == 1) return match(RouteId::orders);
    if (n == 2) return match(RouteId::order, {segs[1]});
    if (n == 3 && segs[2] == "cancel") return match(RouteId::order_cancel, {segs[1]});
    if (n == 3 && segs[2] == "receipts") return match(RouteId::order_receipts, {segs[1]});
    if (n == 3 && segs[2] == "timeline") return match(RouteId::order_timeline, {segs[1]});
  }
  if (head == "source-orders" && n == 1) return match(RouteId::source_orders);
  if (head == "schedule" && n >= 2) {
    if (segs[1] == "runs" && n == 2) return match(RouteId::schedule_runs);
    if (segs[1] == "runs" && n == 3) return match(RouteId::schedule_run, {segs[2]});
    if (segs[1] == "items" && n == 2) return match(RouteId::schedule_items);
    if (segs[1] == "items" && n == 4 && segs[3] == "timeline") {
      return match(RouteId::item_timeline, {segs[2]});
    }
    if (segs[1] == "claims" && n == 2) return match(RouteId::schedule_claims);
    if (segs[1] == "runs" && n == 4 && segs[3] == "stop") {
      return match(RouteId::schedule_run_stop, {segs[2]});
    }
    if (segs[1] == "exhausted" && n == 2) return match(RouteId::schedule_exhausted);
    if (segs[1] == "requeue" && n == 2) return match(RouteId::schedule_requeue);
  }
  if (head == "production-orders" && n == 1) return match(RouteId::production_orders);
  if (head == "maintenance" && n == 2 && segs[1] == "reap") return match(RouteId::reap);
  if (head == "events" && n == 1) return match(RouteId::events);
  if (head == "consumers" && n <= 2) {
    return n == 1 ? match(RouteId::consumers) : match(RouteId::consumer, {segs[1]});
  }
  if (head == "endpoints") {
    if (n == 1) return match(RouteId::endpoints);
    if (n == 2) return match(RouteId::endpoint, {segs[1]});
    if (n == 3 && segs[2] == "deliveries") return match(RouteId::endpoint_deliveries, {segs[1]});
    if (n == 3 && segs[2] == "resolve") return match(RouteId::endpoint_resolve, {segs[1]});
    if (n == 3 && segs[2] == "redeliver") return match(RouteId::endpoint_redeliver, {segs[1]});
  }
  return std::nullopt;
}

}  // namespace

std::optional<RouteMatch> match_route(std::string_view path) {
  if (!path.starts_with('/')) return std::nullopt;
  if (path == "/") {
    RouteMatch m = match(RouteId::index);
    m.file = "index.html";
    return m;
  }
  const auto segs = segments(path);
  if (segs[0] == "v1") return match_api(std::span(segs).subspan(1));
  if (segs.size() == 1) {
    if (segs[0] == "healthz") return match(RouteId::healthz);
    if (segs[0] == "readyz") return match(RouteId::readyz);
    if (segs[0] == "metrics") return match(RouteId::metrics);
    if (segs[0] == "openapi.json") return match(RouteId::openapi);
  }
  if (!is_safe_file(segs)) return std::nullopt;
  RouteMatch m = match(RouteId::dashboard);
  m.file = std::string(path.substr(1));
  return m;
}

std::span<const Route> routes() { return kRoutes; }

std::string allow_header(const Route& r) {
  std::string out;
  for (verb v : r.methods) {
    if (!out.empty()) out += ", ";
    out += std::string(bhttp::to_string(v));
    if (v == verb::get) out += ", HEAD";  // the server answers HEAD wherever GET is
  }
  return out;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

Result<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!name || !value) {
      return Status(Code::invalid_request, "the query string has a bad percent escape");
    }
    for (const auto& [seen, _] : out) {
      if (seen != *name) continue;
      // A name that is not text is never echoed back as a field (API.md).
      if (text_problem(*name)) {
        return Status(Code::invalid_request, "a query parameter appears more than once");
      }
      return Status(Code::invalid_request, "a query parameter appears more than once",
                    {FieldError{*name, "appears more than once"}});
    }
    out.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

}  // namespace onceorder::http
