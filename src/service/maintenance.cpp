#include "onceorder/maintenance.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace onceorder {
namespace {

// Any fixed number: the advisory-lock key the leaders of one database agree on.
constexpr std::int64_t kLeaderKey = 7210431190431904;

}  // namespace

Maintenance::Maintenance(store::Database& db, Scheduler& scheduler, MaintenanceOptions options)
    : db_(db), scheduler_(scheduler), options_(options) {}

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
}

bool Maintenance::ensure_leadership() {
  if (leadership_ && !leadership_->broken()) return leader_;
  leader_ = false;
  auto conn = db_.connect_dedicated();
  if (!conn.ok()) {
    spdlog::warn("msg=\"leader election: no connection\" error=\"{}\"", conn.status().message());
    return false;
  }
  auto won = (*conn)->try_lead(kLeaderKey);
  if (!won.ok() || !*won) return false;
  leadership_ = std::move(conn).value();
  leader_ = true;
  spdlog::info("msg=\"this process now runs the batch and the reaper\"");
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
    if (leader && now >= next_expiry) {
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
    if (leader && now >= next_batch) {
      auto run =
          scheduler_.create_run(RunKind::batch, std::nullopt, now + std::chrono::seconds(60));
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
      next_batch = Clock::now() + options_.batch_interval;
    }
    std::unique_lock lock(mu_);
    const auto wake_at = leader ? std::min({next_reap, next_batch, next_expiry})
                                : Clock::now() + options_.reap_interval;
    wake_.wait_until(lock, std::min(wake_at, Clock::now() + std::chrono::seconds(1)),
                     [this] { return stopping_.load(); });
  }
}

}  // namespace onceorder
