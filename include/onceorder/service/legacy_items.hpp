// Legacy schedule items (seed 000): the old system's rows may hold duplicates for one
// business key. They are loaded into a staging table, a dedup plan keeps one row per key
// (`success` if any, else the newest `wait`) and soft-moves the rest to `aborted`, and
// applying the plan moves every row into the live table. Nothing is deleted.
//
// A row the old system had in flight at the cutover (`processing`) may or may not have been
// made: only an operator knows. `resolve_legacy_items` records that word (made / not made);
// applying refuses while any staged `processing` row lacks it, `made` moves as `success`,
// `not_made` as `failed` (a candidate again). Until then nothing schedules the key.
//
// Thread-safety: stateless functions over a thread-safe Database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/progress.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

// Loads `site_code,order_no,lot_no,status,created_at[,run_id]` (header line first; status
// in any case; created_at ISO 8601). Any bad line rejects the file (field errors name the
// line) and writes nothing. Returns the number of rows staged. `progress` counts rows staged.
Result<std::int64_t> import_legacy_items(store::Database& db, std::string_view csv,
                                         store::Clock::time_point deadline,
                                         const ProgressFn& progress = {});

// The operator's word on a legacy row the old system had in flight.
enum class LegacyOutcome { made, not_made };

struct ResolveReport {
  std::int64_t lines = 0;    // outcomes recorded
  std::int64_t staged = 0;   // staged rows that now carry an outcome (moved by `apply`)
  std::int64_t settled = 0;  // legacy items already moved that became success / failed
};

// Loads `site_code,order_no,lot_no,outcome` (header line first; outcome `made` or
// `not_made`) and records each outcome on the key's staged `wait`/`processing` rows (a later
// file may change it until `apply`), and settles the key's `wait`/`processing` items of a
// `legacy` run at once (made → success, not_made → failed). All or nothing: a bad line, a
// key given twice, or a key with no such row rejects the file (errors name the lines).
Result<ResolveReport> resolve_legacy_items(store::Database& db, std::string_view csv,
                                           store::Clock::time_point deadline);

// A staged row that was in flight (`processing`), or a `wait` row an operator resolved.
struct InFlightRow {
  OrderKey key;
  int line_no = 0;
  std::string status;                    // as staged
  std::optional<LegacyOutcome> outcome;  // none: unresolved (blocks apply if processing)
};

struct DedupRow {
  std::string source;  // "legacy line 7" or "item 42"
  std::string status;
  std::string created_at;
  bool keep = false;
};

struct DedupGroup {
  OrderKey key;
  std::vector<DedupRow> rows;
};

struct DedupPlan {
  std::vector<DedupGroup> duplicates;     // keys with more than one live row
  std::int64_t legacy_rows = 0;           // staged rows that move into the live table
  std::int64_t to_abort = 0;              // rows that become `aborted`
  std::vector<OrderKey> missing_sources;  // staged keys with no source order (blocks apply)
  std::vector<InFlightRow> in_flight;     // in line order
  std::int64_t unresolved = 0;            // staged `processing` rows without an outcome
  bool applied = false;
  std::int64_t run_id = 0;  // the `legacy` run the moved rows belong to
};

// The plan over staged rows and the live table's live rows. Reads only.
Result<DedupPlan> plan_legacy_dedup(store::Database& db, store::Clock::time_point deadline);
// Carries the plan out in one transaction. Refuses (writes nothing) while staged rows name
// orders that have no source order, or a staged `processing` row has no outcome.
// `progress` counts rows written (live rows aborted, staged rows moved).
Result<DedupPlan> apply_legacy_dedup(store::Database& db, store::Clock::time_point deadline,
                                     const ProgressFn& progress = {});

}  // namespace onceorder
