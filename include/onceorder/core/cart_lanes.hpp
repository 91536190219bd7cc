// Which combining lane (onceorder/core/combiner.hpp) a cart joins: carts that would wait on one
// another's stock rows should meet in one lane, and carts that would not should not, unless
// so many are in flight that combining them is cheaper than running them side by side.
//
// A cart that shares no stock row with a cart in flight, in a warehouse with fewer than
// `lone_carts` carts in flight, gets the lane of its (warehouse, lowest SKU): it is usually
// alone there and runs at once, on the lone path. A cart that shares a row with a cart in
// flight would queue on that cart's row locks anyway, so it joins its warehouse's lane, where
// every such cart of the warehouse queues and is combined with the others. So does a cart
// that arrives while `lone_carts` or more carts of its warehouse are in flight (the warehouse
// is *crowded*): lone placements beyond a few at once only queue for the database's CPU,
// while a combined one costs it about half. Under a few hot SKUs nearly every cart collides; under
// many clients over many SKUs nearly every cart is crowded; either way the warehouse's placements
// run one batch at a time (one commit for many). Correctness never depends on the lane: every
// transaction locks its rows in the one global (warehouse, sku) order.
//
// Thread-safety: safe to use from many threads at once (one mutex, held for a map update).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "onceorder/core/cart.hpp"

namespace onceorder {

class CartLanes {
 public:
  // A cart in flight from enter() until the Entry is destroyed.
  class Entry {
   public:
    Entry(Entry&& other) noexcept;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    Entry& operator=(Entry&&) = delete;
    ~Entry();
    const std::string& lane() const { return lane_; }
    bool collided() const { return collided_; }
    bool crowded() const { return crowded_; }

   private:
    friend class CartLanes;
    Entry(CartLanes* owner, const Cart* cart, std::string lane, bool collided, bool crowded)
        : owner_(owner),
          cart_(cart),
          lane_(std::move(lane)),
          collided_(collided),
          crowded_(crowded) {}
    CartLanes* owner_;
    const Cart* cart_;  // the caller's, alive as long as the Entry
    std::string lane_;
    bool collided_;
    bool crowded_;
  };

  // Carts of one warehouse in flight at which the next one is combined whatever its rows: a
  // few lone placements at once place faster than combined ones, many more only queue for
  // the database's CPU. The shared bench's cold-cart case is what tunes it.
  static constexpr std::size_t kLoneCarts = 4;
  explicit CartLanes(std::size_t lone_carts = kLoneCarts) : lone_carts_(lone_carts) {}

  // `cart` (normalized, at least one line) enters; it must outlive the Entry.
  Entry enter(const Cart& cart);
  // Stock rows (warehouse, sku) of carts in flight right now.
  std::size_t rows_in_flight() const;
  // Carts that shared a row with a cart in flight, so far (only ever grows).
  std::uint64_t collisions() const { return collisions_.load(std::memory_order_relaxed); }
  // Carts that shared no row but found their warehouse crowded, so far (only ever grows).
  std::uint64_t crowdings() const { return crowdings_.load(std::memory_order_relaxed); }

 private:
  void leave(const Cart& cart);
  mutable std::mutex mu_;
  // How many carts in flight hold each row; a row is absent at zero. Guarded by mu_.
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, int, StockRowKeyHash> rows_;
  // How many carts of each warehouse are in flight; absent at zero. Guarded by mu_.
  std::unordered_map<std::int64_t, std::size_t> carts_;
  const std::size_t lone_carts_;
  std::atomic<std::uint64_t> collisions_{0};
  std::atomic<std::uint64_t> crowdings_{0};
};

}  // namespace onceorder
