#include "http/api.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/problem.hpp"
#include "onceorder/audit.hpp"
#include "onceorder/invariant.hpp"

namespace onceorder::http {

Api::Api(store::Database& db, Scheduler& scheduler, Intake& intake,
         std::optional<TokenTable> tokens, std::chrono::milliseconds invariants_interval,
         const DeliveryMetrics* deliveries)
    : numbering_(db),
      runs_(scheduler),
      tokens_(std::move(tokens)),
      monitor_(db, invariants_interval, deliveries, OpsMonitor::kOutboxInterval,
               scheduler.options().max_attempts),
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
  std::string_view known;
  const bool refused =
      !authorize(tokens_ ? &*tokens_ : nullptr, authorization,
                 route_access(*m->route, req.method()), req.method() == bhttp::verb::get, &known)
           .ok();
  // A principal over its rate limit is refused here too: its requests take no worker.
  return refused || (limiter_ && !known.empty() && limiter_->exhausted(known, store::Clock::now()));
}

bool Api::needs_token(const Request& req) {
  const auto m = match_route(split_target(sv(req.target())).first);
  if (!m || m->route->access == Access::open) return false;
  const auto& methods = m->route->methods;
  return std::find(methods.begin(), methods.end(), req.method()) != methods.end();
}

std::optional<Response> Api::over_rate_limit(const Principal& who) {
  if (!limiter_) return std::nullopt;
  const auto wait = limiter_->take(who.name, store::Clock::now());
  if (!wait) return std::nullopt;
  metrics_.count_rate_limited(role_name(who.role));
  // Whole seconds, rounded up, at least one: a client that waits that long is admitted.
  const auto seconds =
      std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::seconds>(*wait).count());
  Response res = problem_response(
      Status(Code::rate_limited,
             fmt::format("this principal is over its rate limit; retry in {} s", seconds)));
  res.set(bhttp::field::retry_after, std::to_string(seconds));
  return res;
}

bool Api::is_readiness_probe(const Request& req) {
  const auto m = match_route(split_target(sv(req.target())).first);
  return m && m->route->id == RouteId::readyz && req.method() == bhttp::verb::get;
}

std::optional<Response> Api::gate(const Request& req, RequestLabels& labels,
                                  std::optional<RouteMatch>& m, Principal& who) const {
  labels = RequestLabels{};
  m = match_route(split_target(sv(req.target())).first);
  if (!m) return problem_response(Status(Code::not_found, "no such resource"));
  labels.route = m->route->pattern;
  const auto& methods = m->route->methods;
  if (std::find(methods.begin(), methods.end(), req.method()) == methods.end()) {
    Response res = problem_response(Status(
        Code::method_not_allowed, std::string(req.method_string()) + " is not allowed here"));
    res.set(bhttp::field::allow, allow_header(*m->route));
    return res;
  }
  std::optional<std::string_view> authorization;
  if (auto it = req.find(bhttp::field::authorization); it != req.end()) {
    authorization = sv(it->value());
  }
  std::string_view known;  // the caller's name once its token is recognised
  auto allowed =
      authorize(tokens_ ? &*tokens_ : nullptr, authorization, route_access(*m->route, req.method()),
                req.method() == bhttp::verb::get, &known);
  labels.principal = known.empty() ? std::string_view("-") : known;
  if (!allowed.ok()) {
    Response res = problem_response(allowed.status());
    if (allowed.status().code() == Code::unauthorized) {
      res.set(bhttp::field::www_authenticate, "Bearer");
    }
    return res;
  }
  who = *allowed;
  return std::nullopt;
}

std::optional<Response> Api::refuse_header(const Request& header, RequestLabels& labels) const {
  std::optional<RouteMatch> m;
  Principal who;
  return gate(header, labels, m, who);
}

Response Api::handle(const Request& req, Deadline deadline, RequestLabels& labels, FeedWait* wait) {
  Response res;
  try {
    std::optional<RouteMatch> m;
    Principal who;
    if (auto refusal = gate(req, labels, m, who)) {
      res = std::move(*refusal);
    } else if (auto refused =
                   m->route->access == Access::open ? std::nullopt : over_rate_limit(who)) {
      res = std::move(*refused);
    } else {
      const AuditSpec* spec = route_audit(*m->route, req.method());
      res = spec ? audited_dispatch(*spec, *m, who, req, deadline, wait)
                 : dispatch(*m, who, req, deadline, wait);
    }
  } catch (const InvariantViolation& e) {  // logged already, under its reference
    res = problem_response(Status(Code::internal, e.what()), e.reference());
  } catch (const std::exception& e) {
    res = problem_response(Status(Code::internal, std::string("unhandled exception: ") + e.what()));
  } catch (...) {
    res = problem_response(Status(Code::internal, "unhandled exception"));
  }
  return res;
}

