// The postgres dialect's parts, each defined in this directory; assembled in dialect.cpp.
#pragma once

#include <span>

#include "store/dialect.hpp"

namespace onceorder::store::postgres {

const IntakeSql& intake_sql();
const NumberingSql& numbering_sql();
const SchedulingSql& scheduling_sql();
const LegacyItemsSql& legacy_items_sql();
const ReceiptsSql& receipts_sql();
const StockSql& stock_sql();
const ListingSql& listing_sql();
const NodeLeaseSql& node_lease_sql();
const AuditSql& audit_sql();
const EventsSql& events_sql();
std::span<const Migration> migrations();
std::span<const InvariantSql> invariant_sql();

const Dialect& dialect();

}  // namespace onceorder::store::postgres
