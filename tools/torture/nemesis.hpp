// The torture harness's nemesis: a seeded schedule of faults while the workload runs —
// kill -9 and restart of a `serve`, SIGSTOP of a `serve` past its lease (while the other one
// reaps and schedules), a crash restart of PostgreSQL, and a fail-over to its synchronous
// standby. Each fault is written to the history as an event.
//
// Thread-safety: run on one thread of its own; `stop` may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "history.hpp"

namespace onceorder::torture {

struct NemesisOptions {
  std::uint64_t seed = 1;
  std::vector<std::string> faults;  // of: kill, pause, pg_restart, failover
  std::chrono::milliseconds min_gap{2000}, max_gap{5000};
  std::chrono::milliseconds lease{2000};  // serve's --lease: a pause lasts longer than it
};

class Nemesis {
 public:
  Nemesis(NemesisOptions options, std::vector<std::unique_ptr<Serve>>& serves, const Database& db,
          HistoryWriter& history);
  void run();  // until stop()
  void stop() { stop_ = true; }
  // Brings every process back: resumes paused serves, restarts dead ones, waits for the
  // standby. False when something did not come back.
  bool heal();
  const std::map<std::string, int>& counts() const { return counts_; }

 private:
  bool sleep(std::chrono::milliseconds d);
  void kill_one();
  void pause_one();
  std::optional<size_t> claim_holder();
  // A fault of the PostgreSQL cluster (restart, failover); nothing on SQLite.
  void database_fault(const char* name, bool (Database::*act)() const);

  NemesisOptions options_;
  std::vector<std::unique_ptr<Serve>>& serves_;
  const Database& db_;
  HistoryWriter& history_;
  std::atomic<bool> stop_{false};
  std::map<std::string, int> counts_;
  std::uint64_t state_;
};

}  // namespace onceorder::torture
