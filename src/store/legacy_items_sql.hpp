// SQL for legacy schedule items, per engine (store/<engine>/legacy_items_sql.cpp).
#pragma once

#include "onceorder/store.hpp"

namespace onceorder::store {

struct LegacyItemsSql {
  store::Statement insert_staged;  // (line, site, order, lot, status, created_at, run_id)
  // Whether the schema has the resolution column: `legacy dedup` runs on a database whose
  // migrations stopped early (duplicates block the live-item index).
  store::Statement has_resolution;  // → 1 or 0
  // → legacy_id, line, site, order, lot, status, created_at, resolution (NULL: none)
  store::Statement pending;
  store::Statement pending_before_resolution;  // the same, resolution always NULL
  store::Statement lock_pending;               // the rows `apply` moves, locked (PostgreSQL)
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

}  // namespace onceorder::store
