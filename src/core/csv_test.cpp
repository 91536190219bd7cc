#include "onceorder/core/csv.hpp"

#include <gtest/gtest.h>

#include "onceorder/core/text.hpp"

namespace onceorder {
namespace {

TEST(Csv, SplitsQuotesAndKeepsLineNumbers) {
  auto r =
      parse_csv("\xEF\xBB\xBFnumber,title\r\n295,\"a, b\"\n\n\"3E8\",\"say \"\"hi\"\"\"\n296,\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].fields, (std::vector<std::string>{"number", "title"}));
  EXPECT_EQ((*r)[1].fields, (std::vector<std::string>{"295", "a, b"}));
  EXPECT_EQ((*r)[2].line_no, 4);
  EXPECT_EQ((*r)[2].fields, (std::vector<std::string>{"3E8", "say \"hi\""}));
  EXPECT_EQ((*r)[3].fields, (std::vector<std::string>{"296", ""}));
}

TEST(Csv, UnclosedQuoteNamesItsLine) {
  auto r = parse_csv("number\n\"12\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos);
}

TEST(Text, Utf8) {
  EXPECT_EQ(utf8_length("abc"), 3u);
  EXPECT_EQ(utf8_length("測試"), 2u);
  EXPECT_EQ(utf8_length("😀"), 1u);
  EXPECT_FALSE(utf8_length("\xff").has_value());
  EXPECT_FALSE(utf8_length("\xC0\xAF").has_value());      // overlong
  EXPECT_FALSE(utf8_length("\xED\xA0\x80").has_value());  // surrogate
  EXPECT_FALSE(utf8_length("\xE6\xB8").has_value());      // truncated
  EXPECT_TRUE(has_control_chars("a\tb"));
  EXPECT_FALSE(has_control_chars("a b"));
}

}  // namespace
}  // namespace onceorder
