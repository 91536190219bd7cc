#include "onceorder/core/number_format.hpp"

#include <gtest/gtest.h>

namespace onceorder {
namespace {

TEST(NumberFormat, PadsAndUsesRadix) {
  EXPECT_EQ(format_number(296, 10, 4), "0296");
  EXPECT_EQ(format_number(1000, 16, 3), "3E8");
  EXPECT_EQ(format_number(35, 36, 2), "0Z");
  EXPECT_EQ(format_number(5, 2, 4), "0101");
  EXPECT_EQ(format_number(12345, 10, 4), "12345");  // wider than width: written in full
  EXPECT_EQ(format_number(0, 10, 1), "0");
}

TEST(NumberFormat, ValidatesScopeFormat) {
  EXPECT_TRUE(validate_scope_format({4, 10, 9999}).ok());
  EXPECT_TRUE(validate_scope_format({3, 16, 4095}).ok());
  EXPECT_FALSE(validate_scope_format({4, 10, 10000}).ok());
  EXPECT_FALSE(validate_scope_format({4, 10, 0}).ok());
  EXPECT_FALSE(validate_scope_format({0, 10, 1}).ok());
  EXPECT_FALSE(validate_scope_format({19, 10, 1}).ok());
  EXPECT_FALSE(validate_scope_format({4, 1, 1}).ok());
  EXPECT_FALSE(validate_scope_format({4, 37, 1}).ok());
  auto st = validate_scope_format({0, 99, 1});
  ASSERT_EQ(st.fields().size(), 2u);
  EXPECT_EQ(st.fields()[0].field, "width");
  EXPECT_EQ(st.fields()[1].field, "radix");
  EXPECT_EQ(largest_value(18, 10), 999999999999999999LL);
  EXPECT_EQ(largest_value(18, 36), INT64_MAX);
}

TEST(NumberFormat, ScopeNames) {
  EXPECT_TRUE(is_valid_scope_name("TEST-001"));
  EXPECT_TRUE(is_valid_scope_name("a.b_c-9"));
  EXPECT_TRUE(is_valid_scope_name(std::string(64, 'x')));
  EXPECT_FALSE(is_valid_scope_name(""));
  EXPECT_FALSE(is_valid_scope_name(std::string(65, 'x')));
  EXPECT_FALSE(is_valid_scope_name("a b"));
  EXPECT_FALSE(is_valid_scope_name("a/b"));
  EXPECT_FALSE(is_valid_scope_name("測試"));
  EXPECT_FALSE(is_valid_scope_name("."));
  EXPECT_FALSE(is_valid_scope_name(".."));
  EXPECT_TRUE(is_valid_scope_name("..."));
  EXPECT_TRUE(is_valid_scope_name(".a"));
}

TEST(LegacyNumbers, ConvertByDeclaredSchemeNeverByLooks) {
  EXPECT_EQ(*parse_legacy_number("100", LegacyScheme::dec3), 100);
  EXPECT_EQ(*parse_legacy_number("100", LegacyScheme::hex3), 256);
  EXPECT_EQ(*parse_legacy_number("3E8", LegacyScheme::hex3), 1000);
  EXPECT_EQ(*parse_legacy_number("3e8", LegacyScheme::hex3), 1000);
  EXPECT_EQ(*parse_legacy_number("FFF", LegacyScheme::hex3), 4095);
  EXPECT_EQ(*parse_legacy_number("0296", LegacyScheme::dec4), 296);
  EXPECT_EQ(*parse_legacy_number("999", LegacyScheme::dec3), 999);
  EXPECT_FALSE(parse_legacy_number("3E8", LegacyScheme::dec3).ok());
  EXPECT_FALSE(parse_legacy_number("0296", LegacyScheme::dec3).ok());
  EXPECT_FALSE(parse_legacy_number("296", LegacyScheme::dec4).ok());
  EXPECT_FALSE(parse_legacy_number("G00", LegacyScheme::hex3).ok());
  EXPECT_FALSE(parse_legacy_number("000", LegacyScheme::dec3).ok());
  EXPECT_FALSE(parse_legacy_number(" 12", LegacyScheme::dec3).ok());
  EXPECT_FALSE(parse_legacy_number("-12", LegacyScheme::dec3).ok());
  EXPECT_FALSE(parse_legacy_number("", LegacyScheme::dec4).ok());
}

TEST(LegacyNumbers, SchemeNames) {
  for (auto s : {LegacyScheme::dec3, LegacyScheme::hex3, LegacyScheme::dec4})
    EXPECT_EQ(*parse_scheme(scheme_name(s)), s);
  EXPECT_FALSE(parse_scheme("DEC3").ok());
  EXPECT_FALSE(parse_scheme("hex4").ok());
}

}  // namespace
}  // namespace onceorder
