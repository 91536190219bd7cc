#include "store/stock_store.hpp"

namespace onceorder::store {

StockStore::StockStore(const Dialect& dialect) : sql_(dialect.stock) {}

Result<bool> StockStore::insert_sku(store::Connection& c, std::int64_t warehouse_id,
                                    std::int64_t sku_id, std::int64_t available,
                                    std::int64_t price_cents) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.insert_sku, {warehouse_id, sku_id, available, price_cents}));
  return !rows.empty();
}

Result<std::optional<std::int64_t>> StockStore::lock_sku(store::Connection& c,
                                                         std::int64_t warehouse_id,
                                                         std::int64_t sku_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.lock_sku, {warehouse_id, sku_id}));
  if (rows.empty()) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(rows[0].i64(0));
}

Status StockStore::set_price(store::Connection& c, std::int64_t warehouse_id, std::int64_t sku_id,
                             std::int64_t price_cents) {
  return c.query(sql_.set_price, {warehouse_id, sku_id, price_cents}).status();
}

Status StockStore::adjust(store::Connection& c, std::int64_t warehouse_id, std::int64_t sku_id,
                          std::int64_t delta) {
  return c.query(sql_.adjust, {warehouse_id, sku_id, delta}).status();
}

Result<std::optional<Sku>> StockStore::get_sku(store::Connection& c, std::int64_t warehouse_id,
                                               std::int64_t sku_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.get_sku, {warehouse_id, sku_id}));
  if (rows.empty()) return std::optional<Sku>();
  const auto& r = rows[0];
  return std::optional<Sku>(Sku{warehouse_id, sku_id, r.i64(0), r.i64(1), r.i64(2)});
}

Status StockStore::add_ledger_entry(store::Connection& c, const LedgerEntry& e) {
  return c
      .query(sql_.ledger, {e.warehouse_id, e.sku_id, e.delta, e.kind,
                           e.reason ? Param(*e.reason) : Param(nullptr),
                           e.order_id ? Param(*e.order_id) : Param(nullptr),
                           e.line_no ? Param(*e.line_no) : Param(nullptr)})
      .status();
}

}  // namespace onceorder::store
