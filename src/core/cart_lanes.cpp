#include "onceorder/cart_lanes.hpp"

#include <fmt/format.h>

namespace onceorder {

CartLanes::Entry::Entry(Entry&& other) noexcept
    : owner_(other.owner_),
      cart_(other.cart_),
      lane_(std::move(other.lane_)),
      collided_(other.collided_) {
  other.owner_ = nullptr;
}

CartLanes::Entry::~Entry() {
  if (owner_ != nullptr) owner_->leave(*cart_);
}

CartLanes::Entry CartLanes::enter(const Cart& cart) {
  bool collided = false;
  {
    std::lock_guard lock(mu_);
    for (const CartLine& line : cart.lines) {
      int& holders = rows_[{cart.warehouse_id, line.sku_id}];
      collided = collided || holders > 0;
      ++holders;
    }
  }
  if (collided) collisions_.fetch_add(1, std::memory_order_relaxed);
  // "w/*" can never be a lowest-SKU lane ("w/123"): the two kinds never meet by accident.
  std::string lane = collided || cart.lines.empty()
                         ? fmt::format("{}/*", cart.warehouse_id)
                         : fmt::format("{}/{}", cart.warehouse_id, cart.lines.front().sku_id);
  return Entry(this, &cart, std::move(lane), collided);
}

void CartLanes::leave(const Cart& cart) {
  std::lock_guard lock(mu_);
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
