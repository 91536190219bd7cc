// The sqlite dialect (store/dialect.hpp): its statements come from store/sqlite/*.sql, its
// migrations from store/sqlite/migrations/ (store/migration_files.cpp).
#pragma once

#include <span>

#include "store/dialect.hpp"

namespace onceorder::store {
class SqlCatalog;
}  // namespace onceorder::store

namespace onceorder::store::sqlite {

std::span<const Migration> migrations();

const Dialect& dialect();

// The engine's operations per area (store/<area>_store.hpp), each holding the statements only
// this engine has.
const IntakeOps& intake_ops(const SqlCatalog& sql);
const NumberingOps& numbering_ops(const SqlCatalog& sql, const NumberingSql& shared);
const LegacyItemsOps& legacy_items_ops();
const SchedulingOps& scheduling_ops(const SqlCatalog& sql, const SchedulingSql& shared);

}  // namespace onceorder::store::sqlite
