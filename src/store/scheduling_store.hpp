// SQL for production scheduling: one engine-neutral class over a per-engine set of
// statements (store/<engine>/scheduling.sql) and operations (SchedulingOps, below). Methods
// run in the caller's transaction.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/number_format.hpp"
#include "onceorder/core/schedule_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct SchedulingSql {
  store::Statement insert_source;    // (site, order, lot, qty) → 1 row when created
  store::Statement source_quantity;  // (site, order, lot) → quantity
  store::Statement insert_run;       // (kind, owner) → run_id
  // A key whose legacy rows are staged but not moved is no candidate: its history (maybe
  // made by the old system) is not in schedule_items yet.
  store::Statement insert_candidates;  // (run_id, max_attempts) → item_id per item
  store::Statement insert_item_for;    // (run_id, site, order, lot, max_attempts) → item_id
  // (site, order, lot) → key_state_row's columns; no row: no source order.
  store::Statement key_state;
  store::Statement set_run_status;       // (run_id, status, error) → run_id when it was alive
  store::Statement heartbeat;            // (run_id) → run_id, stop requested? when alive
  store::Statement abort_run_waits;      // (run_id, why) → item_id per item
  store::Statement fail_run_processing;  // (run_id, why) → item_id per item
  store::Statement claim;                // (run_id, owner, limit, lease_ms) → claim columns
  store::Statement fence_success;        // (item_id, owner, attempt) → item_id
  store::Statement mark_failed;          // (item_id, owner, attempt, error) → item_id
  store::Statement abort_if_cancelled;   // (item_id, owner, attempt) → item_id when cancelled
  // A batch's fences in one statement: (claims: fence_json) → item_id per fenced claim.
  store::Statement fence_many;
  // Before a run takes its keys: `wait` items of a run that is not alive (ended, or its owner
  // silent for timeout_ms) on those keys become `aborted`. (keys JSON array of [site, order,
  // lot], or null for every key; timeout_ms) → item_id per aborted item. On PostgreSQL it
  // shares the keys' source-order rows first, as item creation does.
  store::Statement abort_orphans;
  store::Statement dead_runs;     // (timeout_ms) → run_id per run set to error
  store::Statement orphan_waits;  // () → item_id per aborted item
  // () → item_id per failed item. Not a `legacy` run's: nobody in OnceOrder holds its
  // lease, and only an operator knows whether the old system made it (`legacy resolve`).
  store::Statement expired_leases;
  store::Statement get_run;          // (run_id) → run_from's columns
  store::Statement list_runs;        // (status|null, limit) → run_from's columns
  store::Statement list_items;       // (status, site, order, lot, run_id, after, limit)
  store::Statement list_production;  // (site|null, after item_id, limit) → production_row's
  store::Statement stuck_orders;     // (max_attempts) → keys
  store::Statement run_remaining;    // (run_id) → wait + processing count, total
  // (site|null, after site, after order, after lot, max_attempts, limit) → site, order, lot,
  // failed counted, failed in all, requeues' last time, last error, last failure time;
  // by key, over the failed items' index.
  store::Statement list_exhausted;
  // (site, order, lot, max_attempts) → a row when the key reached the limit and its failed
  // items stop counting now (re-queued).
  store::Statement requeue_key;
  store::Statement request_stop;  // (run_id) → run_id when alive (marked or already)
};

// A claim whose step is the standard numbered production order (Scheduler::complete).
struct NumberedClaim {
  const Claim& claim;
  std::string_view scope;
  std::string_view title;
};

// A heartbeat's answer: the run is alive, and whether someone asked it to stop.
struct Beat {
  bool alive = false;
  bool stop_requested = false;
};

struct KeyState {
  bool has_source = false;
  bool has_success = false;
  bool has_live = false;  // an item the live-item index counts, not a success
  std::int64_t failed = 0;
  bool cancelled = false;
  bool legacy_pending = false;  // legacy rows staged for it are not moved yet
};

// What the store and both engines' operations share: the rows they decode the same way and
// the JSON arrays they send.

// A production scope's format when its first production order creates it: wide enough that
// a site does not run out.
inline constexpr ScopeFormat kProductionScopeFormat{9, 10, 999999999};

// site, order, lot from column `at` on: every statement that returns an order key.
OrderKey order_key_row(const store::Row& r, size_t at);
// has_success, has_live, failed, cancelled, legacy_pending from column `at` on (a key with a
// source order): sch_key_state's columns, and sch_key_states' after the key.
KeyState key_state_row(const store::Row& r, size_t at);
// A production order's columns (sch_list_production, and each engine's production
// statements): site, order, lot, item_id, quantity, scope, value, number, created_at.
ProductionOrder production_row(const store::Row& r);

// Order keys as a JSON array of [site, order, lot], in the given order.
std::string order_keys_json(const std::vector<OrderKey>& keys);
// Claims as a JSON array of [item_id, owner, attempt], in the given order: fence_many's.
std::string fence_json(std::span<const Claim> claims);
std::string fence_json(std::span<const NumberedClaim> claims);
// One claim of a batch appended as the start of a JSON row: `[item_id, owner, attempt`, after
// a comma when `out` holds a row already; the caller adds any more fields and the `]`.
void append_claim_row(std::string& out, const Claim& claim);

