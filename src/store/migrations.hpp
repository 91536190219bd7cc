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
};

namespace sqlite {
std::span<const Migration> migrations();
}
namespace postgres {
std::span<const Migration> migrations();
}

inline std::span<const Migration> migrations_for(Engine engine) {
  return engine == Engine::sqlite ? sqlite::migrations() : postgres::migrations();
}

}  // namespace onceorder::store
