// The application behind the socket: routes a parsed request, checks its token, runs the
// handler and always comes back with a response (errors as problem+json, exceptions as
// 500). Knows nothing about connections; the server calls it on a worker thread, or on its
// I/O thread for what answers_inline() says needs no database.
// Thread-safety: handle() may run on many threads at once.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "http/auth.hpp"
#include "http/message.hpp"
#include "http/metrics.hpp"
#include "http/ops_monitor.hpp"
#include "http/rate_limit.hpp"
#include "http/routes.hpp"
#include "http/run_executor.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::http {

// What the access log and the metrics say of a request besides its method and status: the
// route pattern (never the raw path) and who called (the principal's name, never the token;
// "-" when no token was recognised). Views of static or TokenTable storage: no allocation.
struct RequestLabels {
  std::string_view route = kUnmatchedRoute;
  std::string_view principal = "-";
};

class Api {
 public:
  // `tokens`: nullopt admits no token (only open routes answer). The services outlive the Api.
  // `invariants_interval`: time between the background invariant runs /metrics shows.
  // `deliveries`: the delivery workers' counters /metrics shows (null: none; outlives the Api).
  Api(store::Database& db, Scheduler& scheduler, Intake& intake, std::optional<TokenTable> tokens,
      std::chrono::milliseconds invariants_interval, const DeliveryMetrics* deliveries = nullptr);
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Answers `req` within `deadline`. Sets `labels` for logs and metrics. A request that
  // reaches the handler of a route marked for the audit trail (AuditSpec) leaves one
  // operator_actions row: written by the handler's first committed write transaction, with
  // its effect, and given the answer before the answer is returned; written with the answer
  // when nothing of the request committed. Never throws. `wait`, when given, learns whether a long
  // poll may wait (FeedWait); without it every request is answered as it is.
  Response handle(const Request& req, Deadline deadline, RequestLabels& labels,
                  FeedWait* wait = nullptr);

  // The refusal `handle` would give a request on its header alone (no such route, wrong
  // method, missing or bad token), so that the server reads no body it would refuse; nullopt
  // when the request may go on. Sets `labels`. Needs no database; never throws.
  std::optional<Response> refuse_header(const Request& header, RequestLabels& labels) const;

  // The route pattern of a target, for answers the server gives without handling the
  // request (body too large, queue full).
  static std::string_view route_label(std::string_view target);

  // True for requests answered without the database or a worker, which the server runs
  // on its I/O thread: the open routes (health, readiness and metrics from the monitor's
  // cache, the embedded files) and every request refused before its handler (no such route,
  // wrong method, missing or bad token). So nothing a client without a token sends can
  // take a worker or a connection that authenticated requests need.
  bool answers_inline(const Request& req) const;
  // True when the request's route and method exist and need a token (not an open route).
  static bool needs_token(const Request& req);
  // True for GET /readyz: the server first lets the monitor refresh a stale answer.
  static bool is_readiness_probe(const Request& req);
  // True for the route a metrics listener serves (and the main one then does not).
  static bool is_metrics_route(std::string_view target);

  // Edge settings, set once before the server answers its first request (not thread-safe).
  // A principal over `limit` gets 429 with Retry-After (RateLimiter); open routes are not
  // limited.
  void set_rate_limit(RateLimit limit) { limiter_.emplace(limit); }

  HttpMetrics& metrics() { return metrics_; }
  // Manual runs in progress: the server stops them before it stops itself.
  RunExecutor& runs() { return runs_; }
  OpsMonitor& monitor() { return monitor_; }

 private:
  // Route, method and token: the refusal of a request that may not reach a handler, or
  // nullopt with its route `m`, the table's `row` for its method, and caller `who`.
  std::optional<Response> gate(const Request& req, RequestLabels& labels,
                               std::optional<RouteMatch>& m, const Route*& row,
                               Principal& who) const;
  // `handler` for an audited request, with its audit row (see handle()); a failure to write
  // the row or its answer is logged with the row's content and counted, and the answer stands.
  Response audited_dispatch(const AuditSpec& spec, Handler handler, const RouteCall& call);

  // The 429 answer when `who` is over its rate limit; nullopt when admitted (or no limit).
  std::optional<Response> over_rate_limit(const Principal& who);

  Numbering numbering_;
  Stock stock_;
  RunExecutor runs_;
  std::optional<TokenTable> tokens_;
  HttpMetrics metrics_;
  OpsMonitor monitor_;
  Services services_;
  std::optional<RateLimiter> limiter_;
};

}  // namespace onceorder::http