// What the engines do differently in scheduling: PostgreSQL writes a batch, a set of keys or
// a production order in one statement (data-modifying CTEs over JSON arrays); SQLite, with
// no DML in CTEs and one writer at a time, sends the same steps one by one in the caller's
// transaction. Each engine implements these in store/<engine>/scheduling_ops.cpp, under the
// contract tests (the conformance suite); the store (below) calls them through its dialect.
// Each method is the store's method of the same name.
class SchedulingOps {
 public:
  virtual ~SchedulingOps() = default;
  virtual Result<std::set<OrderKey>> insert_items_for(store::Connection& c, std::int64_t run_id,
                                                      const std::vector<OrderKey>& keys,
                                                      int max_attempts) const = 0;
  virtual Result<std::map<OrderKey, KeyState>> key_states(
      store::Connection& c, const std::vector<OrderKey>& keys) const = 0;
  virtual Status complete_numbered(store::Connection& c, std::span<const NumberedClaim> claims,
                                   store::Then then) const = 0;
  virtual Result<ProductionOrder> produce_numbered(store::Connection& c, const Claim& claim,
                                                   std::string_view scope,
                                                   std::string_view title) const = 0;
};

class SchedulingStore {
 public:
  explicit SchedulingStore(const Dialect& dialect);
  const SchedulingSql& sql() const { return sql_; }

  // true when created; false when the key existed (quantity tells whether it matches).
  Result<bool> insert_source(store::Connection& c, const SourceOrder& o);
  Result<std::optional<std::int64_t>> source_quantity(store::Connection& c, const OrderKey& k);
  Result<std::int64_t> insert_run(store::Connection& c, RunKind kind, const std::string& owner);
  Result<std::int64_t> insert_candidates(store::Connection& c, std::int64_t run_id,
                                         int max_attempts);
  Result<bool> insert_item_for(store::Connection& c, std::int64_t run_id, const OrderKey& k,
                               int max_attempts);
  Result<KeyState> key_state(store::Connection& c, const OrderKey& k);
  // A manual run's items for `keys` (sorted, each once): the keys that got one.
  Result<std::set<OrderKey>> insert_items_for(store::Connection& c, std::int64_t run_id,
                                              const std::vector<OrderKey>& keys, int max_attempts);
  // Each key's state; a key without a source order is absent.
  Result<std::map<OrderKey, KeyState>> key_states(store::Connection& c,
                                                  const std::vector<OrderKey>& keys);
  Result<bool> set_run_status(store::Connection& c, std::int64_t run_id, RunStatus status,
                              const std::string& error);
  Result<Beat> heartbeat(store::Connection& c, std::int64_t run_id);
  // Marks a live run to stop at its next batch boundary: false when it is not alive.
  Result<bool> request_stop(store::Connection& c, std::int64_t run_id);
  Result<std::vector<ExhaustedKey>> list_exhausted(store::Connection& c, const ExhaustedFilter& f,
                                                   int max_attempts);
  // true when the key had reached `max_attempts` and its failed items stop counting.
  Result<bool> requeue_key(store::Connection& c, const OrderKey& k, int max_attempts);
  // The error cascade: wait → aborted, processing → failed, for one run.
  Status cascade_run_error(store::Connection& c, std::int64_t run_id, const std::string& why);
  Result<std::vector<Claim>> claim(store::Connection& c, std::int64_t run_id,
                                   const std::string& owner, int limit, std::int64_t lease_ms);
  Result<bool> fence_success(store::Connection& c, const Claim& claim);
  Result<bool> mark_failed(store::Connection& c, const Claim& claim, const std::string& error);
  // Fences every claim: how many were fenced (the others were lost or cancelled).
  Result<std::int64_t> fence_many(store::Connection& c, std::span<const Claim> claims);
  // Fences every claim and writes its numbered production order (numbers per scope in the
  // given order), as few statements as the engine allows: one on PostgreSQL, sent with
  // `then`. Fails, and the caller rolls back, unless every claim was fenced and produced.
  Status complete_numbered(store::Connection& c, std::span<const NumberedClaim> claims,
                           store::Then then);
  // A claimed item whose order was cancelled meanwhile becomes `aborted` (fenced).
  Result<bool> abort_if_cancelled(store::Connection& c, const Claim& claim);
  // The standard production step: the next number of `scope` (created wide on first use),
  // its document and the production order, in as few statements as the engine allows.
  // Code::scope_exhausted when the scope has no number left.
  Result<ProductionOrder> produce_numbered(store::Connection& c, const Claim& claim,
                                           std::string_view scope, std::string_view title);
  // The orphans on `keys` (nullopt: every key), aborted: how many.
  Result<std::int64_t> abort_orphans(store::Connection& c,
                                     const std::optional<std::vector<OrderKey>>& keys,
                                     std::int64_t timeout_ms);
  Result<std::vector<std::int64_t>> dead_runs(store::Connection& c, std::int64_t timeout_ms);
  Result<std::int64_t> orphan_waits(store::Connection& c);
  Result<std::int64_t> expired_leases(store::Connection& c);
  Result<std::optional<Run>> get_run(store::Connection& c, std::int64_t run_id);
  Result<std::vector<Run>> list_runs(store::Connection& c, std::optional<RunStatus> status,
                                     int limit);
  Result<std::vector<ScheduleItem>> list_items(store::Connection& c, const ItemFilter& f);
  Result<std::vector<ProductionOrder>> list_production(store::Connection& c,
                                                       const std::optional<std::string>& site,
                                                       std::int64_t after, int limit);
  Result<std::vector<OrderKey>> stuck_orders(store::Connection& c, int max_attempts);
  Result<Progress> run_progress(store::Connection& c, std::int64_t run_id);

 private:
  const Dialect& dialect_;
  const SchedulingSql& sql_;
};

}  // namespace onceorder::store
