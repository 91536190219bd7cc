// The product replaces none of its statements (store/sql_catalog.hpp): the torture harness's
// broken variants link their own overlay instead of this file (tools/torture/CMakeLists.txt).
#include "store/sql_catalog.hpp"

namespace onceorder::store {

std::span<const EmbeddedFile> embedded_sql_overlay() { return {}; }

}  // namespace onceorder::store
