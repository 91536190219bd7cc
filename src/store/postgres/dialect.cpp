#include "store/audit_store.hpp"
#include "store/events_store.hpp"
#include "store/intake_store.hpp"
#include "store/legacy_items_store.hpp"
#include "store/listing_store.hpp"
#include "store/node_lease_store.hpp"
#include "store/numbering_store.hpp"
#include "store/postgres/pg_connection.hpp"
#include "store/postgres/sql_text.hpp"
#include "store/postgres/statements.hpp"
#include "store/receipts_store.hpp"
#include "store/scheduling_store.hpp"
#include "store/stock_store.hpp"

namespace onceorder::store::postgres {

const Dialect& dialect() {
  static const Dialect d{
      .engine = Engine::postgres,
      .connect = &connect,
      .writes_in_one_statement = true,
      .concurrent_index_builds = true,
      .row_locks = true,
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
                               "SELECT count(*) FROM pg_tables WHERE schemaname = "
                               "current_schema() AND tablename = 'schema_migrations'"},
      .now_text = OO_PG_UTC("now()"),
  };
  return d;
}

}  // namespace onceorder::store::postgres
