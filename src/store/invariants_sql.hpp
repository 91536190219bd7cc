// The invariant queries of an engine (store/<engine>/invariants.sql, named in
// store/invariants_sql.cpp). Each returns one text column
// describing one violation.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "onceorder/store/store.hpp"

namespace onceorder::store {

struct InvariantSql {
  std::string_view id;
  std::string_view name;
  store::Statement violations;
  // Rows the operator accepted knowingly (I1: legacy duplicates below a new-rows-only live
  // index's watermark), each described: reported, but not violations. None: the invariant
  // knows no such exception.
  std::optional<store::Statement> accepted = std::nullopt;
};

class SqlCatalog;
// Every invariant, in order, with `sql`'s queries.
std::vector<InvariantSql> invariant_sql(const SqlCatalog& sql);

}  // namespace onceorder::store
