#include "http/api.hpp"

#include <algorithm>
#include <exception>

#include "http/problem.hpp"

namespace onceorder::http {

Api::Api(store::Database& db, Scheduler& scheduler, Intake& intake,
         std::optional<TokenTable> tokens, std::chrono::milliseconds invariants_interval)
    : numbering_(db),
      runs_(scheduler),
      tokens_(std::move(tokens)),
      monitor_(db, invariants_interval),
      services_{db, numbering_, scheduler, intake, runs_, metrics_, monitor_} {}

std::string_view Api::route_label(std::string_view target) {
  const auto m = match_route(split_target(target).first);
  return m ? m->route->pattern : kUnmatchedRoute;
}

bool Api::answers_inline(const Request& req) const {
  const auto m = match_route(split_target(sv(req.target())).first);
  if (!m || m->route->access == Access::open) return true;
  const auto& methods = m->route->methods;
  if (std::find(methods.begin(), methods.end(), req.method()) == methods.end()) return true;
  std::optional<std::string_view> authorization;
  if (auto it = req.find(bhttp::field::authorization); it != req.end()) {
    authorization = sv(it->value());
  }
  return !authorize(tokens_ ? &*tokens_ : nullptr, authorization,
                    route_access(*m->route, req.method()), req.method() == bhttp::verb::get)
              .ok();
}

bool Api::is_readiness_probe(const Request& req) {
  const auto m = match_route(split_target(sv(req.target())).first);
  return m && m->route->id == RouteId::readyz && req.method() == bhttp::verb::get;
}

Response Api::handle(const Request& req, Deadline deadline, std::string_view& route) {
  route = kUnmatchedRoute;
  Response res;
  try {
    const auto m = match_route(split_target(sv(req.target())).first);
    if (!m) {
      res = problem_response(Status(Code::not_found, "no such resource"));
    } else {
      route = m->route->pattern;
      const auto& methods = m->route->methods;
      if (std::find(methods.begin(), methods.end(), req.method()) == methods.end()) {
        res = problem_response(Status(Code::method_not_allowed,
                                      std::string(req.method_string()) + " is not allowed here"));
        res.set(bhttp::field::allow, allow_header(*m->route));
      } else {
        std::optional<std::string_view> authorization;
        if (auto it = req.find(bhttp::field::authorization); it != req.end()) {
          authorization = sv(it->value());
        }
        auto who =
            authorize(tokens_ ? &*tokens_ : nullptr, authorization,
                      route_access(*m->route, req.method()), req.method() == bhttp::verb::get);
        if (!who.ok()) {
          res = problem_response(who.status());
          if (who.status().code() == Code::unauthorized) {
            res.set(bhttp::field::www_authenticate, "Bearer");
          }
        } else {
          res = dispatch(*m, *who, req, deadline);
        }
      }
    }
  } catch (const std::exception& e) {
    res = problem_response(Status(Code::internal, std::string("unhandled exception: ") + e.what()));
  } catch (...) {
    res = problem_response(Status(Code::internal, "unhandled exception"));
  }
  return res;
}

Response Api::dispatch(const RouteMatch& m, const Principal& who, const Request& req,
                       Deadline deadline) {
  const bool get = req.method() == bhttp::verb::get;
  Services& s = services_;
  switch (m.route->id) {
    case RouteId::scope:
      return get ? get_scope(s, m, req, deadline) : put_scope(s, m, req, deadline);
    case RouteId::scope_documents:
      return get ? list_documents(s, m, req, deadline) : post_document(s, m, req, deadline);
    case RouteId::sku:
      return get ? get_sku(s, m, req, deadline) : put_sku(s, m, req, deadline);
    case RouteId::sku_adjustments:
      return post_adjustment(s, m, req, deadline);
    case RouteId::orders:
      return get ? list_orders(s, who, req, deadline) : post_order(s, who, req, deadline);
    case RouteId::order_receipts:
      return list_order_receipts(s, who, m, req, deadline);
    case RouteId::order_timeline:
      return get_order_timeline(s, who, m, req, deadline);
    case RouteId::warehouse_skus:
      return list_skus(s, m, req, deadline);
    case RouteId::scopes:
      return list_scopes(s, req, deadline);
    case RouteId::order:
      return get_order(s, who, m, req, deadline);
    case RouteId::order_cancel:
      return cancel_order(s, who, m, req, deadline);
    case RouteId::source_orders:
      return post_source_orders(s, req, deadline);
    case RouteId::schedule_runs:
      return get ? list_runs(s, req, deadline) : post_run(s, req, deadline);
    case RouteId::schedule_run:
      return get_run(s, m, req, deadline);
    case RouteId::schedule_items:
      return list_items(s, req, deadline);
    case RouteId::item_timeline:
      return get_item_timeline(s, m, req, deadline);
    case RouteId::schedule_claims:
      return list_claims(s, req, deadline);
    case RouteId::production_orders:
      return list_production_orders(s, req, deadline);
    case RouteId::reap:
      return post_reap(s, req, deadline);
    case RouteId::invariants:
      if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
      return get_invariants(s, deadline);
    case RouteId::healthz:
      return get_healthz();
    case RouteId::readyz:
      return get_readyz(s);
    case RouteId::metrics:
      return get_metrics(s);
    case RouteId::index:
    case RouteId::dashboard:
      return get_embedded_file(req, "/" + m.file);
    case RouteId::openapi:
      return get_embedded_file(req, "/openapi.json");
  }
  return problem_response(Status(Code::internal, "route without handler"));
}

}  // namespace onceorder::http
