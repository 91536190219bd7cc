#include "store/sqlite/dialect.hpp"

#include "store/sql_catalog.hpp"
#include "store/sqlite/sqlite_connection.hpp"
#include "store/statements.hpp"

namespace onceorder::store::sqlite {

const Dialect& dialect() {
  static const SqlCatalog& sql = SqlCatalog::of(Engine::sqlite);
  static const Statements s(sql);
  static const Dialect d{
      .engine = Engine::sqlite,
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
      .numbering_ops = numbering_ops(sql, s.numbering),
      .scheduling_ops = scheduling_ops(sql, s.scheduling),
      .legacy_items_ops = legacy_items_ops(),
      .migrations = migrations(),
      .invariants = s.invariants,
      .has_migrations_table = s.has_migrations_table,
      .now_text = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  };
  return d;
}

}  // namespace onceorder::store::sqlite
