// Versioned schema migrations, one directory per engine (store/<engine>/migrations/, whose
// README says how the files are named and marked), built into the binary by
// cmake/embed_files.cmake. Versions are numbered from 1 without holes; each has an up and a
// down script.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "onceorder/core/db_url.hpp"
#include "store/embedded_file.hpp"

namespace onceorder::store {

struct Migration {
  int version;
  std::string_view name;
  std::string_view up;
  std::string_view down;
  // PostgreSQL: `up` is one CREATE INDEX CONCURRENTLY of `index` (writers go on while it
  // builds), which cannot run inside a transaction block. The runner runs it alone on a
  // session of its own and records the version afterwards; a failed concurrent build leaves
  // an INVALID index behind, which the runner drops before it builds again.
  bool concurrently = false;
  // The index `up` builds, when `up` is one CREATE INDEX statement.
  std::string_view index = {};
  // The live-item index for new rows only (`migrate --live-index=new-rows-only`): `up` with
  // "{watermark}" standing for the largest item id at migration time. Empty: no such mode.
  std::string_view up_new_rows_only = {};
};

// The migration files of an engine, as embedded (in no particular order).
std::span<const EmbeddedFile> migration_files(Engine engine);

// The migrations `files` hold, by version. A file's leading comment lines are its
// documentation and are left out of the scripts; `-- onceorder: no-transaction` among them
// marks a migration that runs outside a transaction (Migration::concurrently).
std::vector<Migration> read_migrations(std::span<const EmbeddedFile> files);

namespace postgres {
std::span<const EmbeddedFile> migration_files();  // generated at build time
}
namespace sqlite {
std::span<const EmbeddedFile> migration_files();  // generated at build time
}

}  // namespace onceorder::store
