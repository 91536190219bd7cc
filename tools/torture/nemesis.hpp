// The torture harness's nemesis: a seeded schedule of faults while the workload runs —
// kill -9 and restart of a `serve`, SIGSTOP of a `serve` past its lease (while the other one
// reaps and schedules), a crash restart of PostgreSQL, a fail-over to its synchronous
// standby; the endpoints' receivers answering 500, stalling past the delivery timeout or
// dropping the connection after reading a request, for a few seconds; and kill -9 and restart
// of the naive poller. Each fault is written to the history as an event.
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
#include "poller.hpp"
#include "receiver.hpp"

namespace onceorder::torture {

struct NemesisOptions {
  std::uint64_t seed = 1;
  // of: kill, pause, pg_restart, failover, receiver_fail, receiver_stall, receiver_drop,
  // poller_kill
  std::vector<std::string> faults;
  std::chrono::milliseconds min_gap{2000}, max_gap{5000};
  std::chrono::milliseconds lease{2000};  // serve's --lease: a pause lasts longer than it
  // The database is a Patroni cluster (tools/torture/patroni-cluster): its faults
  // (patroni.hpp, cluster_faults) are the script's, each followed by a wait for a healthy
  // cluster so that the next one meets a leader with a synchronous standby.
  bool patroni = false;
};

// What the outbox's faults act on: the endpoints' receivers, the naive poller (either may be
// absent).
struct OutboxTargets {
  std::vector<Receiver*> receivers;
  PollerProcess* poller = nullptr;
};

class Nemesis {
 public:
  Nemesis(NemesisOptions options, std::vector<std::unique_ptr<Serve>>& serves, const Database& db,
          HistoryWriter& history, OutboxTargets outbox = {});
  void run();  // until stop()
  void stop() { stop_ = true; }
  // Brings every process back: resumes paused serves, restarts dead ones (the poller too),
  // heals the receivers, waits for the standby. False when something did not come back.
  bool heal();
  const std::map<std::string, int>& counts() const { return counts_; }

 private:
  bool sleep(std::chrono::milliseconds d);
  void inject(const std::string& fault);
  void kill_one();
  void pause_one();
  void receiver_fault(const std::string& name, ReceiverFault fault);
  void kill_poller();
  std::optional<size_t> claim_holder();
  // A fault of the PostgreSQL cluster (restart, failover); nothing on SQLite.
  void database_fault(const char* name, bool (Database::*act)() const);
  void cluster_fault(const std::string& name);

  NemesisOptions options_;
  std::vector<std::unique_ptr<Serve>>& serves_;
  const Database& db_;
  HistoryWriter& history_;
  OutboxTargets outbox_;
  std::atomic<bool> stop_{false};
  std::map<std::string, int> counts_;
  std::chrono::steady_clock::time_point receivers_until_;  // the receiver fault's end
  std::uint64_t state_;
};

}  // namespace onceorder::torture
