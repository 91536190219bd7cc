// Durations on the command line: "30d", "4h", "60s", "5m", "500ms", "1h30m". Pure, thread-safe.
#pragma once

#include <chrono>
#include <string_view>

#include "onceorder/core/status.hpp"

namespace onceorder {

Result<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace onceorder
