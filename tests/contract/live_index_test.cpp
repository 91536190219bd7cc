// Seed 000's rollout of the live-item index on a big table (issue 12 item 3): built without
// holding writers off (PostgreSQL: CONCURRENTLY, outside a transaction), an INVALID leftover
// of a failed build reported by I10 and rebuilt by `migrate`, and the seed's ENABLE
// NOVALIDATE: a mode that holds new rows to the rule and leaves audited old rows alone.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "common/test_db.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/legacy_items.hpp"
#include "store/dialect.hpp"

namespace onceorder::testing {
namespace {

class LiveIndexTest : public ::testing::TestWithParam<Engine> {
 protected:
  LiveIndexTest() : tdb_(GetParam()), db_(tdb_.open()) {}

  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  // A database at version 2 (no live index) holding `statuses` as items of one key.
  void version_2_with_items(std::initializer_list<const char*> statuses) {
    ASSERT_TRUE(store::migrate_down(*db_, 2).ok());
    tdb_.sql(
        "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('S1', "
        "'A12345', '1', 5), ('S1', 'B1', '1', 5)");
    tdb_.sql("INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'done', 'old')");
    for (const char* st : statuses) insert_item("A12345", st);
  }
  void insert_item(const std::string& order_no, const std::string& status) {
    tdb_.sql(
        "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) VALUES "
        "(1, 'S1', '" +
        order_no + "', '1', '" + status + "')");
  }
  const InvariantResult& inv(const std::vector<InvariantResult>& all, const std::string& id) {
    for (const auto& r : all)
      if (r.id == id) return r;
    throw std::runtime_error("no invariant " + id);
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
};

TEST_P(LiveIndexTest, PostgresBuildsTheLiveIndexConcurrentlyOutsideATransaction) {
  const auto list = store::dialect_for(GetParam()).migrations;
  const store::Migration& m = list[2];
  ASSERT_EQ(m.version, 3);
  EXPECT_EQ(m.index, "schedule_items_live");
  if (GetParam() == Engine::postgres) {
    EXPECT_TRUE(m.concurrently);
    EXPECT_NE(m.up.find("CREATE UNIQUE INDEX CONCURRENTLY"), std::string_view::npos);
    // One statement: several in one simple query would form a transaction block.
    EXPECT_EQ(m.up.find(';'), std::string_view::npos);
  }
}

// The index build waits for a transaction that already wrote items, yet a writer arriving
// meanwhile is not held off (a plain CREATE INDEX would queue it behind its SHARE lock).
TEST_P(LiveIndexTest, PostgresWritersGoOnWhileTheIndexBuilds) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "SQLite has one writer anyway";
  version_2_with_items({"success"});
  RawPg open_writer(tdb_.url());
  open_writer.exec("BEGIN");
  open_writer.exec(
      "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) "
      "VALUES (1, 'S1', 'B1', '1', 'failed')");
  auto migrating = std::async(std::launch::async, [&] { return store::migrate(*db_); });
  // Until the build is under way and waiting for the open transaction.
  bool waiting = false;
  for (int i = 0; i < 500 && !waiting; ++i) {
    waiting = count(
                  "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                  "AND query LIKE 'CREATE UNIQUE INDEX CONCURRENTLY%' AND wait_event_type = "
                  "'Lock'") > 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(waiting) << "the build never started waiting";
  RawPg writer(tdb_.url());
  writer.exec("SET lock_timeout = '2s'");
  writer.exec(
      "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) VALUES "
      "(1, 'S1', 'B1', '1', 'failed')");  // not blocked: it would time out here
  EXPECT_EQ(migrating.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  open_writer.exec("COMMIT");
  auto v = migrating.get();
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(count("SELECT count(*) FROM pg_index WHERE indexrelid = "
                  "to_regclass('schedule_items_live') AND indisvalid"),
            1);
}

// A concurrent build that duplicates broke left an INVALID index: `check` says so, `migrate`
// names `legacy dedup`; after it, `migrate` rebuilds the index and it is valid.
TEST_P(LiveIndexTest, PostgresInvalidIndexIsReportedThenRebuiltAfterDedup) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "PostgreSQL builds concurrently";
  tdb_.sql("DROP INDEX schedule_items_live");
  tdb_.sql(
      "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('S1', "
      "'A12345', '1', 5)");
  tdb_.sql("INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'done', 'old')");
  insert_item("A12345", "success");
  insert_item("A12345", "wait");
  {
    auto session = db_->connect_dedicated();
    ASSERT_TRUE(session.ok());
    Status st = (*session)->exec_script(
        "CREATE UNIQUE INDEX CONCURRENTLY schedule_items_live ON schedule_items (site_code, "
        "order_no, lot_no) WHERE status NOT IN ('failed', 'aborted')");
    ASSERT_FALSE(st.ok());
  }
  ASSERT_EQ(count("SELECT count(*) FROM pg_index WHERE indexrelid = "
                  "to_regclass('schedule_items_live') AND NOT indisvalid"),
            1);
  auto before = check_invariants(*db_, soon());
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  EXPECT_EQ(inv(*before, "I1").violations, 1);
  const auto& i10 = inv(*before, "I10");
  ASSERT_GE(i10.violations, 1);
  bool named = false;
  for (const auto& s : i10.sample)
    named = named || s.find("schedule_items_live is INVALID") != std::string::npos;
  EXPECT_TRUE(named);

  store::MigrateOptions repair;
  repair.repair_indexes = true;
  auto blocked = store::migrate(*db_, repair);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), Code::unique_violation);
  EXPECT_NE(blocked.status().message().find("onceorder legacy dedup"), std::string::npos)
      << blocked.status().message();

