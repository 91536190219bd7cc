// The invariant queries per engine. Each returns one text column describing one violation.
#pragma once

#include <span>
#include <string_view>

#include "onceorder/store.hpp"

namespace onceorder {

struct InvariantSql {
  std::string_view id;
  std::string_view name;
  store::Statement violations;
};

std::span<const InvariantSql> invariant_sql(Engine engine);

}  // namespace onceorder
