// The naive poller: the outbox reader every integrator writes first, run under the workload to
// show the checker catches what OnceOrder's feed and deliveries exist to prevent. It reads the
// events table directly (PostgreSQL, as an integrator's script would):
//
//   SELECT … FROM events WHERE event_id > $last ORDER BY event_id LIMIT 100
//   POST each to the receiver (until it answers 2xx), then save `last` to a file
//
// Two bugs, both real: a kill between a POST and the save sends the batch again (the receiver
// acts twice: at_most_once_without_word), and an event whose transaction commits after a
// higher event_id was read is passed over for good (delivered_at_least_once).
//
// Thread-safety: poll_main runs in a process of its own (`onceorder-torture poll`);
// PollerProcess is driven by one thread at a time (the nemesis, or the harness).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster.hpp"

namespace onceorder::torture {

struct PollerOptions {
  std::string db_url;      // a libpq connection string
  std::uint16_t port = 0;  // the receiver's, on loopback
  std::string state_path;  // where `last` is saved
  int batch = 100;
  std::chrono::milliseconds interval{100};  // between polls that found nothing
};

// The poller's loop; returns only when it cannot start (exit status).
int poll_main(const PollerOptions& options);

// The saved `last` (0 when nothing was saved yet).
std::int64_t poller_saved(const std::string& state_path);

// Waits (at most `wait`) until the poller saved the highest event id and no new event came for
// a second; returns what was left ("" when nothing). Events it passed over stay passed over:
// that is its bug, which the checker reports.
std::string settle_poller(const Database& db, const std::string& state_path,
                          std::chrono::seconds wait);

// The poller's process, as the harness starts and kills it.
class PollerProcess {
 public:
  PollerProcess(std::vector<std::string> argv, std::string log_path);
  ~PollerProcess();
  PollerProcess(const PollerProcess&) = delete;
  PollerProcess& operator=(const PollerProcess&) = delete;

  bool start();
  void kill_hard();  // SIGKILL, and reaps it
  bool running() const { return pid_ > 0; }

 private:
  std::vector<std::string> argv_;
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace onceorder::torture
