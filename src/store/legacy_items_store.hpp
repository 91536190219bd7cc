// SQL for legacy schedule items (the staging table and its move into the live table): one
// engine-neutral class over a per-engine set of statements (store/<engine>/legacy_items.sql)
// and operations (LegacyItemsOps, below). Methods run in the caller's transaction.
//
// Thread-safety: immutable after construction; the Connection passed in is the caller's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/schedule_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct LegacyItemsSql {
  store::Statement insert_staged;  // (line, site, order, lot, status, created_at, run_id)
  // Whether the schema has the resolution column: `legacy dedup` runs on a database whose
  // migrations stopped early (duplicates block the live-item index).
  store::Statement has_resolution;  // → 1 or 0
  // → legacy_id, line, site, order, lot, status, created_at, resolution (NULL: none)
  store::Statement pending;
  store::Statement pending_before_resolution;  // the same, resolution always NULL
  store::Statement live_rows;                  // → item_id, site, order, lot, status, created_at
  store::Statement missing_sources;            // → site, order, lot
  store::Statement insert_run;                 // → run_id
  store::Statement insert_item;  // (run, site, order, lot, status, created_at, error) → item_id
  store::Statement mark_moved;   // (legacy_id, item_id)
  store::Statement abort_item;   // (item_id, why)
  // The operator's word on in-flight legacy rows of one key (site, order, lot, outcome):
  store::Statement resolve_staged;  // staged wait/processing rows → legacy_id
  // (site, order, lot, status, note) a legacy run's wait/processing item → item_id
  store::Statement settle_moved;
  store::Statement note_moved;  // (item_id, outcome) on the staging row it came from
};

// What the engines do differently in legacy items: PostgreSQL locks the staged rows `apply`
// moves against a concurrent `resolve` (SELECT … FOR UPDATE); SQLite's write transaction holds
// the database's one write lock from BEGIN, so it sends nothing. Each method is
// LegacyItemsStore's of the same name. Each engine implements them in
// store/<engine>/legacy_items_ops.cpp, under the contract tests (the conformance suite).
class LegacyItemsOps {
 public:
  virtual ~LegacyItemsOps() = default;
  virtual Status lock_pending(store::Connection& c) const = 0;
};

// A row of the staging table that has not moved yet.
struct StagedItem {
  std::int64_t legacy_id = 0;
  int line_no = 0;
  OrderKey key;
  std::string status;  // as staged
  std::string created_at;
  std::optional<std::string> resolution;  // the operator's word ("made", "not_made"), if any
};

// A live item of the live table that shares its key with a staged row or another live item.
struct LiveItem {
  std::int64_t item_id = 0;
  OrderKey key;
  std::string status;
  std::string created_at;
};

class LegacyItemsStore {
 public:
  explicit LegacyItemsStore(const Dialect& dialect);

  Status insert_staged(store::Connection& c, int line_no, const OrderKey& key,
                       std::string_view status, std::string_view created_at,
                       std::string_view run_id);  // "": none
  // Staged rows in legacy_id order (without resolutions on a schema from before them).
  Result<std::vector<StagedItem>> pending(store::Connection& c);
  // Locks the staged rows against a concurrent `resolve` until the transaction ends.
  Status lock_pending(store::Connection& c);
  Result<std::vector<LiveItem>> live_rows(store::Connection& c);
  // Keys of staged rows that have no source order, sorted.
  Result<std::vector<OrderKey>> missing_sources(store::Connection& c);
  Result<std::int64_t> insert_run(store::Connection& c);
  Result<std::int64_t> insert_item(store::Connection& c, std::int64_t run_id, const OrderKey& key,
                                   std::string_view status, std::string_view created_at,
                                   std::string_view note);
  Status mark_moved(store::Connection& c, std::int64_t legacy_id, std::int64_t item_id);
  Status abort_item(store::Connection& c, std::int64_t item_id, std::string_view why);
  // Records `outcome` on the key's staged wait/processing rows: how many.
  Result<std::int64_t> resolve_staged(store::Connection& c, const OrderKey& key,
                                      std::string_view outcome);
  // Moves the key's wait/processing items of a legacy run to `status`: their item ids.
  Result<std::vector<std::int64_t>> settle_moved(store::Connection& c, const OrderKey& key,
                                                 std::string_view status, std::string_view note);
  Status note_moved(store::Connection& c, std::int64_t item_id, std::string_view outcome);

 private:
  const Dialect& dialect_;
  const LegacyItemsSql& sql_;
};

}  // namespace onceorder::store
