#include "store/sql_catalog.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace onceorder::store {
namespace {

constexpr std::string_view kName = "-- name:";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "onceorder: SQL catalog: %s\n", what.c_str());
  std::abort();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// `text` without its trailing blank and comment lines and one final ';'.
std::string_view statement_text(std::string_view text) {
  for (;;) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    const auto nl = text.rfind('\n');
    const std::string_view last = text.substr(nl == std::string_view::npos ? 0 : nl + 1);
    if (last.empty() || !trim(last).starts_with("--")) break;
    text.remove_suffix(last.size());
  }
  if (text.ends_with(';')) text.remove_suffix(1);
  return text;
}

std::string_view engine_dir(Engine engine) {
  return engine == Engine::postgres ? "/postgres/" : "/sqlite/";
}

std::vector<EmbeddedFile> files_of(std::span<const EmbeddedFile> files, Engine engine) {
  std::vector<EmbeddedFile> out;
  for (const auto& f : files) {
    if (f.path.starts_with(engine_dir(engine))) out.push_back(f);
  }
  return out;
}

}  // namespace

const SqlCatalog& SqlCatalog::of(Engine engine) {
  if (engine == Engine::postgres) {
    static const SqlCatalog pg(files_of(embedded_sql(), Engine::postgres),
                               files_of(embedded_sql_overlay(), Engine::postgres));
    return pg;
  }
  static const SqlCatalog lite(files_of(embedded_sql(), Engine::sqlite),
                               files_of(embedded_sql_overlay(), Engine::sqlite));
  return lite;
}

SqlCatalog::SqlCatalog(std::span<const EmbeddedFile> files, std::span<const EmbeddedFile> overlay) {
  for (const auto& f : files) parse(f, false);
  for (const auto& f : overlay) parse(f, true);
}

void SqlCatalog::parse(const EmbeddedFile& file, bool overlay) {
  std::string_view header;  // the current statement's `-- name:` line
  std::size_t body = 0;     // where its text starts in file.content
  std::size_t at = 0;
  while (at < file.content.size()) {
    const auto nl = file.content.find('\n', at);
    const auto end = nl == std::string_view::npos ? file.content.size() : nl + 1;
    const std::string_view line =
        trim(file.content.substr(at, (nl == std::string_view::npos ? end : nl) - at));
    if (line.starts_with(kName)) {
      if (!header.empty()) {
        add(file.path, header, statement_text(file.content.substr(body, at - body)), overlay);
      }
      header = line;
      body = end;
    }
    at = end;
  }
  if (!header.empty()) add(file.path, header, statement_text(file.content.substr(body)), overlay);
}

void SqlCatalog::add(std::string_view file, std::string_view header, std::string_view text,
                     bool overlay) {
  std::string_view words = trim(header.substr(kName.size()));
  const auto space = words.find(' ');
  const std::string_view name = words.substr(0, space);
  const std::string_view flags = space == words.npos ? "" : trim(words.substr(space));
  if (name.empty() || (!flags.empty() && flags != "may_wait")) {
    fail(fmt::format("{}: malformed line '{}'", file, header));
  }
  if (trim(text).empty()) fail(fmt::format("{}: statement {} has no text", file, name));
  const auto it = statements_.find(name);
  if (overlay != (it != statements_.end())) {
    fail(fmt::format("{}: {} {}", file, name,
                     overlay ? "replaces no statement (an overlay)" : "is defined twice"));
  }
  // The name lives in the embedded file, as the text does: both outlast the catalog.
  statements_[std::string(name)] = Statement{name, text, flags == "may_wait"};
}

Statement SqlCatalog::get(std::string_view name) const {
  const auto it = statements_.find(name);
  if (it == statements_.end()) fail(fmt::format("no statement named {}", name));
  std::lock_guard lock(mutex_);
  asked_.insert(std::string(name));
  return it->second;
}

std::vector<std::string> SqlCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : statements_) out.push_back(name);
  return out;
}

std::vector<std::string> SqlCatalog::unused() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, s] : statements_) {
    if (!asked_.contains(name)) out.push_back(name);
  }
  return out;
}

}  // namespace onceorder::store
