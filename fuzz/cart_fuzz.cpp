// Cart normalization (src/core/cart.*) on arbitrary lines, extreme int64 values included:
// the result agrees with a reference computed in 128-bit arithmetic, and a normalized cart
// is sorted, merged, within the limits, a fixed point, and independent of line order.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "check.hpp"
#include "onceorder/core/cart.hpp"

using namespace onceorder;

namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// Mostly values near the edges (0, 1, the limits, INT64_MIN/MAX) and a few SKUs that repeat,
// so that merging and overflow are reached, else any int64.
std::int64_t pick(FuzzedDataProvider& in, bool sku) {
  static constexpr std::int64_t kEdges[] = {
      kMin, kMin + 1, -1, 0, 1, 2, 999'999, kMaxLineQuantity, kMaxLineQuantity + 1, kMax - 1, kMax};
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return kEdges[in.ConsumeIntegralInRange<size_t>(0, std::size(kEdges) - 1)];
    case 1:
      return sku ? in.ConsumeIntegralInRange<std::int64_t>(1, 24)
                 : in.ConsumeIntegralInRange<std::int64_t>(1, kMaxLineQuantity);
    default:
      return in.ConsumeIntegral<std::int64_t>();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::int64_t warehouse = pick(in, false);
  std::vector<CartLine> lines;
  const size_t count = in.ConsumeIntegralInRange<size_t>(0, 64);
  for (size_t i = 0; i < count && in.remaining_bytes() > 0; ++i) {
    CartLine l;
    l.sku_id = pick(in, true);
    l.quantity = pick(in, false);
    lines.push_back(l);
  }

  // Reference, without overflow.
  bool valid = warehouse >= 1 && !lines.empty();
  std::map<std::int64_t, __int128> sums;
  for (const auto& l : lines) {
    if (l.sku_id < 1 || l.quantity < 1 || l.quantity > kMaxLineQuantity) {
      valid = false;
      continue;
    }
    sums[l.sku_id] += l.quantity;
  }
  for (const auto& [sku, qty] : sums) valid = valid && qty <= kMaxLineQuantity;
  valid = valid && sums.size() <= static_cast<size_t>(kMaxCartSkus);

  const auto cart = normalize_cart(warehouse, lines);
  FUZZ_CHECK(cart.ok() == valid);
  if (!cart.ok()) {
    FUZZ_CHECK(cart.status().code() == Code::invalid_request);
    FUZZ_CHECK(!cart.status().fields().empty());
    for (const auto& f : cart.status().fields()) FUZZ_CHECK(!f.field.empty() && !f.message.empty());
    return 0;
  }
  FUZZ_CHECK(cart->warehouse_id == warehouse);
  FUZZ_CHECK(!cart->lines.empty() && cart->lines.size() <= static_cast<size_t>(kMaxCartSkus));
  FUZZ_CHECK(cart->lines.size() == sums.size());
  for (size_t i = 0; i < cart->lines.size(); ++i) {
    const auto& l = cart->lines[i];
    if (i > 0) FUZZ_CHECK(cart->lines[i - 1].sku_id < l.sku_id);  // sorted, merged
    FUZZ_CHECK(l.sku_id >= 1);
    FUZZ_CHECK(l.quantity >= 1 && l.quantity <= kMaxLineQuantity);
    FUZZ_CHECK(sums.count(l.sku_id) == 1 && sums[l.sku_id] == l.quantity);
  }
  // text(): "101x3,202x1", one entry per line, in order.
  std::string expected;
  for (const auto& l : cart->lines) {
    if (!expected.empty()) expected += ',';
    expected += std::to_string(l.sku_id) + "x" + std::to_string(l.quantity);
  }
  FUZZ_CHECK(cart->text() == expected);
  // A normalized cart normalizes to itself; the order of the lines does not matter.
  const auto again = normalize_cart(warehouse, cart->lines);
  FUZZ_CHECK(again.ok() && again->lines == cart->lines);
  std::vector<CartLine> reversed(lines.rbegin(), lines.rend());
  const auto other = normalize_cart(warehouse, reversed);
  FUZZ_CHECK(other.ok() && other->lines == cart->lines && other->text() == cart->text());
  return 0;
}
