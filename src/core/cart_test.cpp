#include "onceorder/core/cart.hpp"

#include <gtest/gtest.h>

namespace onceorder {
namespace {

TEST(Cart, MergesDuplicateSkusAndSortsAsIntegers) {
  // 101 x 1 + 101 x 2 must be checked as 101 x 3; 9 sorts before 10 (not as text).
  auto c = normalize_cart(1, {{202, 1}, {101, 1}, {10, 4}, {101, 2}, {9, 1}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->lines, (std::vector<CartLine>{{9, 1}, {10, 4}, {101, 3}, {202, 1}}));
  EXPECT_EQ(c->text(), "9x1,10x4,101x3,202x1");
  // Display order does not change the normalized request.
  EXPECT_EQ(normalize_cart(1, {{101, 3}, {202, 1}, {9, 1}, {10, 4}})->text(), c->text());
  auto big = normalize_cart(1, {{INT64_MAX, 1}, {INT64_MAX - 1, 1}});
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->lines[0].sku_id, INT64_MAX - 1);
}

TEST(Cart, RejectsBadLinesWithFieldErrors) {
  auto r = normalize_cart(0, {{0, 1}, {5, 0}, {6, -1}, {7, kMaxLineQuantity + 1}});
  ASSERT_FALSE(r.ok());
  const auto& f = r.status().fields();
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0].field, "warehouse_id");
  EXPECT_EQ(f[1].field, "lines[0].sku_id");
  EXPECT_EQ(f[2].field, "lines[1].quantity");
  EXPECT_EQ(f[3].field, "lines[2].quantity");
  EXPECT_EQ(f[4].field, "lines[3].quantity");
  EXPECT_FALSE(normalize_cart(1, {}).ok());
  EXPECT_FALSE(normalize_cart(1, {{1, kMaxLineQuantity}, {1, 1}}).ok());  // merged too large
}

TEST(Cart, AtMostTwentyDistinctSkusAfterMerging) {
  std::vector<CartLine> twenty, twenty_one;
  for (int i = 1; i <= 20; ++i) twenty.push_back({i, 1});
  twenty.push_back({1, 1});  // 21 lines, 20 SKUs: fine
  EXPECT_TRUE(normalize_cart(1, twenty).ok());
  for (int i = 1; i <= 21; ++i) twenty_one.push_back({i, 1});
  auto r = normalize_cart(1, twenty_one);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().fields()[0].field, "lines");
}

}  // namespace
}  // namespace onceorder
