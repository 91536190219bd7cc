#include <algorithm>
#include <charconv>
#include <map>

#include "store/migrations.hpp"
#include "store/postgres/dialect.hpp"
#include "store/sqlite/dialect.hpp"

namespace onceorder::store {
namespace {

constexpr std::string_view kNoTransaction = "-- onceorder: no-transaction";

bool blank(std::string_view text) { return text.find_first_not_of(" \t\r\n") == text.npos; }

// Splits `text` into its leading comment lines and the script after them.
std::pair<std::string_view, std::string_view> split_header(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (!line.starts_with("--") && !blank(line)) break;
    at = std::min(end + 1, text.size());
  }
  return {text.substr(0, at), text.substr(at)};
}

bool marked(std::string_view header, std::string_view marker) {
  for (std::size_t at = 0; at < header.size();) {
    const std::size_t end = std::min(header.find('\n', at), header.size());
    std::string_view line = header.substr(at, end - at);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line == marker) return true;
    at = end + 1;
  }
  return false;
}

// The index a script of one CREATE INDEX statement builds, else "".
std::string_view built_index(std::string_view sql) {
  const std::size_t semicolon = sql.find(';');
  if (semicolon != sql.npos && !blank(sql.substr(semicolon + 1))) return {};
  auto word = [&sql]() -> std::string_view {
    const std::size_t from = std::min(sql.find_first_not_of(" \t\r\n"), sql.size());
    const std::size_t to = std::min(sql.find_first_of(" \t\r\n;(", from), sql.size());
    const std::string_view w = sql.substr(from, to - from);
    sql.remove_prefix(to);
    return w;
  };
  if (word() != "CREATE") return {};
  std::string_view w = word();
  if (w == "UNIQUE") w = word();
  if (w != "INDEX") return {};
  w = word();
  if (w == "CONCURRENTLY") w = word();
  if (w == "IF") {
    if (word() != "NOT" || word() != "EXISTS") return {};
    w = word();
  }
  return w;
}

// "/0003_live_item_index.up.sql" → {3, "live_item_index", "up"}; version 0 when malformed.
struct FileName {
  int version = 0;
  std::string_view name;
  std::string_view kind;
};
FileName parse_name(std::string_view path) {
  if (path.starts_with('/')) path.remove_prefix(1);
  FileName f;
  const std::size_t underscore = path.find('_');
  const std::size_t dot = path.find('.');
  if (underscore == path.npos || dot == path.npos || dot < underscore || !path.ends_with(".sql"))
    return {};
  const auto [end, ec] = std::from_chars(path.data(), path.data() + underscore, f.version);
  if (ec != std::errc() || end != path.data() + underscore) return {};
  f.name = path.substr(underscore + 1, dot - underscore - 1);
  f.kind = path.substr(dot + 1, path.size() - dot - 1 - 4);
  return f;
}

}  // namespace

std::vector<Migration> read_migrations(std::span<const EmbeddedFile> files) {
  std::map<int, Migration> by_version;
  for (const EmbeddedFile& file : files) {
    const FileName f = parse_name(file.path);
    if (f.version <= 0) continue;  // migration_files_test.cpp refuses such a name
    Migration& m =
        by_version.try_emplace(f.version, Migration{f.version, f.name, {}, {}}).first->second;
    const auto [header, script] = split_header(file.content);
    if (f.kind == "up") {
      m.up = script;
      m.concurrently = marked(header, kNoTransaction);
      m.index = built_index(script);
    } else if (f.kind == "down") {
      m.down = script;
    } else if (f.kind == "up-new-rows-only") {
      m.up_new_rows_only = script;
    }
  }
  std::vector<Migration> list;
  for (const auto& entry : by_version) list.push_back(entry.second);
  return list;
}

std::span<const EmbeddedFile> migration_files(Engine engine) {
  return engine == Engine::postgres ? postgres::migration_files() : sqlite::migration_files();
}

namespace postgres {
std::span<const Migration> migrations() {
  static const std::vector<Migration> list = read_migrations(migration_files());
  return list;
}
}  // namespace postgres

namespace sqlite {
std::span<const Migration> migrations() {
  static const std::vector<Migration> list = read_migrations(migration_files());
  return list;
}
}  // namespace sqlite

}  // namespace onceorder::store
