// What intake.cpp (lone placements) and placement_batch.cpp (combined ones) share: a
// validated placement, its answer, and how a cart is decided on its locked stock rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "onceorder/service/intake.hpp"
#include "store/intake_store.hpp"

namespace onceorder {

struct Intake::Job {
  const PlaceRequest* req;
  Cart cart;
  // The combiner's key it runs under (none for place_batch), and whether the cart shared a
  // stock row with a cart in flight when it came (CartLanes::Entry::collided).
  std::optional<std::string_view> lane{};
  bool collided = false;
  // A batch's leader: the opening the batch before sent for it (Connection::open_next; 0:
  // none). Written by that batch's leader before the combiner hands this batch over.
  mutable std::uint64_t opened = 0;
};

struct Intake::Answer {
  Result<Placed> placed;
  bool waiting_on_key = false;
  // `placed` is nothing yet: the request runs alone, on its own thread, so that the batch
  // need not wait for it. `held_back`: because a stock row it needs was held elsewhere.
  bool alone = false;
  bool held_back = false;
  store::CallTimes spent{};  // in the database, for this answer (its batch's, in a batch)
};

namespace placement {

// unknown_sku for the lines of `cart` that `rows` (its locked rows, ascending sku) lack.
Status unknown_skus(const Cart& cart, const std::vector<store::StockRow>& rows);
// The lines `rows` (in cart order) cannot cover; empty when the cart can be placed.
std::vector<Shortage> shortages_of(const Cart& cart, const std::vector<store::StockRow>& rows);
// The order `cart` makes at the locked rows' prices (rows in cart order); invalid_request
// when its total does not fit in 64 bits.
Result<Order> make_order(std::int64_t order_id, const PlaceRequest& req, const Cart& cart,
                         const std::vector<store::StockRow>& rows);
// The answer a stored receipt gives a request with the same key: its first decision, or
// idempotency_key_reused for another cart. Other errors fail the transaction.
Result<Placed> replay(std::optional<store::StoredReceipt>& stored, const Cart& cart);
// The answer a decision made in this process (`decided`, for `decided_for`) gives a later
// request with its key: as its stored receipt would.
Result<Placed> replay(const Cart& decided_for, const Placed& decided, const Cart& cart);

}  // namespace placement
}  // namespace onceorder
