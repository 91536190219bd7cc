// SQL for the order-id node leases (table id_nodes) and the maintenance leader's lease (table
// leader_leases, one row per job name): one engine-neutral class over
// per-engine statements (store/<engine>/node_lease.sql). Times are the database's
// clock in Unix milliseconds, so every process measures a lease by the same clock.
// Methods run inside the caller's transaction.
//
// Thread-safety: a NodeLeaseStore holds only its dialect; share it freely, one call per
// connection at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct NodeLeaseSql {
  store::Statement candidate;  // () → node, lease_until_ms, now_ms (locked)
  store::Statement take;       // (node, holder, ttl, expected_until) → lease_until_ms
  store::Statement renew;      // (node, holder, ttl, expected_until) → lease_until_ms, now
  store::Statement release;    // (node, holder)
  // (name, holder, ttl) → lease_until_ms, now_ms, term: only when no lease is in force
  store::Statement leader_take;
  // (name, holder, ttl, term) → lease_until_ms, now_ms: only while ours and in force
  store::Statement leader_renew;
  store::Statement leader_release;  // (name, holder, term)
};

// A maintenance leader's lease as taken or renewed. `term` counts the hands the lease has
// passed through: a new holder always has a new term.
struct LeaderTerm {
  std::int64_t lease_until_ms = 0;
  std::int64_t now_ms = 0;
  std::int64_t term = 0;
};

struct LeaseCandidate {
  std::int64_t node = 0;
  std::int64_t lease_until_ms = 0;  // the previous holder's end
  std::int64_t now_ms = 0;
};

struct LeaseRenewal {
  std::int64_t lease_until_ms = 0;
  std::int64_t now_ms = 0;
};

class NodeLeaseStore {
 public:
  explicit NodeLeaseStore(const Dialect& dialect);

  // The expired node that expired first, locked; nullopt when every node is leased.
  Result<std::optional<LeaseCandidate>> candidate(store::Connection& c);
  // The new lease end; nullopt when the node changed hands since `expected_until_ms`.
  Result<std::optional<std::int64_t>> take(store::Connection& c, std::int64_t node,
                                           std::string_view holder, std::int64_t ttl_ms,
                                           std::int64_t expected_until_ms);
  // nullopt when the lease is no longer ours or has already ended.
  Result<std::optional<LeaseRenewal>> renew(store::Connection& c, std::int64_t node,
                                            std::string_view holder, std::int64_t ttl_ms,
                                            std::int64_t expected_until_ms);
  // Ends the lease now, if it is still `holder`'s.
  Status release(store::Connection& c, std::int64_t node, std::string_view holder);

  // The leader lease `name`: taken when it is free or has expired (nullopt when another
  // holder's lease is in force), renewed while it is ours and in force, released early.
  // Each is one statement; of two candidates racing for an expired lease one gets it.
  Result<std::optional<LeaderTerm>> take_leader(store::Connection& c, std::string_view name,
                                                std::string_view holder, std::int64_t ttl_ms);
  Result<std::optional<LeaderTerm>> renew_leader(store::Connection& c, std::string_view name,
                                                 std::string_view holder, std::int64_t ttl_ms,
                                                 std::int64_t term);
  Status release_leader(store::Connection& c, std::string_view name, std::string_view holder,
                        std::int64_t term);

 private:
  const NodeLeaseSql& sql_;
};

}  // namespace onceorder::store
