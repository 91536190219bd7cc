#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "core/version.hpp"
#include "http/problem.hpp"
#include "http/routes.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder::http {

using json = nlohmann::json;

namespace {

// A wall-clock time as the API writes them: "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string wall_clock_text(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::time_point_cast<std::chrono::milliseconds>(t);
  const std::time_t secs = std::chrono::system_clock::to_time_t(ms);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ms.time_since_epoch().count() % 1000);
}

}  // namespace

// From the monitor (OpsMonitor::invariants_now): a request never runs the queries on the
// request pool, and parallel calls cost at most one run.
Response get_invariants(Services& s, Deadline deadline) {
  auto inv = s.monitor.invariants_now(deadline);
  if (!inv.ok()) return problem_response(inv.status());
  const auto age = store::Clock::now() - *inv->at;
  json checks = json::array();
  bool ok = true;
  for (const InvariantResult& r : *inv->results) {
    ok = ok && r.violations == 0;
    checks.push_back(
        {{"id", r.id}, {"name", r.name}, {"violations", r.violations}, {"sample", r.sample}});
  }
  return json_response(bhttp::status::ok,
                       {{"ok", ok},
                        {"checks", std::move(checks)},
                        {"checked_at", wall_clock_text(inv->at_wall)},
                        {"age_seconds", std::chrono::duration<double>(age).count()}});
}

Response get_healthz() { return json_response(bhttp::status::ok, {{"status", "ok"}}); }

Response get_readyz(const Services& s) {
  const OpsMonitor::Readiness r = s.monitor.readiness();
  if (!r.at) {
    return problem_response(Status(Code::unavailable, "the readiness check has not finished yet"));
  }
  // Logged once when checked: a probe repeating the answer adds no log line.
  if (!r.status.ok()) return problem_response(r.status, r.reference);
  return json_response(bhttp::status::ok, {{"status", "ready"},
                                           {"schema_version", r.schema_version},
                                           {"version", release_version()},
                                           {"commit", build_commit()}});
}

