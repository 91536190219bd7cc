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

// The engine's intake operations (store/sqlite/intake_ops.cpp), its own statements from `catalog`.
const IntakeOps& intake_ops(const SqlCatalog& catalog);

const Dialect& dialect();

}  // namespace onceorder::store::sqlite
