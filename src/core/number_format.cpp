#include "onceorder/core/number_format.hpp"

#include <limits>

#include "onceorder/core/limits.hpp"

namespace onceorder {

std::int64_t largest_value(int width, int radix) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t v = 1;
  for (int i = 0; i < width; ++i) {
    if (v > kMax / radix) return kMax;
    v *= radix;
  }
  return v - 1;
}

Status validate_scope_format(const ScopeFormat& f) {
  std::vector<FieldError> errors;
  if (f.width < 1 || f.width > 18) errors.push_back({"width", "must be an integer from 1 to 18"});
  if (f.radix < 2 || f.radix > 36) errors.push_back({"radix", "must be an integer from 2 to 36"});
  if (errors.empty()) {
    const std::int64_t limit = largest_value(f.width, f.radix);
    if (f.max < 1 || f.max > limit) {
      errors.push_back({"max", "must be from 1 to " + std::to_string(limit) + " (what " +
                                   std::to_string(f.width) + " digits of radix " +
                                   std::to_string(f.radix) + " can hold)"});
    }
  }
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid scope format", std::move(errors));
}

std::string format_number(std::int64_t value, int radix, int width) {
  static constexpr char kDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string out;
  auto v = static_cast<std::uint64_t>(value < 0 ? 0 : value);
  do {
    out.insert(out.begin(), kDigits[v % static_cast<std::uint64_t>(radix)]);
    v /= static_cast<std::uint64_t>(radix);
  } while (v != 0);
  if (static_cast<int>(out.size()) < width)
    out.insert(0, static_cast<size_t>(width) - out.size(), '0');
  return out;
}

bool is_valid_scope_name(std::string_view scope) {
  if (scope.empty() || scope.size() > kMaxScopeName) return false;
  // "." and ".." are path segments: proxies and clients normalize them away.
  if (scope == "." || scope == "..") return false;
  for (char c : scope) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string_view scheme_name(LegacyScheme scheme) {
  switch (scheme) {
    case LegacyScheme::dec3:
      return "dec3";
    case LegacyScheme::hex3:
      return "hex3";
    case LegacyScheme::dec4:
      return "dec4";
  }
  return "dec4";
}

Result<LegacyScheme> parse_scheme(std::string_view name) {
  if (name == "dec3") return LegacyScheme::dec3;
  if (name == "hex3") return LegacyScheme::hex3;
  if (name == "dec4") return LegacyScheme::dec4;
  return Status(Code::invalid_request,
                "unknown scheme '" + std::string(name) + "' (expected dec3, hex3 or dec4)");
}

Result<std::int64_t> parse_legacy_number(std::string_view text, LegacyScheme scheme) {
  const bool hex = scheme == LegacyScheme::hex3;
  const size_t digits = scheme == LegacyScheme::dec4 ? 4 : 3;
  const int radix = hex ? 16 : 10;
  auto bad = [&](std::string why) {
    return Status(Code::invalid_request, "'" + std::string(text) + "' is not a " +
                                             std::string(scheme_name(scheme)) + " number: " + why);
  };
  if (text.size() != digits) {
    return bad("expected exactly " + std::to_string(digits) + (hex ? " hexadecimal" : " decimal") +
               " digits");
  }
  std::int64_t value = 0;
  for (char c : text) {
    int d = -1;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (hex && c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else if (hex && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    if (d < 0)
      return bad(std::string("'") + c + "' is not a " + (hex ? "hexadecimal" : "decimal") +
                 " digit");
    value = value * radix + d;
  }
  if (value < 1) return bad("numbers start at 1");
  return value;
}

}  // namespace onceorder
