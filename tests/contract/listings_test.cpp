// The console's lists (onceorder/service/listings.hpp) on every engine: order, filter, paging
// across pages without duplicates or gaps, empty pages, customer restriction and the gap audit.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/listings.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

OrderFilter of(std::optional<std::string> status, std::optional<std::int64_t> customer = {},
               std::optional<std::int64_t> warehouse = {}, std::int64_t before = 0,
               int limit = 100) {
  OrderFilter f;
  f.status = std::move(status);
  f.customer_id = customer;
  f.warehouse_id = warehouse;
  f.before = before;
  f.limit = limit;
  return f;
}

class ListingsTest : public ::testing::TestWithParam<Engine> {
 protected:
  ListingsTest() : tdb_(GetParam()), db_(tdb_.open()), intake_(*db_), numbering_(*db_) {}

  void sku(std::int64_t warehouse, std::int64_t sku, std::int64_t available) {
    auto r = stock_.put_sku(warehouse, sku, 100 + sku, available, soon());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  std::int64_t place(std::int64_t customer, std::int64_t warehouse, std::int64_t sku,
                     std::int64_t quantity, const std::string& key) {
    auto r = intake_.place({customer, warehouse, {{sku, quantity}}, key}, soon());
    EXPECT_TRUE(r.ok() && !r->out_of_stock) << (r.ok() ? "out of stock" : r.status().to_string());
    return r.ok() ? r->order.order_id : 0;
  }
  // Every order of `filter`, `page` at a time, following the cursor to the end.
  std::vector<std::int64_t> all_pages(OrderFilter filter, int page, int& pages) {
    std::vector<std::int64_t> out;
    filter.limit = page;
    pages = 0;
    for (;;) {
      auto r = list_orders(*db_, filter, soon());
      EXPECT_TRUE(r.ok()) << r.status().to_string();
      if (!r.ok()) return out;
      ++pages;
      for (const auto& o : *r) out.push_back(o.order_id);
      if (r->size() < static_cast<size_t>(page)) return out;
      filter.before = r->back().order_id;
    }
  }
  std::int64_t i7_violations() {
    auto inv = check_invariants(*db_, soon());
    EXPECT_TRUE(inv.ok()) << inv.status().to_string();
    for (const auto& r : *inv) {
      if (r.id == "I7") return r.violations;
    }
    return -1;
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Intake intake_;
  Stock stock_{*db_};
  Numbering numbering_;
};

TEST_P(ListingsTest, OrdersNewestFirstAcrossPagesWithFilters) {
  sku(1, 1, 100);
  sku(2, 1, 100);
  std::vector<std::int64_t> placed;
  for (int i = 0; i < 7; ++i)
    placed.push_back(place(i % 2 ? 8 : 7, 1, 1, 1, "k" + std::to_string(i)));
  placed.push_back(place(7, 2, 1, 1, "w2"));
  ASSERT_TRUE(intake_.cancel(placed[2], soon()).ok());

  std::vector<std::int64_t> newest_first(placed.rbegin(), placed.rend());
  int pages = 0;
  EXPECT_EQ(all_pages({}, 3, pages), newest_first);  // no duplicate, no gap, newest first
  EXPECT_EQ(pages, 3);

  std::vector<std::int64_t> of7;
  for (auto id : newest_first) {
    if (id != placed[1] && id != placed[3] && id != placed[5]) of7.push_back(id);
  }
  EXPECT_EQ(all_pages(of({}, 7), 2, pages), of7);
  EXPECT_EQ(pages, 3);  // 5 orders in pages of 2

  EXPECT_EQ(all_pages(of("cancelled"), 10, pages), std::vector<std::int64_t>{placed[2]});
  EXPECT_EQ(all_pages(of("cancelled", 8), 10, pages).size(), 0u);
  EXPECT_EQ(all_pages(of({}, {}, 2), 10, pages), std::vector<std::int64_t>{placed[7]});
  EXPECT_EQ(all_pages(of({}, 7, 3), 10, pages).size(), 0u);

  auto one = list_orders(*db_, of({}, {}, {}, placed[1], 1), soon());
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(one->at(0).order_id, placed[0]);
  EXPECT_EQ(one->at(0).customer_id, 7);
  EXPECT_EQ(one->at(0).total_cents, 101);
  EXPECT_EQ(one->at(0).status, "placed");
  EXPECT_FALSE(one->at(0).created_at.empty());

  EXPECT_EQ(list_orders(*db_, of({}, {}, {}, 0, 0), soon()).status().code(), Code::invalid_request);
  EXPECT_EQ(list_orders(*db_, of({}, {}, {}, 0, 1001), soon()).status().code(),
            Code::invalid_request);
  EXPECT_EQ(list_orders(*db_, of("placed'--"), soon()).status().code(), Code::invalid_request);
}

TEST_P(ListingsTest, OrderReceiptsOnlyForTheOrdersCustomer) {
  sku(1, 5, 10);
  sku(1, 6, 10);
  auto placed = intake_.place({7, 1, {{6, 1}, {5, 2}, {6, 1}}, "key-1"}, soon());
  ASSERT_TRUE(placed.ok() && !placed->out_of_stock);
  const std::int64_t id = placed->order.order_id;
  ASSERT_TRUE(intake_.place({7, 1, {{5, 99}}, "short"}, soon()).ok());  // out_of_stock, no order

  auto r = list_order_receipts(*db_, id, std::nullopt, soon());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->at(0).idempotency_key, "key-1");
  EXPECT_EQ(r->at(0).normalized, "5x2,6x2");
  EXPECT_EQ(r->at(0).outcome, "placed");
  EXPECT_EQ(r->at(0).warehouse_id, 1);
  EXPECT_TRUE(list_order_receipts(*db_, id, 7, soon()).ok());
  EXPECT_EQ(list_order_receipts(*db_, id, 8, soon()).status().code(), Code::not_found);
  EXPECT_EQ(list_order_receipts(*db_, id + 1, std::nullopt, soon()).status().code(),
            Code::not_found);
}

TEST_P(ListingsTest, SkusWithReservationsPagedBySku) {
  for (std::int64_t s = 1; s <= 5; ++s) sku(1, s, 10);
  sku(2, 3, 4);
  const std::int64_t order = place(7, 1, 2, 3, "r");
  place(8, 1, 2, 1, "r2");
  std::vector<Sku> seen;
  std::int64_t after = 0;
  int pages = 0;
  for (;;) {
    auto r = list_skus(*db_, 1, after, 2, soon());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ++pages;
    seen.insert(seen.end(), r->begin(), r->end());
    if (r->size() < 2) break;
    after = r->back().sku_id;
  }
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 5u);
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i].sku_id, static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(seen[1].reserved, 4);
  EXPECT_EQ(seen[1].available, 6);
  EXPECT_EQ(seen[1].price_cents, 102);
  EXPECT_EQ(seen[0].reserved, 0);
  ASSERT_TRUE(intake_.cancel(order, soon()).ok());
  auto after_cancel = list_skus(*db_, 1, 1, 1, soon());
  ASSERT_TRUE(after_cancel.ok());
  EXPECT_EQ(after_cancel->at(0).reserved, 1);  // a released reservation no longer counts
  EXPECT_EQ(after_cancel->at(0).available, 9);

  auto other = list_skus(*db_, 2, 0, 100, soon());
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->size(), 1u);
  EXPECT_EQ(other->at(0).available, 4);
  EXPECT_TRUE(list_skus(*db_, 3, 0, 100, soon())->empty());
  EXPECT_TRUE(list_skus(*db_, 1, 5, 100, soon())->empty());
  EXPECT_EQ(list_skus(*db_, 1, 0, 0, soon()).status().code(), Code::invalid_request);
}

