// Production scheduling (seed 000): runs (batch every few hours, or manual) turn source
// orders into work items, workers claim items and process each once, and processing an
// item creates its production order — with a gapless document number from the site's
// scope — in the same transaction that marks the item `success`.
//
// Correctness lives in the database: the live-item unique index (one live item per
// business key), the production order's unique business key, and fenced updates (an item
// is completed only by the owner and attempt that claimed it). Locks and SKIP LOCKED only
// make collisions rarer.
//
// Thread-safety: a Scheduler is safe to use from many threads and processes at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/counters.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/schedule_status.hpp"
#include "onceorder/core/schedule_types.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

struct SourceImport {
  std::int64_t created = 0;
  std::int64_t existing = 0;
  bool replayed = false;  // the stored answer of an earlier request with the key
};

struct Skipped {
  OrderKey key;
  std::string reason;  // already_scheduled | in_progress | unknown_order | max_attempts_reached
};

struct RunCreated {
  Run run;  // as it is now (also on replay: its counts move while it runs)
  std::vector<Skipped> skipped;
  bool replayed = false;  // the run and `skipped` of an earlier request with the key
  // `wait` items of runs no longer alive (ended, or their owner silent for `run_timeout`) that
  // held the run's keys, aborted in a transaction of their own before the run took them.
  std::int64_t orphans_aborted = 0;
};

// POST /v1/schedule/requeue: the keys re-queued (or, on a dry run, that would be) and the
// others with why not: not_exhausted | unknown_order | order_cancelled | already_scheduled |
// in_progress.
struct RequeueOutcome {
  std::vector<OrderKey> requeued;
  std::vector<Skipped> skipped;
  bool dry_run = false;
  bool replayed = false;  // the answer of an earlier request with the key
};

// The reason a stopped run gives (Run::error) and a stop request's answer ends with.
inline constexpr std::string_view kStoppedByRequest = "stopped by request";

namespace store {
class SchedulingStore;
}

// What a production step may write: the claimed item's production order, numbered with
// the next gapless number of a document scope (created with the standard format on first
// use). It writes inside the transaction that marks the item success, so the number, the
// document and the production order commit with it or not at all. Code::scope_exhausted
// when the scope has no number left. Valid only during the `produce` call it is given to.
class DocumentIssuer {
 public:
  virtual ~DocumentIssuer() = default;
  virtual Result<ProductionOrder> issue(std::string_view scope, std::string_view title) = 0;
};

// A production order a step declares instead of writing it: the claim's source order,
// numbered with the next number of `scope`, its document titled `title`.
struct NumberedProduction {
  std::string scope;
  std::string title;
};

// What "processing an item" means at a site. Runs inside the transaction that marks the
// item success; returning an error rolls that transaction back and fails the item.
// The standard step numbers the production order from scope production_scope(site).
// Steps are shared by the scheduler's worker threads: both methods must be thread-safe.
class ProductionStep {
 public:
  virtual ~ProductionStep() = default;
  virtual Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) = 0;
  // When the step's whole work for `claim` is one numbered production order, that order:
  // the scheduler then writes a batch's such orders with set statements instead of calling
  // `produce` (numbers per scope in claim order, as `produce` would take them). nullopt,
  // the default: `produce` runs for the claim.
  virtual std::optional<NumberedProduction> numbered(const Claim&) { return std::nullopt; }
};

std::shared_ptr<ProductionStep> standard_production_step();

struct SchedulerOptions {
  int max_attempts = 5;                              // failed attempts before an order stops
  std::chrono::milliseconds lease{30000};            // a claim's lifetime
  std::chrono::milliseconds run_timeout{5 * 60000};  // heartbeat silence that kills a run
  int claim_batch = 16;                              // items claimed (and completed) per tx
  int workers = 1;                                   // threads processing one run
  std::string owner;                                 // process identity; generated if empty
  std::shared_ptr<ProductionStep> default_step;      // standard_production_step() if null
  std::map<std::string, std::shared_ptr<ProductionStep>> site_steps;  // per site_code
};

