// The migration files of each engine (src/store/<engine>/migrations/, README there): named
// NNNN_<name>.up.sql and .down.sql, numbered from 1 without holes, each up with its down, and
// read by the runner as they are named and marked.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "onceorder/store/store.hpp"
#include "store/migrations.hpp"

namespace onceorder::store {
namespace {

struct Named {
  std::string name;
  std::set<std::string> kinds;
  std::string up;
};

class MigrationFilesTest : public ::testing::TestWithParam<Engine> {
 protected:
  // By version, what the file names say.
  std::map<int, Named> named() {
    static const std::regex kName(R"(/(\d{4})_([a-z0-9_]+)\.(up|down|up-new-rows-only)\.sql)");
    std::map<int, Named> out;
    for (const EmbeddedFile& f : migration_files(GetParam())) {
      std::smatch m;
      const std::string path(f.path);
      EXPECT_TRUE(std::regex_match(path, m, kName)) << path << ": not NNNN_<name>.<kind>.sql";
      if (m.empty()) continue;
      Named& n = out[std::stoi(m[1])];
      if (n.name.empty()) n.name = m[2];
      EXPECT_EQ(n.name, m[2]) << path << ": another name than its version's other files";
      n.kinds.insert(m[3]);
      if (m[3] == "up") n.up = f.content;
    }
    return out;
  }
};

TEST_P(MigrationFilesTest, NumberedFromOneWithoutHolesEachUpWithItsDown) {
  const auto files = named();
  ASSERT_FALSE(files.empty());
  int expected = 1;
  for (const auto& [version, n] : files) {
    EXPECT_EQ(version, expected) << "a hole before migration " << version;
    expected = version + 1;
    EXPECT_TRUE(n.kinds.count("up")) << "migration " << version << " has no up";
    EXPECT_TRUE(n.kinds.count("down")) << "migration " << version << " has no down";
  }
  EXPECT_EQ(files.rbegin()->first, latest_schema_version(GetParam()));
}

TEST_P(MigrationFilesTest, TheRunnerReadsThemByNumberNameAndMark) {
  const auto files = named();
  const auto list = read_migrations(migration_files(GetParam()));
  ASSERT_EQ(list.size(), files.size());
  for (const Migration& m : list) {
    const Named& n = files.at(m.version);
    EXPECT_EQ(m.name, n.name);
    EXPECT_FALSE(m.up.empty()) << m.version;
    EXPECT_FALSE(m.down.empty()) << m.version;
    // The scripts start after the files' comment lines.
    EXPECT_FALSE(m.up.starts_with("--")) << m.version;
    EXPECT_EQ(m.up_new_rows_only.empty(), !n.kinds.count("up-new-rows-only")) << m.version;
    const bool marked = n.up.find("\n-- onceorder: no-transaction\n") != std::string::npos ||
                        n.up.starts_with("-- onceorder: no-transaction\n");
    EXPECT_EQ(m.concurrently, marked) << m.version;
    if (m.concurrently) {
      // Only PostgreSQL builds indexes outside a transaction, and one statement at a time:
      // several in one simple query would form a transaction block.
      EXPECT_EQ(GetParam(), Engine::postgres) << m.version;
      EXPECT_EQ(m.up.find(';'), std::string_view::npos) << m.version;
      EXPECT_NE(m.up.find("CONCURRENTLY"), std::string_view::npos) << m.version;
      EXPECT_FALSE(m.index.empty()) << m.version;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, MigrationFilesTest,
                         ::testing::Values(Engine::sqlite, Engine::postgres),
                         [](const auto& p) { return std::string(engine_name(p.param)); });

}  // namespace
}  // namespace onceorder::store
