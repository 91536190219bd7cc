// JSON text for set-based statements: batches pass their rows to both engines as one JSON
// parameter (PostgreSQL jsonb_to_recordset / jsonb_array_elements, SQLite json_each).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace onceorder::store {

// Appends `s` as a JSON string (quotes, backslashes and control characters escaped).
inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
}

}  // namespace onceorder::store
