// The delivery worker (outbox.hpp): each pass settles the deliveries whose lease ended (the
// reaper), makes every endpoint's deliveries for the feed's new events (dispatch), claims a
// batch of due deliveries, sends them at once and records their outcomes under their fence.
// What a crash at each step leaves, per mode, is docs/EVENTS.md's table.
#include <chrono>
#include <random>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "onceorder/core/signature.hpp"
#include "onceorder/core/timestamp.hpp"
#include "onceorder/service/outbox.hpp"
#include "store/events_store.hpp"

namespace onceorder {
namespace {

using store::Connection;

// The first error of a pass is logged; the next ones of the same kind only counted.
void log_step_error(const char* step, const Status& st) {
  spdlog::warn("delivery worker: {} failed: {}", step, st.to_string());
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<int> Outbox::dispatch(int per_endpoint, OutboxDeadline deadline) {
  // Read first: an endpoint already at the head needs no write (a locking read of its row
  // would be one, every pass of every worker).
  using Behind = std::vector<std::string>;
  OO_ASSIGN_OR_RETURN(
      auto behind,
      store::transact<Behind>(db_, store::read_tx(deadline), [&](Connection& c) -> Result<Behind> {
        auto ev = events();
        OO_ASSIGN_OR_RETURN(auto rows, ev.endpoints(c));
        OO_ASSIGN_OR_RETURN(auto head, ev.head(c));
        Behind out;
        for (auto& e : rows) {
          if (e.after < head) out.push_back(e.spec.name);
        }
        return out;
      }));
  int passed = 0;
  for (const std::string& name : behind) {
    OO_ASSIGN_OR_RETURN(int n,
                        store::transact<int>(db_, store::write_tx(deadline), [&](Connection& c) {
                          return events().dispatch(c, name, per_endpoint);
                        }));
    passed += n;
  }
  return passed;
}

Result<std::vector<DeliveryClaim>> Outbox::claim(const std::string& owner, int limit,
                                                 std::chrono::milliseconds lease,
                                                 OutboxDeadline deadline) {
  using Out = std::vector<DeliveryClaim>;
  return store::transact<Out>(db_, store::write_tx(deadline), [&](Connection& c) {
    return events().claim(c, owner, limit, lease.count());
  });
}

Result<std::vector<bool>> Outbox::settle(std::span<const DeliveryOutcome> outcomes,
                                         OutboxDeadline deadline) {
  using Out = std::vector<bool>;
  return store::transact<Out>(db_, store::write_tx(deadline), [&](Connection& c) -> Result<Out> {
    OO_ASSIGN_OR_RETURN(auto done, events().settle(c, outcomes));
    const std::set<std::pair<std::string, std::int64_t>> recorded(done.begin(), done.end());
    Out out;
    out.reserve(outcomes.size());
    for (const DeliveryOutcome& o : outcomes) {
      out.push_back(recorded.contains({o.endpoint, o.event_id}));
    }
    return out;
  });
}

Result<Outbox::Reaped> Outbox::reap(OutboxDeadline deadline) {
  return store::transact<Reaped>(db_, store::write_tx(deadline),
                                 [&](Connection& c) -> Result<Reaped> {
                                   OO_ASSIGN_OR_RETURN(auto rows, events().reap(c));
                                   Reaped out;
                                   for (const auto& r : rows) {
                                     if (r.status == DeliveryStatus::pending) ++out.pending;
                                     if (r.status == DeliveryStatus::dead) ++out.dead;
                                     if (r.status == DeliveryStatus::in_doubt) ++out.in_doubt;
                                   }
                                   return out;
                                 });
}

Result<std::vector<std::pair<std::string, DeliveryCounts>>> Outbox::counts(
    OutboxDeadline deadline) {
  using Out = std::vector<std::pair<std::string, DeliveryCounts>>;
  return store::transact<Out>(db_, store::read_tx(deadline),
                              [&](Connection& c) { return events().delivery_counts(c); });
}

Result<double> Outbox::held_seconds(OutboxDeadline deadline) {
  return store::transact<double>(db_, store::read_tx(deadline),
                                 [&](Connection& c) { return events().held_seconds(c); });
}

SendRequest delivery_request(const DeliveryClaim& claim, std::int64_t unix_seconds) {
  SendRequest r;
  r.url = claim.url;
  r.body = event_json(claim.event);
  r.headers = {
      {"Content-Type", "application/json"},
      {"Idempotency-Key", std::to_string(claim.event.id)},
      {std::string(kSignatureHeader), signature_header(claim.secret, unix_seconds, r.body)},
      {"OnceOrder-Event-Type", claim.event.type},
      {"OnceOrder-Attempt", std::to_string(claim.attempt)},
  };
  return r;
}

void DeliveryMetrics::observe_lag(double seconds) {
  std::size_t i = 0;
  while (i < kLagBuckets.size() && seconds > kLagBuckets[i]) ++i;
  lag_buckets[i].fetch_add(1);
  lag_count.fetch_add(1);
  lag_sum_us.fetch_add(static_cast<std::uint64_t>(std::max(0.0, seconds) * 1e6));
}

DeliveryWorker::DeliveryWorker(store::Database& db, Sender& sender, DeliveryWorkerOptions options,
                               DeliveryMetrics& metrics)
    : db_(db), sender_(sender), options_(std::move(options)), metrics_(metrics), outbox_(db) {}

DeliveryWorker::~DeliveryWorker() { stop(); }

void DeliveryWorker::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

void DeliveryWorker::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DeliveryWorker::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void DeliveryWorker::loop() {
  for (;;) {
    auto done = run_once();
    if (!done.ok()) metrics_.errors.fetch_add(1);
    std::unique_lock lock(mu_);
    if (stop_) return;
    // A full batch means more may be due: go on at once.
    if (done.ok() && *done >= options_.batch) continue;
    cv_.wait_for(lock, options_.idle_poll, [this] { return stop_ || woken_; });
    woken_ = false;
    if (stop_) return;
  }
}

Status DeliveryWorker::reap_now(OutboxDeadline deadline) {
  auto reaped = outbox_.reap(deadline);
  if (!reaped.ok()) {
    log_step_error("reaping expired leases", reaped.status());
    return reaped.status();
  }
  metrics_.reaped.fetch_add(
      static_cast<std::uint64_t>(reaped->pending + reaped->dead + reaped->in_doubt));
  metrics_.dead.fetch_add(static_cast<std::uint64_t>(reaped->dead));
  metrics_.in_doubt.fetch_add(static_cast<std::uint64_t>(reaped->in_doubt));
  return Status::Ok();
}

Result<int> DeliveryWorker::run_once() {
  const auto now = store::Clock::now();
  const auto deadline = now + std::chrono::seconds(10);
  // What writes without finding work (the reaper, a claim of nothing) runs at most once a
  // second when idle: on SQLite each takes the one write lock.
  const bool due = now - last_sweep_ >= options_.sweep_interval;
  if (due) {
    last_sweep_ = now;
    OO_RETURN_IF_ERROR(reap_now(deadline));
  }
  auto dispatched = outbox_.dispatch(options_.dispatch_per_endpoint, deadline);
  if (!dispatched.ok()) {
    log_step_error("dispatching new events", dispatched.status());
    return dispatched.status();
  }
  if (!due && *dispatched == 0 && !busy_) return 0;
  // The lease began at the latest when the claim was asked for.
  const auto lease_end = store::Clock::now() + options_.lease;
  auto claims = outbox_.claim(options_.owner, options_.batch, options_.lease, deadline);
  if (!claims.ok()) {
    log_step_error("claiming deliveries", claims.status());
    return claims.status();
  }
  busy_ = !claims->empty();
  if (claims->empty()) return 0;
  return send_and_settle(std::move(claims).value(), lease_end);
}

std::vector<SendReport> DeliveryWorker::send(const std::vector<DeliveryClaim>& claims,
                                             store::Clock::time_point lease_end) {
  // Sent only while the lease outlasts the send: a send after the lease could race the
  // reaper's verdict. Not sent means surely not received: they are released as refused.
  if (lease_end - store::Clock::now() < options_.send_timeout) {
    metrics_.skipped_late.fetch_add(claims.size());
    return std::vector<SendReport>(claims.size(),
                                   SendReport{SendResult::refused, std::nullopt,
                                              "not sent: too little of the lease was left"});
  }
  std::vector<SendRequest> requests;
  requests.reserve(claims.size());
  const std::int64_t now = unix_now();
  for (const DeliveryClaim& c : claims) requests.push_back(delivery_request(c, now));
  return sender_.send(requests, options_.send_timeout);
}

Result<int> DeliveryWorker::send_and_settle(std::vector<DeliveryClaim> claims,
                                            store::Clock::time_point lease_end) {
  const auto reports = send(claims, lease_end);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  std::vector<DeliveryOutcome> outcomes;
  outcomes.reserve(claims.size());
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const SendReport& r = reports.at(i);
    outcomes.push_back(decide_outcome(claims[i], r.result, r.http_status, r.error, jitter(rng)));
  }
  auto recorded = outbox_.settle(outcomes, store::Clock::now() + std::chrono::seconds(10));
  if (!recorded.ok()) {
    log_step_error("recording outcomes", recorded.status());
    return recorded.status();
  }
  int settled = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (!(*recorded)[i]) {
      metrics_.fenced_out.fetch_add(1);  // the reaper took it back: its verdict is counted there
      continue;
    }
    ++settled;
    count_outcome(outcomes[i], claims[i].event);
  }
  return settled;
}

void DeliveryWorker::count_outcome(const DeliveryOutcome& outcome, const Event& event) {
  switch (outcome.status) {
    case DeliveryStatus::delivered:
      metrics_.delivered.fetch_add(1);
      if (auto at = unix_ms_of(event.occurred_at)) {
        metrics_.observe_lag(static_cast<double>(unix_now_ms() - *at) / 1000.0);
      }
      break;
    case DeliveryStatus::dead:
      metrics_.dead.fetch_add(1);
      break;
    case DeliveryStatus::in_doubt:
      metrics_.in_doubt.fetch_add(1);
      break;
    default:
      metrics_.retried.fetch_add(1);
  }
}

}  // namespace onceorder
