// The migrations of each engine (src/store/<engine>/migrations/): every down undoes its up
// exactly, so that going down and up again gives the schema the first way up gave, step by
// step. The schema is read from the catalogs (PostgreSQL) or sqlite_master (SQLite), leaving
// out the bookkeeping (schema_migrations, and sqlite_sequence, which SQLite never drops).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "common/test_db.hpp"
#include "store/dialect.hpp"

namespace onceorder::testing {
namespace {

// One line per object: whatever a migration can create, change or drop.
constexpr const char* kPostgresSchema[] = {
    "SELECT c.relkind::text || ' ' || c.relname FROM pg_class c WHERE c.relnamespace = "
    "current_schema()::regnamespace AND c.relname NOT LIKE 'schema_migrations%' ORDER BY 1",
    "SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || "
    "CASE WHEN a.attnotnull THEN ' not null' ELSE '' END || coalesce(' default ' || "
    "pg_get_expr(d.adbin, d.adrelid), '') || ' [' || a.attidentity::text || a.attgenerated::text "
    "|| "
    "']' "
    "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON "
    "d.adrelid = a.attrelid AND d.adnum = a.attnum WHERE c.relnamespace = "
    "current_schema()::regnamespace AND c.relname NOT LIKE 'schema_migrations%' AND a.attnum > 0 "
    "AND NOT a.attisdropped ORDER BY c.relname, a.attnum",
    "SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM "
    "pg_constraint WHERE connamespace = current_schema()::regnamespace AND "
    "conrelid::regclass::text <> 'schema_migrations' ORDER BY 1",
    "SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() "
    "AND tablename <> 'schema_migrations' ORDER BY 1",
    "SELECT viewname || ' ' || definition FROM pg_views WHERE schemaname = current_schema() "
    "ORDER BY 1",
    "SELECT p.proname || ' ' || pg_get_functiondef(p.oid) FROM pg_proc p WHERE p.pronamespace = "
    "current_schema()::regnamespace ORDER BY 1",
    "SELECT t.tgname || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON "
    "c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT "
    "t.tgisinternal ORDER BY 1",
};
// A table renamed into place (ALTER TABLE … RENAME, how SQLite changes a column) is stored
// with its name quoted: the same table.
constexpr const char* kSqliteSchema[] = {
    "SELECT type || ' ' || name || ' ' || tbl_name || ' ' || replace(coalesce(sql, ''), "
    "'CREATE TABLE \"' || name || '\"', 'CREATE TABLE ' || name) FROM sqlite_master WHERE name "
    "NOT LIKE 'schema_migrations%' AND name <> 'sqlite_sequence' ORDER BY type, name",
};

// The lines of `got` that `want` lacks (+) and those it has that `got` lacks (-).
std::string difference(const std::string& want, const std::string& got) {
  auto lines = [](const std::string& s) {
    std::multiset<std::string> out;
    std::size_t at = 0;
    for (std::size_t end; (end = s.find('\n', at)) != std::string::npos; at = end + 1)
      out.insert(s.substr(at, end - at));
    return out;
  };
  const auto w = lines(want);
  const auto g = lines(got);
  std::string out;
  for (auto l = g.begin(); l != g.end(); l = g.upper_bound(*l))
    if (w.count(*l) < g.count(*l)) out += "+ " + *l + "\n";
  for (auto l = w.begin(); l != w.end(); l = w.upper_bound(*l))
    if (g.count(*l) < w.count(*l)) out += "- " + *l + "\n";
  return out;
}

class MigrationsTest : public ::testing::TestWithParam<Engine> {
 protected:
  MigrationsTest() : tdb_(GetParam()), db_(tdb_.open({}, false)) {}

  std::string schema() {
    std::string out;
    auto read = [&](const char* sql) {
      for (const store::Row& r : tdb_.sql(sql)) out += r.text(0) + "\n";
    };
    if (GetParam() == Engine::postgres) {
      for (const char* sql : kPostgresSchema) read(sql);
    } else {
      for (const char* sql : kSqliteSchema) read(sql);
    }
    return out;
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
};

TEST_P(MigrationsTest, EveryDownUndoesItsUpAndTheUpsGiveTheSameSchemaAgain) {
  const int latest = store::latest_schema_version(GetParam());
  std::map<int, std::string> first;  // the schema at each version, the first way up
  ASSERT_TRUE(store::migrate(*db_, 0).ok());
  first[0] = schema();
  for (int v = 1; v <= latest; ++v) {
    auto up = store::migrate(*db_, v);
    ASSERT_TRUE(up.ok()) << up.status().to_string();
    first[v] = schema();
  }
  for (int v = latest - 1; v >= 0; --v) {
    Status down = store::migrate_down(*db_, v);
    ASSERT_TRUE(down.ok()) << "down of migration " << v + 1 << ": " << down.to_string();
    const std::string now = schema();
    ASSERT_TRUE(now == first[v]) << "down of migration " << v + 1 << " left another schema:\n"
                                 << difference(first[v], now);
  }
  for (int v = 1; v <= latest; ++v) {
    auto up = store::migrate(*db_, v);
    ASSERT_TRUE(up.ok()) << "up of migration " << v << " again: " << up.status().to_string();
    const std::string now = schema();
    ASSERT_TRUE(now == first[v]) << "up of migration " << v << " again gave another schema:\n"
                                 << difference(first[v], now);
  }
  EXPECT_EQ(*store::current_schema_version(*db_), latest);
}

INSTANTIATE_TEST_SUITE_P(Engines, MigrationsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
