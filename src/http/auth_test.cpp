#include "http/auth.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

// The role and customer of a principal, its name set aside (names have tests of their own).
Principal bare(std::optional<Principal> p) {
  if (!p) return Principal{Role::anonymous, -1};
  p->name = kLocalPrincipal;
  return *p;
}

TEST(TokenTable, ParsesRolesCommentsAndBlankLines) {
  auto table = TokenTable::parse(
      "# tokens\n\n  admin-token admin\r\nop\toperator\ncust customer:42\n   # indented\n");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(table->size(), 3u);
  EXPECT_EQ(bare(table->find("admin-token")), (Principal{Role::admin, 0}));
  EXPECT_EQ(bare(table->find("op")), (Principal{Role::operator_, 0}));
  EXPECT_EQ(bare(table->find("cust")), (Principal{Role::customer, 42}));
  EXPECT_FALSE(table->find("admin-toke").has_value());
  EXPECT_FALSE(table->find("admin-token2").has_value());
  EXPECT_FALSE(table->find("").has_value());
}

TEST(TokenTable, MalformedLinesAreNamed) {
  const std::pair<std::string, const char*> cases[] = {
      {"a admin\nlonely\n", "line 2"},
      {"a admin alice extra\n", "line 1"},
      {"a admin al ice\n", "line 1"},
      {"a admin al\"ice\n", "line 1"},
      {"a admin op#1\n", "line 1"},
      {"a admin " + std::string(65, 'n') + "\n", "line 1"},
      {"a admin alice\nb operator alice\n", "line 2"},
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

// A name is optional and backward compatible: a two-word line still loads, and its token gets
// a stable name derived from its hash, never the token.
TEST(TokenTable, NamesArePrincipals) {
  auto table = TokenTable::parse("t1 admin alice\nt2 operator\nt3 customer:7 shop.7@x\n" +
                                 std::string("t4 viewer ") + std::string(64, 'v') + "\n");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(table->find("t1")->name, "alice");
  const std::string derived = std::string(table->find("t2")->name);
  EXPECT_EQ(derived, "operator#" + sha256_hex("t2").substr(0, 8));
  EXPECT_EQ(derived.find("t2"), std::string::npos);
  EXPECT_EQ(table->find("t3")->name, "shop.7@x");
  EXPECT_EQ(table->find("t4")->name, std::string(64, 'v'));
  // A copy of the table keeps its names alive after the original is gone.
  std::optional<TokenTable> copy;
  {
    auto original = TokenTable::parse("t1 admin alice\n");
    copy = *original;
  }
  EXPECT_EQ(copy->find("t1")->name, "alice");
  EXPECT_EQ(authorize(nullptr, std::nullopt, Access::staff)->name, kLocalPrincipal);
  EXPECT_EQ(authorize(&*copy, std::nullopt, Access::open)->name, kAnonymousPrincipal);
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')).substr(0, 16), "41edece42d63e8d9");
}

Code code_of(const Result<Principal>& r) { return r.status().code(); }

TEST(Authorize, ChecksTokenAndRole) {
  auto table = TokenTable::parse("adm admin\nop operator\ncust customer:7\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_EQ(bare(*authorize(nullptr, std::nullopt, Access::staff)), (Principal{Role::admin, 0}));
  EXPECT_EQ(bare(*authorize(t, std::nullopt, Access::open)), (Principal{Role::anonymous, 0}));
  EXPECT_EQ(code_of(authorize(t, std::nullopt, Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer nope", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Basic adm", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer ", Access::staff)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, "Bearer cust", Access::staff)), Code::forbidden);
  EXPECT_TRUE(authorize(t, "Bearer adm", Access::staff).ok());
  EXPECT_TRUE(authorize(t, "bearer op", Access::staff).ok());
  EXPECT_EQ(bare(*authorize(t, "BEARER  op ", Access::staff)), (Principal{Role::operator_, 0}));
}

// A viewer reads what an operator may read, and changes nothing.
TEST(Authorize, AViewerOnlyReads) {
  auto table = TokenTable::parse("v viewer\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_EQ(bare(*authorize(t, "Bearer v", Access::staff, /*reading=*/true)),
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
  EXPECT_EQ(bare(*authorize(t, "Bearer cust", Access::orders)), (Principal{Role::customer, 7}));
  EXPECT_TRUE(authorize(t, "Bearer cust", Access::orders)->is_customer());
  EXPECT_EQ(bare(*authorize(t, "Bearer adm", Access::orders)), (Principal{Role::admin, 0}));
  EXPECT_EQ(code_of(authorize(t, "Bearer op", Access::orders)), Code::forbidden);
  // Order lists admit every role; the handler keeps a customer to its own orders.
  EXPECT_EQ(bare(*authorize(t, "Bearer op", Access::readers)), (Principal{Role::operator_, 0}));
  EXPECT_EQ(bare(*authorize(t, "Bearer cust", Access::readers)), (Principal{Role::customer, 7}));
  EXPECT_EQ(bare(*authorize(t, "Bearer adm", Access::readers)), (Principal{Role::admin, 0}));
  EXPECT_EQ(code_of(authorize(t, std::nullopt, Access::readers)), Code::unauthorized);
  EXPECT_EQ(code_of(authorize(t, std::nullopt, Access::orders)), Code::unauthorized);
  EXPECT_EQ(bare(*authorize(nullptr, std::nullopt, Access::orders)), (Principal{Role::admin, 0}));
}

}  // namespace
}  // namespace onceorder::http
