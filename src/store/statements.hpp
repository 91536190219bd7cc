// One engine's statements, per store, filled by name from its SqlCatalog
// (store/statements.cpp): what a Dialect refers to.
#pragma once

#include <vector>

#include "onceorder/store/store.hpp"
#include "store/audit_store.hpp"
#include "store/events_store.hpp"
#include "store/intake_store.hpp"
#include "store/invariants_sql.hpp"
#include "store/legacy_items_store.hpp"
#include "store/listing_store.hpp"
#include "store/node_lease_store.hpp"
#include "store/numbering_store.hpp"
#include "store/receipts_store.hpp"
#include "store/scheduling_store.hpp"
#include "store/stock_store.hpp"

namespace onceorder::store {

class SqlCatalog;

struct Statements {
  explicit Statements(const SqlCatalog& sql);

  IntakeSql intake;
  NumberingSql numbering;
  SchedulingSql scheduling;
  LegacyItemsSql legacy_items;
  ReceiptsSql receipts;
  StockSql stock;
  ListingSql listing;
  NodeLeaseSql node_lease;
  AuditSql audit;
  EventsSql events;
  std::vector<InvariantSql> invariants;
  Statement has_migrations_table;  // () → 1 when schema_migrations exists, else 0
};

}  // namespace onceorder::store
