// The PostgreSQL engine over libpq: READ COMMITTED with explicit row locks, prepared
// statements, `lock_timeout`, errors classified by SQLSTATE. BEGIN is sent in the same
// pipeline as a transaction's first statement, and Then::commit sends COMMIT with the
// last one, so a one-statement transaction is one round trip.
#pragma once

#include <memory>
#include <string>

#include "onceorder/store/store.hpp"

namespace onceorder::store::postgres {

Result<std::unique_ptr<Connection>> connect(const std::string& uri, const DatabaseOptions& options);

// The OnceOrder Code for a SQLSTATE ("40P01" → deadlock, "55P03" → lock_timeout, …).
Code classify_sqlstate(std::string_view sqlstate);

}  // namespace onceorder::store::postgres
