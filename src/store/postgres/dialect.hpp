// The postgres dialect (store/dialect.hpp): its statements come from store/postgres/*.sql, its
// migrations from store/postgres/migrations/ (store/migration_files.cpp).
#pragma once

#include <span>

#include "store/dialect.hpp"

namespace onceorder::store {
class SqlCatalog;
}  // namespace onceorder::store

namespace onceorder::store::postgres {

std::span<const Migration> migrations();

const Dialect& dialect();

// The engine's operations per area (store/<area>_store.hpp), each holding the statements only
// this engine has.
const IntakeOps& intake_ops(const SqlCatalog& sql);
const NumberingOps& numbering_ops(const SqlCatalog& sql);
const LegacyItemsOps& legacy_items_ops(const SqlCatalog& sql);
const SchedulingOps& scheduling_ops(const SqlCatalog& sql);

}  // namespace onceorder::store::postgres
