#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "http/problem.hpp"
#include "http/routes.hpp"
#include "onceorder/invariants.hpp"

namespace onceorder::http {

using json = nlohmann::json;

Response get_invariants(Services& s, Deadline deadline) {
  auto results = check_invariants(s.db, deadline);
  if (!results.ok()) return problem_response(results.status());
  json checks = json::array();
  bool ok = true;
  for (const InvariantResult& r : *results) {
    ok = ok && r.violations == 0;
    checks.push_back(
        {{"id", r.id}, {"name", r.name}, {"violations", r.violations}, {"sample", r.sample}});
  }
  return json_response(bhttp::status::ok, {{"ok", ok}, {"checks", std::move(checks)}});
}

Response get_healthz() { return json_response(bhttp::status::ok, {{"status", "ok"}}); }

Response get_readyz(Services& s, Deadline) {
  auto current = store::current_schema_version(s.db);
  if (!current.ok()) {
    return problem_response(
        Status(Code::unavailable, "the database is not reachable: " + current.status().message()));
  }
  const int latest = store::latest_schema_version(s.db.engine());
  if (*current != latest) {
    return problem_response(Status(
        Code::unavailable, fmt::format("the database schema is at version {}, this build needs {}; "
                                       "run `onceorder migrate`",
                                       *current, latest)));
  }
  return json_response(bhttp::status::ok, {{"status", "ready"}, {"schema_version", *current}});
}

Response get_metrics(Services& s, Deadline deadline) {
  std::string out;
  auto put = std::back_inserter(out);
  s.metrics.render(out);

  const store::StoreMetrics& db = s.db.metrics();
  prom_header(out, "onceorder_db_connections_in_use", "gauge",
              "Database connections lent out by the pool.");
  fmt::format_to(put, "onceorder_db_connections_in_use {}\n", db.connections_in_use.load());
  prom_header(out, "onceorder_db_pool_size", "gauge", "Most connections the pool opens.");
  fmt::format_to(put, "onceorder_db_pool_size {}\n", s.db.options().pool_size);
  prom_header(out, "onceorder_tx_retries_total", "counter",
              "Transactions re-run from the start, by cause.");
  const std::pair<std::string_view, std::uint64_t> retries[] = {
      {"deadlock", db.retries_deadlock.load()},
      {"lock_timeout", db.retries_lock_timeout.load()},
      {"serialization_failure", db.retries_serialization.load()},
      {"requested", db.retries_requested.load()},
  };
  for (const auto& [cause, n] : retries) {
    fmt::format_to(put, "onceorder_tx_retries_total{{cause={}}} {}\n", prom_label(cause), n);
  }
  prom_header(out, "onceorder_tx_busy_total", "counter",
              "Transactions given up as busy after their retries or deadline.");
  fmt::format_to(put, "onceorder_tx_busy_total {}\n", db.gave_up_busy.load());

  // A failed check leaves the series out (absent, not zero): zero would claim health.
  auto results = check_invariants(s.db, deadline);
  prom_header(out, "onceorder_invariants_checked", "gauge",
              "1 when the invariant queries ran for this scrape.");
  fmt::format_to(put, "onceorder_invariants_checked {}\n", results.ok() ? 1 : 0);
  if (results.ok()) {
    prom_header(out, "onceorder_invariant_violations", "gauge",
                "Rows violating each invariant (docs/INVARIANTS.md).");
    for (const InvariantResult& r : *results) {
      fmt::format_to(put, "onceorder_invariant_violations{{id={}}} {}\n", prom_label(r.id),
                     r.violations);
    }
  } else {
    spdlog::warn("metrics: invariant check failed: {}", results.status().to_string());
  }
  return text_response(bhttp::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                       std::move(out));
}

}  // namespace onceorder::http
