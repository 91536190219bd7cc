// The audit trail's store (onceorder/service/audit.hpp) and the per-minute activity counts on every
// engine: filters and paging newest first; counts per UTC minute with zeros, whatever the
// database session's time zone; the counts read over the created_at indexes, never a scan.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "common/test_db.hpp"
#include "onceorder/service/audit.hpp"
#include "store/audit_store.hpp"
#include "store/dialect.hpp"

namespace onceorder::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using std::chrono::system_clock;

ActionRecord action(std::string principal, std::string name, int status) {
  ActionRecord a;
  a.principal = std::move(principal);
  a.role = "operator";
  a.action = std::move(name);
  a.status = status;
  return a;
}

// ISO 8601 UTC text of `t`, as both engines take it.
std::string iso(system_clock::time_point t) {
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(t);
  return fmt::format("{}:{:02}.{:03}Z", utc_minute(t),
                     std::chrono::floor<seconds>(ms).time_since_epoch().count() % 60,
                     ms.time_since_epoch().count() % 1000);
}

class AuditStoreTest : public ::testing::TestWithParam<Engine> {
 protected:
  AuditStoreTest() : tdb_(GetParam()) {
    // A session time zone with a half-hour offset: a minute cut in local time would show.
    if (GetParam() == Engine::postgres) {
      tdb_.sql(fmt::format("ALTER DATABASE \"{}\" SET timezone TO 'Asia/Kolkata'", tdb_.name()));
    }
    db_ = tdb_.open();
  }

  void insert_order(std::int64_t id, system_clock::time_point at) {
    tdb_.sql(
        fmt::format("INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, "
                    "total_cents, created_at, principal) VALUES ({0}, 'N{0}', 1, 1, 'placed', 0, "
                    "'{1}', 'test')",
                    id, iso(at)));
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
};

TEST_P(AuditStoreTest, ActionsAreListedNewestFirstFilteredAndPaged) {
  for (int i = 0; i < 5; ++i) {
    auto id =
        record_action(*db_, action(i % 2 ? "alice" : "bob", i < 3 ? "a.x" : "a.y", 200), soon());
    ASSERT_TRUE(id.ok()) << id.status().to_string();
  }
  ActionRecord with_target = action("alice", "order.cancel", 409);
  with_target.target = "42";
  with_target.summary = R"({"code":"in_production"})";
  ASSERT_TRUE(record_action(*db_, with_target, soon()).ok());

  auto all = list_actions(*db_, ActionFilter{}, soon());
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  ASSERT_EQ(all->size(), 6u);
  EXPECT_EQ(all->front().action, "order.cancel");
  EXPECT_EQ(all->front().target, "42");
  EXPECT_EQ(all->front().status, 409);
  EXPECT_EQ(all->front().summary, R"({"code":"in_production"})");
  EXPECT_EQ(all->front().at.size(), 24u) << all->front().at;  // YYYY-MM-DDTHH:MM:SS.mmmZ
  EXPECT_FALSE(all->back().target.has_value());
  for (size_t i = 1; i < all->size(); ++i) EXPECT_GT((*all)[i - 1].action_id, (*all)[i].action_id);

  ActionFilter f;
  f.principal = "alice";
  EXPECT_EQ(list_actions(*db_, f, soon())->size(), 3u);
  f.action = "a.x";
  EXPECT_EQ(list_actions(*db_, f, soon())->size(), 1u);
  ActionFilter page;
  page.limit = 4;
  auto first = list_actions(*db_, page, soon());
  ASSERT_EQ(first->size(), 4u);
  page.before = first->back().action_id;
  EXPECT_EQ(list_actions(*db_, page, soon())->size(), 2u);
  page.limit = 0;
  EXPECT_EQ(list_actions(*db_, page, soon()).status().code(), Code::invalid_request);
}

TEST_P(AuditStoreTest, ActivityCountsEveryUtcMinuteWithZeros) {
  const auto minute = std::chrono::floor<minutes>(system_clock::now());
  const auto now = minute + seconds(30);
  insert_order(1, minute - minutes(2) + seconds(1));
  insert_order(2, minute - minutes(2) + seconds(59));
  insert_order(3, minute - minutes(10));  // on the boundary: its own minute
  insert_order(4, minute - minutes(60));  // one before the first of 60
  insert_order(5, minute + seconds(5));   // the current minute

  auto a = activity(*db_, 60, now, soon());
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_EQ(a->minutes.size(), 60u);
  ASSERT_EQ(a->orders.size(), 60u);
  EXPECT_EQ(a->minutes.back(), utc_minute(now) + ":00Z");
  EXPECT_EQ(a->minutes.front(), utc_minute(now - minutes(59)) + ":00Z");
  EXPECT_EQ(a->orders[59], 1);
  EXPECT_EQ(a->orders[57], 2);
  EXPECT_EQ(a->orders[49], 1);
  EXPECT_EQ(std::accumulate(a->orders.begin(), a->orders.end(), std::int64_t{0}), 4);
  EXPECT_EQ(std::accumulate(a->items.begin(), a->items.end(), std::int64_t{0}), 0);
  EXPECT_EQ(std::accumulate(a->numbers.begin(), a->numbers.end(), std::int64_t{0}), 0);

  auto one = activity(*db_, 1, now, soon());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->orders, std::vector<std::int64_t>{1});
  EXPECT_EQ(activity(*db_, 0, now, soon()).status().code(), Code::invalid_request);
  EXPECT_EQ(activity(*db_, 1441, now, soon()).status().code(), Code::invalid_request);
}

