#include "store/postgres/dialect.hpp"

#include "store/postgres/pg_connection.hpp"
#include "store/sql_catalog.hpp"
#include "store/statements.hpp"

namespace onceorder::store::postgres {

const Dialect& dialect() {
  static const SqlCatalog& catalog = SqlCatalog::of(Engine::postgres);
  static const Statements s(catalog);
  static const Dialect d{
      .engine = Engine::postgres,
      .connect = &connect,
      .writes_in_one_statement = true,
      .concurrent_index_builds = true,
      .row_locks = true,
      .intake = s.intake,
      .numbering = s.numbering,
      .scheduling = s.scheduling,
      .legacy_items = s.legacy_items,
      .receipts = s.receipts,
      .stock = s.stock,
      .listing = s.listing,
      .node_lease = s.node_lease,
      .audit = s.audit,
      .events = s.events,
      .intake_ops = intake_ops(catalog),
      .migrations = migrations(),
      .invariants = s.invariants,
      .has_migrations_table = s.has_migrations_table,
      .now_text = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
  };
  return d;
}

}  // namespace onceorder::store::postgres
