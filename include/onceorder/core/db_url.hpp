// Parsing of the `--db` / ONCEORDER_DB URL. Pure and thread-safe.
//   sqlite:PATH                 an SQLite file (created on first use)
//   postgresql://… postgres://… a libpq connection URI; PG* variables fill the gaps
//     ?pooler=transaction          OnceOrder's own parameter, taken out before libpq sees the
//                                  URI: the server is reached through a transaction-mode pooler
//                                  (PgBouncer), so nothing may rely on a server session
#pragma once

#include <string>
#include <string_view>

#include "onceorder/core/status.hpp"

namespace onceorder {

enum class Engine { sqlite, postgres };

std::string_view engine_name(Engine engine);

struct DbUrl {
  Engine engine = Engine::sqlite;
  std::string target;  // SQLite file path, or the libpq URI without `pooler=`
  // `pooler=transaction`: unnamed statements and per-transaction settings (docs/OPERATIONS.md
  // "Behind PgBouncer"); `pooler=session` or none: a server session per connection.
  bool transaction_pooler = false;
};

inline constexpr std::string_view kDefaultDbUrl = "sqlite:var/onceorder.db";

Result<DbUrl> parse_db_url(std::string_view url);

}  // namespace onceorder