// With 20,000 rows a table the per-minute count of the last hour reads a range of its
// created_at index (migrations 14–16), never the table. PostgreSQL gets every series' table
// filled (its planner weighs sizes); SQLite's planner takes the index for the range anyway.
TEST_P(AuditStoreTest, ActivityReadsOverTheCreatedAtIndexes) {
  const bool pg = GetParam() == Engine::postgres;
  if (pg) {
    for (const char* seed :
         {"INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, "
          "total_cents, created_at, principal) SELECT g, 'N' || g, 1, 1, 'placed', 0, now() - g "
          "* interval '1 minute', 'test' FROM generate_series(1, 20000) g",
          "INSERT INTO doc_scopes (scope, width, radix, max_value, last_value) VALUES "
          "('PO-S', 9, 10, 999999999, 20000)",
          "INSERT INTO documents (scope, value, number, origin, scheme, title, created_at, "
          "principal) SELECT 'PO-S', g, lpad(g::text, 9, '0'), 'issued', 'r10w9', 't', now() - g "
          "* interval '1 minute', 'test' FROM generate_series(1, 20000) g",
          "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) SELECT 'S', g::text, "
          "'1', 1 FROM generate_series(1, 20000) g",
          "INSERT INTO schedule_runs (kind, status, owner) VALUES ('manual', 'done', 't')",
          "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) SELECT "
          "(SELECT max(run_id) FROM schedule_runs), 'S', g::text, '1', 'success' FROM "
          "generate_series(1, 20000) g",
          "INSERT INTO production_orders (site_code, order_no, lot_no, item_id, quantity, "
          "document_scope, document_value, document_number, created_at) SELECT i.site_code, "
          "i.order_no, i.lot_no, i.item_id, 1, 'PO-S', i.order_no::bigint, lpad(i.order_no, 9, "
          "'0'), now() - i.order_no::bigint * interval '1 minute' FROM schedule_items i",
          "ANALYZE"}) {
      tdb_.sql(seed);
    }
  } else {
    tdb_.sql(
        "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 20000) "
        "INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, "
        "total_cents, created_at, principal) SELECT i, 'N' || i, 1, 1, 'placed', 0, "
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || i || ' minutes'), 'test' FROM g");
    tdb_.sql("ANALYZE");
  }
  const auto& sql = db_->dialect().audit;
  const std::string since = "'" + iso(system_clock::now() - minutes(60)) + "'";
  for (const store::Statement* s :
       {&sql.orders_per_minute, &sql.items_per_minute, &sql.numbers_per_minute}) {
    std::string text(s->sql);
    const std::string placeholder = pg ? "$1" : "?1";
    text.replace(text.find(placeholder), placeholder.size(), since);
    std::string plan;
    for (const auto& row : tdb_.sql((pg ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + text)) {
      plan += row.text(row.size() - 1) + "\n";
    }
    EXPECT_NE(plan.find("_by_time"), std::string::npos) << s->name << ":\n" << plan;
    EXPECT_EQ(plan.find("Seq Scan"), std::string::npos) << s->name << ":\n" << plan;
    EXPECT_EQ(plan.find("SCAN orders\n"), std::string::npos) << s->name << ":\n" << plan;
  }
  auto a = activity(*db_, 60, system_clock::now(), soon());
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  const auto sum = [](const std::vector<std::int64_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{0});
  };
  EXPECT_GE(sum(a->orders), 58);
  EXPECT_LE(sum(a->orders), 60);
  if (pg) {
    EXPECT_GE(sum(a->items), 58);
    EXPECT_GE(sum(a->numbers), 58);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, AuditStoreTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
