// One database engine's dialect: every statement, migration and invariant query OnceOrder
// sends to that engine, how to connect to it, and what it can do. `dialect_for` is the one
// place that chooses by engine; the typed stores take a Dialect and never compare engines.
//
// Thread-safety: dialects are immutable objects with static storage.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "onceorder/core/db_url.hpp"
#include "onceorder/store/store.hpp"
#include "store/invariants_sql.hpp"
#include "store/migrations.hpp"

namespace onceorder::store {

struct IntakeSql;
class IntakeOps;
struct NumberingSql;
struct SchedulingSql;
struct LegacyItemsSql;
struct ReceiptsSql;
struct StockSql;
struct ListingSql;
struct NodeLeaseSql;
struct AuditSql;
struct EventsSql;

struct Dialect {
  Engine engine;
  Result<std::unique_ptr<Connection>> (*connect)(const std::string& target,
                                                 const DatabaseOptions& options);

  // Capabilities.
  // Data-modifying CTEs: a placement, an issued document and a production order are each
  // one statement (one round trip). Without them the stores send the same steps one by one
  // in the same transaction.
  bool writes_in_one_statement;
  // CREATE INDEX CONCURRENTLY: such migrations run outside a transaction (store/migrate.cpp).
  bool concurrent_index_builds;
  // SELECT … FOR UPDATE. Without it (SQLite) a write transaction holds the database's one
  // write lock from BEGIN, so a statement that would only lock rows is not sent.
  bool row_locks;

  // Statements, per area.
  const IntakeSql& intake;
  const NumberingSql& numbering;
  const SchedulingSql& scheduling;
  const LegacyItemsSql& legacy_items;
  const ReceiptsSql& receipts;
  const StockSql& stock;
  const ListingSql& listing;
  const NodeLeaseSql& node_lease;
  const AuditSql& audit;
  const EventsSql& events;

  // Operations, per area: what the engines do differently, each implemented in
  // store/<engine>/<area>_ops.cpp.
  const IntakeOps& intake_ops;

  // The schema: versioned migrations, the invariant queries, and the bookkeeping the
  // migration runner needs.
  std::span<const Migration> migrations;
  std::span<const InvariantSql> invariants;
  Statement has_migrations_table;  // () → 1 when schema_migrations exists, else 0
  std::string_view now_text;       // SQL expression: the current time as ISO 8601 UTC text
};

const Dialect& dialect_for(Engine engine);

}  // namespace onceorder::store
