// Bearer-token authentication from a tokens file (`--tokens FILE`): one `token role [name]`
// per line, roles `admin`, `operator`, `viewer` (an operator who only reads) and
// `customer:<id>`; `name` is who the token stands for (the principal the access log and the
// audit trail name); blank lines and `#` comments are allowed. A TokenTable is immutable after
// loading and safe to share between threads.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onceorder/status.hpp"

namespace onceorder::http {

// `anonymous` is never in a tokens file: it is who calls an open route.
enum class Role { admin, operator_, viewer, customer, anonymous };

// Who calls without a tokens file (authentication off, loopback only), and an open route.
inline constexpr std::string_view kLocalPrincipal = "local";
inline constexpr std::string_view kAnonymousPrincipal = "anonymous";

struct Principal {
  Role role = Role::admin;
  std::int64_t customer_id = 0;  // customers only
  // The principal's name: the tokens file's, or one derived from the token (never the token
  // itself). Points into the TokenTable (or at a literal), which outlives every request.
  std::string_view name = kLocalPrincipal;

  bool is_customer() const { return role == Role::customer; }

  bool operator==(const Principal&) const = default;
};

class TokenTable {
 public:
  // Parses the file's text. A malformed line, a duplicate token or a file without any
  // token is an error naming the line (or the file).
  static Result<TokenTable> parse(std::string_view text);
  // Reads a regular file; an empty path is an error (an unset shell variable must not
  // turn authentication off).
  static Result<TokenTable> load(const std::string& path);
  // A warning when the file at `path` can be read (or written) by group or others: the
  // tokens are passwords. nullopt when it is private (or cannot be examined).
  static std::optional<std::string> exposure_warning(const std::string& path);

  // The principal a token stands for. Compares against every entry in constant time per
  // entry so that response timing does not reveal how much of a token was right.
  std::optional<Principal> find(std::string_view token) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Principal>> entries_;
  // The names the entries' principals point at; shared by copies of the table, and a deque
  // so that adding one never moves another.
  std::shared_ptr<std::deque<std::string>> names_ = std::make_shared<std::deque<std::string>>();
};

// The name a token without one in the file goes by: `<role>#` and the first 8 hex digits of
// the token's SHA-256 (`operator#1f2e3d4c`; `customer:7#…`). Stable across restarts, and a
// name in the file cannot take it ('#' is not allowed there).
std::string derived_principal_name(std::string_view role_word, std::string_view token);

// A role's word in the tokens file and in the audit trail: admin, operator, viewer, customer.
std::string_view role_name(Role role);

// SHA-256 of `data` as 64 lowercase hex digits.
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
// returns who is calling. No table means authentication is off: everyone is admin (which
// is why the server then listens on loopback only). Open routes answer `anonymous`
// without looking at the header. unauthorized (401) for a missing or unknown token,
// forbidden (403) for a role the route does not allow. `known`, when given, is set to the
// caller's name once the token is recognised (also when the role is then refused), for the
// access log.
Result<Principal> authorize(const TokenTable* tokens, std::optional<std::string_view> authorization,
                            Access access, bool reading = false, std::string_view* known = nullptr);

}  // namespace onceorder::http
