// SQL for order intake: receipts, placement and cancel; one engine-neutral class over
// per-engine statements (store/<engine>/intake.sql). Stock rows and their ledger are
// store/stock_store.hpp, node-id leases store/node_lease_store.hpp. Methods run inside
// the caller's transaction.
//
// Thread-safety: an IntakeStore holds only its dialect; share it freely, one call per
// connection at a time.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/cart.hpp"
#include "onceorder/core/order_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

// The message place_known fails with when the batch's expectations did not hold (a receipt
// stored already, a stock row held or moved): nothing was written, decide again.
#define OO_DECIDED_AHEAD_MOVED "the stock or receipts the batch was decided on had moved"
#include "store/stock_store.hpp"

namespace onceorder::store {

struct IntakeSql {
  store::Statement insert_receipt;  // (customer, key, warehouse, normalized, version) → 1 if new
  store::Statement find_receipt;    // (customer, key) → warehouse, normalized, version, outcome,
                                    //   order_id, shortages
  store::Statement lock_stock;      // (warehouse, "sku,sku") → sku, available, price; locked,
                                    //   ascending sku
  // (warehouse, "sku,sku") → sku, available, price per stock row: locked when free,
  //   available and price NULL when another transaction holds it (SKIP LOCKED); ascending sku
  store::Statement lock_free_stock = {};
  store::Statement out_of_stock;  // (customer, key, shortages)
  // The whole placement in one statement (Dialect::writes_in_one_statement), or the
  // per-line statements below (the other engines).
  store::Statement place_all = {};  // (order_id, order_no, customer, warehouse, total,
                                    //   "sku,…", "qty,…", "price,…", key, site, "lot,…",
                                    //   principal)
  // (order_id, order_no, customer, warehouse, total, principal) → created_at
  store::Statement insert_order = {};
  store::Statement insert_line = {};  // (order_id, line, sku, qty, price)
  // (warehouse, sku, qty) → 1 row when deducted (moved from available to reserved)
  store::Statement deduct = {};
  store::Statement insert_source = {};   // (site, order_no, lot, qty)
  store::Statement receipt_placed = {};  // (customer, key, order_id)
  store::Statement get_order;            // (order_id) → order columns
  store::Statement get_lines;            // (order_id) → line, sku, qty, price
  store::Statement lock_order;           // (order_id) → status, warehouse, order_no
  store::Statement lock_sources;         // (site, order_no) → lot per source order; locked
  store::Statement cancel_sources;       // (site, order_no)
  store::Statement abort_items;          // (site, order_no) → item_id per item
  store::Statement count_production;     // (site, order_no) → n
  // (order_id, warehouse) → line, sku, qty of each line of the order (its reservations while
  //   it is placed); their stock rows locked, ascending sku
  store::Statement lock_reserved_stock;
  store::Statement restore;         // (warehouse, sku, qty)
  store::Statement mark_cancelled;  // (order_id)
  // A batch's statements, set-based (Dialect::writes_in_one_statement); the other engines
  // loop over the one-row statements above.
  // A row per request comes as one parameter per column: "1,2,…" for numbers, a text[]
  // literal {"a","b"} for texts.
  // ("customer,…", {key,…}, "warehouse,…", {cart text,…}, version) → customer, key of each
  //   receipt inserted, inserted in the order given
  store::Statement insert_receipts = {};
  // insert_receipts then lock_free_stock as one statement: (insert_receipts' five,
  //   warehouse, "sku,sku") → (customer, key, NULL, NULL, NULL) per receipt inserted, then
  //   (NULL, NULL, sku, available, price) per stock row as lock_free_stock answers, after
  //   every receipt is in
  store::Statement insert_receipts_lock_stock = {};
  // ("customer,…", {key,…}) → i, the find_receipt columns, the get_order columns, the get_lines
  //   columns (NULL when out of stock); ordered by i, line
  store::Statement find_receipts = {};
  // (orders: id, order_no, customer, warehouse, total; their lines: order_id, line_no,
  //   warehouse, sku, qty, price, site, source order_no, lot; out-of-stock customers;
  //   deductions summed per stock row: warehouse, sku, qty; out-of-stock keys, shortages;
  //   placed receipts: order_id, customer, key; the orders' principals, last) → order_id,
  //   created_at per order (one row of NULLs if none)
  store::Statement place_many = {};
  // place_many for a batch decided ahead, on the stock rows as its lane's last batch left them
  // (no receipts round trip): place_many's parameters, then the placed receipts' carts, the
  // out-of-stock receipts' carts, the warehouse, the normalization version, and the stock
  // rows the decisions read ("sku,…", "available,…", "price,…"), and the orders' principals
  // last. Inserts every receipt with
  // its decision (failing as a whole if one is stored already) and fails with
  // OO_DECIDED_AHEAD_MOVED, before any commit, unless every one of those rows was free and
  // held exactly those values. PostgreSQL only.
  store::Statement place_known = {};
  // Run first in a batch's transaction (PostgreSQL): its statements join a few keys to
  // tables that grow, and a plan PostgreSQL made and kept while a table was new hashed the
  // whole table (docs/BENCHMARKS.md, "Index plans for order batches"). Plans made in the
  // transaction read by index, and each batch statement keeps its one generic plan: left to
  // choose, PostgreSQL planned place_many anew for every small batch, which a batch's
  // unnested arrays make look cheaper custom (docs/BENCHMARKS.md, "One plan per batch
  // statement").
  store::Statement batch_plans = {};
};

struct OrderReceipt {
  std::int64_t warehouse_id = 0;
  std::string normalized;
  int version = 0;
  std::string outcome;  // placed | out_of_stock
  std::int64_t order_id = 0;
  std::vector<Shortage> shortages;  // when out of stock
  // True when the receipt was written for this cart (same warehouse, same normalized
  // text under the same normalization version): a replay, not a reused key.
  bool is_for(const Cart& cart) const;
};

// A receipt a batch inserts (its first use of the key).
struct NewOrderReceipt {
  std::int64_t customer_id = 0;
  std::string_view key;
  const Cart* cart = nullptr;
};

struct ReceiptKey {
  std::int64_t customer_id = 0;
  std::string_view key;
};

// A stored receipt with its order when it placed one.
struct StoredReceipt {
  OrderReceipt receipt;
  std::optional<Order> order;
};

// One decision a batch writes: a placed order (`order`) or an out-of-stock receipt.
struct BatchOutcome {
  std::int64_t customer_id = 0;
  std::string_view key;
  const Order* order = nullptr;
  const std::vector<Shortage>* shortages = nullptr;  // when `order` is null
  const Cart* cart = nullptr;  // the request's cart: its receipt's, when decided ahead
};

struct StockRow {
  std::int64_t sku_id = 0;
  std::int64_t available = 0;
  std::int64_t price_cents = 0;
};

// What a batch decided ahead was decided on: the stock rows of one warehouse as its lane's
// last batch left them.
struct DecidedOn {
  std::int64_t warehouse_id = 0;
  std::span<const StockRow> rows;
};

// lock_free_stock's answer: the rows it locked and the SKUs whose rows another transaction
// holds (rows that do not exist are in neither).
struct FreeStock {
  std::vector<StockRow> locked;
  std::vector<std::int64_t> held;
};

// What a batch's first round trip returns: which receipts were new, and the stock rows.
struct ReceiptsAndStock {
  std::vector<bool> fresh;  // per receipt, in the caller's order
  FreeStock stock;
};

struct OrderHead {
  std::string status;
  std::int64_t warehouse_id = 0;
  std::string order_no;
};

// A reservation: a line of a placed order, its quantity counted in its stock row's `reserved`.
struct Reservation {
  std::int64_t line_no = 0;
  std::int64_t warehouse_id = 0;
  std::int64_t sku_id = 0;
  std::int64_t quantity = 0;
};

class IntakeStore {
 public:
  explicit IntakeStore(const Dialect& dialect);
  // True when the engine has one write lock for the whole database (SQLite): every write
  // waits for every other, so all requests share one combining lane.
  bool one_writer() const { return !dialect_.row_locks; }

