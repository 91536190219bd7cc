// Readiness, invariant results and the outbox's gauges for the unauthenticated operations
// endpoints, computed in the background on a private pool of four database connections (one
// per thread, one for invariants_now()), so that no probe or scrape ever holds a request worker or
// one of the request pool's connections: invariants and the outbox's gauges each on a schedule of
// their own (one run at a time), readiness on demand but at most about once a second. /readyz and
// /metrics only read what is cached here, and so does `GET /v1/invariants` while the scheduled runs
// are on (invariants_now() runs them itself, one run at a time, when they are off). The monitor
// also carries the process's delivery counters (DeliveryMetrics, kept by the delivery workers) to
// /metrics. Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "onceorder/core/event_types.hpp"
#include "onceorder/core/status.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"
#include "store/capacity_store.hpp"

namespace onceorder {
struct DeliveryMetrics;
}  // namespace onceorder

namespace onceorder::http {

// The outbox as the monitor last read it (docs/EVENTS.md): every endpoint with its undelivered
// deliveries, every named consumer with its lag, and how long the feed holds back its oldest
// held event. Names are bounded in number (EventLimits) and in their characters, so each
// makes a safe metric label.
// What the capacity alerts watch (OPERATIONS.md, "Alerts"), read with the outbox's gauges: orders
// that reached the attempt limit (counted up to kExhaustedCap), the scopes nearest their max
// (kFullestScopes of them), and the synchronous standbys where the role can see them.
struct CapacityGauges {
  static constexpr int kExhaustedCap = onceorder::kExhaustedCap;
  static constexpr int kFullestScopes = onceorder::kFullestScopes;
  std::int64_t exhausted_orders = 0;
  std::vector<store::ScopeFill> fullest_scopes;
  std::optional<store::SyncStandbys> sync_standbys;
};

struct OutboxGauges {
  std::vector<std::pair<std::string, DeliveryCounts>> endpoints;  // by name
  std::vector<Consumer> consumers;                                // by name
  double held_seconds = 0;
  CapacityGauges capacity;
  std::optional<store::Clock::time_point> at;  // when read; none: not yet
};

class OpsMonitor {
 public:
  struct Readiness {
    Status status;          // why not ready, in full: for the log, never for the wire
    std::string reference;  // names the log line of a failure
    int schema_version = 0;
    std::optional<store::Clock::time_point> at;  // when checked; none: not yet
  };
  struct Invariants {
    std::optional<std::vector<InvariantResult>> results;  // of the last run that succeeded
    std::optional<store::Clock::time_point> at;           // when those results were computed
    // The same moment on the wall clock, taken once: every answer of one run shows one
    // `checked_at` (worked out per answer from `at`, two clocks read apart gave several).
    std::chrono::system_clock::time_point at_wall{};
    bool last_run_ok = false;
    std::optional<double> last_run_seconds;  // how long the last run took, ok or not
  };

  // A readiness answer older than this is checked again before it is given.
  static constexpr auto kReadinessMaxAge = std::chrono::seconds(1);

  // A run of the invariants reads whole tables, so its time grows with the database; after a
  // run the next waits `interval`, or (kRestPerRun - 1) times as long as the run took if that
  // is longer: the background checks keep at most 1 / kRestPerRun of one database session
  // busy, however big the database.
  static constexpr int kRestPerRun = 10;
  static std::chrono::milliseconds next_run_after(std::chrono::milliseconds interval,
                                                  std::chrono::milliseconds took);

  // The outbox's gauges are read this often (a few small queries; consumers' lag counts at
  // most Consumer::kLagCountCap events each), with the same rest after a slow read.
  static constexpr std::chrono::milliseconds kOutboxInterval{5000};

  // Starts the background threads. `interval`: the least time between invariant runs
  // (next_run_after), the first one at once; zero turns the runs off. `outbox_interval`: the
  // same for the outbox's gauges. `db` and `deliveries` (null: this process shows no delivery
  // counters) outlive the monitor. `max_attempts`: the scheduler's, which makes an order
  // exhausted.
  OpsMonitor(store::Database& db, std::chrono::milliseconds interval,
             const DeliveryMetrics* deliveries = nullptr,
             std::chrono::milliseconds outbox_interval = kOutboxInterval,
             int max_attempts = SchedulerOptions{}.max_attempts);
  ~OpsMonitor();
  OpsMonitor(const OpsMonitor&) = delete;
  OpsMonitor& operator=(const OpsMonitor&) = delete;

  // Asks the threads to end after the check they are running; join() waits for them.
  void request_stop();
  void join();

  // True when the cached readiness is fresh; otherwise asks for a new check (one at a
  // time, however many callers ask) and returns false. Never blocks on the database.
  bool readiness_fresh();
  Readiness readiness() const;
  Invariants invariants() const;
  // The results `GET /v1/invariants` answers: the scheduled run's while runs are scheduled
  // (however old: the run's own rest sets their age); before the first one succeeded, or with
  // runs off, a run made here on the monitor's connections, at most one at a time, whose
  // results others share (for kLiveResultsMaxAge when runs are off). A caller that finds a
  // run in progress is told Code::busy at once: waiting for it would hold a request worker,
  // and a viewer's parallel calls must not take the workers other requests need.
  Result<Invariants> invariants_now(store::Clock::time_point deadline);
  static constexpr auto kLiveResultsMaxAge = std::chrono::seconds(10);
  OutboxGauges outbox() const;
  const DeliveryMetrics* deliveries() const { return deliveries_; }

 private:
  void readiness_loop();
  void invariants_loop();
  void outbox_loop();

  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds outbox_interval_;
  const int max_attempts_;
  const DeliveryMetrics* const deliveries_;
  std::unique_ptr<store::Database> own_;  // the private pool

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;          // guarded by mu_
  bool readiness_wanted_ = false;  // guarded by mu_
  Readiness readiness_;            // guarded by mu_
  Invariants invariants_;          // guarded by mu_
  OutboxGauges outbox_;            // guarded by mu_

  std::mutex live_mu_;  // held by the one run invariants_now() makes at a time
  std::mutex join_mu_;
  std::thread readiness_thread_;
  std::thread invariants_thread_;
  std::thread outbox_thread_;
};

}  // namespace onceorder::http
