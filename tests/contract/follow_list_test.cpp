// The lists issue 49 added, on every engine: the warehouses (from their stock rows) and the
// orders in the order they became visible, for a client that follows new orders with a cursor
// (onceorder/service/listings.hpp, follow_orders). The follower under concurrent placements is in
// follow_orders_race_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/listings.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

class FollowListTest : public ::testing::TestWithParam<Engine> {
 protected:
  FollowListTest() : tdb_(GetParam()), db_(tdb_.open()), intake_(*db_) {}

  void sku(std::int64_t warehouse, std::int64_t sku, std::int64_t available) {
    auto r = stock_.put_sku(warehouse, sku, 10, available, soon());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  std::int64_t place(std::int64_t customer, std::int64_t warehouse, std::int64_t quantity) {
    const std::string key = "k" + std::to_string(++keys_);
    auto r = intake_.place({customer, warehouse, {{1, quantity}}, key}, soon());
    EXPECT_TRUE(r.ok() && !r->out_of_stock) << (r.ok() ? "out of stock" : r.status().to_string());
    return r.ok() ? r->order.order_id : 0;
  }
  OrderFollowPage follow(FeedPosition after, int limit, std::optional<std::int64_t> customer = {}) {
    OrderFilter f;
    f.limit = limit;
    f.customer_id = customer;
    auto page = follow_orders(*db_, f, after, soon());
    EXPECT_TRUE(page.ok()) << page.status().to_string();
    return page.ok() ? std::move(*page) : OrderFollowPage{};
  }
  static std::vector<std::int64_t> ids(const OrderFollowPage& page) {
    std::vector<std::int64_t> out;
    for (const auto& o : page.orders) out.push_back(o.order_id);
    return out;
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Intake intake_;
  Stock stock_{*db_};
  int keys_ = 0;
};

TEST_P(FollowListTest, WarehousesAreListedFromTheirStockWithTotals) {
  auto none = list_warehouses(*db_, 0, 100, soon());
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_TRUE(none->empty());
  sku(7, 1, 5);
  sku(3, 1, 4);
  sku(1, 1, 10);
  sku(1, 2, 20);
  sku(1, 3, 0);
  place(42, 1, 3);  // 3 of SKU 1 reserved in warehouse 1

  auto all = list_warehouses(*db_, 0, 100, soon());
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(all->at(0).warehouse_id, 1);
  EXPECT_EQ(all->at(0).skus, 3);
  EXPECT_EQ(all->at(0).available, 27);
  EXPECT_EQ(all->at(0).reserved, 3);
  EXPECT_EQ(all->at(1).warehouse_id, 3);
  EXPECT_EQ(all->at(1).skus, 1);
  EXPECT_EQ(all->at(2).warehouse_id, 7);
  EXPECT_EQ(all->at(2).available, 5);
  EXPECT_EQ(all->at(2).reserved, 0);

  // Pages of two: no duplicate, no gap; a page after the last warehouse is empty.
  auto first = list_warehouses(*db_, 0, 2, soon());
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ(first->back().warehouse_id, 3);
  auto second = list_warehouses(*db_, 3, 2, soon());
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ(second->front().warehouse_id, 7);
  auto past = list_warehouses(*db_, 7, 2, soon());
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->empty());

  for (int bad : {0, 1001})
    EXPECT_EQ(list_warehouses(*db_, 0, bad, soon()).status().code(), Code::invalid_request);
}

TEST_P(FollowListTest, OrdersAreFollowedInTheOrderTheyBecameVisible) {
  sku(1, 1, 1000);
  sku(2, 1, 1000);
  EXPECT_TRUE(follow({}, 10).orders.empty());
  EXPECT_FALSE(follow({}, 10).next_after.has_value()) << "nothing read, nowhere to go on from";
  std::vector<std::int64_t> placed;
  for (int i = 0; i < 5; ++i) placed.push_back(place(i % 2 ? 8 : 7, 1 + i % 2, 1));

  // Pages of two, each going on from the last one's next_after, then an empty page.
  std::vector<std::int64_t> seen;
  FeedPosition at;
  for (int pages = 0;; ++pages) {
    ASSERT_LT(pages, 5);
    const OrderFollowPage page = follow(at, 2);
    for (auto id : ids(page)) seen.push_back(id);
    if (page.orders.empty()) {
      EXPECT_FALSE(page.next_after.has_value());
      break;
    }
    ASSERT_TRUE(page.next_after.has_value());
    EXPECT_GT(*page.next_after, at);
    at = *page.next_after;
  }
  EXPECT_EQ(seen, placed);  // placed one after another: commit order is placement order
  const OrderFollowPage first = follow({}, 1);
  ASSERT_EQ(first.orders.size(), 1u);
  EXPECT_EQ(first.orders[0].customer_id, 7);
  EXPECT_EQ(first.orders[0].warehouse_id, 1);
  EXPECT_EQ(first.orders[0].total_cents, 10);
  EXPECT_EQ(first.orders[0].status, "placed");

  // Filtered, a page that is not full still ends where the read stopped (past orders of
  // other customers), so the next page does not read them again.
  const OrderFollowPage of8 = follow({}, 10, 8);
  EXPECT_EQ(ids(of8), (std::vector<std::int64_t>{placed[1], placed[3]}));
  ASSERT_TRUE(of8.next_after.has_value());
  EXPECT_EQ(*of8.next_after, at);
  const std::int64_t later = place(8, 1, 1);
  EXPECT_EQ(ids(follow(*of8.next_after, 10, 8)), std::vector<std::int64_t>{later});

  OrderFilter bad;
  bad.limit = 0;
  EXPECT_EQ(follow_orders(*db_, bad, {}, soon()).status().code(), Code::invalid_request);
}

INSTANTIATE_TEST_SUITE_P(Engines, FollowListTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
