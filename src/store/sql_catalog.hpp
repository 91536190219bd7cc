// The named statements of one engine, read from the .sql files embedded in the binary
// (src/store/<engine>/*.sql, embedded at build time by cmake/embed_files.cmake): a reader
// sees each statement whole, in SQL, and the stores name what they run.
//
// A file is a sequence of statements, each headed by a line `-- name: <name>` (and
// ` may_wait` after the name for a statement that may wait for another transaction's row
// locks: Statement::may_wait). Its text runs to the next `-- name:` line; the comment lines
// and blank lines at its end (the next statement's comment) and one final `;` are not part
// of it. Comment lines before the first name describe the file.
//
// An overlay (embedded_sql_overlay(): the torture harness's broken variants, tools/torture)
// replaces statements by name with naive ones; it names only statements its engine has, and
// takes none away (every statement an engine's stores and operations ask for is always there).
//
// A file that does not parse, or a lookup of a name no file defines, stops the process at
// startup with the name: a statement never goes missing at run time. The unit test
// (sql_catalog_test.cpp) builds both engines' dialects, so it fails before that, and also
// when a file holds a statement nothing asks for.
//
// Thread-safety: of() builds each engine's catalog once; a catalog is immutable after, but
// for the record of the names asked, which is locked.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/db_url.hpp"
#include "onceorder/store/store.hpp"
#include "store/embedded_file.hpp"

namespace onceorder::store {

// The product's statements (generated at build time).
std::span<const EmbeddedFile> embedded_sql();
// The statements that replace the product's in this program: none in the product
// (store/sql_overlay.cpp), a naive variant's in the torture harness's broken programs.
std::span<const EmbeddedFile> embedded_sql_overlay();

class SqlCatalog {
 public:
  // The catalog of `engine`'s files, then its overlay.
  static const SqlCatalog& of(Engine engine);
  // Parses `files` and then `overlay`; stops the process on a malformed file, a name two
  // files define, or an overlay's name the files do not.
  SqlCatalog(std::span<const EmbeddedFile> files, std::span<const EmbeddedFile> overlay);

  // The statement `name`; stops the process when there is none.
  Statement get(std::string_view name) const;

  // Every name defined.
  std::vector<std::string> names() const;
  // The names defined that get never asked for.
  std::vector<std::string> unused() const;

 private:
  void parse(const EmbeddedFile& file, bool overlay);
  void add(std::string_view file, std::string_view header, std::string_view text, bool overlay);

  std::map<std::string, Statement, std::less<>> statements_;
  mutable std::mutex mutex_;
  mutable std::set<std::string, std::less<>> asked_;
};

}  // namespace onceorder::store
