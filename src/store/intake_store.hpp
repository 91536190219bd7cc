// SQL for order intake: one engine-neutral class over per-engine statements
// (store/<engine>/intake_sql.cpp). Methods run inside the caller's transaction.
#pragma once

#include <optional>
#include <vector>

#include "onceorder/cart.hpp"
#include "onceorder/order_types.hpp"
#include "onceorder/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct IntakeSql {
  store::Statement insert_receipt;  // (customer, key, warehouse, normalized, version) → 1 if new
  store::Statement find_receipt;    // (customer, key) → warehouse, normalized, version, outcome,
                                    //   order_id, shortages
  store::Statement lock_stock;      // (warehouse, "sku,sku") → sku, available, price; locked,
                                    //   ascending sku
  store::Statement out_of_stock;    // (customer, key, shortages)
  // The whole placement in one statement (Dialect::writes_in_one_statement), or the
  // per-line statements below (the other engines).
  store::Statement place_all = {};
  store::Statement insert_order =
      {};  // (order_id, order_no, customer, warehouse, total) → created_at
  store::Statement insert_line = {};         // (order_id, line, sku, qty, price)
  store::Statement insert_reservation = {};  // (order_id, line, warehouse, sku, qty)
  store::Statement deduct = {};              // (warehouse, sku, qty) → 1 row when deducted
  store::Statement ledger;               // (warehouse, sku, delta, kind, reason, order_id, line)
  store::Statement insert_source = {};   // (site, order_no, lot, qty)
  store::Statement receipt_placed = {};  // (customer, key, order_id)
  store::Statement get_order;            // (order_id) → order columns
  store::Statement get_lines;            // (order_id) → line, sku, qty, price
  store::Statement lock_order;           // (order_id) → status, warehouse, order_no
  store::Statement lock_sources;         // (site, order_no) → lot per source order; locked
  store::Statement cancel_sources;       // (site, order_no)
  store::Statement abort_items;          // (site, order_no) → item_id per item
  store::Statement count_production;     // (site, order_no) → n
  store::Statement lock_order_stock;     // (order_id) → sku; locked, ascending sku
  store::Statement release;              // (order_id) → line, warehouse, sku, qty
  store::Statement restore;              // (warehouse, sku, qty)
  store::Statement mark_cancelled;       // (order_id)
  store::Statement insert_sku;           // (warehouse, sku, available, price) → 1 if new
  store::Statement lock_sku;             // (warehouse, sku) → available; locked
  store::Statement set_price;            // (warehouse, sku, price)
  store::Statement adjust;               // (warehouse, sku, delta)
  store::Statement get_sku;              // (warehouse, sku) → available, reserved, price
  store::Statement lease_candidate;      // () → node, lease_until_ms, now_ms (locked)
  store::Statement lease_take;           // (node, holder, ttl, expected_until) → lease_until_ms
  store::Statement lease_renew;    // (node, holder, ttl, expected_until) → lease_until_ms, now
  store::Statement lease_release;  // (node, holder)
};

struct OrderReceipt {
  std::int64_t warehouse_id = 0;
  std::string normalized;
  int version = 0;
  std::string outcome;  // placed | out_of_stock
  std::int64_t order_id = 0;
  std::string shortages;  // "sku:requested:available,…"
};

struct StockRow {
  std::int64_t sku_id = 0;
  std::int64_t available = 0;
  std::int64_t price_cents = 0;
};

struct OrderHead {
  std::string status;
  std::int64_t warehouse_id = 0;
  std::string order_no;
};

class IntakeStore {
 public:
  explicit IntakeStore(const Dialect& dialect);
  const IntakeSql& sql() const { return sql_; }

  Result<bool> insert_receipt(store::Connection& c, std::int64_t customer, const std::string& key,
                              const Cart& cart);
  Result<std::optional<OrderReceipt>> find_receipt(store::Connection& c, std::int64_t customer,
                                                   const std::string& key);
  Result<std::vector<StockRow>> lock_stock(store::Connection& c, const Cart& cart);
  Status record_out_of_stock(store::Connection& c, std::int64_t customer, const std::string& key,
                             const std::string& shortages, store::Then then);
  // Writes the whole placement; returns created_at. Fails (internal) inside the
  // transaction, before any commit, if a deduction did not apply — impossible while the
  // rows are locked, so it means a broken invariant.
  Result<std::string> place(store::Connection& c, const Order& order, const std::string& key,
                            store::Then then);
  Result<std::optional<Order>> get_order(store::Connection& c, std::int64_t order_id);
  Result<std::optional<OrderHead>> lock_order(store::Connection& c, std::int64_t order_id);

 private:
  const Dialect& dialect_;
  const IntakeSql& sql_;
};

}  // namespace onceorder::store
