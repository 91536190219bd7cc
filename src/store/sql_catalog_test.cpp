#include "store/sql_catalog.hpp"

#include <gtest/gtest.h>

#include "store/dialect.hpp"

namespace onceorder::store {
namespace {

constexpr std::string_view kFile =
    "-- what the file holds\n"
    "\n"
    "-- name: one\n"
    "SELECT 1\n"
    "FROM t;\n"
    "\n"
    "-- the next statement's comment\n"
    "-- name: two may_wait\n"
    "SELECT 2 FOR UPDATE;\n";

TEST(SqlCatalog, ParsesNamedStatementsWithoutTheirTrailingCommentsAndSemicolon) {
  const EmbeddedFile files[] = {{"/postgres/a.sql", kFile, "", ""}};
  const SqlCatalog c(files, {});
  EXPECT_EQ(c.get("one").sql, "SELECT 1\nFROM t");
  EXPECT_EQ(c.get("one").name, "one");
  EXPECT_FALSE(c.get("one").may_wait);
  EXPECT_EQ(c.get("two").sql, "SELECT 2 FOR UPDATE");
  EXPECT_TRUE(c.get("two").may_wait);
  EXPECT_TRUE(c.unused().empty());
}

TEST(SqlCatalog, AnOverlayReplacesStatementsByName) {
  const EmbeddedFile files[] = {{"/postgres/a.sql", kFile, "", ""}};
  const EmbeddedFile overlay[] = {
      {"/postgres/naive.sql", "-- name: one\nSELECT 'naive';\n", "", ""}};
  const SqlCatalog c(files, overlay);
  EXPECT_EQ(c.get("one").sql, "SELECT 'naive'");
  EXPECT_EQ(c.get("two").sql, "SELECT 2 FOR UPDATE");
}

TEST(SqlCatalogDeathTest, AMissingOrDuplicateNameStopsTheProcess) {
  const EmbeddedFile files[] = {{"/postgres/a.sql", kFile, "", ""}};
  EXPECT_DEATH((void)SqlCatalog(files, {}).get("three"), "no statement named three");
  const EmbeddedFile twice[] = {{"/postgres/a.sql", kFile, "", ""},
                                {"/postgres/b.sql", "-- name: one\nSELECT 3;\n", "", ""}};
  EXPECT_DEATH(SqlCatalog(twice, {}), "one is defined twice");
  const EmbeddedFile stray[] = {{"/postgres/n.sql", "-- name: four\nSELECT 4;\n", "", ""}};
  EXPECT_DEATH(SqlCatalog(files, stray), "replaces no statement");
}

// Every statement a store asks for exists (building the dialect asks for all of them), and
// every statement of the files is asked for, on both engines.
TEST(SqlCatalog, EveryEngineHasEveryStatementItsStoresAskForAndNoOther) {
  for (const Engine engine : {Engine::sqlite, Engine::postgres}) {
    (void)dialect_for(engine);
    const auto& catalog = SqlCatalog::of(engine);
    EXPECT_FALSE(catalog.names().empty());
    EXPECT_EQ(catalog.unused(), std::vector<std::string>{}) << engine_name(engine);
  }
}

}  // namespace
}  // namespace onceorder::store
