#include "onceorder/service/maintenance.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "onceorder/core/process_identity.hpp"
#include "store/node_lease_store.hpp"

namespace onceorder {
namespace {

// The one lease every `serve` of a database competes for: the batch, the reaper, expiry.
constexpr std::string_view kLeaderName = "maintenance";

store::TxOptions lease_tx() {
  return store::TxOptions{store::Clock::now() + std::chrono::seconds(5), 3, store::TxMode::write};
}

}  // namespace

LeaderLease::LeaderLease(std::string name, std::string holder, std::chrono::milliseconds ttl)
    : name_(std::move(name)), holder_(std::move(holder)), ttl_(ttl) {}

void LeaderLease::set_until(store::Clock::time_point asked_at, std::int64_t until_ms,
                            std::int64_t now_ms) {
  // Measured from before the statement was sent, so the local end is never later than the
  // database's, less a quarter of the lease for a pause or a slow clock.
  valid_until_ = asked_at + std::chrono::milliseconds(until_ms - now_ms) - ttl_ / 4;
  renew_after_ = asked_at + ttl_ / 2;
}

Result<std::unique_ptr<LeaderLease>> LeaderLease::try_take(store::Database& db, std::string name,
                                                           std::string holder,
                                                           std::chrono::milliseconds ttl) {
  store::NodeLeaseStore s(db.dialect());
  const auto asked_at = store::Clock::now();
  OO_ASSIGN_OR_RETURN(auto taken, store::transact<std::optional<store::LeaderTerm>>(
                                      db, lease_tx(), [&](store::Connection& c) {
                                        return s.take_leader(c, name, holder, ttl.count());
                                      }));
  if (!taken) return std::unique_ptr<LeaderLease>();
  std::unique_ptr<LeaderLease> lease(new LeaderLease(std::move(name), std::move(holder), ttl));
  lease->term_ = taken->term;
  lease->set_until(asked_at, taken->lease_until_ms, taken->now_ms);
  return lease;
}

bool LeaderLease::valid() const { return store::Clock::now() < valid_until_; }
bool LeaderLease::should_renew() const { return store::Clock::now() >= renew_after_; }

Status LeaderLease::renew(store::Database& db) {
  store::NodeLeaseStore s(db.dialect());
  const auto asked_at = store::Clock::now();
  OO_ASSIGN_OR_RETURN(
      auto renewed,
      store::transact<std::optional<store::LeaderTerm>>(db, lease_tx(), [&](store::Connection& c) {
        return s.renew_leader(c, name_, holder_, ttl_.count(), term_);
      }));
  if (!renewed) {
    valid_until_ = store::Clock::now();
    return Status(Code::unavailable, "the leader lease was lost");
  }
  set_until(asked_at, renewed->lease_until_ms, renewed->now_ms);
  return Status::Ok();
}

void LeaderLease::release(store::Database& db) {
  store::NodeLeaseStore s(db.dialect());
  (void)store::transact<bool>(db, lease_tx(), [&](store::Connection& c) -> Result<bool> {
    OO_RETURN_IF_ERROR(s.release_leader(c, name_, holder_, term_));
    return true;
  });
  valid_until_ = store::Clock::now();
}

Maintenance::Maintenance(store::Database& db, Scheduler& scheduler, MaintenanceOptions options)
    : db_(db), scheduler_(scheduler), options_(options), holder_(process_identity()) {}

Maintenance::~Maintenance() { stop(); }

void Maintenance::start() {
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Maintenance::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Handed on at once rather than when it expires.
  if (lease_ && lease_->valid()) lease_->release(db_);
  lease_.reset();
}

// Called before every job: a leader whose lease ran out (it could not renew in time, or
// another process took it) stops leading before it does more work.
bool Maintenance::ensure_leadership() {
  if (lease_ && lease_->valid() && lease_->should_renew()) {
    if (Status st = lease_->renew(db_); !st.ok())
      spdlog::warn("msg=\"leader lease not renewed\" error=\"{}\"", st.message());
  }
  if (lease_ && lease_->valid()) return true;
  if (lease_) {
    spdlog::info("msg=\"this process no longer runs the batch and the reaper\" term={}",
                 lease_->term());
    lease_.reset();
  }
  leader_ = false;
  auto taken = LeaderLease::try_take(db_, std::string(kLeaderName), holder_, options_.leader_lease);
  if (!taken.ok()) {
    spdlog::warn("msg=\"leader election failed\" error=\"{}\"", taken.status().message());
    return false;
  }
  if (!*taken) return false;
  lease_ = std::move(taken).value();
  leader_ = true;
  spdlog::info("msg=\"this process now runs the batch and the reaper\" term={} holder={}",
               lease_->term(), holder_);
  return true;
}

void Maintenance::loop() {
  using Clock = store::Clock;
  auto next_batch = Clock::now() + options_.batch_interval;
  auto next_reap = Clock::now();  // reap once at start: a restart cleans up after a crash
  auto next_expiry = Clock::now();
  while (!stopping_) {
    const bool leader = ensure_leadership();
    const auto now = Clock::now();
    if (leader && now >= next_reap) {
      auto r = scheduler_.reap(now + std::chrono::seconds(30));
      if (!r.ok()) {
        spdlog::warn("msg=\"reaper failed\" error=\"{}\"", r.status().message());
      } else if (r->dead_runs + r->aborted_waiting + r->released_processing > 0) {
        spdlog::info("msg=\"reaped\" dead_runs={} aborted_waiting={} released_processing={}",
                     r->dead_runs, r->aborted_waiting, r->released_processing);
      }
      next_reap = now + options_.reap_interval;
    }
    if (leader && now >= next_expiry && ensure_leadership()) {
      auto r = expire_receipts(db_, options_.receipt_retention, now + std::chrono::seconds(30));
      if (!r.ok()) {
        spdlog::warn("msg=\"receipt expiry failed\" error=\"{}\"", r.status().message());
      } else if (r->order_receipts + r->document_receipts + r->request_receipts > 0) {
        receipts_expired_ += r->order_receipts + r->document_receipts + r->request_receipts;
        spdlog::info(
            "msg=\"receipts expired\" order_receipts={} document_receipts={} request_receipts={}",
            r->order_receipts, r->document_receipts, r->request_receipts);
      }
      // Not done within the pass's deadline: go on at the next reaper tick.
      next_expiry =
          now + (r.ok() && !r->complete ? options_.reap_interval : options_.expiry_interval);
    }
    if (batch_.joinable() && batch_ended()) {
      batch_.join();
      next_batch = Clock::now() + options_.batch_interval;
    }
    if (leader && now >= next_batch && !batch_.joinable() && ensure_leadership()) {
      {
        std::lock_guard lock(mu_);
        batch_done_ = false;
      }
      batch_ = std::thread([this] { run_batch(); });
      next_batch = Clock::time_point::max();  // set again when it ends
    }
    std::unique_lock lock(mu_);
    // A follower asks again within a second, so that a lease that ended is taken soon.
    const auto wake_at = leader ? std::min({next_reap, next_batch, next_expiry})
                                : Clock::now() + options_.reap_interval;
    wake_.wait_until(lock, std::min(wake_at, Clock::now() + std::chrono::seconds(1)),
                     [this] { return stopping_.load() || (batch_.joinable() && batch_done_); });
  }
  // stopping_ ends the batch run at its next batch boundary.
  if (batch_.joinable()) batch_.join();
}

bool Maintenance::batch_ended() {
  std::lock_guard lock(mu_);
  return batch_done_;
}

void Maintenance::run_batch() {
  const auto now = store::Clock::now();
  auto run = scheduler_.create_run(RunKind::batch, std::nullopt, now + std::chrono::seconds(60));
  if (!run.ok()) {
    spdlog::warn("msg=\"batch run not created\" error=\"{}\"", run.status().message());
  } else {
    spdlog::info("msg=\"batch run started\" run_id={} items={}", run->run.run_id,
                 run->run.counts.wait);
    auto done = scheduler_.process_run(run->run.run_id, {}, &stopping_);
    if (done.ok()) {
      spdlog::info("msg=\"batch run finished\" run_id={} success={} failed={}", done->run_id,
                   done->counts.success, done->counts.failed);
    } else {
      spdlog::warn("msg=\"batch run ended\" run_id={} error=\"{}\"", run->run.run_id,
                   done.status().message());
    }
  }
  {
    std::lock_guard lock(mu_);
    batch_done_ = true;
  }
  wake_.notify_all();
}

}  // namespace onceorder
