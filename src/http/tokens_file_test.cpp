#include "http/tokens_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "http/auth.hpp"

namespace onceorder::http {
namespace {

TEST(TokensFile, NewTokensAreLongAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto token = new_token();
    ASSERT_TRUE(token.ok()) << token.status().to_string();
    EXPECT_EQ(token->size(), kTokenPrefix.size() + 43);  // 256 bits in base64url
    EXPECT_GE(token->size(), kMinPlainTokenLength);
    EXPECT_TRUE(token->starts_with(kTokenPrefix));
    seen.insert(*token);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(TokensFile, DefaultPaths) {
  const DbUrl sqlite{Engine::sqlite, "var/x.db", false};
  const DbUrl pg{Engine::postgres, "postgresql:///oo", false};
  EXPECT_EQ(default_tokens_path(sqlite, "", ""), "var/x.db.tokens");
  EXPECT_EQ(default_tokens_path(sqlite, "", "/var/lib/onceorder"), "var/x.db.tokens");
  EXPECT_EQ(default_tokens_path(sqlite, "/st", ""), "/st/onceorder.tokens");
  EXPECT_EQ(default_tokens_path(pg, "", ""), "./onceorder.tokens");
  EXPECT_EQ(default_tokens_path(pg, "", "/var/lib/onceorder:/other"),
            "/var/lib/onceorder/onceorder.tokens");
  EXPECT_EQ(default_tokens_path(pg, "/st", "/var/lib/onceorder"), "/st/onceorder.tokens");
}

// Created private with one admin entry in sha256: form whose token is the one returned; never
// replaced afterwards.
TEST(TokensFile, CreatedOnceWithOneAdminAndNoPlainToken) {
  std::random_device rd;
  const auto dir = std::filesystem::temp_directory_path() / ("oo-tokens-" + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.tokens").string();
  auto created = create_tokens_file(path);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  ASSERT_TRUE(created->has_value());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str().find(**created), std::string::npos) << text.str();
  auto table = TokenTable::load(path);
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  EXPECT_EQ(table->size(), 1u);
  EXPECT_EQ(table->find(**created)->role, Role::admin);
  auto again = create_tokens_file(path);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  std::stringstream after;
  after << std::ifstream(path).rdbuf();
  EXPECT_EQ(after.str(), text.str());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temp left
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace onceorder::http