  Result<bool> insert_receipt(store::Connection& c, std::int64_t customer, const std::string& key,
                              const Cart& cart);
  Result<std::optional<OrderReceipt>> find_receipt(store::Connection& c, std::int64_t customer,
                                                   const std::string& key);
  Result<std::vector<StockRow>> lock_stock(store::Connection& c, const Cart& cart);
  // lock_stock without waiting: the rows another transaction holds are named, not waited
  // for. Where the engine has no row locks (one writer), the same as lock_stock.
  Result<FreeStock> lock_free_stock(store::Connection& c, const Cart& cart);
  // First in a batch's transaction: plans made in it read by index (IntakeSql::batch_plans;
  // nothing where the engine has no such statement). Sent with the batch's next statement,
  // so it costs no round trip of its own.
  Status plan_for_batch(store::Connection& c);
  Status record_out_of_stock(store::Connection& c, std::int64_t customer, const std::string& key,
                             const std::vector<Shortage>& shortages, store::Then then);
  // Writes the whole placement; returns created_at. Fails (internal) inside the
  // transaction, before any commit, if a deduction did not apply — impossible while the
  // rows are locked, so it means a broken invariant.
  Result<std::string> place(store::Connection& c, const Order& order, const std::string& key,
                            store::Then then);
  Result<std::optional<Order>> get_order(store::Connection& c, std::int64_t order_id);

