#include "onceorder/core/cart_lanes.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <optional>
#include <thread>
#include <vector>

namespace onceorder {
namespace {

Cart cart(std::int64_t warehouse, std::vector<std::int64_t> skus) {
  Cart c{warehouse, {}};
  for (auto s : skus) c.lines.push_back({s, 1});
  return c;
}

TEST(CartLanes, ACartAloneTakesTheLaneOfItsLowestSku) {
  CartLanes lanes;
  const Cart a = cart(1, {7, 9});
  auto entry = lanes.enter(a);
  EXPECT_EQ(entry.lane(), "1/7");
  EXPECT_FALSE(entry.collided());
  EXPECT_EQ(lanes.rows_in_flight(), 2u);
}

TEST(CartLanes, DisjointCartsKeepTheirOwnLanes) {
  CartLanes lanes;
  const Cart a = cart(1, {1, 2}), b = cart(1, {3, 4}), c = cart(2, {1, 2});
  auto ea = lanes.enter(a);
  auto eb = lanes.enter(b);
  auto ec = lanes.enter(c);  // the same SKUs in another warehouse are other rows
  EXPECT_EQ(ea.lane(), "1/1");
  EXPECT_EQ(eb.lane(), "1/3");
  EXPECT_EQ(ec.lane(), "2/1");
  EXPECT_FALSE(eb.collided() || ec.collided());
}

TEST(CartLanes, ACartSharingARowInFlightJoinsItsWarehousesCollisionLane) {
  CartLanes lanes;
  const Cart a = cart(1, {1, 5}), b = cart(1, {2, 5}), c = cart(1, {3, 5, 8});
  auto ea = lanes.enter(a);
  auto eb = lanes.enter(b);  // shares SKU 5, not its lowest: still a collision
  auto ec = lanes.enter(c);
  EXPECT_EQ(ea.lane(), "1/1");
  EXPECT_TRUE(eb.collided());
  EXPECT_EQ(eb.lane(), "1/*");
  EXPECT_EQ(ec.lane(), "1/*");  // every colliding cart of the warehouse meets in one lane
  EXPECT_EQ(lanes.collisions(), 2u);
}

TEST(CartLanes, ACrowdedWarehouseCombinesCartsThatShareNoRow) {
  CartLanes lanes(2);
  const Cart a = cart(1, {1}), b = cart(1, {2}), c = cart(1, {3}), d = cart(2, {3});
  auto ea = lanes.enter(a);
  std::optional<CartLanes::Entry> eb(lanes.enter(b));
  EXPECT_EQ(eb->lane(), "1/2");
  auto ec = lanes.enter(c);  // two carts of warehouse 1 in flight: the third is combined
  EXPECT_EQ(ec.lane(), "1/*");
  EXPECT_TRUE(ec.crowded());
  EXPECT_FALSE(ec.collided());
  auto ed = lanes.enter(d);  // warehouse 2 is not crowded (and SKU 3 there is another row)
  EXPECT_EQ(ed.lane(), "2/3");
  EXPECT_FALSE(ed.crowded());
  EXPECT_EQ(lanes.crowdings(), 1u);
  EXPECT_EQ(lanes.collisions(), 0u);
  eb.reset();  // warehouse 1 is down to two carts (a and c): still crowded
  const Cart e = cart(1, {4}), f = cart(1, {5});
  std::optional<CartLanes::Entry> ee(lanes.enter(e));
  EXPECT_TRUE(ee->crowded());
  ee.reset();
  {
    auto gone = std::move(ec);  // c leaves: one cart of warehouse 1 in flight
  }
  auto ef = lanes.enter(f);
  EXPECT_FALSE(ef.crowded());
  EXPECT_EQ(ef.lane(), "1/5");
  EXPECT_EQ(lanes.crowdings(), 2u);
}

TEST(CartLanes, ACollidingCartCountsAsACollisionNotACrowding) {
  CartLanes lanes(1);
  const Cart a = cart(1, {1, 2}), b = cart(1, {2, 3});
  auto ea = lanes.enter(a);
  auto eb = lanes.enter(b);
  EXPECT_EQ(eb.lane(), "1/*");
  EXPECT_TRUE(eb.collided());
  EXPECT_FALSE(eb.crowded());
  EXPECT_EQ(lanes.collisions(), 1u);
  EXPECT_EQ(lanes.crowdings(), 0u);
}

TEST(CartLanes, TheDefaultLetsFourCartsRunAlone) {
  CartLanes lanes;
  std::vector<Cart> carts;
  for (std::size_t i = 1; i <= CartLanes::kLoneCarts + 1; ++i)
    carts.push_back(cart(1, {static_cast<std::int64_t>(i)}));
  std::vector<CartLanes::Entry> entries;
  for (const Cart& c : carts) entries.push_back(lanes.enter(c));
  for (std::size_t i = 0; i < CartLanes::kLoneCarts; ++i) EXPECT_FALSE(entries[i].crowded());
  EXPECT_TRUE(entries.back().crowded());
  EXPECT_EQ(entries.back().lane(), "1/*");
}

TEST(CartLanes, LeavingFreesTheRows) {
  CartLanes lanes;
  const Cart a = cart(1, {1, 5}), b = cart(1, {5});
  {
    auto ea = lanes.enter(a);
    auto eb = lanes.enter(b);
    EXPECT_TRUE(eb.collided());
    EXPECT_EQ(lanes.rows_in_flight(), 2u);
    EXPECT_EQ(lanes.collisions(), 1u);
  }
  EXPECT_EQ(lanes.rows_in_flight(), 0u);
  auto again = lanes.enter(b);
  EXPECT_FALSE(again.collided());
  EXPECT_EQ(again.lane(), "1/5");
}

TEST(CartLanes, AMovedEntryLeavesOnce) {
  CartLanes lanes;
  const Cart a = cart(1, {4});
  std::optional<CartLanes::Entry> kept;
  {
    auto e = lanes.enter(a);
    kept.emplace(std::move(e));
  }
  EXPECT_EQ(lanes.rows_in_flight(), 1u);  // the moved-from entry released nothing
  kept.reset();
  EXPECT_EQ(lanes.rows_in_flight(), 0u);
}

// Many threads entering and leaving carts over a few rows at once: the counts never go
// wrong (every row freed at the end), and a cart entering while another holds its row
// always collides.
TEST(CartLanes, ConcurrentCartsCountEveryRow) {
  CartLanes lanes;
  constexpr int kThreads = 8, kRounds = 2000;
  const Cart held = cart(1, {3});
  auto holder = lanes.enter(held);  // row (1, 3) is in flight throughout
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> missed{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kRounds; ++i) {
        const Cart mine = cart(1, {1 + (t + i) % 5, 6 + t});
        auto e = lanes.enter(mine);
        const bool touches_held = mine.lines.front().sku_id == 3;
        if (touches_held && !e.collided()) missed.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(missed.load(), 0);
  EXPECT_EQ(lanes.rows_in_flight(), 1u);
}

}  // namespace
}  // namespace onceorder
