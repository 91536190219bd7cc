#include "http/ops_monitor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "http/problem.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::http {
namespace {

// One run of every invariant query may take this long before it counts as failed.
constexpr auto kInvariantsDeadline = std::chrono::seconds(60);
// Each of the outbox's reads (endpoints, consumers, the feed's horizon) may take this long.
constexpr auto kOutboxReadDeadline = std::chrono::seconds(10);

OpsMonitor::Readiness check_readiness(store::Database& db) {
  OpsMonitor::Readiness r;
  auto current = store::current_schema_version(db);
  if (!current.ok()) {
    r.status =
        Status(Code::unavailable, "the database is not reachable: " + current.status().message());
  } else if (const int latest = store::latest_schema_version(db.engine()); *current != latest) {
    r.status = Status(Code::unavailable,
                      fmt::format("the database schema is at version {}, this build needs {}; "
                                  "run `onceorder migrate`",
                                  *current, latest));
  } else {
    r.schema_version = *current;
  }
  if (!r.status.ok()) {
    r.reference = problem_reference();
    spdlog::warn("not ready (reference {}): {}", r.reference, r.status.to_string());
  }
  r.at = store::Clock::now();
  return r;
}

Result<CapacityGauges> read_capacity_gauges(store::Database& db, int max_attempts) {
  CapacityGauges g;
  SchedulerOptions options;
  options.max_attempts = max_attempts;
  ExhaustedFilter filter;
  filter.limit = CapacityGauges::kExhaustedCap;
  OO_ASSIGN_OR_RETURN(
      auto exhausted,
      Scheduler(db, options).list_exhausted(filter, store::Clock::now() + kOutboxReadDeadline));
  g.exhausted_orders = static_cast<std::int64_t>(exhausted.size());
  OO_ASSIGN_OR_RETURN(
      g.fullest_scopes,
      store::transact<std::vector<store::ScopeFill>>(
          db, store::read_tx(store::Clock::now() + kOutboxReadDeadline), [](store::Connection& c) {
            return store::fullest_scopes(c, CapacityGauges::kFullestScopes);
          }));
  OO_ASSIGN_OR_RETURN(g.sync_standbys,
                      store::transact<std::optional<store::SyncStandbys>>(
                          db, store::read_tx(store::Clock::now() + kOutboxReadDeadline),
                          [](store::Connection& c) { return store::sync_standbys(c); }));
  return g;
}

// Every endpoint (with its undelivered deliveries: none is zeros), every named consumer with
// its lag, the feed's held-back age and the capacity gauges, each read in a transaction of its
// own.
Result<OutboxGauges> read_outbox_gauges(store::Database& db, int max_attempts) {
  Outbox outbox(db);
  OutboxGauges g;
  OO_ASSIGN_OR_RETURN(auto endpoints, outbox.endpoints(store::Clock::now() + kOutboxReadDeadline));
  for (Endpoint& e : endpoints) g.endpoints.emplace_back(std::move(e.spec.name), e.counts);
  OO_ASSIGN_OR_RETURN(g.consumers, outbox.consumers(store::Clock::now() + kOutboxReadDeadline));
  OO_ASSIGN_OR_RETURN(g.held_seconds,
                      outbox.held_seconds(store::Clock::now() + kOutboxReadDeadline));
  OO_ASSIGN_OR_RETURN(g.capacity, read_capacity_gauges(db, max_attempts));
  g.at = store::Clock::now();
  return g;
}

}  // namespace

OpsMonitor::OpsMonitor(store::Database& db, std::chrono::milliseconds interval,
                       const DeliveryMetrics* deliveries, std::chrono::milliseconds outbox_interval,
                       int max_attempts)
    : interval_(interval),
      outbox_interval_(outbox_interval),
      max_attempts_(max_attempts),
      deliveries_(deliveries) {
  // Its own connections, opened like the request pool's: a slow invariant query or an
  // unreachable database never holds a connection a request is waiting for.
  store::DatabaseOptions options = db.options();
  options.pool_size = 4;  // one per thread, and one for invariants_now()'s run
  own_ = std::make_unique<store::Database>(db.engine(), options,
                                           [&db] { return db.connect_dedicated(); });
  readiness_thread_ = std::thread([this] { readiness_loop(); });
  if (interval_.count() > 0) invariants_thread_ = std::thread([this] { invariants_loop(); });
  if (outbox_interval_.count() > 0) outbox_thread_ = std::thread([this] { outbox_loop(); });
}

