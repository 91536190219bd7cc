#include "onceorder/core/redact.hpp"

#include <gtest/gtest.h>

#include "onceorder/core/db_url.hpp"

namespace onceorder {
namespace {

// Issue 8: the CLI printed the whole URL, password included.
TEST(DbUrl, RedactionHidesEveryFormOfPassword) {
  EXPECT_EQ(redact_db_url("postgresql://u:secret@h/db"), "postgresql://u:***@h/db");
  EXPECT_EQ(redact_db_url("postgres://u:s%40cret@h1:5432,h2/db?sslmode=require"),
            "postgres://u:***@h1:5432,h2/db?sslmode=require");
  EXPECT_EQ(redact_db_url("postgresql://u:p@ss@h/db"), "postgresql://u:***@h/db");
  EXPECT_EQ(redact_db_url("postgresql://h/db?user=u&password=secret&sslmode=disable"),
            "postgresql://h/db?user=u&password=***&sslmode=disable");
  EXPECT_EQ(redact_db_url("postgresql://h/db?PassWord=secret"), "postgresql://h/db?PassWord=***");
  EXPECT_EQ(redact_db_url("host=h password=secret dbname=d"), "host=h password=*** dbname=d");
  EXPECT_EQ(redact_db_url("host=h password = 'se cret' dbname=d"),
            "host=h password = *** dbname=d");
  EXPECT_EQ(redact_db_url("host=h password='it\\'s' dbname=d"), "host=h password=*** dbname=d");
  // Nothing to hide: unchanged.
  for (const char* plain : {"postgresql://u@h/db", "postgresql:///db", "sqlite:var/x.db",
                            "sqlite:/tmp/password=x.db", "postgresql://h/db?sslmode=disable"}) {
    EXPECT_EQ(redact_db_url(plain), plain);
  }
  // A message that may echo the URL, or the password alone (libpq quotes bad tokens).
  EXPECT_EQ(redact_db_message("invalid percent-encoded token: \"se%ZZcret\"",
                              "postgresql://u:se%ZZcret@h/db"),
            "invalid percent-encoded token: \"***\"");
  EXPECT_EQ(redact_db_message("x postgresql://u:secret@h/db y", "postgresql://u:secret@h/db"),
            "x postgresql://u:***@h/db y");
  // Bad URLs never repeat a password either.
  auto bad = parse_db_url("host=h password=hunter2");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("hunter2"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace onceorder