namespace {

// The request or answer body as JSON for an audit summary, when it is JSON and small.
constexpr size_t kSummaryBodyMax = 1024;
// The longest writing the answer into its audit row may hold back the answer.
constexpr auto kAuditWait = std::chrono::seconds(1);

std::optional<nlohmann::json> small_json(std::string_view body) {
  if (body.empty() || body.size() > kSummaryBodyMax) return std::nullopt;
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

// Client text may be anything: invalid UTF-8 is replaced rather than refused.
std::string dump_summary(const nlohmann::json& summary) {
  return summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// What the audit row says the action was on: the path's scope or ids ("1/101" for a SKU), else
// the answer's `target_field` (a new run's id).
std::optional<std::string> audit_target(const AuditSpec& spec, const RouteMatch& m,
                                        const std::optional<nlohmann::json>& answer) {
  if (!m.scope.empty()) return m.scope;
  if (!m.ids.empty()) {
    std::string out;
    for (const std::string& id : m.ids) {
      if (!out.empty()) out += '/';
      out += id;
    }
    return out;
  }
  if (!spec.target_field.empty() && answer && answer->is_object()) {
    const auto it = answer->find(std::string(spec.target_field));
    if (it != answer->end() && it->is_string()) return it->get<std::string>();
    if (it != answer->end() && it->is_number_integer())
      return std::to_string(it->get<std::int64_t>());
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The row of an audited request as it is known before its handler runs: who, what, on which
// path target, and the request's part of the summary.
ActionRecord audit_draft(const AuditSpec& spec, const RouteMatch& m, const Principal& who,
                         const Request& req, nlohmann::json& summary) {
  ActionRecord row;
  row.principal = std::string(who.name);
  row.role = std::string(role_name(who.role));
  row.action = std::string(spec.action);
  row.target = audit_target(spec, m, std::nullopt);
  summary = nlohmann::json::object();
  summary["method"] = std::string(req.method_string());
  if (const auto query = split_target(sv(req.target())).second; !query.empty()) {
    summary["query"] = std::string(query.substr(0, 200));
  }
  if (auto body = small_json(req.body())) {
    // A secret stays out of the trail (who set one, and when, is what it records).
    if (!spec.secret_field.empty() && body->is_object()) {
      const std::string field(spec.secret_field);
      if (body->contains(field)) (*body)[field] = "***";
    }
    summary["request"] = std::move(*body);
  } else if (!req.body().empty()) {
    summary["request_bytes"] = req.body().size();
  }
  if (auto it = req.find("Idempotency-Key"); it != req.end()) {
    summary["idempotency_key"] = std::string(sv(it->value()).substr(0, 255));
  }
  row.summary = dump_summary(summary);
  return row;
}

// Adds the answer to the draft: its status, the answer's target, the code of a refusal or
// the small answer of a success.
void audit_answer(ActionRecord& row, nlohmann::json& summary, const AuditSpec& spec,
                  const RouteMatch& m, const Response& res) {
  row.status = res.result_int();
  // The answer is read in full for the target even when it is too big for the summary.
  const std::string_view answer_text = res.body();
  std::optional<nlohmann::json> answer;
  if (!spec.target_field.empty() || answer_text.size() <= kSummaryBodyMax) {
    auto parsed = nlohmann::json::parse(answer_text, nullptr, false);
    if (!parsed.is_discarded()) answer = std::move(parsed);
  }
  row.target = audit_target(spec, m, answer);
  if (res.find("Idempotent-Replayed") != res.end()) summary["replayed"] = true;
  if (answer && answer->is_object()) {
    if (row.status >= 400) {
      if (auto code = answer->find("code"); code != answer->end()) summary["code"] = *code;
    } else if (answer_text.size() <= kSummaryBodyMax) {
      summary["answer"] = *answer;
    }
  }
  row.summary = dump_summary(summary);
}

}  // namespace

Response Api::audited_dispatch(const AuditSpec& spec, const RouteMatch& m, const Principal& who,
                               const Request& req, Deadline deadline, FeedWait* wait) {
  nlohmann::json summary;
  ActionRecord row = audit_draft(spec, m, who, req, summary);
  Response res;
  {
    // The handler's first committed write transaction carries the row (with no answer yet).
    store::AuditInTransaction in_tx(row);
    try {
      res = dispatch(m, who, req, deadline, wait);
    } catch (const InvariantViolation& e) {
      res = problem_response(Status(Code::internal, e.what()), e.reference());
    } catch (const std::exception& e) {
      res =
          problem_response(Status(Code::internal, std::string("unhandled exception: ") + e.what()));
    } catch (...) {
      res = problem_response(Status(Code::internal, "unhandled exception"));
    }
    row.action_id = in_tx.action_id();
  }
  audit_answer(row, summary, spec, m, res);
  // The answer may wait for its row at most kAuditWait, whatever is left of the request's
  // deadline (on SQLite a run's step holds the one write lock, and a writer waiting behind it
  // would otherwise hold a `wait=false` answer until the run ends). Past it the answer goes
  // to the log instead; a row written with its effect is there already.
  const Deadline until = store::Clock::now() + kAuditWait;
  Status written;
  if (row.action_id != 0) {
    written = finish_action(services_.db, row, until);
  } else {
    row.outcome = row.status >= 500 ? "failed" : row.status >= 400 ? "refused" : "unchanged";
    written = record_action(services_.db, row, until).status();
  }
  if (!written.ok()) {
    metrics_.audit_failures().fetch_add(1, std::memory_order_relaxed);
    spdlog::error(
        "audit write failed: {} (action_id={} principal={} role={} action={} target={} status={} "
        "outcome={} summary={})",
        written.to_string(), row.action_id, row.principal, row.role, row.action,
        row.target.value_or("-"), row.status, row.outcome, row.summary);
  }
  return res;
}

namespace {

constexpr std::string_view kNoHandler = "route without handler";

// Each group's routes; Api::dispatch's switch names every route and sends each group here.
Response dispatch_scheduling(Services& s, const RouteMatch& m, const Request& req,
                             Deadline deadline) {
  const bool get = req.method() == bhttp::verb::get;
  switch (m.route->id) {
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
    case RouteId::schedule_run_stop:
      return post_run_stop(s, m, req, deadline);
    case RouteId::schedule_exhausted:
      return list_exhausted(s, req, deadline);
    case RouteId::schedule_requeue:
      return post_requeue(s, req, deadline);
    case RouteId::production_orders:
      return list_production_orders(s, req, deadline);
    case RouteId::reap:
      return post_reap(s, req, deadline);
    default:
      return problem_response(Status(Code::internal, std::string(kNoHandler)));
  }
}

Response dispatch_ops(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  switch (m.route->id) {
    case RouteId::actions:
      return list_actions(s, req, deadline);
    case RouteId::activity:
      return get_activity(s, req, deadline);
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
    default:
      return problem_response(Status(Code::internal, std::string(kNoHandler)));
  }
}

Response dispatch_outbox(Services& s, const RouteMatch& m, const Request& req, Deadline deadline,
                         FeedWait* wait) {
  const bool get = req.method() == bhttp::verb::get;
  const bool del = req.method() == bhttp::verb::delete_;
  switch (m.route->id) {
    case RouteId::events:
      return get_events(s, req, deadline, wait);
    case RouteId::consumers:
      return list_consumers(s, req, deadline);
    case RouteId::consumer:
      if (get) return get_consumer(s, m, req, deadline);
      return del ? delete_consumer(s, m, req, deadline) : put_consumer(s, m, req, deadline);
    case RouteId::endpoints:
      return list_endpoints(s, req, deadline);
    case RouteId::endpoint:
      if (get) return get_endpoint(s, m, req, deadline);
      return del ? delete_endpoint(s, m, req, deadline) : put_endpoint(s, m, req, deadline);
    case RouteId::endpoint_deliveries:
      return list_deliveries(s, m, req, deadline);
    case RouteId::endpoint_resolve:
      return post_resolve(s, m, req, deadline);
    case RouteId::endpoint_redeliver:
      return post_redeliver(s, m, req, deadline);
    default:
      return problem_response(Status(Code::internal, std::string(kNoHandler)));
  }
}

}  // namespace

Response Api::dispatch(const RouteMatch& m, const Principal& who, const Request& req,
                       Deadline deadline, FeedWait* wait) {
  const bool get = req.method() == bhttp::verb::get;
  Services& s = services_;
  switch (m.route->id) {
    case RouteId::scope:
      return get ? get_scope(s, m, req, deadline) : put_scope(s, m, req, deadline);
    case RouteId::scope_document:
      return get_document(s, m, req, deadline);
    case RouteId::scope_documents:
      return get ? list_documents(s, m, req, deadline) : post_document(s, who, m, req, deadline);
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
    case RouteId::warehouses:
      return list_warehouses(s, req, deadline);
    case RouteId::scopes:
      return list_scopes(s, req, deadline);
    case RouteId::order:
      return get_order(s, who, m, req, deadline);
    case RouteId::order_cancel:
      return cancel_order(s, who, m, req, deadline);
    case RouteId::source_orders:
    case RouteId::schedule_runs:
    case RouteId::schedule_run:
    case RouteId::schedule_items:
    case RouteId::item_timeline:
    case RouteId::schedule_claims:
    case RouteId::schedule_run_stop:
    case RouteId::schedule_exhausted:
    case RouteId::schedule_requeue:
    case RouteId::production_orders:
    case RouteId::reap:
      return dispatch_scheduling(s, m, req, deadline);
    case RouteId::actions:
    case RouteId::activity:
    case RouteId::invariants:
    case RouteId::healthz:
    case RouteId::readyz:
    case RouteId::metrics:
    case RouteId::index:
    case RouteId::dashboard:
    case RouteId::openapi:
      return dispatch_ops(s, m, req, deadline);
    case RouteId::events:
    case RouteId::consumers:
    case RouteId::consumer:
    case RouteId::endpoints:
    case RouteId::endpoint:
    case RouteId::endpoint_deliveries:
    case RouteId::endpoint_resolve:
    case RouteId::endpoint_redeliver:
      return dispatch_outbox(s, m, req, deadline, wait);
  }
  return problem_response(Status(Code::internal, std::string(kNoHandler)));
}

}  // namespace onceorder::http
