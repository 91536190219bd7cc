#include "store/node_lease_store.hpp"

namespace onceorder::store {

NodeLeaseStore::NodeLeaseStore(const Dialect& dialect) : sql_(dialect.node_lease) {}

Result<std::optional<LeaseCandidate>> NodeLeaseStore::candidate(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.candidate, {}));
  if (rows.empty()) return std::optional<LeaseCandidate>();
  const auto& r = rows[0];
  return std::optional<LeaseCandidate>(LeaseCandidate{r.i64(0), r.i64(1), r.i64(2)});
}

Result<std::optional<std::int64_t>> NodeLeaseStore::take(store::Connection& c, std::int64_t node,
                                                         std::string_view holder,
                                                         std::int64_t ttl_ms,
                                                         std::int64_t expected_until_ms) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.take, {node, holder, ttl_ms, expected_until_ms}));
  if (rows.empty()) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(rows[0].i64(0));
}

Result<std::optional<LeaseRenewal>> NodeLeaseStore::renew(store::Connection& c, std::int64_t node,
                                                          std::string_view holder,
                                                          std::int64_t ttl_ms,
                                                          std::int64_t expected_until_ms) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.renew, {node, holder, ttl_ms, expected_until_ms}));
  if (rows.empty()) return std::optional<LeaseRenewal>();
  return std::optional<LeaseRenewal>(LeaseRenewal{rows[0].i64(0), rows[0].i64(1)});
}

Status NodeLeaseStore::release(store::Connection& c, std::int64_t node, std::string_view holder) {
  return c.query(sql_.release, {node, holder}).status();
}

Result<std::optional<LeaderTerm>> NodeLeaseStore::take_leader(store::Connection& c,
                                                              std::string_view name,
                                                              std::string_view holder,
                                                              std::int64_t ttl_ms) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.leader_take, {name, holder, ttl_ms}));
  if (rows.empty()) return std::optional<LeaderTerm>();
  return std::optional<LeaderTerm>(LeaderTerm{rows[0].i64(0), rows[0].i64(1), rows[0].i64(2)});
}

Result<std::optional<LeaderTerm>> NodeLeaseStore::renew_leader(store::Connection& c,
                                                               std::string_view name,
                                                               std::string_view holder,
                                                               std::int64_t ttl_ms,
                                                               std::int64_t term) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.leader_renew, {name, holder, ttl_ms, term}));
  if (rows.empty()) return std::optional<LeaderTerm>();
  return std::optional<LeaderTerm>(LeaderTerm{rows[0].i64(0), rows[0].i64(1), term});
}

Status NodeLeaseStore::release_leader(store::Connection& c, std::string_view name,
                                      std::string_view holder, std::int64_t term) {
  return c.query(sql_.leader_release, {name, holder, term}).status();
}

}  // namespace onceorder::store
