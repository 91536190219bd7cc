#include "http/router.hpp"
#include "onceorder/core/text.hpp"

#include <algorithm>

namespace onceorder::http {
namespace {

using bhttp::verb;

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  path.remove_prefix(1);  // the leading '/'
  for (;;) {
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// A dashboard file name in the shape of web/'s files: no empty, hidden ('.', '..', '.git') or
// escaped segments. Only embedded files are served, so this only keeps odd paths out early.
bool is_safe_file(std::span<const std::string_view> segs) {
  for (std::string_view s : segs) {
    if (s.empty() || s.front() == '.') return false;
    for (char c : s) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
  }
  return true;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_digit_value(s[i + 1]);
      const int lo = hex_digit_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Whether `segs` (of `path`) fit `pattern`; then, when `m` is given, its captures. Walks the
// pattern in place: matching runs several times per request and allocates nothing.
bool match_pattern(std::string_view pattern, std::span<const std::string_view> segs,
                   std::string_view path, RouteMatch* m) {
  std::string_view rest = pattern.substr(1);
  for (size_t i = 0;; ++i) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (part == "{file}") {
      // The dashboard's files never shadow the API: a path under /v1 is a route or nothing.
      if (i >= segs.size() || segs[0] == "v1" || !is_safe_file(segs.subspan(i))) return false;
      if (m) m->file = std::string(path.substr(segs[i].data() - path.data()));
      return true;
    }
    if (i >= segs.size()) return false;
    if (!part.starts_with('{')) {
      if (part != segs[i]) return false;
    } else if (segs[i].empty()) {
      return false;
    } else if (m && part == "{scope}") {
      m->scope = std::string(segs[i]);
    } else if (m) {
      m->ids.emplace_back(segs[i]);
    }
    if (slash == std::string_view::npos) return i + 1 == segs.size();
    rest.remove_prefix(slash + 1);
  }
}

}  // namespace

const Route* RouteMatch::find(verb method) const {
  for (const Route& row : rows) {
    if (row.method == method) return &row;
  }
  return nullptr;
}

std::optional<RouteMatch> match_route(std::string_view path, std::span<const Route> table) {
  if (!path.starts_with('/')) return std::nullopt;
  const auto segs = segments(path);
  for (size_t first = 0; first < table.size();) {
    size_t end = first + 1;
    while (end < table.size() && table[end].pattern == table[first].pattern) ++end;
    if (match_pattern(table[first].pattern, segs, path, nullptr)) {
      RouteMatch m;
      match_pattern(table[first].pattern, segs, path, &m);
      m.pattern = table[first].pattern;
      m.rows = table.subspan(first, end - first);
      return m;
    }
    first = end;
  }
  return std::nullopt;
}

std::string allow_header(std::span<const Route> rows) {
  std::string out;
  for (const Route& row : rows) {
    if (!out.empty()) out += ", ";
    out += std::string(bhttp::to_string(row.method));
    if (row.method == verb::get) out += ", HEAD";  // the server answers HEAD wherever GET is
  }
  return out;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

Result<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!name || !value) {
      return Status(Code::invalid_request, "the query string has a bad percent escape");
    }
    for (const auto& [seen, _] : out) {
      if (seen != *name) continue;
      // A name that is not text is never echoed back as a field (API.md).
      if (text_problem(*name)) {
        return Status(Code::invalid_request, "a query parameter appears more than once");
      }
      return Status(Code::invalid_request, "a query parameter appears more than once",
                    {FieldError{*name, "appears more than once"}});
    }
    out.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

}  // namespace onceorder::http
