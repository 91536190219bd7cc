#include "onceorder/core/cart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace onceorder {

std::string Cart::text() const {
  std::string out;
  for (const auto& l : lines) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}x{}", l.sku_id, l.quantity);
  }
  return out;
}

Result<Cart> normalize_cart(std::int64_t warehouse_id, const std::vector<CartLine>& lines) {
  std::vector<FieldError> errors;
  if (warehouse_id < 1) errors.push_back({"warehouse_id", "must be an integer from 1 to 2^63-1"});
  if (lines.empty()) errors.push_back({"lines", "must hold at least one line"});
  std::map<std::int64_t, std::int64_t> merged;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    bool ok = true;
    if (l.sku_id < 1) {
      errors.push_back({fmt::format("lines[{}].sku_id", i), "must be an integer from 1 to 2^63-1"});
      ok = false;
    }
    if (l.quantity < 1 || l.quantity > kMaxLineQuantity) {
      errors.push_back({fmt::format("lines[{}].quantity", i),
                        fmt::format("must be an integer from 1 to {}", kMaxLineQuantity)});
      ok = false;
    }
    // Checked: each line is bounded, but their number is not (only by the body's size).
    if (ok && __builtin_add_overflow(merged[l.sku_id], l.quantity, &merged[l.sku_id]))
      merged[l.sku_id] = kMaxLineQuantity + 1;  // reported as too large below
  }
  for (const auto& [sku, qty] : merged) {
    if (qty > kMaxLineQuantity) {
      errors.push_back({"lines", fmt::format("sku {} adds up to {}, more than {} per order", sku,
                                             qty, kMaxLineQuantity)});
    }
  }
  if (merged.size() > static_cast<size_t>(kMaxCartSkus)) {
    errors.push_back({"lines", fmt::format("at most {} distinct SKUs after merging, got {}",
                                           kMaxCartSkus, merged.size())});
  }
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  Cart cart{warehouse_id, {}};
  for (const auto& [sku, qty] : merged) cart.lines.push_back({sku, qty});
  return cart;
}

}  // namespace onceorder