  ASSERT_TRUE(apply_legacy_dedup(*db_, soon()).ok());
  auto fixed = store::migrate(*db_, repair);
  ASSERT_TRUE(fixed.ok()) << fixed.status().to_string();
  EXPECT_EQ(count("SELECT count(*) FROM pg_index WHERE indexrelid = "
                  "to_regclass('schedule_items_live') AND indisvalid AND indisready"),
            1);
  auto after = check_invariants(*db_, soon());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(inv(*after, "I1").violations, 0);
  EXPECT_EQ(inv(*after, "I10").violations, 0) << inv(*after, "I10").sample.at(0);
}

// A failed first build leaves nothing behind, and the retry after dedup applies version 3.
TEST_P(LiveIndexTest, RefusedBuildLeavesNoIndexAndDedupThenMigrateBuildsIt) {
  version_2_with_items({"success", "wait"});
  auto blocked = store::migrate(*db_);
  ASSERT_FALSE(blocked.ok());
  EXPECT_NE(blocked.status().message().find("onceorder legacy dedup"), std::string::npos);
  EXPECT_NE(blocked.status().message().find("--live-index=new-rows-only"), std::string::npos);
  if (GetParam() == Engine::postgres) {
    EXPECT_EQ(count("SELECT count(*) FROM pg_class WHERE relname = 'schedule_items_live'"), 0);
  }
  ASSERT_TRUE(apply_legacy_dedup(*db_, soon()).ok());
  auto fixed = store::migrate(*db_);
  ASSERT_TRUE(fixed.ok()) << fixed.status().to_string();
  EXPECT_EQ(*fixed, store::latest_schema_version(GetParam()));
}

// The seed's ENABLE NOVALIDATE: old duplicates stay untouched and are reported apart, new
// rows are held to the rule, and I10 accepts the index.
TEST_P(LiveIndexTest, NewRowsOnlyLeavesOldDuplicatesAndProtectsNewRows) {
  version_2_with_items({"success", "wait"});
  store::MigrateOptions options;
  options.live_index = store::LiveIndexMode::new_rows_only;
  auto v = store::migrate(*db_, options);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(*v, store::latest_schema_version(GetParam()));
  EXPECT_EQ(count("SELECT count(*) FROM schedule_items WHERE status = 'aborted'"), 0)
      << "an old row was touched";

  auto checked = check_invariants(*db_, soon());
  ASSERT_TRUE(checked.ok()) << checked.status().to_string();
  EXPECT_EQ(inv(*checked, "I1").violations, 0);
  EXPECT_EQ(inv(*checked, "I1").accepted, 1);
  ASSERT_EQ(inv(*checked, "I1").accepted_sample.size(), 1u);
  EXPECT_NE(inv(*checked, "I1").accepted_sample[0].find("watermark 2"), std::string::npos)
      << inv(*checked, "I1").accepted_sample[0];
  EXPECT_EQ(inv(*checked, "I10").violations, 0)
      << (inv(*checked, "I10").sample.empty() ? "" : inv(*checked, "I10").sample[0]);

  // New rows: one live item per key, as with the full index.
  insert_item("B1", "wait");
  EXPECT_THROW(
      {
        auto session = db_->connect_dedicated();
        Status st = (*session)->exec_script(
            "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) VALUES "
            "(1, 'S1', 'B1', '1', 'wait')");
        if (!st.ok()) throw std::runtime_error(st.to_string());
      },
      std::runtime_error);
  insert_item("B1", "failed");  // failed rows stay outside the rule
  // A later `migrate` (any mode) keeps the index as it is.
  ASSERT_TRUE(store::migrate(*db_).ok());
  auto again = check_invariants(*db_, soon());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(inv(*again, "I1").accepted, 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, LiveIndexTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