TEST_P(ListingsTest, ScopesByNameWithTheGapAuditOfI7) {
  for (const char* scope : {"B", "A", "C", "D"}) {
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(numbering_.issue({scope, "t", std::nullopt}, soon()).ok());
    }
  }
  // A legacy history with holes below the counter: allowed, counted as missing, not as gaps.
  auto imported =
      numbering_.import_legacy("L", LegacyScheme::dec3, "number\n001\n002\n005\n", soon());
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  ASSERT_TRUE(numbering_.issue({"L", "after legacy", std::nullopt}, soon()).ok());

  std::vector<ScopeAudit> seen;
  std::string after;
  int pages = 0;
  for (;;) {
    auto r = list_scopes(*db_, after, 2, soon());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ++pages;
    seen.insert(seen.end(), r->begin(), r->end());
    if (r->size() < 2) break;
    after = r->back().info.scope;
  }
  EXPECT_EQ(pages, 3);  // 5 scopes in pages of 2
  std::vector<std::string> names;
  for (const auto& a : seen) names.push_back(a.info.scope);
  EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "C", "D", "L"}));
  EXPECT_EQ(seen[0].info.last_value, 3);
  EXPECT_EQ(seen[0].info.issued, 3);
  EXPECT_EQ(seen[0].gaps, 0);
  EXPECT_EQ(seen[0].missing, 0);
  EXPECT_EQ(seen[4].info.last_value, 6);
  EXPECT_EQ(seen[4].info.imported, 3);
  EXPECT_EQ(seen[4].info.issued, 1);
  EXPECT_EQ(seen[4].gaps, 0);
  EXPECT_EQ(seen[4].missing, 2);
  EXPECT_EQ(i7_violations(), 0);

  // The hole a lost document would leave: the audit and I7 see it alike.
  tdb_.sql("DELETE FROM documents WHERE scope = 'B' AND value = 2");
  auto b = list_scopes(*db_, "A", 1, soon());
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ(b->at(0).info.scope, "B");
  EXPECT_EQ(b->at(0).gaps, 1);
  EXPECT_EQ(b->at(0).missing, 1);
  EXPECT_EQ(i7_violations(), 1);

  EXPECT_TRUE(list_scopes(*db_, "L", 10, soon())->empty());
  EXPECT_EQ(list_scopes(*db_, "", 1001, soon()).status().code(), Code::invalid_request);
}

