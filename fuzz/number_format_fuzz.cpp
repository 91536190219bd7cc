// Number formats (src/core/number_format.*): format_number round-trips for every radix and
// width; parse_legacy_number agrees with a reference reading for every scheme, and the
// numbers it accepts format back to the same digits.
#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>

#include "check.hpp"
#include "onceorder/core/number_format.hpp"

using namespace onceorder;

namespace {

constexpr LegacyScheme kSchemes[] = {LegacyScheme::dec3, LegacyScheme::hex3, LegacyScheme::dec4};

void check_format(std::int64_t value, int radix, int width) {
  const std::string text = format_number(value, radix, width);
  FUZZ_CHECK(static_cast<int>(text.size()) >= width);
  for (char c : text) FUZZ_CHECK((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'));
  std::int64_t back = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), back, radix);
  FUZZ_CHECK(ec == std::errc() && end == text.data() + text.size());
  FUZZ_CHECK(back == (value < 0 ? 0 : value));  // negative values render as 0
  // Exactly `width` digits when the value fits them, else written in full (no leading 0).
  if (value <= largest_value(width, radix))
    FUZZ_CHECK(static_cast<int>(text.size()) == width);
  else
    FUZZ_CHECK(text.front() != '0');
}

void check_legacy(std::string_view text, LegacyScheme scheme) {
  const bool hex = scheme == LegacyScheme::hex3;
  const int digits = scheme == LegacyScheme::dec4 ? 4 : 3;
  const int radix = hex ? 16 : 10;
  // Reference: exactly `digits` digits of the radix (from_chars also takes lower-case).
  std::int64_t ref = 0;
  bool ref_ok = static_cast<int>(text.size()) == digits;
  for (char c : text)
    ref_ok = ref_ok && (hex ? std::isxdigit(static_cast<unsigned char>(c))
                            : std::isdigit(static_cast<unsigned char>(c)));
  if (ref_ok) {
    std::from_chars(text.data(), text.data() + text.size(), ref, radix);
    ref_ok = ref >= 1;
  }
  const auto parsed = parse_legacy_number(text, scheme);
  FUZZ_CHECK(parsed.ok() == ref_ok);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == Code::invalid_request);
    return;
  }
  FUZZ_CHECK(*parsed == ref);
  FUZZ_CHECK(*parsed >= 1 && *parsed <= largest_value(digits, radix));
  // The digits it accepted are the canonical spelling of the value (case aside).
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  FUZZ_CHECK(format_number(*parsed, radix, digits) == upper);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The raw bytes as a legacy number in every scheme (short inputs are the interesting ones).
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  for (LegacyScheme s : kSchemes) {
    check_legacy(raw, s);
    FUZZ_CHECK(parse_scheme(scheme_name(s)).ok() && *parse_scheme(scheme_name(s)) == s);
  }
  if (auto s = parse_scheme(raw); s.ok()) FUZZ_CHECK(scheme_name(*s) == raw);

  FuzzedDataProvider in(data, size);
  const int radix = in.ConsumeIntegralInRange<int>(2, 36);
  const int width = in.ConsumeIntegralInRange<int>(1, 18);
  const std::int64_t value = in.ConsumeIntegral<std::int64_t>();
  check_format(value, radix, width);

  // Every value a legacy scheme can hold formats to digits it parses back.
  const LegacyScheme scheme = kSchemes[in.ConsumeIntegralInRange<int>(0, 2)];
  const int digits = scheme == LegacyScheme::dec4 ? 4 : 3;
  const int lradix = scheme == LegacyScheme::hex3 ? 16 : 10;
  const std::int64_t legacy =
      in.ConsumeIntegralInRange<std::int64_t>(1, largest_value(digits, lradix));
  const auto back = parse_legacy_number(format_number(legacy, lradix, digits), scheme);
  FUZZ_CHECK(back.ok() && *back == legacy);

  // A scope format that validates renders its whole range in exactly `width` digits.
  ScopeFormat f{in.ConsumeIntegralInRange<int>(-2, 40), in.ConsumeIntegralInRange<int>(-2, 40),
                in.ConsumeIntegral<std::int64_t>()};
  if (validate_scope_format(f).ok()) {
    FUZZ_CHECK(f.max >= 1 && f.max <= largest_value(f.width, f.radix));
    FUZZ_CHECK(static_cast<int>(format_number(f.max, f.radix, f.width).size()) == f.width);
    check_format(f.max, f.radix, f.width);
  } else {
    FUZZ_CHECK(!validate_scope_format(f).fields().empty());
  }
  return 0;
}
