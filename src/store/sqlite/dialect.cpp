#include "store/audit_store.hpp"
#include "store/events_store.hpp"
#include "store/intake_store.hpp"
#include "store/legacy_items_store.hpp"
#include "store/listing_store.hpp"
#include "store/node_lease_store.hpp"
#include "store/numbering_store.hpp"
#include "store/receipts_store.hpp"
#include "store/scheduling_store.hpp"
#include "store/sqlite/sql_text.hpp"
#include "store/sqlite/sqlite_connection.hpp"
#include "store/sqlite/statements.hpp"
#include "store/stock_store.hpp"

namespace onceorder::store::sqlite {

const Dialect& dialect() {
  static const Dialect d{
      .engine = Engine::sqlite,
      .connect = &connect,
      // No DML in CTEs; SQLite has one writer at a time, so the extra statements cost
      // no lock time, only calls into the library.
      .writes_in_one_statement = false,
      .concurrent_index_builds = false,
      .row_locks = false,
      .intake = intake_sql(),
      .numbering = numbering_sql(),
      .scheduling = scheduling_sql(),
      .legacy_items = legacy_items_sql(),
      .receipts = receipts_sql(),
      .stock = stock_sql(),
      .listing = listing_sql(),
      .node_lease = node_lease_sql(),
      .audit = audit_sql(),
      .events = events_sql(),
      .migrations = migrations(),
      .invariants = invariant_sql(),
      .has_migrations_table = {"migrate_has_table",
                               "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                               "name = 'schema_migrations'"},
      .now_text = OO_SQLITE_NOW,
  };
  return d;
}

}  // namespace onceorder::store::sqlite