struct ReapReport {
  std::int64_t dead_runs = 0;            // runs set to error: owner stopped heart-beating
  std::int64_t aborted_waiting = 0;      // wait items whose run is not alive
  std::int64_t released_processing = 0;  // processing items whose lease expired (→ failed)
};

// What a Scheduler did since it was made (what /metrics shows); counters only grow.
struct SchedulerStats {
  std::uint64_t items_produced = 0;  // fenced success with its production order (and number)
  std::uint64_t items_failed = 0;    // the step failed: the item is `failed` (fenced)
  std::uint64_t items_lost = 0;      // fenced out: lease expired, taken away, order cancelled
  std::uint64_t runs_done = 0;       // process_run ended with the run `done`
  std::uint64_t runs_failed = 0;     // process_run set the run to `error` (also on shutdown)
  std::uint64_t runs_ended = 0;      // the run was ended elsewhere (reaped) while processed
  std::uint64_t dead_runs = 0;       // reaper: runs whose owner stopped heart-beating
  std::uint64_t orphan_waits = 0;    // reaper: wait items of a dead run, aborted
  std::uint64_t expired_leases = 0;  // reaper: processing items past their lease, failed
  DurationSnapshot run_seconds;      // process_run, start to end
  DurationSnapshot batch_seconds;    // one claim batch: claim, complete and heartbeat
};

class Scheduler {
 public:
  Scheduler(store::Database& db, SchedulerOptions options = {});
  ~Scheduler();

  const SchedulerOptions& options() const { return options_; }

  // Idempotent per business key; the same key with another quantity is
  // Code::conflict (source_order_conflict) and nothing from the call is written.
  // With an Idempotency-Key (one scope for the route) the answer is stored in the import's
  // transaction and replayed for the same key and the same orders in any order;
  // idempotency_key_reused for other orders; a refused import stores nothing.
  Result<SourceImport> import_source_orders(
      std::span<const SourceOrder> orders, store::Clock::time_point deadline,
      const std::optional<std::string>& idempotency_key = std::nullopt);

  // Creates a run in `running` with one `wait` item per given order (or per candidate
  // when `orders` is empty-optional). Orders that cannot be scheduled are `skipped`.
  // With an Idempotency-Key (one scope for the route) the run, its items and the receipt
  // (run id and `skipped`) are one transaction, and the same key with the same set of orders
  // (or again none) gets that run back, as it is now; idempotency_key_reused otherwise.
  Result<RunCreated> create_run(RunKind kind, const std::optional<std::vector<OrderKey>>& orders,
                                store::Clock::time_point deadline,
                                const std::optional<std::string>& idempotency_key = std::nullopt);
  // Processes the run's items with `options.workers` threads until none is left, heart-
  // beating the run, then sets it `done`. If the run dies (reaped), stops. When `cancel`
  // becomes true (shutdown) the run is set to `error` with its cascade, so that its
  // waiting orders are candidates again at once, and Code::unavailable is returned.
  Result<Run> process_run(std::int64_t run_id, const ProgressFn& progress = {},
                          const std::atomic<bool>* cancel = nullptr);

  // The pieces process_run is made of (public for tests and custom workers).
  Result<std::vector<Claim>> claim(std::int64_t run_id, int limit);
  // Completes claims: production order + success, one transaction per batch, fenced and
  // produced with set statements (on PostgreSQL one statement, one round trip, when every
  // claim's step is `numbered`); falls back to complete_each when a claim was lost or a
  // step failed. Returns how many succeeded. Claims that were lost (fenced out) are
  // neither completed nor failed; a claim whose order was cancelled is aborted.
  Result<std::int64_t> complete(std::span<const Claim> claims);
  // The same outcome item by item: one transaction per claim (fence, then its step).
  Result<std::int64_t> complete_each(std::span<const Claim> claims);
  Status heartbeat(std::int64_t run_id);
  // Sets a live run to `error` and, in the same transaction, aborts its `wait` items and
  // fails its `processing` ones.
  Status fail_run(std::int64_t run_id, const std::string& why);

  Result<ReapReport> reap(store::Clock::time_point deadline);

