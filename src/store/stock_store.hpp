// SQL for stock rows and their ledger: one engine-neutral class over per-engine statements
// (store/<engine>/stock.sql). Every change to `available` writes a ledger entry; the
// placement and the cancel (store/intake_store.hpp) write theirs through this class too.
// Methods run inside the caller's transaction.
//
// Thread-safety: a StockStore holds only its dialect; share it freely, one call per
// connection at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "onceorder/core/order_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct StockSql {
  store::Statement insert_sku;  // (warehouse, sku, available, price) → 1 if new
  store::Statement lock_sku;    // (warehouse, sku) → available; locked
  store::Statement set_price;   // (warehouse, sku, price)
  store::Statement adjust;      // (warehouse, sku, delta)
  store::Statement get_sku;     // (warehouse, sku) → available, reserved, price
  store::Statement ledger;      // (warehouse, sku, delta, kind, reason, order_id, line)
};

struct LedgerEntry {
  std::int64_t warehouse_id = 0;
  std::int64_t sku_id = 0;
  std::int64_t delta = 0;
  std::string_view kind;  // initial | adjustment | reservation | release
  std::optional<std::string_view> reason;
  std::optional<std::int64_t> order_id;  // with line_no, for reservation and release
  std::optional<std::int64_t> line_no;
};

class StockStore {
 public:
  explicit StockStore(const Dialect& dialect);

  // False when the row existed already (nothing written).
  Result<bool> insert_sku(store::Connection& c, std::int64_t warehouse_id, std::int64_t sku_id,
                          std::int64_t available, std::int64_t price_cents);
  // The row's available, locked until the transaction ends; nullopt when there is no row.
  Result<std::optional<std::int64_t>> lock_sku(store::Connection& c, std::int64_t warehouse_id,
                                               std::int64_t sku_id);
  Status set_price(store::Connection& c, std::int64_t warehouse_id, std::int64_t sku_id,
                   std::int64_t price_cents);
  Status adjust(store::Connection& c, std::int64_t warehouse_id, std::int64_t sku_id,
                std::int64_t delta);
  Result<std::optional<Sku>> get_sku(store::Connection& c, std::int64_t warehouse_id,
                                     std::int64_t sku_id);
  Status add_ledger_entry(store::Connection& c, const LedgerEntry& entry);

 private:
  const StockSql& sql_;
};

}  // namespace onceorder::store
