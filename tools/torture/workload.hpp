// The torture harness's clients: a seeded, bounded mix of operations over HTTP against the
// `serve` processes — keyed orders with replays and cancels on a small hot SKU set, document
// numbers on a few scopes (keyed and not), restocks, source orders, manual runs and reaper
// passes — each recorded in the history before it is sent and when its outcome is known.
//
// Thread-safety: run_workload starts its own client threads; the other functions run on the
// caller's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "history.hpp"

namespace onceorder::torture {

struct WorkloadOptions {
  std::uint64_t seed = 1;
  int clients = 8;
  std::int64_t max_ops = 2000;        // the workload stops at this many operations…
  std::chrono::seconds duration{60};  // …or after this long, whichever comes first
  std::chrono::milliseconds request_timeout{8000};
  int pace = 0;  // at most this many operations per second in all (0: as fast as answered)
  int skus = 6;  // the hot SKU set of warehouse 1
  std::int64_t initial_stock = 40;
  int scopes = 3;
  int customers = 4;
};

// Where the clients send requests: one port per `serve` process.
struct Targets {
  std::vector<std::uint16_t> ports;
};

// Creates the SKUs and scopes the workload uses (through the first target, retried).
bool set_up(const Targets& targets, const WorkloadOptions& options, HistoryWriter& history);

// Runs the clients until max_ops or duration; returns how many operations were invoked.
std::int64_t run_workload(const Targets& targets, const WorkloadOptions& options,
                          HistoryWriter& history, std::atomic<std::int64_t>& next_id);

// After healing: replays every order and document key that got a definite answer (the
// checker compares the answers), and drives runs and the reaper until every live source
// order is produced or `wait` passes. Returns false when production did not settle.
bool finish(const Targets& targets, const std::string& history_path, HistoryWriter& history,
            std::atomic<std::int64_t>& next_id, const std::function<std::int64_t()>& unsettled,
            std::chrono::seconds wait);

}  // namespace onceorder::torture
