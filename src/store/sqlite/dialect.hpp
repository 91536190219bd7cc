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

// Its scheduling operations (store/sqlite/scheduling_ops.cpp): its own statements, and the
// shared ones it sends one by one.
const SchedulingOps& scheduling_ops(const SqlCatalog& catalog, const SchedulingSql& sql);

}  // namespace onceorder::store::sqlite
