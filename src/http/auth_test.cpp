#include "http/auth.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

// The role and customer of a principal, its name set aside (names have tests of their own).
Principal bare(std::optional<Principal> p) {
  if (!p) return Principal{Role::anonymous, -1};
  p->name = kAnonymousPrincipal;
  return *p;
}

// `text` with each line's first word (unless a comment) in its sha256: form, so that the tests
// keep short tokens; blanks are kept as they are.
std::string hashed(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t eol = text.find('\n', i);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(i, eol - i);
    const size_t start = line.find_first_not_of(" \t\r");
    const size_t end = start == std::string_view::npos ? start : line.find_first_of(" \t\r", start);
    if (start != std::string_view::npos && line[start] != '#') {
      const std::string_view word = line.substr(start, end - start);
      out += std::string(line.substr(0, start)) + "sha256:" + sha256_hex(word) +
             std::string(end == std::string_view::npos ? "" : line.substr(end));
    } else {
      out += line;
    }
    out += '\n';
    i = eol + 1;
  }
  return out;
}

Result<TokenTable> parse_hashed(std::string_view text) { return TokenTable::parse(hashed(text)); }

Code code_of(const Result<Principal>& r) { return r.status().code(); }

TEST(TokenTable, ParsesRolesCommentsAndBlankLines) {
  auto table = parse_hashed(
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
    auto table = parse_hashed(text);
    ASSERT_FALSE(table.ok()) << text;
    EXPECT_NE(table.status().message().find(where), std::string::npos)
        << text << " → " << table.status().to_string();
  }
  EXPECT_FALSE(TokenTable::parse("").ok());
  EXPECT_FALSE(TokenTable::parse("# nothing\n").ok());
}

// A name is optional: a two-word line still loads, and its token goes by its role and line
// number, nothing derived from the token (a viewer sees names).
TEST(TokenTable, NamesArePrincipals) {
  auto table = parse_hashed("t1 admin alice\nt2 operator\nt3 customer:7 shop.7@x\n" +
                            std::string("t4 viewer ") + std::string(64, 'v') + "\nt5 customer:9\n");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(table->find("t1")->name, "alice");
  EXPECT_EQ(table->find("t2")->name, "operator#2");
  EXPECT_EQ(table->find("t5")->name, "customer:9#5");
  EXPECT_EQ(table->find("t3")->name, "shop.7@x");
  EXPECT_EQ(table->find("t4")->name, std::string(64, 'v'));
  // A copy of the table keeps its names alive after the original is gone.
  std::optional<TokenTable> copy;
  {
    auto original = parse_hashed("t1 admin alice\n");
    copy = *original;
  }
  EXPECT_EQ(copy->find("t1")->name, "alice");
  EXPECT_EQ(code_of(authorize(nullptr, "Bearer t1", Access::staff)), Code::unauthorized);
  EXPECT_EQ(authorize(&*copy, std::nullopt, Access::open)->name, kAnonymousPrincipal);
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')).substr(0, 16), "41edece42d63e8d9");
}

TEST(Authorize, ChecksTokenAndRole) {
  auto table = parse_hashed("adm admin\nop operator\ncust customer:7\n");
  ASSERT_TRUE(table.ok());
  const TokenTable* t = &*table;
  EXPECT_EQ(code_of(authorize(nullptr, std::nullopt, Access::staff)), Code::unauthorized);
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
  auto table = parse_hashed("v viewer\n");
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
  auto table = parse_hashed("adm admin\nop operator\ncust customer:7\n");
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
  EXPECT_EQ(code_of(authorize(nullptr, "Bearer adm", Access::orders)), Code::unauthorized);
}

// Plain tokens must be long; sha256: entries must be 64 hex digits; both find their token, and a
// plain token and the digest of the same token are one token.
TEST(TokenTable, PlainAndDigestEntries) {
  const std::string plain(kMinPlainTokenLength, 'p');
  const std::string other = "another-token-of-enough-length-xyz";
  auto table = TokenTable::parse(plain + " admin\nsha256:" + sha256_hex(other) + " viewer v\n");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(table->find(plain)->role, Role::admin);
  EXPECT_EQ(table->find(other)->role, Role::viewer);
  EXPECT_FALSE(table->find(sha256_hex(other)).has_value());  // the digest is not the token
  EXPECT_FALSE(table->find("sha256:" + sha256_hex(other)).has_value());
  std::string upper = sha256_hex(other);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(TokenTable::parse("sha256:" + upper + " admin\n").ok());
  for (const std::string& bad :
       {plain.substr(1) + " admin\n", "sha256:" + sha256_hex(other).substr(1) + " admin\n",
        "sha256:" + sha256_hex(other) + "0 admin\n", "sha256:" + std::string(64, 'g') + " admin\n",
        plain + " admin\nsha256:" + sha256_hex(plain) + " operator\n"}) {
    EXPECT_FALSE(TokenTable::parse(bad).ok()) << bad;
  }
}

// No error quotes a word of the file: any of them may be a token (a swapped line, a short
// token, a token where the role or name should be).
TEST(TokenTable, ErrorsNeverEchoTheLine) {
  const std::string secret = "s3cret";
  const std::string long_secret = "s3cret-that-is-long-enough-to-be-a-token";
  for (const std::string& text :
       {"admin " + secret + "\n", "admin " + long_secret + "\n", secret + " admin\n",
        long_secret + " " + secret + "\n", long_secret + " admin " + secret + "!\n",
        long_secret + " admin " + secret + " x\n", "sha256:" + secret + " admin\n",
        long_secret + " admin\n" + long_secret + " admin\n",
        long_secret + " admin " + secret + "\n" + long_secret + "2 admin " + secret + "\n"}) {
    auto table = TokenTable::parse(text);
    ASSERT_FALSE(table.ok()) << text;
    std::string all = table.status().to_string();
    for (const auto& f : table.status().fields()) all += f.field + f.message;
    EXPECT_EQ(all.find(secret), std::string::npos) << all;
    EXPECT_NE(all.find("line "), std::string::npos) << all;
  }
  auto swapped = TokenTable::parse("admin " + secret + "\n");
  EXPECT_NE(swapped.status().message().find("starts with a role"), std::string::npos)
      << swapped.status().message();
}

TEST(TokenTable, DigestLineLoadsBack) {
  const std::string token = "a-token-long-enough-for-any-file-0123";
  auto table = TokenTable::parse(digest_line(token, "customer:7", "shop7") + "\n");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(bare(table->find(token)), (Principal{Role::customer, 7}));
  EXPECT_EQ(table->find(token)->name, "shop7");
  EXPECT_EQ(digest_line(token, "admin", "").find(token), std::string::npos);
}

}  // namespace
}  // namespace onceorder::http
