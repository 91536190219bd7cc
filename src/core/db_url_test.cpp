#include "onceorder/core/db_url.hpp"

#include <gtest/gtest.h>

namespace onceorder {
namespace {

TEST(DbUrl, ParsesBothEngines) {
  auto s = parse_db_url("sqlite:var/onceorder.db");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->engine, Engine::sqlite);
  EXPECT_EQ(s->target, "var/onceorder.db");
  auto abs = parse_db_url("sqlite:/tmp/x.db");
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ(abs->target, "/tmp/x.db");
  auto pg = parse_db_url("postgresql://u@h:5433/db?sslmode=disable");
  ASSERT_TRUE(pg.ok());
  EXPECT_EQ(pg->engine, Engine::postgres);
  EXPECT_EQ(pg->target, "postgresql://u@h:5433/db?sslmode=disable");
  EXPECT_EQ(parse_db_url("postgres:///db")->engine, Engine::postgres);
  EXPECT_TRUE(parse_db_url(kDefaultDbUrl).ok());
}

TEST(DbUrl, TakesThePoolerParameterOutOfTheUri) {
  auto t =
      parse_db_url("postgresql://u@h:6432/db?sslmode=disable&pooler=transaction&connect_timeout=5");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->transaction_pooler);
  EXPECT_EQ(t->target, "postgresql://u@h:6432/db?sslmode=disable&connect_timeout=5");
  auto only = parse_db_url("postgresql:///db?pooler=transaction");
  ASSERT_TRUE(only.ok());
  EXPECT_TRUE(only->transaction_pooler);
  EXPECT_EQ(only->target, "postgresql:///db");
  auto session = parse_db_url("postgresql:///db?pooler=session");
  ASSERT_TRUE(session.ok());
  EXPECT_FALSE(session->transaction_pooler);
  EXPECT_EQ(session->target, "postgresql:///db");
  EXPECT_FALSE(parse_db_url("postgresql:///db?pooler=statement").ok());
  EXPECT_FALSE(parse_db_url("postgresql:///db?pooler=").ok());
}

TEST(DbUrl, RejectsWithAReason) {
  for (const char* bad :
       {"", "sqlite:", "sqlite://x.db", "mysql://h/db", "var/onceorder.db", "postgresql:/x"}) {
    auto r = parse_db_url(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::invalid_request);
    EXPECT_NE(r.status().message().find("expected sqlite:PATH"), std::string::npos);
  }
}

}  // namespace
}  // namespace onceorder
