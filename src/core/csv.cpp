#include "onceorder/core/csv.hpp"

namespace onceorder {

Result<std::vector<CsvLine>> parse_csv(std::string_view text) {
  std::vector<CsvLine> out;
  int line_no = 0;
  size_t pos = 0;
  if (text.starts_with("\xEF\xBB\xBF")) pos = 3;  // UTF-8 byte-order mark
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    CsvLine rec{line_no, {}};
    std::string field;
    bool quoted = false;
    bool was_quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          field += c;
        }
      } else if (c == '"' && field.empty() && !was_quoted) {
        quoted = was_quoted = true;
      } else if (c == ',') {
        rec.fields.push_back(std::move(field));
        field.clear();
        was_quoted = false;
      } else {
        field += c;
      }
    }
    if (quoted) {
      return Status(Code::invalid_request,
                    "line " + std::to_string(line_no) + ": a quoted field is not closed");
    }
    rec.fields.push_back(std::move(field));
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace onceorder
