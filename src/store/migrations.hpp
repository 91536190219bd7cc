// Versioned schema migrations, one list per engine (store/<engine>/migrations.cpp).
// Versions are numbered from 1 without holes; each has an up and a down script.
#pragma once

#include <span>
#include <string_view>

#include "onceorder/db_url.hpp"

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
  std::string_view index = {};
  // The live-item index for new rows only (`migrate --live-index=new-rows-only`): `up` with
  // "{watermark}" standing for the largest item id at migration time. Empty: no such mode.
  std::string_view up_new_rows_only = {};
};

}  // namespace onceorder::store
