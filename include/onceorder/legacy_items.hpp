// Legacy schedule items (seed 000): the old system's rows may hold duplicates for one
// business key. They are loaded into a staging table, a dedup plan keeps one row per key
// (`success` if any, else the newest `wait`) and soft-moves the rest to `aborted`, and
// applying the plan moves every row into the live table. Nothing is deleted.
//
// Thread-safety: stateless functions over a thread-safe Database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/scheduling.hpp"
#include "onceorder/store.hpp"

namespace onceorder {

// Loads `site_code,order_no,lot_no,status,created_at[,run_id]` (header line first; status
// in any case; created_at ISO 8601). Any bad line rejects the file (field errors name the
// line) and writes nothing. Returns the number of rows staged.
Result<std::int64_t> import_legacy_items(store::Database& db, std::string_view csv,
                                         store::Clock::time_point deadline);

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
  bool applied = false;
  std::int64_t run_id = 0;  // the `legacy` run the moved rows belong to
};

// The plan over staged rows and the live table's live rows. Reads only.
Result<DedupPlan> plan_legacy_dedup(store::Database& db, store::Clock::time_point deadline);
// Carries the plan out in one transaction. Refuses (writes nothing) while staged rows name
// orders that have no source order.
Result<DedupPlan> apply_legacy_dedup(store::Database& db, store::Clock::time_point deadline);

}  // namespace onceorder
