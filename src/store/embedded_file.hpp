// A file built into the binary by cmake/embed_files.cmake, in the layout it writes: the
// store's named statements (store/sql_catalog.hpp) and migrations (store/migrations.hpp).
#pragma once

#include <string_view>

namespace onceorder::store {

// `path` is the file's name as embedded ("/postgres/intake.sql", "/0001_….up.sql"), `content`
// its bytes.
struct EmbeddedFile {
  std::string_view path;
  std::string_view content;
  std::string_view content_type;
  std::string_view etag;
};

}  // namespace onceorder::store