  // A combined batch's steps, each one statement where the engine allows (one round trip).
  // Inserts the receipts in the caller's order (sorted by key: two batches then wait for
  // each other's keys in one order); true for each one that was new.
  Result<std::vector<bool>> insert_receipts(store::Connection& c,
                                            std::span<const NewOrderReceipt> receipts);
  // insert_receipts, then lock_free_stock(stock): where the engine allows, one statement
  // (one round trip instead of two), the receipts inserted before any stock row is locked,
  // as the two calls in turn would.
  Result<ReceiptsAndStock> insert_receipts_and_lock(store::Connection& c,
                                                    std::span<const NewOrderReceipt> receipts,
                                                    const Cart& stock);
  // Hands `send` (Connection::open_next) the next batch's plan_for_batch and
  // insert_receipts_and_lock(receipts, stock): the next batch then finds their answer
  // waiting when it calls them with the same arguments. Nothing where the engine has no
  // such statement.
  void open_receipts_and_lock(const store::Connection::SendOpening& send, std::uint64_t token,
                              std::span<const NewOrderReceipt> receipts, const Cart& stock);
  // The stored receipts of `keys` with their orders; nullopt where none is stored.
  Result<std::vector<std::optional<StoredReceipt>>> find_receipts(store::Connection& c,
                                                                  std::span<const ReceiptKey> keys);
  // Writes every decision (as `place` and `record_out_of_stock` do each); returns each
  // placed order's created_at ("" for out of stock). Fails (internal) before any commit if
  // the locked stock rows did not take their summed deductions.
  // With `ahead` (decides_ahead()), the receipts are inserted here too, with their decisions,
  // and the call fails with retry_transaction, nothing written, unless every outcome's key was
  // new and every row of `ahead` was free and held its values (IntakeSql::place_known).
  Result<std::vector<std::string>> write_outcomes(store::Connection& c,
                                                  std::span<const BatchOutcome> outcomes,
                                                  store::Then then,
                                                  const DecidedOn* ahead = nullptr);
  // True where a batch can be decided ahead (write_outcomes' `ahead`).
  bool decides_ahead() const { return !sql_.place_known.name.empty(); }
  Result<std::optional<OrderHead>> lock_order(store::Connection& c, std::int64_t order_id);

  // The cancel's steps, in the order the caller must send them: an order's source orders
  // are (site, order_no) with one lot per line (source_order_key).
  // Locks the order's source orders; returns their lots.
  Result<std::vector<std::string>> lock_sources(store::Connection& c, std::string_view site,
                                                std::string_view order_no);
  Result<std::int64_t> count_production(store::Connection& c, std::string_view site,
                                        std::string_view order_no);
  // reference_violation when a source order has a production order.
  Status cancel_sources(store::Connection& c, std::string_view site, std::string_view order_no);
  // Aborts the schedule items still waiting or processing; returns their ids.
  Result<std::vector<std::int64_t>> abort_items(store::Connection& c, std::string_view site,
                                                std::string_view order_no);
  // A placed order's reservations (`head` from lock_order: the caller holds the order row), their
  // stock rows locked.
  Result<std::vector<Reservation>> lock_reserved_stock(store::Connection& c, std::int64_t order_id,
                                                       const OrderHead& head);
  // Moves a reservation's quantity from its stock row's `reserved` back to `available` (the
  // ledger entry is the caller's: StockStore::add_ledger_entry).
  Status restore_stock(store::Connection& c, const Reservation& r);
  Status mark_cancelled(store::Connection& c, std::int64_t order_id);

 private:
  // write_outcomes where the engine has no one-statement batch: place and
  // record_out_of_stock per outcome.
  Result<std::vector<std::string>> write_one_by_one(store::Connection& c,
                                                    std::span<const BatchOutcome> outcomes,
                                                    store::Then then);

  const Dialect& dialect_;
  const IntakeSql& sql_;
  StockStore stock_;  // the placement's ledger entries
};

}  // namespace onceorder::store
