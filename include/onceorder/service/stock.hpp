// Stock administration: SKUs (a warehouse's stock row of one product) are created, priced,
// adjusted and read here; placements reserve and cancels release stock in
// onceorder/service/intake.hpp. Every change of `available` writes a ledger entry in the same
// transaction, and `available` never goes negative.
//
// Thread-safety: a Stock is safe to use from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "onceorder/core/order_types.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

// A stock adjustment. With a key, its first answer is stored with the adjustment, in its
// transaction, and replayed for the same key with the same delta and reason; the key is
// scoped per (warehouse, sku), as a document key is per scope.
struct AdjustRequest {
  std::int64_t warehouse_id = 0;
  std::int64_t sku_id = 0;
  std::int64_t delta = 0;
  std::string reason;
  std::optional<std::string> idempotency_key;
};

struct Adjusted {
  Sku sku;  // right after the adjustment (also on replay)
  bool replayed = false;
};

namespace store {
class StockStore;
}  // namespace store

class Stock {
 public:
  explicit Stock(store::Database& db, int max_attempts = store::TxOptions{}.max_attempts);
  ~Stock();

  struct PutSku {
    Sku sku;
    bool created = false;
  };
  // Creates the SKU (available becomes its first ledger entry) or updates its price;
  // `available` on an existing SKU is use_adjustment.
  Result<PutSku> put_sku(std::int64_t warehouse_id, std::int64_t sku_id, std::int64_t price_cents,
                         std::optional<std::int64_t> available, store::Clock::time_point deadline);
  // insufficient_stock when available would go negative (nothing stored, not even the
  // receipt); idempotency_key_reused, request_in_progress with a key.
  Result<Adjusted> adjust(const AdjustRequest& request, store::Clock::time_point deadline);
  Result<Sku> adjust(std::int64_t warehouse_id, std::int64_t sku_id, std::int64_t delta,
                     const std::string& reason, store::Clock::time_point deadline);
  Result<Sku> get_sku(std::int64_t warehouse_id, std::int64_t sku_id,
                      store::Clock::time_point deadline);

 private:
  store::Database& db_;
  const int max_attempts_;
  std::unique_ptr<store::StockStore> stock_;
};

}  // namespace onceorder
