// The SQLite engine: one file in WAL mode; write transactions take the write lock up
// front (BEGIN IMMEDIATE) so that a decision is never made on a snapshot that another
// writer can invalidate; a busy timeout bounds the wait for that lock.
#pragma once

#include <memory>
#include <string>

#include "onceorder/store/store.hpp"

namespace onceorder::store::sqlite {

Result<std::unique_ptr<Connection>> connect(const std::string& path,
                                            const DatabaseOptions& options);

}  // namespace onceorder::store::sqlite
