#include "onceorder/core/timestamp.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace onceorder {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

unsigned days_in_month(int y, int m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

Result<std::string> normalize_iso8601(std::string_view t) {
  auto bad = [&](std::string why) {
    return Status(Code::invalid_request,
                  "'" + std::string(t) + "' is not an ISO 8601 timestamp: " + why);
  };
  int y, mo, d, h, mi, s = 0, ms = 0;
  if (!digits(t, 0, 4, y) || t.size() < 16 || t[4] != '-' || !digits(t, 5, 2, mo) || t[7] != '-' ||
      !digits(t, 8, 2, d) || (t[10] != 'T' && t[10] != ' ') || !digits(t, 11, 2, h) ||
      t[13] != ':' || !digits(t, 14, 2, mi)) {
    return bad("expected YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]");
  }
  size_t i = 16;
  if (i < t.size() && t[i] == ':') {
    if (!digits(t, i + 1, 2, s)) return bad("seconds must be two digits");
    i += 3;
    if (i < t.size() && (t[i] == '.' || t[i] == ',')) {
      ++i;
      int n = 0;
      int scale = 100;
      for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++n) {
        ms += (t[i] - '0') * scale;
        scale /= 10;
      }
      if (n == 0) return bad("a fraction needs digits");
    }
  }
  int offset_min = 0;
  if (i < t.size()) {
    if (t[i] == 'Z' || t[i] == 'z') {
      ++i;
    } else if (t[i] == '+' || t[i] == '-') {
      const int sign = t[i] == '-' ? -1 : 1;
      int oh, om;
      if (!digits(t, i + 1, 2, oh)) return bad("the zone offset must be ±HH:MM");
      size_t j = i + 3;
      if (j < t.size() && t[j] == ':') ++j;
      if (!digits(t, j, 2, om) || oh > 23 || om > 59) return bad("the zone offset must be ±HH:MM");
      offset_min = sign * (oh * 60 + om);
      i = j + 2;
    }
  }
  if (i != t.size()) return bad("unexpected text after the time");
  if (mo < 1 || mo > 12 || d < 1 || static_cast<unsigned>(d) > days_in_month(y, mo) || h > 23 ||
      mi > 59 || s > 59) {
    return bad("no such date or time");
  }
  std::int64_t total_min =
      days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 1440 + h * 60 + mi -
      offset_min;
  std::int64_t days = total_min >= 0 ? total_min / 1440 : (total_min - 1439) / 1440;
  const auto minute_of_day = static_cast<int>(total_min - days * 1440);
  std::int64_t uy;
  unsigned um, ud;
  civil_from_days(days, uy, um, ud);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", uy, um, ud, minute_of_day / 60,
                     minute_of_day % 60, s, ms);
}

std::optional<std::int64_t> unix_ms_of(std::string_view t) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0;
  if (t.size() != 24 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' ||
      t[16] != ':' || t[19] != '.' || t[23] != 'Z' || !digits(t, 0, 4, y) || !digits(t, 5, 2, mo) ||
      !digits(t, 8, 2, d) || !digits(t, 11, 2, h) || !digits(t, 14, 2, mi) ||
      !digits(t, 17, 2, sec) || !digits(t, 20, 3, ms) || mo < 1 || mo > 12 || d < 1 || d > 31) {
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60000 + sec * 1000 + ms;
}

}  // namespace onceorder
