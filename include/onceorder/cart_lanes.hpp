// Which combining lane (onceorder/combiner.hpp) a cart joins: carts that would wait on one
// another's stock rows should meet in one lane, and carts that would not should not.
//
// A cart that shares no stock row with a cart in flight gets the lane of its (warehouse,
// lowest SKU): it is usually alone there and runs at once, on the lone path. A cart that
// shares a row with a cart in flight would queue on that cart's row locks anyway, so it joins
// its warehouse's collision lane, where every such cart of the warehouse queues and is
// combined with the others. Under a few hot SKUs nearly every cart collides, and the
// warehouse's placements run one batch at a time (one commit for many); over many SKUs few
// collide, and nearly every cart keeps the lone path. Correctness never depends on the lane:
// every transaction locks its rows in the one global (warehouse, sku) order.
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

#include "onceorder/cart.hpp"

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

   private:
    friend class CartLanes;
    Entry(CartLanes* owner, const Cart* cart, std::string lane, bool collided)
        : owner_(owner), cart_(cart), lane_(std::move(lane)), collided_(collided) {}
    CartLanes* owner_;
    const Cart* cart_;  // the caller's, alive as long as the Entry
    std::string lane_;
    bool collided_;
  };

  // `cart` (normalized, at least one line) enters; it must outlive the Entry.
  Entry enter(const Cart& cart);
  // Stock rows (warehouse, sku) of carts in flight right now.
  std::size_t rows_in_flight() const;
  // Carts that entered a collision lane so far (only ever grows).
  std::uint64_t collisions() const { return collisions_.load(std::memory_order_relaxed); }

 private:
  void leave(const Cart& cart);
  struct RowHash {
    std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& r) const noexcept {
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(r.first) *
                                            0x9E3779B97F4A7C15ULL ^
                                        static_cast<std::uint64_t>(r.second));
    }
  };
  mutable std::mutex mu_;
  // How many carts in flight hold each row; a row is absent at zero. Guarded by mu_.
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, int, RowHash> rows_;
  std::atomic<std::uint64_t> collisions_{0};
};

}  // namespace onceorder
