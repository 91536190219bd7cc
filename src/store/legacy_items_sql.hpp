// SQL for legacy schedule items, per engine (store/<engine>/legacy_items_sql.cpp).
#pragma once

#include "onceorder/store.hpp"

namespace onceorder {

struct LegacyItemsSql {
  store::Statement insert_staged;    // (line, site, order, lot, status, created_at, run_id)
  store::Statement pending;          // → legacy_id, line, site, order, lot, status, created_at
  store::Statement live_rows;        // → item_id, site, order, lot, status, created_at
  store::Statement missing_sources;  // → site, order, lot
  store::Statement insert_run;       // → run_id
  store::Statement insert_item;  // (run, site, order, lot, status, created_at, error) → item_id
  store::Statement mark_moved;   // (legacy_id, item_id)
  store::Statement abort_item;   // (item_id, why)
};

namespace store::sqlite {
const LegacyItemsSql& legacy_items_sql();
}
namespace store::postgres {
const LegacyItemsSql& legacy_items_sql();
}

}  // namespace onceorder