TEST_P(ListingsTest, ClaimsWhoseLeaseEndedOrEndsSoon) {
  SchedulerOptions o;
  o.owner = "worker-1";
  o.lease = std::chrono::minutes(1);
  Scheduler s(*db_, o);
  std::vector<SourceOrder> orders;
  for (const char* lot : {"1", "2", "3"}) orders.push_back({{"S1", "A", lot}, 1});
  ASSERT_TRUE(s.import_source_orders(orders, soon()).ok());
  auto run = s.create_run(RunKind::manual, std::nullopt, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  auto claimed = s.claim(run->run.run_id, 2);
  ASSERT_TRUE(claimed.ok() && claimed->size() == 2u);

  auto none = list_claims(*db_, std::chrono::milliseconds(0), 0, 100, soon());
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_TRUE(none->empty());  // both leases run for another minute

  std::vector<ClaimView> seen;
  std::int64_t after = 0;
  for (;;) {
    auto page = list_claims(*db_, std::chrono::minutes(2), after, 1, soon());
    ASSERT_TRUE(page.ok()) << page.status().to_string();
    seen.insert(seen.end(), page->begin(), page->end());
    if (page->size() < 1) break;
    after = page->back().item_id;
  }
  ASSERT_EQ(seen.size(), 2u);  // the waiting third item is no claim
  EXPECT_LT(seen[0].item_id, seen[1].item_id);
  EXPECT_EQ(seen[0].owner, "worker-1");
  EXPECT_EQ(seen[0].attempt, 1);
  EXPECT_EQ(seen[0].run_kind, "manual");
  EXPECT_EQ(seen[0].run_id, run->run.run_id);
  EXPECT_FALSE(seen[0].expired);
  EXPECT_FALSE(seen[0].lease_until.empty());

  tdb_.sql("UPDATE schedule_items SET lease_until = '2000-01-01T00:00:00.000Z' WHERE item_id = " +
           std::to_string(seen[1].item_id));
  auto expired = list_claims(*db_, std::chrono::milliseconds(0), 0, 100, soon());
  ASSERT_TRUE(expired.ok());
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_EQ(expired->at(0).item_id, seen[1].item_id);
  EXPECT_TRUE(expired->at(0).expired);
  EXPECT_EQ(expired->at(0).lease_until, "2000-01-01T00:00:00.000Z");
  EXPECT_EQ(list_claims(*db_, std::chrono::milliseconds(-1), 0, 100, soon()).status().code(),
            Code::invalid_request);
}

INSTANTIATE_TEST_SUITE_P(Engines, ListingsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
