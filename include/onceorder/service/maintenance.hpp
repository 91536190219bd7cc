// The periodic jobs of `onceorder serve`: the batch run every `batch_interval`, the
// reaper every `reap_interval`, and receipt expiry (receipts.hpp) every `expiry_interval`. When
// several processes share one database they elect one leader to run them: a lease in the table
// leader_leases (LeaderLease), taken and renewed in short transactions, so that it works through
// a transaction-mode pooler. That only saves duplicate work — correctness never depends on it
// (the live-item index and fencing do).
//
// Thread-safety: start/stop from one controlling thread; is_leader from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "onceorder/service/receipts.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

struct MaintenanceOptions {
  std::chrono::milliseconds batch_interval{4 * 3600 * 1000};
  std::chrono::milliseconds reap_interval{60 * 1000};
  // How long an Idempotency-Key's receipt lives (API.md "How long a key lives").
  std::chrono::milliseconds receipt_retention = kDefaultReceiptRetention;
  std::chrono::milliseconds expiry_interval{3600 * 1000};
  // The leader lease's length; renewed every half of it. A leader that dies is replaced
  // within about this long.
  std::chrono::milliseconds leader_lease{30 * 1000};
};

// A lease on the leadership of `name`, held in the database (table leader_leases) by the
// database's clock. `valid()` ends a quarter of the lease before the database's end, as a
// node lease does: a process that paused stops leading before another can take over.
//
// Thread-safety: one thread at a time.
class LeaderLease {
 public:
  // The lease, or nullptr while another holder's lease is in force.
  static Result<std::unique_ptr<LeaderLease>> try_take(store::Database& db, std::string name,
                                                       std::string holder,
                                                       std::chrono::milliseconds ttl);
  bool valid() const;
  bool should_renew() const;
  // Code::unavailable with "lost" when it is no longer ours (expired, taken over).
  Status renew(store::Database& db);
  void release(store::Database& db);
  std::int64_t term() const { return term_; }
  const std::string& holder() const { return holder_; }

 private:
  LeaderLease(std::string name, std::string holder, std::chrono::milliseconds ttl);
  void set_until(store::Clock::time_point asked_at, std::int64_t until_ms, std::int64_t now_ms);

  std::string name_;
  std::string holder_;
  std::chrono::milliseconds ttl_;
  std::int64_t term_ = 0;
  store::Clock::time_point valid_until_{};
  store::Clock::time_point renew_after_{};
};

class Maintenance {
 public:
  Maintenance(store::Database& db, Scheduler& scheduler, MaintenanceOptions options);
  ~Maintenance();  // stops

  void start();
  // Stops the loop; a batch run in progress is ended at its next batch boundary.
  void stop();
  bool is_leader() const { return leader_.load(); }
  // Receipts this process has expired since it started.
  std::int64_t receipts_expired() const { return receipts_expired_.load(); }

 private:
  void loop();
  bool ensure_leadership();
  // The batch run, on a thread of its own so that the loop goes on reaping, expiring and
  // renewing the lease while it lasts; sets batch_done_ at the end.
  void run_batch();
  bool batch_ended();

  store::Database& db_;
  Scheduler& scheduler_;
  MaintenanceOptions options_;
  std::string holder_;
  std::unique_ptr<LeaderLease> lease_;
  std::atomic<bool> leader_{false};
  std::atomic<std::int64_t> receipts_expired_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  std::thread thread_;
  std::thread batch_;        // the batch run in progress, if any (joined by the loop)
  bool batch_done_ = false;  // under mu_
};

}  // namespace onceorder
