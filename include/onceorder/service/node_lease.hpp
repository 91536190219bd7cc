// Node-id leases (seed 002): order ids carry a node id, and two processes issuing ids with
// one node id could issue the same id. One row per node id; a process holds one while its
// lease lasts, and stops issuing ids before the lease could have expired.
//
// Thread-safety: a NodeLease is not synchronized; its owner (Intake) guards it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "onceorder/core/status.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

class NodeLease {
 public:
  static Result<std::unique_ptr<NodeLease>> acquire(store::Database& db, const std::string& holder,
                                                    std::chrono::milliseconds ttl);
  int node() const { return node_; }
  // The previous holder's lease end: no id may carry a time at or before it.
  std::int64_t not_before_ms() const { return not_before_ms_; }
  // True while the lease is certainly ours (with a safety margin).
  bool valid() const;
  bool should_renew() const;
  Status renew(store::Database& db);
  // Gives the node back (its lease ends now).
  void release(store::Database& db);

 private:
  NodeLease(int node, std::int64_t not_before_ms, std::int64_t lease_until_ms, std::string holder,
            std::chrono::milliseconds ttl, store::Clock::time_point valid_until);
  int node_;
  std::int64_t not_before_ms_;
  std::int64_t lease_until_ms_;
  std::string holder_;
  std::chrono::milliseconds ttl_;
  store::Clock::time_point valid_until_;
  store::Clock::time_point renew_after_;
};

}  // namespace onceorder
