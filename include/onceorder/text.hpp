// Text checks shared by every input path (HTTP bodies, CSV files). Pure, thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace onceorder {

// Number of code points, or nullopt when `s` is not valid UTF-8.
std::optional<size_t> utf8_length(std::string_view s);
// True when `s` contains a control character (U+0000–U+001F, U+007F).
bool has_control_chars(std::string_view s);

}  // namespace onceorder
