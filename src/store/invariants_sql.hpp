// The invariant queries per engine. Each returns one text column describing one violation.
#pragma once

#include <span>
#include <string_view>

#include "onceorder/store.hpp"

namespace onceorder::store {

struct InvariantSql {
  std::string_view id;
  std::string_view name;
  store::Statement violations;
  // Rows the operator accepted knowingly (I1: legacy duplicates below a new-rows-only live
  // index's watermark), each described: reported, but not violations. Empty SQL: none.
  store::Statement accepted = {};
};

}  // namespace onceorder::store