namespace {

// The pool and its transactions (StoreMetrics).
void prom_database(std::string& out, const Services& s) {
  auto put = std::back_inserter(out);
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
  prom_header(out, "onceorder_db_openings_total", "counter",
              "Transactions whose first statement was sent behind the last one's COMMIT, by "
              "what became of it: taken by its transaction, or rolled back unused.");
  fmt::format_to(put, "onceorder_db_openings_total{{outcome=\"taken\"}} {}\n",
                 db.openings_taken.load());
  fmt::format_to(put, "onceorder_db_openings_total{{outcome=\"discarded\"}} {}\n",
                 db.openings_discarded.load());
  prom_header(out, "onceorder_order_id_collisions_total", "counter",
              "Placements whose order id existed already (seed 002's backstop fired); an alarm.");
  fmt::format_to(put, "onceorder_order_id_collisions_total {}\n", s.intake.id_collisions());
  prom_value(out, "onceorder_tx_total", "counter",
             "Transactions run (a re-run from the start is the same one): the base of the "
             "retry rate onceorder_tx_retries_total / onceorder_tx_total.",
             db.transactions.load());
}

// Business outcomes, counted where each is known: placements in Intake (however they were
// combined), items and runs in the Scheduler (batch and manual runs alike), the reaper's
// findings after its transaction committed.
void prom_outcomes_and_runs(std::string& out, const Services& s) {
  auto put = std::back_inserter(out);
  prom_outcomes(out, "onceorder_orders_total",
                "Order placements by outcome (replayed: a stored answer, placed or out of stock).",
                kOrderOutcomeNames, s.intake.outcomes());
  prom_value(out, "onceorder_order_replays_from_memory_total", "counter",
             "Replayed placements answered from this process's memory of recent decisions, "
             "without reading their receipt (serve --replay-memory).",
             s.intake.replays_from_memory());
  const SchedulerStats sched = s.scheduler.stats();
  prom_value(out, "onceorder_items_produced_total", "counter",
             "Schedule items completed: fenced success with their numbered production order.",
             sched.items_produced);
  prom_value(out, "onceorder_items_failed_total", "counter",
             "Schedule items whose production step failed (the order is a candidate again).",
             sched.items_failed);
  prom_value(out, "onceorder_items_lost_total", "counter",
             "Claims fenced out at completion (lease expired, item taken away, order cancelled).",
             sched.items_lost);
  prom_header(out, "onceorder_runs_total", "counter",
              "Runs this process processed, by how they ended (ended: reaped or failed "
              "elsewhere meanwhile).");
  fmt::format_to(put, "onceorder_runs_total{{outcome=\"done\"}} {}\n", sched.runs_done);
  fmt::format_to(put, "onceorder_runs_total{{outcome=\"error\"}} {}\n", sched.runs_failed);
  fmt::format_to(put, "onceorder_runs_total{{outcome=\"ended\"}} {}\n", sched.runs_ended);
  prom_durations(out, "onceorder_run_duration_seconds",
                 "Time to process a run (batch or manual), start to end.", sched.run_seconds);
  prom_durations(out, "onceorder_claim_batch_duration_seconds",
                 "Time to claim, complete and heartbeat one batch of a run's items.",
                 sched.batch_seconds);
  prom_value(out, "onceorder_reaper_dead_runs_total", "counter",
             "Runs the reaper set to error: their owner stopped heart-beating.", sched.dead_runs);
  prom_value(out, "onceorder_reaper_orphan_waits_total", "counter",
             "Waiting items of runs that are not alive, aborted by the reaper.",
             sched.orphan_waits);
  prom_value(out, "onceorder_reaper_expired_leases_total", "counter",
             "Processing items whose lease expired, failed by the reaper.", sched.expired_leases);
}

// How requests were combined into transactions, and why placements left their batch.
void prom_combining(std::string& out, const Services& s) {
  // One snapshot each: a batch's size and its duration are counted together.
  const CombinerStats numbering_runs = s.numbering.combining();
  const CombinerStats order_runs = s.intake.combining();
  prom_batch_sizes(out, "onceorder_numbering_batch_size",
                   "Requests per transaction issuing document numbers: 1 for a lone request, "
                   "more when requests for one scope queued and were combined.",
                   numbering_runs);
  prom_batch_sizes(out, "onceorder_order_batch_size",
                   "Placements per transaction: 1 for a lone request, more when placements of "
                   "one lane (onceorder/core/cart_lanes.hpp) queued and were combined.",
                   order_runs);
  prom_value(out, "onceorder_order_lane_collisions_total", "counter",
             "Placements whose cart shared a stock row with one in flight and so joined its "
             "warehouse's lane.",
             s.intake.lane_collisions());
  prom_value(out, "onceorder_order_lane_crowded_total", "counter",
             "Placements whose cart shared no stock row with one in flight but arrived while "
             "four or more carts of its warehouse were, and so joined its warehouse's lane.",
             s.intake.lane_crowdings());
  prom_value(out, "onceorder_order_held_back_total", "counter",
             fmt::format("Times a placement left a combined batch because another transaction "
                         "held a stock row its cart needs (or another request of its key did); it "
                         "queues in its lane again, {} times at most, then runs alone.",
                         Intake::kLaneRetries),
             s.intake.held_back());
  prom_value(out, "onceorder_order_lock_waits_total", "counter",
             "Placements that found a stock row or their key held by another transaction and "
             "waited for it, each counted once: over onceorder_orders_total, seed 002's "
             "lock-wait rate.",
             s.intake.lock_waits());
  prom_value(out, "onceorder_order_ran_alone_total", "counter",
             fmt::format("Placements still handed back after queuing in their lane {} more times, "
                         "that then ran alone, waiting for the held stock row.",
                         Intake::kLaneRetries),
             s.intake.ran_alone());
  prom_value(out, "onceorder_order_decided_ahead_total", "counter",
             "Combined order batches decided on the stock rows as this process's placements "
             "last left them, written in one round trip (PostgreSQL).",
             s.intake.decided_ahead());
  prom_value(out, "onceorder_order_decided_ahead_missed_total", "counter",
             "Batches decided ahead that found a stock row moved or held, or a key stored "
             "already, or refused a request: nothing was written, and they were decided again "
             "on the locked rows.",
             s.intake.decided_ahead_missed());
  prom_durations(out, "onceorder_numbering_batch_duration_seconds",
                 "Time of each transaction issuing document numbers (one request or a batch), "
                 "its retries included.",
                 numbering_runs.seconds);
  prom_durations(out, "onceorder_order_batch_duration_seconds",
                 "Time of each placement transaction (one placement or a batch), its retries "
                 "included.",
                 order_runs.seconds);
}

void prom_order_phases(std::string& out, const Services& s) {
  std::vector<LabelledDurations> phases;
  for (std::size_t p = 0; p < Intake::kPhaseNames.size(); ++p) {
    for (std::size_t l = 0; l < Intake::kCartSizeNames.size(); ++l) {
      phases.push_back({fmt::format("phase=\"{}\",lines=\"{}\"", Intake::kPhaseNames[p],
                                    Intake::kCartSizeNames[l]),
                        s.intake.phases()[p][l].snapshot()});
    }
  }
  prom_labelled_durations(
      out, "onceorder_order_phase_seconds",
      "Where each placement's time went, by cart size (seed 004): lock_wait (database calls "
      "that may wait for another transaction's locks), round_trips (the other database calls) "
      "and other (the rest of the request: validation, queueing to combine, the answer). A "
      "batch's database time counts for each of its placements.",
      phases);
}

// The scheduled run's results, never a query per scrape: a scrape must cost nothing that
// a request needs. No results yet leaves the series out (absent, not zero: zero would
// claim health); the age says how old the results shown are.
void prom_invariants(std::string& out, const Services& s) {
  auto put = std::back_inserter(out);
  const OpsMonitor::Invariants inv = s.monitor.invariants();
  prom_header(out, "onceorder_invariants_checked", "gauge",
              "1 when the last scheduled invariant run succeeded.");
  fmt::format_to(put, "onceorder_invariants_checked {}\n", inv.last_run_ok ? 1 : 0);
  if (inv.last_run_seconds) {
    prom_header(out, "onceorder_invariants_run_seconds", "gauge",
                "How long the last scheduled invariant run took; the next waits at least 9 "
                "times as long.");
    fmt::format_to(put, "onceorder_invariants_run_seconds {:.3f}\n", *inv.last_run_seconds);
  }
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
}

}  // namespace

Response get_metrics(const Services& s) {
  std::string out;
  s.metrics.render(out);
  prom_database(out, s);
  prom_outcomes_and_runs(out, s);
  prom_combining(out, s);
  prom_order_phases(out, s);
  prom_invariants(out, s);
  // The delivery workers' counters from memory, the outbox's gauges from the monitor's last
  // background read: a scrape reads nothing from the database here either.
  if (const DeliveryMetrics* deliveries = s.monitor.deliveries()) {
    prom_deliveries(out, *deliveries);
  }
  prom_outbox_gauges(out, s.monitor.outbox());
  // /readyz's answer as a series an alert can watch: a scrape asks for a fresh check (on the
  // monitor's connection, at most one a second) and shows the last one finished.
  s.monitor.readiness_fresh();
  if (const OpsMonitor::Readiness r = s.monitor.readiness(); r.at) {
    prom_value(out, "onceorder_ready", "gauge",
               "1 when the last readiness check (GET /readyz) found the database reachable and "
               "its schema current, else 0.",
               r.status.ok() ? 1 : 0);
  }
  return text_response(bhttp::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                       std::move(out));
}

}  // namespace onceorder::http
