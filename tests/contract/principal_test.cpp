// Placed orders and issued documents record their principal (docs/SECURITY.md, "Who did
// what") on every engine: each request's own, through the lone path and through batches that
// mix principals; production numbers and legacy imports under their system names; a replay
// shows the first request's; the schema refuses a new row that names none; rows from before
// migration 25 keep none and can still change.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "contract/intake_fixture.hpp"
#include "onceorder/core/principal.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder::testing {
namespace {

class PrincipalTest : public IntakeTest {
 protected:
  PlaceRequest order_by(const std::string& who, const std::string& key, std::int64_t sku) {
    PlaceRequest r{7, 1, {{sku, 1}}, key};
    r.principal = who;
    return r;
  }
  IssueRequest document_by(const std::string& who, const std::string& title,
                           std::optional<std::string> key = std::nullopt) {
    IssueRequest r{"INV", title, std::move(key)};
    r.principal = who;
    return r;
  }
  std::string principal_of(const std::string& table, const std::string& where) {
    auto rows = tdb_.sql("SELECT coalesce(principal, '<null>') FROM " + table + " WHERE " + where);
    return rows.empty() ? "<no row>" : rows.at(0).text(0);
  }
};

TEST_P(PrincipalTest, EachOrderRecordsItsRequestsPrincipalAlsoInAMixedBatch) {
  for (std::int64_t sku = 101; sku <= 106; ++sku) stock(sku, 10);
  auto lone = intake_.place(order_by("alice", "lone", 101), soon());
  ASSERT_TRUE(lone.ok()) << lone.status().to_string();
  EXPECT_EQ(lone->order.principal, "alice");
  EXPECT_EQ(intake_.get_order(lone->order.order_id, soon())->principal, "alice");

  // One transaction, several principals: each order keeps its own.
  std::vector<PlaceRequest> batch{order_by("bob", "b1", 102), order_by("carol", "b2", 103),
                                  order_by("bob", "b3", 104), order_by("dave", "b4", 105)};
  auto placed = intake_.place_batch(batch, soon());
  ASSERT_EQ(placed.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE(placed[i].ok()) << placed[i].status().to_string();
    EXPECT_EQ(placed[i]->order.principal, batch[i].principal);
    EXPECT_EQ(principal_of("orders", "order_id = " + std::to_string(placed[i]->order.order_id)),
              batch[i].principal);
  }

  // A replay by someone else shows who placed it; it places nothing.
  auto replay = intake_.place(order_by("mallory", "lone", 101), soon());
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->order.principal, "alice");
  EXPECT_EQ(count("SELECT count(*) FROM orders WHERE principal = 'mallory'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM orders WHERE principal IS NULL"), 0);
  expect_invariants_hold();
}

