#include <fmt/format.h>

#include "onceorder/intake.hpp"
#include "store/intake_store.hpp"

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
  store::IntakeStore s(db.dialect());
  return store::transact<std::unique_ptr<NodeLease>>(
      db, write_tx(), [&](store::Connection& c) -> Result<std::unique_ptr<NodeLease>> {
        const auto asked_at = store::Clock::now();
        OO_ASSIGN_OR_RETURN(auto cand, c.query(s.sql().lease_candidate, {}));
        if (cand.empty()) {
          return Status(
              Code::unavailable,
              fmt::format("all {} order-id nodes are leased by live processes", kMaxNode + 1));
        }
        const auto node = cand[0].i64(0);
        const auto previous_end = cand[0].i64(1);
        const auto db_now = cand[0].i64(2);
        OO_ASSIGN_OR_RETURN(auto took,
                            c.query(s.sql().lease_take, {node, std::string_view(holder),
                                                         std::int64_t{ttl.count()}, previous_end}));
        if (took.empty()) return Status(Code::retry_transaction, "node taken concurrently");
        const auto until = took[0].i64(0);
        const auto valid = asked_at + std::chrono::milliseconds(until - db_now) - margin(ttl);
        return std::unique_ptr<NodeLease>(
            new NodeLease(static_cast<int>(node), previous_end, until, holder, ttl, valid));
      });
}

bool NodeLease::valid() const { return store::Clock::now() < valid_until_; }
bool NodeLease::should_renew() const { return store::Clock::now() >= renew_after_; }

Status NodeLease::renew(store::Database& db) {
  store::IntakeStore s(db.dialect());
  auto renewed = store::transact<std::pair<std::int64_t, std::int64_t>>(
      db, write_tx(), [&](store::Connection& c) -> Result<std::pair<std::int64_t, std::int64_t>> {
        OO_ASSIGN_OR_RETURN(
            auto rows, c.query(s.sql().lease_renew, {std::int64_t{node_}, std::string_view(holder_),
                                                     std::int64_t{ttl_.count()}, lease_until_ms_}));
        if (rows.empty()) return Status(Code::unavailable, "the order-id node lease was lost");
        return std::make_pair(rows[0].i64(0), rows[0].i64(1));
      });
  if (!renewed.ok()) return renewed.status();
  const auto asked_at = store::Clock::now();
  lease_until_ms_ = renewed->first;
  valid_until_ =
      asked_at + std::chrono::milliseconds(renewed->first - renewed->second) - margin(ttl_);
  renew_after_ = asked_at + ttl_ / 2;
  return Status::Ok();
}

void NodeLease::release(store::Database& db) {
  store::IntakeStore s(db.dialect());
  (void)store::transact<bool>(db, write_tx(), [&](store::Connection& c) -> Result<bool> {
    OO_RETURN_IF_ERROR(
        c.query(s.sql().lease_release, {std::int64_t{node_}, std::string_view(holder_)}).status());
    return true;
  });
  valid_until_ = store::Clock::now();
}

}  // namespace onceorder
