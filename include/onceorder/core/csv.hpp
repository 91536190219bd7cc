// A small RFC 4180 CSV reader for legacy imports: quoted fields, "" escapes, CRLF or LF.
// Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/status.hpp"

namespace onceorder {

struct CsvLine {
  int line_no = 0;  // 1-based line number in the file (the header is line 1)
  std::vector<std::string> fields;
};

// Splits `text` into records. Blank lines are skipped. An unterminated quote is an error
// naming its line. Quoted fields may not span lines (legacy files have none).
Result<std::vector<CsvLine>> parse_csv(std::string_view text);

}  // namespace onceorder