TEST_P(PrincipalTest, EachDocumentRecordsItsPrincipalAndSystemWritersTheirOwn) {
  Numbering numbering(*db_);
  auto one = numbering.issue(document_by("alice", "first", "k1"), soon());
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->document.principal, "alice");
  std::vector<IssueRequest> batch{document_by("bob", "a"), document_by("carol", "b", "k2"),
                                  document_by("bob", "c"), document_by("erin", "first", "k1")};
  auto issued = numbering.issue_batch(batch, soon());
  ASSERT_EQ(issued.size(), batch.size());
  for (size_t i = 0; i + 1 < batch.size(); ++i) {
    ASSERT_TRUE(issued[i].ok()) << issued[i].status().to_string();
    EXPECT_EQ(issued[i]->document.principal, batch[i].principal);
  }
  ASSERT_TRUE(issued[3].ok());
  EXPECT_TRUE(issued[3]->replayed);
  EXPECT_EQ(issued[3]->document.principal, "alice") << "a replay shows who issued it";
  auto listed = numbering.list("INV", 0, 100, soon());
  ASSERT_TRUE(listed.ok());
  std::map<std::string, std::string> by_title;
  for (const Document& d : listed->documents) by_title[d.title] = d.principal;
  EXPECT_EQ(by_title, (std::map<std::string, std::string>{
                          {"first", "alice"}, {"a", "bob"}, {"b", "carol"}, {"c", "bob"}}));

  // A schedule run's production numbers, and a legacy import.
  Scheduler s(*db_);
  ASSERT_TRUE(
      s.import_source_orders(std::vector<SourceOrder>{{{"S1", "O1", "1"}, 1}}, soon()).ok());
  auto run = s.create_run(RunKind::manual, std::vector<OrderKey>{{"S1", "O1", "1"}}, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_TRUE(s.process_run(run->run.run_id).ok());
  EXPECT_EQ(count("SELECT count(*) FROM production_orders p JOIN documents d ON d.scope = "
                  "p.document_scope AND d.value = p.document_value WHERE d.principal = '" +
                  std::string(kProductionPrincipal) + "'"),
            1);
  ASSERT_TRUE(numbering.import_legacy("OLD", LegacyScheme::dec4, "number\n0007\n", soon()).ok());
  EXPECT_EQ(principal_of("documents", "scope = 'OLD'"), kLegacyImportPrincipal);
  EXPECT_EQ(count("SELECT count(*) FROM documents WHERE principal IS NULL"), 0);
}

// The schema's own refusal: a writer that forgets the principal fails, it does not record a
// default. An update of a row needs none.
TEST_P(PrincipalTest, TheSchemaRefusesANewRowWithoutAPrincipal) {
  std::optional<Result<store::PooledConnection>> held(db_->acquire(soon()));
  auto& conn = *held;
  ASSERT_TRUE(conn.ok());
  static constexpr store::Statement kOrder{
      "t_order_without_principal",
      "INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents) "
      "VALUES (1, 'N1', 1, 1, 'placed', 0)"};
  static constexpr store::Statement kDocument{
      "t_document_without_principal",
      "INSERT INTO documents (scope, value, number, origin, scheme, title) "
      "VALUES ('X', 1, '0001', 'issued', 'r10w4', 't')"};
  for (const store::Statement* s : {&kOrder, &kDocument}) {
    auto refused = (*conn)->query(*s, {});
    ASSERT_FALSE(refused.ok()) << s->name;
    EXPECT_NE(refused.status().message().find("must name its principal"), std::string::npos)
        << refused.status().to_string();
  }
  static constexpr store::Statement kEmpty{
      "t_order_empty_principal",
      "INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, "
      "principal) VALUES (2, 'N2', 1, 1, 'placed', 0, '')"};
  EXPECT_FALSE((*conn)->query(kEmpty, {}).ok()) << "an empty name is no name";
  held.reset();
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM documents"), 0);
}

TEST_P(PrincipalTest, RowsFromBeforeMigration25KeepNoneAndStillChange) {
  stock(101, 5);
  ASSERT_TRUE(store::migrate_down(*db_, 24).ok());
  static constexpr store::Statement kOld{
      "t_old_order",
      "INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents) "
      "VALUES (5, 'OLD-5', 7, 1, 'placed', 0)"};
  {
    auto conn = db_->acquire(soon());
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE((*conn)->query(kOld, {}).ok());
  }
  ASSERT_TRUE(store::migrate(*db_).ok());
  auto old = intake_.get_order(5, soon());
  ASSERT_TRUE(old.ok()) << old.status().to_string();
  EXPECT_EQ(old->principal, "") << "nobody knows who placed it";
  tdb_.sql("UPDATE orders SET status = 'cancelled' WHERE order_id = 5");
  EXPECT_EQ(principal_of("orders", "order_id = 5"), "<null>");
  auto fresh = intake_.place(order_by("alice", "new", 101), soon());
  ASSERT_TRUE(fresh.ok()) << fresh.status().to_string();
  EXPECT_EQ(fresh->order.principal, "alice");
}

INSTANTIATE_TEST_SUITE_P(Engines, PrincipalTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
