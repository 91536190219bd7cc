#include "http/auth.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "onceorder/core/limits.hpp"

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

// A name in the tokens file: what a log line or a console shows and a filter matches exactly,
// so no spaces, quotes or control characters.
bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxPrincipalName) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '@';
  });
}

bool is_lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Every message names the line and never quotes a word of it: any word may be a token.
Status line_error(int line_no, std::string message) {
  // Formatted before the message moves into the field (arguments have no order).
  std::string text = fmt::format("tokens file line {}: {}", line_no, message);
  return Status(Code::invalid_request, std::move(text),
                {FieldError{fmt::format("line {}", line_no), std::move(message)}});
}

// The SHA-256 (hex) a line's first word stands for: a `sha256:` entry's digest, or the digest
// of a plain token long enough to be one.
Result<std::string> entry_digest(std::string_view word, int line_no) {
  if (word.starts_with(kSha256Prefix)) {
    std::string digest(word.substr(kSha256Prefix.size()));
    std::transform(digest.begin(), digest.end(), digest.begin(), [](char c) {
      return c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    if (digest.size() != 64 || !is_lower_hex(digest)) {
      return line_error(line_no, "a sha256: entry needs exactly 64 hex digits");
    }
    return digest;
  }
  if (!std::all_of(word.begin(), word.end(), is_token_char)) {
    return line_error(line_no, "the token must be printable ASCII without spaces");
  }
  if (word.size() < kMinPlainTokenLength) {
    const bool swapped = parse_role(word).has_value();
    return line_error(
        line_no, swapped ? "the line starts with a role: write 'token role [name]'"
                         : fmt::format("a plain token must be at least {} characters (make one "
                                       "with 'onceorder token new ROLE')",
                                       kMinPlainTokenLength));
  }
  return sha256_hex(word);
}

const char* const kLineShape =
    "expected 'token role [name]' (role: admin, operator, viewer or customer:<id>)";

}  // namespace

Result<TokenTable> TokenTable::parse(std::string_view text) {
  TokenTable table;
  std::vector<std::pair<std::string, int>> names;  // name, line: duplicates are refused
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);

    const auto w = words(line);
    if (w.empty() || w[0].starts_with('#')) continue;
    if (w.size() != 2 && w.size() != 3) return line_error(line_no, kLineShape);
    OO_ASSIGN_OR_RETURN(std::string digest, entry_digest(w[0], line_no));
    auto principal = parse_role(w[1]);
    if (!principal) {
      return line_error(line_no,
                        "the second word is not a role (expected admin, operator, "
                        "viewer or customer:<id> with id ≥ 1)");
    }
    for (const auto& [known, _] : table.entries_) {
      if (known == digest) return line_error(line_no, "this token is already defined above");
    }
    if (w.size() == 3 && !is_valid_name(w[2])) {
      return line_error(
          line_no, fmt::format("the name (third word) must be 1-{} characters of [A-Za-z0-9._@-]",
                               kMaxPrincipalName));
    }
    std::string name = w.size() == 3 ? std::string(w[2]) : unnamed_principal_name(w[1], line_no);
    for (const auto& [seen, seen_line] : names) {
      if (seen == name) {
        return line_error(line_no, fmt::format("the same name as line {}: a name is one "
                                               "principal, give each token its own",
                                               seen_line));
      }
    }
    names.emplace_back(name, line_no);
    table.names_->push_back(std::move(name));
    principal->name = table.names_->back();
    table.entries_.emplace_back(std::move(digest), *principal);
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
                  "--tokens out to use the one serve creates");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return Status(Code::invalid_request,
                  fmt::format("cannot read tokens file '{}': {}", path, std::strerror(errno)));
  }
  struct stat st {};
  std::string text;
  std::optional<Status> refusal;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    refusal = Status(Code::invalid_request,
                     fmt::format("cannot read tokens file '{}': not a regular file", path));
  } else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    refusal = Status(Code::invalid_request,
                     fmt::format("tokens file '{}' may be read or written by group or others "
                                 "(mode {:03o}): its tokens are passwords; chmod 600 it",
                                 path, st.st_mode & 0777));
  } else {
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    if (n < 0)
      refusal = Status(Code::invalid_request, fmt::format("cannot read tokens file '{}'", path));
  }
  ::close(fd);
  if (refusal) return *refusal;
  auto table = parse(text);
  if (!table.ok()) {
    return Status(table.status().code(),
                  fmt::format("tokens file '{}': {}", path, table.status().message()),
                  table.status().fields());
  }
  return table;
}

std::optional<Principal> TokenTable::find(std::string_view token) const {
  const std::string digest = sha256_hex(token);
  std::optional<Principal> found;
  for (const auto& [known, principal] : entries_) {
    if (constant_time_equal(known, digest)) found = principal;
  }
  return found;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::admin:
      return "admin";
    case Role::operator_:
      return "operator";
    case Role::viewer:
      return "viewer";
    case Role::customer:
      return "customer";
    case Role::anonymous:
      return "anonymous";
  }
  return "anonymous";
}

std::string unnamed_principal_name(std::string_view role_word, int line_no) {
  return fmt::format("{}#{}", role_word, line_no);
}

std::string digest_line(std::string_view token, std::string_view role_word, std::string_view name) {
  std::string line = fmt::format("{}{} {}", kSha256Prefix, sha256_hex(token), role_word);
  if (!name.empty()) line += fmt::format(" {}", name);
  return line;
}

// FIPS 180-4. Tokens are compared by their digests, so this sees every token presented: it
// uses no table lookup or branch that depends on the data.
std::string sha256_hex(std::string_view data) {
  static constexpr std::uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg(data);
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  msg += static_cast<char>(0x80);
  while (msg.size() % 64 != 56) msg += '\0';
  for (int i = 7; i >= 0; --i) msg += static_cast<char>((bits >> (i * 8)) & 0xff);
  auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = 0;
      for (int b = 0; b < 4; ++b) {
        w[i] = (w[i] << 8) | static_cast<unsigned char>(msg[off + static_cast<size_t>(i * 4 + b)]);
      }
    }
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 =
          (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  std::string out;
  for (std::uint32_t v : h) out += fmt::format("{:08x}", v);
  return out;
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
                            Access access, bool reading, std::string_view* known) {
  if (access == Access::open) {
    if (known) *known = kAnonymousPrincipal;
    return Principal{Role::anonymous, 0, kAnonymousPrincipal};
  }
  if (tokens == nullptr) return Status(Code::unauthorized, "no token is configured");
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
  if (known) *known = principal->name;
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
