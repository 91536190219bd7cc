#include "store/dialect.hpp"

#include "store/postgres/dialect.hpp"
#include "store/sqlite/dialect.hpp"

namespace onceorder::store {

const Dialect& dialect_for(Engine engine) {
  switch (engine) {
    case Engine::sqlite:
      return sqlite::dialect();
    case Engine::postgres:
      return postgres::dialect();
  }
  return sqlite::dialect();
}

}  // namespace onceorder::store