  Result<Run> get_run(std::int64_t run_id, store::Clock::time_point deadline);
  Result<std::vector<Run>> list_runs(std::optional<RunStatus> status, int limit,
                                     store::Clock::time_point deadline);
  Result<std::vector<ScheduleItem>> list_items(const ItemFilter& filter,
                                               store::Clock::time_point deadline);
  // Ordered by item_id; `after` is the last item_id of the previous page.
  Result<std::vector<ProductionOrder>> list_production_orders(
      const std::optional<std::string>& site_code, std::int64_t after, int limit,
      store::Clock::time_point deadline);
  // Orders that reached max_attempts failures: no longer picked; for an operator.
  Result<std::vector<OrderKey>> stuck_orders(store::Clock::time_point deadline);
  // The same orders a page at a time, by key, with their attempts and last failure.
  Result<std::vector<ExhaustedKey>> list_exhausted(const ExhaustedFilter& filter,
                                                   store::Clock::time_point deadline);
  // Gives each given order that reached max_attempts a fresh budget of attempts: its failed
  // items stay and stop counting; the next run picks it (nothing starts here). One
  // transaction, in key order; a key re-queued by a concurrent call counts once. A dry run
  // writes nothing and answers what would happen now. With an Idempotency-Key (not on a
  // dry run) the answer is stored with the effect and replayed for the same set of orders.
  Result<RequeueOutcome> requeue(const std::vector<OrderKey>& orders, bool dry_run,
                                 store::Clock::time_point deadline,
                                 const std::optional<std::string>& idempotency_key = std::nullopt);
  // Asks a live run (creating or running), processed by this process or another, to end at
  // its next batch boundary as `error` "stopped by request" (process_run reads the mark with
  // its heartbeat). The run as it is now; not_found, or conflict when it has ended.
  Result<Run> request_stop(std::int64_t run_id, store::Clock::time_point deadline);

  SchedulerStats stats() const;

 private:
  Status complete_one(const Claim& claim);
  // A new run's items (none yet): per key given, else every candidate; then `running`.
  Status fill_run(store::Connection& c, std::int64_t run_id,
                  const std::optional<std::vector<OrderKey>>& keys, std::vector<Skipped>& skipped);
  Result<RunCreated> create_keyed_run(RunKind kind,
                                      const std::optional<std::vector<OrderKey>>& keys,
                                      store::Clock::time_point deadline, const std::string& idem,
                                      std::int64_t orphans);
  ProductionStep& step_for(const std::string& site_code);

  store::Database& db_;
  SchedulerOptions options_;
  std::unique_ptr<store::SchedulingStore> store_;

  // Counted where each outcome is known (SchedulerStats says what each one is).
  // Runs asked to stop through this Scheduler: its own process_run sees them at the next
  // batch boundary without waiting for the database mark (on SQLite, the one writer a busy
  // run keeps would hold that mark back until the run ends).
  bool stop_asked(std::int64_t run_id);
  // process_run's end: the run's stop mark dropped, its status and counters set.
  Result<Run> end_run(std::int64_t run_id, const Status& first_error, bool run_ended);
  std::mutex stop_mu_;
  std::set<std::int64_t> stop_asked_;  // guarded by stop_mu_

  std::atomic<std::uint64_t> items_produced_{0};
  std::atomic<std::uint64_t> items_failed_{0};
  std::atomic<std::uint64_t> items_lost_{0};
  std::atomic<std::uint64_t> runs_done_{0};
  std::atomic<std::uint64_t> runs_failed_{0};
  std::atomic<std::uint64_t> runs_ended_{0};
  std::atomic<std::uint64_t> dead_runs_{0};
  std::atomic<std::uint64_t> orphan_waits_{0};
  std::atomic<std::uint64_t> expired_leases_{0};
  DurationHistogram run_seconds_;
  DurationHistogram batch_seconds_;
};

// Field checks for source orders and keys (also used by the HTTP layer).
// At most kMaxOrdersPerRequest (limits.hpp) orders per request.

Status validate_order_key(const OrderKey& key, const std::string& field_prefix);
Status validate_source_orders(std::span<const SourceOrder> orders);
// The error for a request with more than kMaxOrdersPerRequest orders.
FieldError too_many_orders(size_t given);

// The document scope a site's production orders are numbered in.

}  // namespace onceorder
