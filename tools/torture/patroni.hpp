// The Patroni cluster's side of the torture harness (tools/torture/patroni-cluster): a sampler
// that follows each PostgreSQL node's role, timeline and WAL position through Patroni's REST
// API during the run, the timeline check, and the unavailability windows the faults made.
//
//   timelines   no write is acknowledged by a node after another node was promoted to a later
//               timeline: the nodes' timeline history files (every node must agree on where
//               each timeline forked), the sampler's record of who was primary on which
//               timeline with how much WAL, and the acknowledged orders and numbers that the
//               final database does not hold. An acknowledged write missing from the database
//               whose acknowledgement came while a node was primary on a timeline that another
//               node had already left (its WAL past the fork point) is such a write.
//
// Thread-safety: a PgSampler runs one thread of its own; the rest are plain functions.
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker.hpp"
#include "cluster.hpp"
#include "history.hpp"

namespace onceorder::torture {

// The faults patroni-cluster makes (the nemesis's other faults act on `serve` alone).
const std::set<std::string>& cluster_faults();

// A PostgreSQL node of the cluster, as `patroni-cluster nodes` lists it.
struct PgNode {
  std::string name, address;
  std::uint16_t pg_port = 0;
};
std::vector<PgNode> patroni_nodes(const Database& db);

// Asks each node (a thread and a connection per node, every 100 ms) whether it is in recovery,
// its timeline and WAL position, and writes a `pg` line to the history whenever a node's role
// or timeline changes and at each new WAL position of a primary:
// {"phase":"pg","node","role":"primary"|"replica"|"unreachable","tli","lsn"}.
class PgSampler {
 public:
  PgSampler(std::vector<PgNode> nodes, HistoryWriter& history);
  ~PgSampler() { stop(); }
  void start();
  void stop();

 private:
  void loop(const PgNode& node);
  std::vector<PgNode> nodes_;
  HistoryWriter& history_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// The timeline check, from the history's lines, `patroni-cluster timelines` and the database.
CheckResult check_timelines(const std::vector<nlohmann::json>& lines, const Database& db);

// Per fault of the cluster: the longest time without an acknowledged write from its start until
// the cluster was healthy again (at most 30 s, never into the next fault); printed as p50/p99/max
// per kind and in all, and written to `path`.
std::string unavailability(const std::vector<nlohmann::json>& lines, const std::string& path);

}  // namespace onceorder::torture
