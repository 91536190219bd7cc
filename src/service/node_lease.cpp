#include "onceorder/service/node_lease.hpp"

#include <fmt/format.h>

#include "onceorder/core/id_generator.hpp"
#include "store/node_lease_store.hpp"

namespace onceorder {
namespace {

store::TxOptions write_tx() {
  return store::TxOptions{store::Clock::now() + std::chrono::seconds(10), 3, store::TxMode::write};
}

// Stop issuing ids this long before the lease could end: a paused process must not wake up
// holding a node that someone else took over.
std::chrono::milliseconds margin(std::chrono::milliseconds ttl) { return ttl / 4; }

}  // namespace

NodeLease::NodeLease(int node, std::int64_t not_before_ms, std::int64_t lease_until_ms,
                     std::string holder, std::chrono::milliseconds ttl,
                     store::Clock::time_point valid_until)
    : node_(node),
      not_before_ms_(not_before_ms),
      lease_until_ms_(lease_until_ms),
      holder_(std::move(holder)),
      ttl_(ttl),
      valid_until_(valid_until),
      renew_after_(store::Clock::now() + ttl / 2) {}

Result<std::unique_ptr<NodeLease>> NodeLease::acquire(store::Database& db,
                                                      const std::string& holder,
                                                      std::chrono::milliseconds ttl) {
  store::NodeLeaseStore s(db.dialect());
  return store::transact<std::unique_ptr<NodeLease>>(
      db, write_tx(), [&](store::Connection& c) -> Result<std::unique_ptr<NodeLease>> {
        const auto asked_at = store::Clock::now();
        OO_ASSIGN_OR_RETURN(auto cand, s.candidate(c));
        if (!cand) {
          return Status(
              Code::unavailable,
              fmt::format("all {} order-id nodes are leased by live processes", kMaxNode + 1));
        }
        OO_ASSIGN_OR_RETURN(auto until,
                            s.take(c, cand->node, holder, ttl.count(), cand->lease_until_ms));
        if (!until) return Status(Code::retry_transaction, "node taken concurrently");
        const auto valid =
            asked_at + std::chrono::milliseconds(*until - cand->now_ms) - margin(ttl);
        return std::unique_ptr<NodeLease>(new NodeLease(
            static_cast<int>(cand->node), cand->lease_until_ms, *until, holder, ttl, valid));
      });
}

bool NodeLease::valid() const { return store::Clock::now() < valid_until_; }
bool NodeLease::should_renew() const { return store::Clock::now() >= renew_after_; }

Status NodeLease::renew(store::Database& db) {
  store::NodeLeaseStore s(db.dialect());
  auto renewed = store::transact<store::LeaseRenewal>(
      db, write_tx(), [&](store::Connection& c) -> Result<store::LeaseRenewal> {
        OO_ASSIGN_OR_RETURN(auto r, s.renew(c, node_, holder_, ttl_.count(), lease_until_ms_));
        if (!r) return Status(Code::unavailable, "the order-id node lease was lost");
        return *r;
      });
  if (!renewed.ok()) return renewed.status();
  const auto asked_at = store::Clock::now();
  lease_until_ms_ = renewed->lease_until_ms;
  valid_until_ = asked_at + std::chrono::milliseconds(renewed->lease_until_ms - renewed->now_ms) -
                 margin(ttl_);
  renew_after_ = asked_at + ttl_ / 2;
  return Status::Ok();
}

void NodeLease::release(store::Database& db) {
  store::NodeLeaseStore s(db.dialect());
  (void)store::transact<bool>(db, write_tx(), [&](store::Connection& c) -> Result<bool> {
    OO_RETURN_IF_ERROR(s.release(c, node_, holder_));
    return true;
  });
  valid_until_ = store::Clock::now();
}

}  // namespace onceorder
