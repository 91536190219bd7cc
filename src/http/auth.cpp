#include "http/auth.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace onceorder::http {
namespace {

bool is_token_char(char c) { return c >= 0x21 && c <= 0x7E; }

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits on runs of blanks.
std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::optional<Principal> parse_role(std::string_view role) {
  if (role == "admin") return Principal{Role::admin, 0};
  if (role == "operator") return Principal{Role::operator_, 0};
  if (role == "viewer") return Principal{Role::viewer, 0};
  constexpr std::string_view kCustomer = "customer:";
  if (!role.starts_with(kCustomer)) return std::nullopt;
  const std::string_view digits = role.substr(kCustomer.size());
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id < 1) return std::nullopt;
  return Principal{Role::customer, id};
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

Status line_error(int line_no, std::string message) {
  return Status(Code::invalid_request, fmt::format("tokens file line {}: {}", line_no, message),
                {FieldError{fmt::format("line {}", line_no), std::move(message)}});
}

}  // namespace

Result<TokenTable> TokenTable::parse(std::string_view text) {
  TokenTable table;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);

    const auto w = words(line);
    if (w.empty() || w[0].starts_with('#')) continue;
    if (w.size() != 2) {
      return line_error(line_no,
                        "expected 'token role' (role: admin, operator, viewer or customer:<id>)");
    }
    if (!std::all_of(w[0].begin(), w[0].end(), is_token_char)) {
      return line_error(line_no, "the token must be printable ASCII without spaces");
    }
    auto principal = parse_role(w[1]);
    if (!principal) {
      return line_error(line_no, fmt::format("unknown role '{}' (expected admin, operator, viewer "
                                             "or customer:<id> with id ≥ 1)",
                                             w[1]));
    }
    for (const auto& [token, _] : table.entries_) {
      if (token == w[0]) return line_error(line_no, "this token is already defined above");
    }
    table.entries_.emplace_back(std::string(w[0]), *principal);
  }
  if (table.entries_.empty()) {
    return Status(Code::invalid_request, "the tokens file defines no token");
  }
  return table;
}

Result<TokenTable> TokenTable::load(const std::string& path) {
  if (path.empty()) {
    return Status(Code::invalid_request,
                  "the tokens file path is empty (an unset variable?): name the file, or leave "
                  "--tokens out to serve on loopback without authentication");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(Code::invalid_request, fmt::format("cannot read tokens file '{}': {}", path,
                                                     ec ? ec.message() : "not a regular file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::invalid_request, fmt::format("cannot read tokens file '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  auto table = parse(text.str());
  if (!table.ok()) {
    return Status(table.status().code(),
                  fmt::format("tokens file '{}': {}", path, table.status().message()),
                  table.status().fields());
  }
  return table;
}

std::optional<std::string> TokenTable::exposure_warning(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) == 0) return std::nullopt;
  return fmt::format(
      "tokens file '{}' is readable by group or others (mode {:03o}): its tokens are "
      "passwords; chmod 600 it",
      path, st.st_mode & 0777);
}

std::optional<Principal> TokenTable::find(std::string_view token) const {
  std::optional<Principal> found;
  for (const auto& [known, principal] : entries_) {
    if (constant_time_equal(known, token)) found = principal;
  }
  return found;
}

bool admits(Role role, Access access, bool reading) {
  switch (role) {
    case Role::admin:
      return true;
    case Role::operator_:
      return access == Access::staff || access == Access::readers;
    case Role::viewer:
      return reading && (access == Access::staff || access == Access::readers);
    case Role::customer:
      return access == Access::orders || access == Access::readers;
    case Role::anonymous:
      return access == Access::open;
  }
  return false;
}

Result<Principal> authorize(const TokenTable* tokens, std::optional<std::string_view> authorization,
                            Access access, bool reading) {
  if (access == Access::open) return Principal{Role::anonymous, 0};
  if (tokens == nullptr) return Principal{Role::admin, 0};
  if (!authorization) {
    return Status(Code::unauthorized, "send 'Authorization: Bearer <token>'");
  }
  constexpr std::string_view kScheme = "bearer ";
  std::string_view value = *authorization;
  const bool bearer = value.size() > kScheme.size() &&
                      std::equal(kScheme.begin(), kScheme.end(), value.begin(), [](char a, char b) {
                        return a == (b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
                      });
  if (!bearer) return Status(Code::unauthorized, "the Authorization scheme must be Bearer");
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  const auto principal = tokens->find(value);
  if (!principal) return Status(Code::unauthorized, "unknown token");
  if (!admits(principal->role, access, reading)) {
    if (principal->role == Role::viewer && !reading && access != Access::orders) {
      return Status(Code::forbidden, "a viewer token only reads; this needs an admin or operator");
    }
    return Status(Code::forbidden, access == Access::staff
                                       ? "this route needs an admin or operator token"
                                       : "this route needs an admin or customer token");
  }
  return *principal;
}

}  // namespace onceorder::http
