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

// Its scheduling operations (store/postgres/scheduling_ops.cpp), with their statements.
const SchedulingOps& scheduling_ops(const SqlCatalog& catalog);

}  // namespace onceorder::store::postgres
