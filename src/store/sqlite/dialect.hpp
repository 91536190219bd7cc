// The sqlite dialect (store/dialect.hpp): its statements come from store/sqlite/*.sql, its
// migrations from store/sqlite/migrations/ (store/migration_files.cpp).
#pragma once

#include <span>

#include "store/dialect.hpp"

namespace onceorder::store::sqlite {

std::span<const Migration> migrations();

const Dialect& dialect();

}  // namespace onceorder::store::sqlite
