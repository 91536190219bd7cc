// Bearer-token authentication from a tokens file (`--tokens FILE`): one `token role [name]`
// per line, roles `admin`, `operator`, `viewer` (an operator who only reads) and
// `customer:<id>`; `name` is who the token stands for (the principal the access log and the
// audit trail name); blank lines and `#` comments are allowed. `token` is either the token
// itself (at least kMinPlainTokenLength characters) or `sha256:<64 hex digits>`, its SHA-256,
// so that no token need rest on disk. The table keeps only digests, and no error it reports
// quotes a word of the file (a swapped `admin <token>` line must not print the token). A
// TokenTable is immutable after loading and safe to share between threads.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onceorder/core/status.hpp"

namespace onceorder::http {

// `anonymous` is never in a tokens file: it is who calls an open route.
enum class Role { admin, operator_, viewer, customer, anonymous };

// Who calls an open route.
inline constexpr std::string_view kAnonymousPrincipal = "anonymous";
// The shortest token a file may hold in plain text: 32 characters, so that even a token of
// hex digits carries 128 bits. (A `sha256:` entry's token cannot be measured.)
inline constexpr std::size_t kMinPlainTokenLength = 32;
// How a tokens file names a token by its digest.
inline constexpr std::string_view kSha256Prefix = "sha256:";

struct Principal {
  Role role = Role::anonymous;
  std::int64_t customer_id = 0;  // customers only
  // The principal's name: the tokens file's, or `<role>#<line>` (never derived from the
  // token). Points into the TokenTable (or at a literal), which outlives every request.
  std::string_view name = kAnonymousPrincipal;

  bool is_customer() const { return role == Role::customer; }

  bool operator==(const Principal&) const = default;
};

class TokenTable {
 public:
  // Parses the file's text. A malformed line, a plain token shorter than
  // kMinPlainTokenLength, a duplicate token or name, or a file without any token is an error
  // naming the line (or the file) and never quoting it.
  static Result<TokenTable> parse(std::string_view text);
  // Reads a regular file; an empty path is an error (an unset shell variable must not
  // turn authentication off), and so is a file group or others may read or write (its
  // tokens are passwords), checked on the open descriptor.
  static Result<TokenTable> load(const std::string& path);

  // The principal a token stands for. Compares the token's SHA-256 with every entry's in
  // constant time per entry, so that response timing does not reveal how much was right.
  std::optional<Principal> find(std::string_view token) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Principal>> entries_;  // (SHA-256 hex, principal)
  // The names the entries' principals point at; shared by copies of the table, and a deque
  // so that adding one never moves another.
  std::shared_ptr<std::deque<std::string>> names_ = std::make_shared<std::deque<std::string>>();
};

// The name a token without one in the file goes by: `<role>#<line number>` (`operator#3`;
// `customer:7#4`). Nothing of the token: a viewer sees names in /v1/actions. A name in the
// file cannot take it ('#' is not allowed there).
std::string unnamed_principal_name(std::string_view role_word, int line_no);

// The line a tokens file holds for `token`: `sha256:<hex> role [name]`.
std::string digest_line(std::string_view token, std::string_view role_word, std::string_view name);

// A role's word in the tokens file and in the audit trail: admin, operator, viewer, customer.
std::string_view role_name(Role role);

// SHA-256 of `data` as 64 lowercase hex digits (no secret-dependent branches or lookups).
std::string sha256_hex(std::string_view data);

// Who may call a route (API.md's role list of each section).
enum class Access {
  open,     // anyone (health, metrics, dashboard files)
  staff,    // admin or operator (stock, scheduling, scopes, documents, invariants)
  orders,   // admin or customer (orders; a customer only its own, checked by the handler)
  readers,  // admin, operator or customer (order lists; a customer only its own, checked by
            // the handler)
};

// Whether `role` may call a route of `access`; `reading`: the request only reads (GET). The one
// rule of who may do what (the OpenAPI document's roles are checked against it).
bool admits(Role role, Access access, bool reading);

// Checks an `Authorization` header value (nullopt: no header) against `tokens` and
// returns who is calling. No table admits no token. Open routes answer `anonymous`
// without looking at the header. unauthorized (401) for a missing or unknown token,
// forbidden (403) for a role the route does not allow. `known`, when given, is set to the
// caller's name once the token is recognised (also when the role is then refused), for the
// access log.
Result<Principal> authorize(const TokenTable* tokens, std::optional<std::string_view> authorization,
                            Access access, bool reading = false, std::string_view* known = nullptr);

}  // namespace onceorder::http
