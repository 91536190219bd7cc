// Text checks shared by every input path (HTTP bodies, CSV files). Pure, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace onceorder {

// Number of code points, or nullopt when `s` is not valid UTF-8.
std::optional<size_t> utf8_length(std::string_view s);
// True when `s` contains a control character (U+0000–U+001F, U+007F).
bool has_control_chars(std::string_view s);
// Why `s` is not text every string input must be (valid UTF-8, no control character: a
// NUL would cut it short in PostgreSQL, which also refuses invalid UTF-8 with an error),
// or nullopt when it is. The one check of every string a client sends.
std::optional<std::string> text_problem(std::string_view s);
// The value of one hexadecimal digit, or -1 (percent-decoding).
int hex_digit_value(char c);
// Appends `s` as a JSON string: quotes, backslashes and control characters escaped (these as
// \u00XX), every other byte as it is. For JSON the database reads (batch rows as one JSON
// parameter) and for the event envelope (event_types.hpp).
void append_json_string(std::string& out, std::string_view s);

}  // namespace onceorder
