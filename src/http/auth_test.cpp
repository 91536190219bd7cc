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

Code code_of(const Result<Principal>& r) { return r.status().code(); }

TEST(Authorize, ChecksTokenAndRole) {
  auto table = TokenTable::parse("adm admin\nop operator\ncust customer:7\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_EQ(*authorize(nullptr, std::nullopt, Access::staff), (Principal{Role::admin, 0}));
  EXPECT_EQ(*authorize(t, std::nullopt, Access::open), (Principal{Role::anonymous, 0}));
  EXPECT_EQ(code_of(authorize(t, std::nullopt, Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer nope", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Basic adm", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer ", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer cust", Access::staff)), Code::forbidden);
  EXPECT_TRUE(authorize(t, "Bearer adm", Access::staff).ok());
  EXPECT_TRUE(authorize(t, "bearer op", Access::staff).ok());
  EXPECT_EQ(*authorize(t, "BEARER  op ", Access::staff), (Principal{Role::operator_, 0}));
}

// A viewer reads what an operator may read, and changes nothing.
TEST(Authorize, AViewerOnlyReads) {
  auto table = TokenTable::parse("v viewer\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_EQ(*authorize(t, "Bearer v", Access::staff, /*reading=*/true),
            (Principal{Role::viewer, 0}));
  EXPECT_TRUE(authorize(t, "Bearer v", Access::readers, true).ok());
  const auto write = authorize(t, "Bearer v", Access::staff, /*reading=*/false);
  EXPECT_EQ(code_of(write), Code::forbidden);
  EXPECT_NE(write.status().message().find("only reads"), std::string::npos);
  EXPECT_EQ(code_of(authorize(t, "Bearer v", Access::readers, false)), Code::forbidden);
  // Orders by id and their cancel are an admin's or the customer's, as for an operator.
  EXPECT_EQ(code_of(authorize(t, "Bearer v", Access::orders, true)), Code::forbidden);
  EXPECT_TRUE(authorize(t, "Bearer v", Access::open, false).ok());
}

TEST(Authorize, OrdersAreForAdminsAndCustomers) {
  auto table = TokenTable::parse("adm admin\nop operator\ncust customer:7\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_EQ(*authorize(t, "Bearer cust", Access::orders), (Principal{Role::customer, 7}));
  EXPECT_TRUE(authorize(t, "Bearer cust", Access::orders)->is_customer());
  EXPECT_EQ(*authorize(t, "Bearer adm", Access::orders), (Principal{Role::admin, 0}));
  EXPECT_EQ(code_of(authorize(t, "Bearer op", Access::orders)), Code::forbidden);
  // Order lists admit every role; the handler keeps a customer to its own orders.
  EXPECT_EQ(*authorize(t, "Bearer op", Access::readers), (Principal{Role::operator_, 0}));
  EXPECT_EQ(*authorize(t, "Bearer cust", Access::readers), (Principal{Role::customer, 7}));
  EXPECT_EQ(*authorize(t, "Bearer adm", Access::readers), (Principal{Role::admin, 0}));
  EXPECT_EQ(code_of(authorize(t, std::nullopt, Access::readers)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, std::nullopt, Access::orders)), Code::unauthorized);
  EXPECT_EQ(*authorize(nullptr, std::nullopt, Access::orders), (Principal{Role::admin, 0}));
}

}  // namespace
}  // namespace onceorder::http
