// Cart normalization (seed 004), pure and thread-safe: lines with the same SKU are merged
// (quantities added), quantities checked, SKUs sorted as 64-bit integers — the order in
// which stock rows are locked, whatever order the customer's screen showed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder {

inline constexpr int kNormalizationVersion = 1;

struct CartLine {
  std::int64_t sku_id = 0;
  std::int64_t quantity = 0;
  bool operator==(const CartLine&) const = default;
};

struct Cart {
  std::int64_t warehouse_id = 0;
  std::vector<CartLine> lines;  // merged, ascending sku_id
  // "101x3,202x1": what the receipt stores and replays compare (with the version).
  std::string text() const;
};

// Field errors name "lines", "lines[2].quantity", "lines[0].sku_id" and "warehouse_id".
Result<Cart> normalize_cart(std::int64_t warehouse_id, const std::vector<CartLine>& lines);

// A hash of a stock row's key, (warehouse, sku), for the hashed maps that track rows in flight
// (onceorder/core/cart_lanes.hpp) and rows as placements left them (onceorder/service/intake.hpp).
struct StockRowKeyHash {
  std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& r) const noexcept {
    return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(r.first) * 0x9E3779B97F4A7C15ULL ^
                                      static_cast<std::uint64_t>(r.second));
  }
};

}  // namespace onceorder
