#include "http/api.hpp"

#include <algorithm>
#include <exception>

#include "http/problem.hpp"

namespace onceorder::http {

Api::Api(store::Database& db, std::optional<TokenTable> tokens, std::string web_dir)
    : numbering_(db),
      tokens_(std::move(tokens)),
      services_{db, numbering_, metrics_, std::move(web_dir)} {}

std::string_view Api::route_label(std::string_view target) {
  const auto m = match_route(split_target(target).first);
  return m ? m->route->pattern : kUnmatchedRoute;
}

bool Api::answers_inline(const Request& req) {
  const auto m = match_route(split_target(sv(req.target())).first);
  return m && m->route->id == RouteId::healthz;
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
        Status auth = authorize(tokens_ ? &*tokens_ : nullptr, authorization, m->route->access);
        if (!auth.ok()) {
          res = problem_response(auth);
          if (auth.code() == Code::unauthorized) res.set(bhttp::field::www_authenticate, "Bearer");
        } else {
          res = dispatch(*m, req, deadline);
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

Response Api::dispatch(const RouteMatch& m, const Request& req, Deadline deadline) {
  const bool get = req.method() == bhttp::verb::get;
  switch (m.route->id) {
    case RouteId::scope:
      return get ? get_scope(services_, m, req, deadline) : put_scope(services_, m, req, deadline);
    case RouteId::scope_documents:
      return get ? list_documents(services_, m, req, deadline)
                 : post_document(services_, m, req, deadline);
    case RouteId::invariants:
      if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
      return get_invariants(services_, deadline);
    case RouteId::healthz:
      return get_healthz();
    case RouteId::readyz:
      return get_readyz(services_, deadline);
    case RouteId::metrics:
      return get_metrics(services_, deadline);
    case RouteId::dashboard:
      return get_dashboard_file(services_, m);
  }
  return problem_response(Status(Code::internal, "route without handler"));
}

}  // namespace onceorder::http
