#include "store/sqlite/dialect.hpp"

#include "store/sql_catalog.hpp"
#include "store/sqlite/sqlite_connection.hpp"
#include "store/statements.hpp"

namespace onceorder::store::sqlite {

const Dialect& dialect() {
  static const SqlCatalog& catalog = SqlCatalog::of(Engine::sqlite);
  static const Statements s(catalog);
  static const Dialect d{
      .engine = Engine::sqlite,
      .connect = &connect,
      // No DML in CTEs; SQLite has one writer at a time, so the extra statements cost
      // no lock time, only calls into the library.
      .writes_in_one_statement = false,
      .concurrent_index_builds = false,
      .row_locks = false,
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
      .now_text = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  };
  return d;
}

}  // namespace onceorder::store::sqlite
