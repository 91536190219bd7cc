// Keeping database passwords out of everything OnceOrder prints or logs: the `--db` URL
// may carry one (`postgresql://u:PASSWORD@h/db`, `?password=`, or libpq's keyword form
// `host=h password=PASSWORD`), and libpq's error messages may quote parts of the URL.
// Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace onceorder {

// `url` with every password replaced by "***" ("postgresql://u:***@h/db"); anything
// without a password (SQLite paths included) unchanged. Print this, never the URL itself.
std::string redact_db_url(std::string_view url);

// `message` (e.g. a libpq error about `url`) with `url` and every password `url` holds,
// as written or percent-decoded, replaced by its redacted form / "***".
std::string redact_db_message(std::string_view message, std::string_view url);

}  // namespace onceorder
