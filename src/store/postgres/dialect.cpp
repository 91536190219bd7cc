#include "store/postgres/dialect.hpp"

#include "store/postgres/pg_connection.hpp"
#include "store/sql_catalog.hpp"
#include "store/statements.hpp"

namespace onceorder::store::postgres {

const Dialect& dialect() {
  static const SqlCatalog& sql = SqlCatalog::of(Engine::postgres);
  static const Statements s(sql);
  static const Dialect d{
      .engine = Engine::postgres,
      .connect = &connect,
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
      .intake_ops = intake_ops(sql),
      .numbering_ops = numbering_ops(sql),
      .scheduling_ops = scheduling_ops(sql),
      .legacy_items_ops = legacy_items_ops(sql),
      .migrations = migrations(),
      .invariants = s.invariants,
      .has_migrations_table = s.has_migrations_table,
      .now_text = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
  };
  return d;
}

}  // namespace onceorder::store::postgres