OpsMonitor::~OpsMonitor() {
  request_stop();
  join();
}

void OpsMonitor::request_stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  wake_.notify_all();
}

void OpsMonitor::join() {
  std::lock_guard lock(join_mu_);
  if (readiness_thread_.joinable()) readiness_thread_.join();
  if (invariants_thread_.joinable()) invariants_thread_.join();
  if (outbox_thread_.joinable()) outbox_thread_.join();
}

bool OpsMonitor::readiness_fresh() {
  std::lock_guard lock(mu_);
  if (readiness_.at && store::Clock::now() - *readiness_.at < kReadinessMaxAge) return true;
  if (!readiness_wanted_) {
    readiness_wanted_ = true;
    wake_.notify_all();
  }
  return false;
}

OpsMonitor::Readiness OpsMonitor::readiness() const {
  std::lock_guard lock(mu_);
  return readiness_;
}

OpsMonitor::Invariants OpsMonitor::invariants() const {
  std::lock_guard lock(mu_);
  return invariants_;
}

Result<OpsMonitor::Invariants> OpsMonitor::invariants_now(store::Clock::time_point deadline) {
  auto fresh = [&](const Invariants& inv) {
    if (!inv.results || !inv.at) return false;
    return interval_.count() > 0 || store::Clock::now() - *inv.at < kLiveResultsMaxAge;
  };
  if (Invariants cached = invariants(); fresh(cached)) return cached;
  std::unique_lock live(live_mu_, std::try_to_lock);
  if (!live.owns_lock()) {
    return Status(Code::busy, "an invariant run is in progress; retry for its results");
  }
  // Another caller's run may have ended between the two looks.
  if (Invariants cached = invariants(); fresh(cached)) return cached;
  const auto started = store::Clock::now();
  OO_ASSIGN_OR_RETURN(auto results, check_invariants(*own_, deadline));
  const auto at = store::Clock::now();
  std::lock_guard lock(mu_);
  invariants_.results = std::move(results);
  invariants_.at = at;
  invariants_.at_wall = std::chrono::system_clock::now();
  invariants_.last_run_ok = true;
  invariants_.last_run_seconds = std::chrono::duration<double>(at - started).count();
  return invariants_;
}

OutboxGauges OpsMonitor::outbox() const {
  std::lock_guard lock(mu_);
  return outbox_;
}

void OpsMonitor::readiness_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || readiness_wanted_; });
    if (stopping_) return;
    lock.unlock();
    Readiness r = check_readiness(*own_);
    lock.lock();
    readiness_ = std::move(r);
    readiness_wanted_ = false;
  }
}

std::chrono::milliseconds OpsMonitor::next_run_after(std::chrono::milliseconds interval,
                                                     std::chrono::milliseconds took) {
  return std::max(interval, took * (kRestPerRun - 1));
}

void OpsMonitor::invariants_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const auto started = store::Clock::now();
    auto results = check_invariants(*own_, started + kInvariantsDeadline);
    const auto at = store::Clock::now();
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(at - started);
    if (!results.ok()) {
      spdlog::warn("scheduled invariant check failed: {}", results.status().to_string());
    }
    lock.lock();
    invariants_.last_run_ok = results.ok();
    invariants_.last_run_seconds = std::chrono::duration<double>(took).count();
    if (results.ok()) {
      invariants_.results = std::move(results).value();
      invariants_.at = at;
      invariants_.at_wall = std::chrono::system_clock::now();
    }
    wake_.wait_for(lock, next_run_after(interval_, took), [&] { return stopping_; });
  }
}

// A failed read keeps the last gauges (their absence would read as "no endpoints"); it is
// logged when reads start failing and when they succeed again, not at every interval.
void OpsMonitor::outbox_loop() {
  bool failing = false;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const auto started = store::Clock::now();
    auto read = read_outbox_gauges(*own_, max_attempts_);
    const auto took =
        std::chrono::duration_cast<std::chrono::milliseconds>(store::Clock::now() - started);
    if (!read.ok() && !failing) {
      spdlog::warn("outbox gauges not refreshed: {}", read.status().to_string());
    } else if (read.ok() && failing) {
      spdlog::info("outbox gauges refreshed again");
    }
    failing = !read.ok();
    lock.lock();
    if (read.ok()) outbox_ = std::move(read).value();
    wake_.wait_for(lock, next_run_after(outbox_interval_, took), [&] { return stopping_; });
  }
}

}  // namespace onceorder::http
