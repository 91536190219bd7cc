// One database engine's dialect: how to connect to it, the statements the shared stores send to
// either engine, the operations each engine does its own way, its migrations and invariant
// queries. `dialect_for` is the one place that chooses by engine; the typed stores take a
// Dialect and never compare engines or ask what one can do.
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
struct NumberingSql;
struct SchedulingSql;
struct LegacyItemsSql;
struct ReceiptsSql;
struct StockSql;
struct ListingSql;
struct NodeLeaseSql;
struct AuditSql;
struct EventsSql;
class IntakeOps;
class NumberingOps;
class SchedulingOps;
class LegacyItemsOps;

struct Dialect {
  Engine engine;
  Result<std::unique_ptr<Connection>> (*connect)(const std::string& target,
                                                 const DatabaseOptions& options);

  // Statements both engines have, per area.
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

  // Operations, per area: what the engines do differently there (each area's store header
  // declares its <Area>Ops; store/<engine>/<area>_ops.cpp implements them, under the contract
  // tests).
  const IntakeOps& intake_ops;
  const NumberingOps& numbering_ops;
  const SchedulingOps& scheduling_ops;
  const LegacyItemsOps& legacy_items_ops;

  // The schema: versioned migrations, the invariant queries, and the bookkeeping the
  // migration runner needs.
  std::span<const Migration> migrations;
  std::span<const InvariantSql> invariants;
  Statement has_migrations_table;  // () → 1 when schema_migrations exists, else 0
  std::string_view now_text;       // SQL expression: the current time as ISO 8601 UTC text
};

const Dialect& dialect_for(Engine engine);

}  // namespace onceorder::store
