#include "http/auth.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

TEST(TokenTable, ParsesRolesCommentsAndBlankLines) {
  auto table = TokenTable::parse(
      "# tokens\n\n  admin-token admin\r\nop\toperator\ncust customer:42\n   # indented\n");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(table->size(), 3u);
  EXPECT_EQ(table->find("admin-token"), (Principal{Role::admin, 0}));
  EXPECT_EQ(table->find("op"), (Principal{Role::operator_, 0}));
  EXPECT_EQ(table->find("cust"), (Principal{Role::customer, 42}));
  EXPECT_FALSE(table->find("admin-toke").has_value());
  EXPECT_FALSE(table->find("admin-token2").has_value());
  EXPECT_FALSE(table->find("").has_value());
}

TEST(TokenTable, MalformedLinesAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"a admin\nlonely\n", "line 2"},
      {"a admin extra\n", "line 1"},
      {"a root\n", "line 1"},
      {"a customer:\n", "line 1"},
      {"a customer:0\n", "line 1"},
      {"a customer:-1\n", "line 1"},
      {"a customer:99999999999999999999\n", "line 1"},
      {"a Admin\n", "line 1"},
      {"x admin\n\nx operator\n", "line 3"},
  };
  for (const auto& [text, where] : cases) {
    auto table = TokenTable::parse(text);
    ASSERT_FALSE(table.ok()) << text;
    EXPECT_NE(table.status().message().find(where), std::string::npos)
        << text << " → " << table.status().to_string();
  }
  EXPECT_FALSE(TokenTable::parse("").ok());
  EXPECT_FALSE(TokenTable::parse("# nothing\n").ok());
}

TEST(Authorize, ChecksTokenAndRole) {
  auto table = TokenTable::parse("adm admin\nop operator\ncust customer:7\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_TRUE(authorize(nullptr, std::nullopt, Access::staff).ok());
  EXPECT_TRUE(authorize(t, std::nullopt, Access::open).ok());
  EXPECT_EQ(authorize(t, std::nullopt, Access::staff).code(), Code::unauthorized);
  EXPECT_EQ(authorize(t, "Bearer nope", Access::staff).code(), Code::unauthorized);
  EXPECT_EQ(authorize(t, "Basic adm", Access::staff).code(), Code::unauthorized);
  EXPECT_EQ(authorize(t, "Bearer", Access::staff).code(), Code::unauthorized);
  EXPECT_EQ(authorize(t, "Bearer ", Access::staff).code(), Code::unauthorized);
  EXPECT_EQ(authorize(t, "Bearer cust", Access::staff).code(), Code::forbidden);
  EXPECT_TRUE(authorize(t, "Bearer adm", Access::staff).ok());
  EXPECT_TRUE(authorize(t, "bearer op", Access::staff).ok());
  EXPECT_TRUE(authorize(t, "BEARER  op ", Access::staff).ok());
}

}  // namespace
}  // namespace onceorder::http
