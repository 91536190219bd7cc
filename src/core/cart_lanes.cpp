#include "onceorder/core/cart_lanes.hpp"

#include <fmt/format.h>

#include "onceorder/core/invariant.hpp"

namespace onceorder {

CartLanes::Entry::Entry(Entry&& other) noexcept
    : owner_(other.owner_),
      cart_(other.cart_),
      lane_(std::move(other.lane_)),
      collided_(other.collided_),
      crowded_(other.crowded_) {
  other.owner_ = nullptr;
}

CartLanes::Entry::~Entry() {
  if (owner_ != nullptr) owner_->leave(*cart_);
}

CartLanes::Entry CartLanes::enter(const Cart& cart) {
  OO_INVARIANT(!cart.lines.empty(), "a cart of warehouse {} with no line", cart.warehouse_id);
  bool collided = false;
  bool crowded = false;
  {
    std::lock_guard lock(mu_);
    for (const CartLine& line : cart.lines) {
      int& holders = rows_[{cart.warehouse_id, line.sku_id}];
      // Never negative: leave() erases a row when its last holder leaves.
      OO_INVARIANT(holders >= 0, "row ({}, {}) held {} times", cart.warehouse_id, line.sku_id,
                   holders);
      collided = collided || holders > 0;
      ++holders;
    }
    std::size_t& in_flight = carts_[cart.warehouse_id];
    crowded = !collided && in_flight >= lone_carts_;
    ++in_flight;
  }
  if (collided) collisions_.fetch_add(1, std::memory_order_relaxed);
  if (crowded) crowdings_.fetch_add(1, std::memory_order_relaxed);
  // "w/*" can never be a lowest-SKU lane ("w/123"): the two kinds never meet by accident.
  std::string lane = collided || crowded
                         ? fmt::format("{}/*", cart.warehouse_id)
                         : fmt::format("{}/{}", cart.warehouse_id, cart.lines.front().sku_id);
  return Entry(this, &cart, std::move(lane), collided, crowded);
}

void CartLanes::leave(const Cart& cart) {
  std::lock_guard lock(mu_);
  if (auto it = carts_.find(cart.warehouse_id); it != carts_.end() && --it->second == 0)
    carts_.erase(it);
  for (const CartLine& line : cart.lines) {
    auto it = rows_.find({cart.warehouse_id, line.sku_id});
    if (it != rows_.end() && --it->second == 0) rows_.erase(it);
  }
}

std::size_t CartLanes::rows_in_flight() const {
  std::lock_guard lock(mu_);
  return rows_.size();
}

}  // namespace onceorder
