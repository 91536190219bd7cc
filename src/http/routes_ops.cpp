#include <fmt/format.h>

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

Response get_readyz(const Services& s) {
  const OpsMonitor::Readiness r = s.monitor.readiness();
  if (!r.at) {
    return problem_response(Status(Code::unavailable, "the readiness check has not finished yet"));
  }
  // Logged once when checked: a probe repeating the answer adds no log line.
  if (!r.status.ok()) return problem_response(r.status, r.reference);
  return json_response(bhttp::status::ok,
                       {{"status", "ready"}, {"schema_version", r.schema_version}});
}

Response get_metrics(const Services& s) {
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
  prom_header(out, "onceorder_db_reconnects_total", "counter",
              "Transactions replayed on a new connection: the old one was dead before commit.");
  fmt::format_to(put, "onceorder_db_reconnects_total {}\n", db.reconnects.load());
  prom_header(out, "onceorder_order_id_collisions_total", "counter",
              "Placements whose order id existed already (seed 002's backstop fired); an alarm.");
  fmt::format_to(put, "onceorder_order_id_collisions_total {}\n", s.intake.id_collisions());
  prom_batch_sizes(out, "onceorder_numbering_batch_size",
                   "Requests per transaction issuing document numbers: 1 for a lone request, "
                   "more when requests for one scope queued and were combined.",
                   s.numbering.combining());
  prom_batch_sizes(out, "onceorder_order_batch_size",
                   "Placements per transaction: 1 for a lone request, more when placements of "
                   "one lane (warehouse, lowest SKU) queued and were combined.",
                   s.intake.combining());

  // The scheduled run's results, never a query per scrape: a scrape must cost nothing that
  // a request needs. No results yet leaves the series out (absent, not zero: zero would
  // claim health); the age says how old the results shown are.
  const OpsMonitor::Invariants inv = s.monitor.invariants();
  prom_header(out, "onceorder_invariants_checked", "gauge",
              "1 when the last scheduled invariant run succeeded.");
  fmt::format_to(put, "onceorder_invariants_checked {}\n", inv.last_run_ok ? 1 : 0);
  if (inv.results && inv.at) {
    prom_header(out, "onceorder_invariants_age_seconds", "gauge",
                "Seconds since the invariant results below were computed.");
    fmt::format_to(put, "onceorder_invariants_age_seconds {:.3f}\n",
                   std::chrono::duration<double>(store::Clock::now() - *inv.at).count());
    prom_header(out, "onceorder_invariant_violations", "gauge",
                "Rows violating each invariant (docs/INVARIANTS.md), as of the last run.");
    for (const InvariantResult& r : *inv.results) {
      fmt::format_to(put, "onceorder_invariant_violations{{id={}}} {}\n", prom_label(r.id),
                     r.violations);
    }
  }
  return text_response(bhttp::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                       std::move(out));
}

}  // namespace onceorder::http
