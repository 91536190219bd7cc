#include "onceorder/core/duration.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace onceorder {

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  auto bad = [&] {
    return Status(
        Code::invalid_request,
        fmt::format("'{}' is not a duration (e.g. 30d, 4h, 5m, 60s, 500ms, 1h30m)", text));
  };
  if (text.empty()) return bad();
  std::int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    std::int64_t n = 0;
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      if (n > 1'000'000'000) return bad();
      ++i;
    }
    if (i == start) return bad();
    std::int64_t unit = 0;
    if (text.substr(i, 2) == "ms") {
      unit = 1;
      i += 2;
    } else if (i < text.size() && text[i] == 's') {
      unit = 1000;
      ++i;
    } else if (i < text.size() && text[i] == 'm') {
      unit = 60'000;
      ++i;
    } else if (i < text.size() && text[i] == 'h') {
      unit = 3'600'000;
      ++i;
    } else if (i < text.size() && text[i] == 'd') {  // receipt retention: "30d"
      unit = 86'400'000;
      ++i;
    } else
      return bad();
    total += n * unit;
  }
  if (total <= 0) return bad();
  return std::chrono::milliseconds(total);
}

}  // namespace onceorder
