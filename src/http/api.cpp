#include "http/api.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/problem.hpp"
#include "onceorder/core/invariant.hpp"
#include "onceorder/service/audit.hpp"

namespace onceorder::http {

Api::Api(store::Database& db, Scheduler& scheduler, Intake& intake,
         std::optional<TokenTable> tokens, std::chrono::milliseconds invariants_interval,
         const DeliveryMetrics* deliveries)
    : numbering_(db),
      stock_(db, intake.options().max_attempts),
      runs_(scheduler),
      tokens_(std::move(tokens)),
      monitor_(db, invariants_interval, deliveries, OpsMonitor::kOutboxInterval,
               scheduler.options().max_attempts),
      services_{db, numbering_, scheduler, intake, stock_, runs_, metrics_, monitor_} {}

namespace {

// The table's row serving `req`'s path and method; null when none does (404 or 405).
const Route* route_row(const Request& req) {
  const auto m = match_route(split_target(sv(req.target())).first);
  return m ? m->find(req.method()) : nullptr;
}

}  // namespace

std::string_view Api::route_label(std::string_view target) {
  const auto m = match_route(split_target(target).first);
  return m ? m->pattern : kUnmatchedRoute;
}

bool Api::answers_inline(const Request& req) const {
  const Route* row = route_row(req);
  if (!row || row->access == Access::open) return true;
  std::optional<std::string_view> authorization;
  if (auto it = req.find(bhttp::field::authorization); it != req.end()) {
    authorization = sv(it->value());
  }
  std::string_view known;
  const bool refused = !authorize(tokens_ ? &*tokens_ : nullptr, authorization, row->access,
                                  req.method() == bhttp::verb::get, &known)
                            .ok();
  // A principal over its rate limit is refused here too: its requests take no worker.
  return refused || (limiter_ && !known.empty() && limiter_->exhausted(known, store::Clock::now()));
}

bool Api::needs_token(const Request& req) {
  const Route* row = route_row(req);
  return row && row->access != Access::open;
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
  const Route* row = route_row(req);
  return row && row->kind == RouteKind::readiness;
}

bool Api::is_metrics_route(std::string_view target) {
  const auto m = match_route(split_target(target).first);
  return m && m->rows.front().kind == RouteKind::metrics;
}

std::optional<Response> Api::gate(const Request& req, RequestLabels& labels,
                                  std::optional<RouteMatch>& m, const Route*& row,
                                  Principal& who) const {
  labels = RequestLabels{};
  m = match_route(split_target(sv(req.target())).first);
  if (!m) return problem_response(Status(Code::not_found, "no such resource"));
  labels.route = m->pattern;
  row = m->find(req.method());
  if (!row) {
    Response res = problem_response(Status(
        Code::method_not_allowed, std::string(req.method_string()) + " is not allowed here"));
    res.set(bhttp::field::allow, allow_header(m->rows));
    return res;
  }
  std::optional<std::string_view> authorization;
  if (auto it = req.find(bhttp::field::authorization); it != req.end()) {
    authorization = sv(it->value());
  }
  std::string_view known;  // the caller's name once its token is recognised
  auto allowed = authorize(tokens_ ? &*tokens_ : nullptr, authorization, row->access,
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
  const Route* row = nullptr;
  Principal who;
  return gate(header, labels, m, row, who);
}

Response Api::handle(const Request& req, Deadline deadline, RequestLabels& labels, FeedWait* wait) {
  Response res;
  try {
    std::optional<RouteMatch> m;
    const Route* row = nullptr;
    Principal who;
    if (auto refusal = gate(req, labels, m, row, who)) {
      res = std::move(*refusal);
    } else if (auto refused = row->access == Access::open ? std::nullopt : over_rate_limit(who)) {
      res = std::move(*refused);
    } else {
      const RouteCall call{services_, who, *m, req, deadline, wait};
      const AuditSpec* spec = route_audit(*row);
      res = spec ? audited_dispatch(*spec, row->handler, call) : row->handler(call);
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
    summary["idempotency_key"] = std::string(sv(it->value()).substr(0, kMaxIdempotencyKey));
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

Response Api::audited_dispatch(const AuditSpec& spec, Handler handler, const RouteCall& call) {
  const RouteMatch& m = call.m;
  nlohmann::json summary;
  ActionRecord row = audit_draft(spec, m, call.who, call.req, summary);
  Response res;
  {
    // The handler's first committed write transaction carries the row (with no answer yet).
    store::AuditInTransaction in_tx(row);
    try {
      res = handler(call);
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

}  // namespace onceorder::http
