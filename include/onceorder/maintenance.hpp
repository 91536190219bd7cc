// The periodic jobs of `onceorder serve`: the batch run every `batch_interval`, the
// reaper every `reap_interval`, and receipt expiry (receipts.hpp) every `expiry_interval`. When
// several processes share one PostgreSQL database they elect one leader (advisory lock) to run
// them; that only saves duplicate work — correctness never depends on it (the live-item index and
// fencing do).
//
// Thread-safety: start/stop from one controlling thread; is_leader from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "onceorder/receipts.hpp"
#include "onceorder/scheduling.hpp"
#include "onceorder/store.hpp"

namespace onceorder {

struct MaintenanceOptions {
  std::chrono::milliseconds batch_interval{4 * 3600 * 1000};
  std::chrono::milliseconds reap_interval{60 * 1000};
  // How long an Idempotency-Key's receipt lives (API.md "How long a key lives").
  std::chrono::milliseconds receipt_retention = kDefaultReceiptRetention;
  std::chrono::milliseconds expiry_interval{3600 * 1000};
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

  store::Database& db_;
  Scheduler& scheduler_;
  MaintenanceOptions options_;
  std::unique_ptr<store::Connection> leadership_;
  std::atomic<bool> leader_{false};
  std::atomic<std::int64_t> receipts_expired_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace onceorder
