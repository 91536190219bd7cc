// The store's start-up race: several processes migrating one database at once; its own
// program, race_tests, so that ThreadSanitizer runs it too.
#include <gtest/gtest.h>

#include <barrier>
#include <memory>
#include <thread>
#include <vector>

#include "contract/store_fixture.hpp"
#include "store/migrations.hpp"

namespace onceorder::testing {
namespace {

TEST_P(StoreTest, ConcurrentMigrationsApplyEachVersionOnce) {
  constexpr int kProcesses = 4;
  std::vector<std::unique_ptr<store::Database>> dbs;
  for (int i = 0; i < kProcesses; ++i) dbs.push_back(tdb_.open({.pool_size = 1}, false));
  std::barrier start(kProcesses);
  std::vector<Result<int>> results(kProcesses, Result<int>(Status(Code::internal, "not run")));
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = store::migrate(*dbs[i]);
    });
  }
  for (auto& t : threads) t.join();
  const int latest = store::latest_schema_version(GetParam());
  for (auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(*r, latest);
  }
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM schema_migrations").at(0).i64(0), latest);
  auto current = store::current_schema_version(*dbs[0]);
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(*current, latest);
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
