// ISO 8601 timestamps from legacy files, normalized to UTC. Pure, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "onceorder/core/status.hpp"

namespace onceorder {

// Accepts "YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][Z|±HH:MM|±HHMM]" (no zone means UTC) and
// returns "YYYY-MM-DDTHH:MM:SS.mmmZ" in UTC. The error says what was expected.
Result<std::string> normalize_iso8601(std::string_view text);
// Milliseconds since the Unix epoch of a timestamp as OnceOrder writes them
// ("YYYY-MM-DDTHH:MM:SS.mmmZ"), or nullopt for any other text.
std::optional<std::int64_t> unix_ms_of(std::string_view utc);

}  // namespace onceorder
