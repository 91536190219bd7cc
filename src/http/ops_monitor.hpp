// Readiness and invariant results for the unauthenticated operations endpoints, computed in
// the background on a private pool of two database connections, so that no probe or scrape
// ever holds a request worker or one of the request pool's connections: invariants on a
// schedule (one run at a time), readiness on demand but at most about once a second.
// /readyz and /metrics only read what is cached here; `GET /v1/invariants` (authenticated)
// still runs the queries live.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "onceorder/invariants.hpp"
#include "onceorder/status.hpp"
#include "onceorder/store.hpp"

namespace onceorder::http {

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

  // Starts the background threads. `interval`: the least time between invariant runs
  // (next_run_after), the first one at once; zero turns the runs off. `db` outlives the
  // monitor.
  OpsMonitor(store::Database& db, std::chrono::milliseconds interval);
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

 private:
  void readiness_loop();
  void invariants_loop();

  const std::chrono::milliseconds interval_;
  std::unique_ptr<store::Database> own_;  // the private pool

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;          // guarded by mu_
  bool readiness_wanted_ = false;  // guarded by mu_
  Readiness readiness_;            // guarded by mu_
  Invariants invariants_;          // guarded by mu_

  std::mutex join_mu_;
  std::thread readiness_thread_;
  std::thread invariants_thread_;
};

}  // namespace onceorder::http
