// The tokens file `onceorder serve` makes when it is given none, and fresh tokens for
// `onceorder token new`. Without --tokens, serve uses `<database file>.tokens` next to an
// SQLite database, or `onceorder.tokens` in the state directory (--state-dir, else
// $STATE_DIRECTORY as systemd sets it, else the working directory) for PostgreSQL; with
// --state-dir the file is there for either engine. At first start the file is created holding
// one admin entry in its `sha256:` form; the token itself is shown once and never stored.
// Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "onceorder/core/db_url.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder::http {

// Random bytes in a new token: 256 bits, from the kernel's CSPRNG (getrandom).
inline constexpr std::size_t kTokenBytes = 32;
// What every generated token starts with, so that a scanner can tell one in a leaked file.
inline constexpr std::string_view kTokenPrefix = "oo_";
// The file serve makes in a state directory, and what it adds to an SQLite database's path.
inline constexpr std::string_view kStateTokensFile = "onceorder.tokens";
inline constexpr std::string_view kDbTokensSuffix = ".tokens";
// The name of the admin serve creates.
inline constexpr std::string_view kCreatedAdminName = "admin";

// A new token: kTokenPrefix and kTokenBytes random bytes in base64url (46 characters).
Result<std::string> new_token();

// Where serve keeps its tokens file without --tokens (see above). `state_dir`: --state-dir,
// empty when not given; `env_state_dir`: $STATE_DIRECTORY (its first entry when several).
std::string default_tokens_path(const DbUrl& db, const std::string& state_dir,
                                const std::string& env_state_dir);

// Creates `path` (mode 0600, written whole under a temporary name, then linked into place
// so that an existing file is never replaced and nobody sees half of one) holding one admin
// entry, and returns its token; nullopt when the file already exists (it is left alone).
Result<std::optional<std::string>> create_tokens_file(const std::string& path);

}  // namespace onceorder::http
