// Document-number formats: how a scope renders its values (width / radix / max) and how
// legacy numbers are read by their declared scheme. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "onceorder/core/status.hpp"

namespace onceorder {

// How one scope renders numbers: `value` in `radix`, upper-case digits, zero-padded to
// `width`. Values run 1..max, and max must fit in width digits.
struct ScopeFormat {
  int width = 4;
  int radix = 10;
  std::int64_t max = 9999;

  bool operator==(const ScopeFormat&) const = default;
};

// Field errors name "width", "radix" and "max".
Status validate_scope_format(const ScopeFormat& format);
// Largest value `width` digits of `radix` can hold (saturates at INT64_MAX).
std::int64_t largest_value(int width, int radix);
// "0296" for (296, 10, 4). Values wider than `width` are written in full.
std::string format_number(std::int64_t value, int radix, int width);

// Scope names: 1–kMaxScopeName (limits.hpp) characters of [A-Za-z0-9._-].
bool is_valid_scope_name(std::string_view scope);

// The numbering schemes of the legacy system. A number is read by its declared scheme
// only, never guessed from how it looks: "100" is 100 in dec3 and 256 in hex3.
enum class LegacyScheme { dec3, hex3, dec4 };

std::string_view scheme_name(LegacyScheme scheme);
Result<LegacyScheme> parse_scheme(std::string_view name);
// The value of `text` in `scheme`: exactly 3 (dec3, hex3) or 4 (dec4) digits, hex in
// either case, value ≥ 1. The error message says what was expected.
Result<std::int64_t> parse_legacy_number(std::string_view text, LegacyScheme scheme);

}  // namespace onceorder
