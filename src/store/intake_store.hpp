// SQL for order intake: receipts, placement and cancel; one engine-neutral class over
// per-engine statements (store/<engine>/intake.sql) and the operations the engines do
// differently (IntakeOps, store/<engine>/intake_ops.cpp). Stock rows and their ledger are
// store/stock_store.hpp, node-id leases store/node_lease_store.hpp. Methods run inside
// the caller's transaction.
//
// Thread-safety: an IntakeStore holds only its dialect; share it freely, one call per
// connection at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/cart.hpp"
#include "onceorder/core/order_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

// The statements both engines have; each engine's own are its IntakeOps' (below).
struct IntakeSql {
  store::Statement insert_receipt;  // (customer, key, warehouse, normalized, version) → 1 if new
  store::Statement find_receipt;    // (customer, key) → receipt_row's columns
  store::Statement lock_stock;      // (warehouse, "sku,sku") → stock_row's columns; locked,
                                    //   ascending sku
  store::Statement out_of_stock;    // (customer, key, shortages)
  store::Statement get_order;       // (order_id) → order_row's columns
  store::Statement get_lines;       // (order_id) → line_row's columns per line, by line
  store::Statement lock_order;      // (order_id) → status, warehouse, order_no
  store::Statement lock_sources;    // (site, order_no) → lot per source order; locked
  store::Statement cancel_sources;  // (site, order_no)
  store::Statement abort_items;     // (site, order_no) → item_id per item
  store::Statement count_production;  // (site, order_no) → n
  // (order_id, warehouse) → line, sku, qty of each line of the order (its reservations while
  //   it is placed); their stock rows locked, ascending sku
  store::Statement lock_reserved_stock;
  store::Statement restore;         // (warehouse, sku, qty)
  store::Statement mark_cancelled;  // (order_id)
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

// Each shared statement's row decoded in one place, from column `at` on: 0 for the statement
// itself, further on where an engine's statement returns the same columns beside others.
constexpr std::size_t kReceiptColumns = 6;  // in_find_receipt's: warehouse, normalized,
                                            //   version, outcome, order_id, shortages
constexpr std::size_t kOrderColumns = 8;    // in_get_order's: order_id, order_no, status,
                                            //   customer, warehouse, total, created_at, principal
constexpr std::size_t kLineColumns = 4;     // in_get_lines': line, sku, qty, price
OrderReceipt receipt_row(const Row& r, std::size_t at = 0);
Order order_row(const Row& r, std::size_t at = 0);  // without its lines
OrderLine line_row(const Row& r, std::size_t at = 0);
StockRow stock_row(const Row& r, std::size_t at = 0);  // in_lock_stock's: sku, available, price
// The cart's SKUs as the stock-locking statements take them: "sku,sku,…".
std::string sku_list(const Cart& cart);
// The receipt's shortages column: "sku:requested:available,…".
std::string shortages_text(const std::vector<Shortage>& shortages);

// What the engines do differently in intake: how a placement and a combined batch are
// written (one statement, or one per row), whether stock rows can be locked without waiting,
// and whether a batch can be decided ahead. Each engine implements these operations in
// store/<engine>/intake_ops.cpp (Dialect::intake_ops), under the contract tests (the
// conformance suite every engine passes). Each is IntakeStore's method of the same name, which
// says what it does; the store handles the empty batch before calling them.
class IntakeOps {
 public:
  virtual ~IntakeOps() = default;
  virtual bool one_writer() const = 0;
  virtual bool decides_ahead() const = 0;
  virtual Status plan_for_batch(store::Connection& c) const = 0;
  virtual Result<FreeStock> lock_free_stock(store::Connection& c, const Cart& cart) const = 0;
  virtual Result<std::string> place(store::Connection& c, const Order& order,
                                    const std::string& key, store::Then then) const = 0;
  virtual Result<std::vector<bool>> insert_receipts(
      store::Connection& c, std::span<const NewOrderReceipt> receipts) const = 0;
  virtual Result<ReceiptsAndStock> insert_receipts_and_lock(
      store::Connection& c, std::span<const NewOrderReceipt> receipts, const Cart& stock) const = 0;
  virtual void open_receipts_and_lock(const store::Connection::SendOpening& send,
                                      std::uint64_t token,
                                      std::span<const NewOrderReceipt> receipts,
                                      const Cart& stock) const = 0;
  virtual Result<std::vector<std::optional<StoredReceipt>>> find_receipts(
      store::Connection& c, std::span<const ReceiptKey> keys) const = 0;
  virtual Result<std::vector<std::string>> write_outcomes(store::Connection& c,
                                                          std::span<const BatchOutcome> outcomes,
                                                          store::Then then,
                                                          const DecidedOn* ahead) const = 0;
};

class IntakeStore {
 public:
  explicit IntakeStore(const Dialect& dialect);
  // True when the engine has one write lock for the whole database (SQLite): every write
  // waits for every other, so all requests share one combining lane.
  bool one_writer() const { return dialect_.intake_ops.one_writer(); }

  Result<bool> insert_receipt(store::Connection& c, std::int64_t customer, const std::string& key,
                              const Cart& cart);
  Result<std::optional<OrderReceipt>> find_receipt(store::Connection& c, std::int64_t customer,
                                                   const std::string& key);
  Result<std::vector<StockRow>> lock_stock(store::Connection& c, const Cart& cart);
  // lock_stock without waiting: the rows another transaction holds are named, not waited
  // for. Where the engine has no row locks (one writer), the same as lock_stock.
  Result<FreeStock> lock_free_stock(store::Connection& c, const Cart& cart);
  // First in a batch's transaction: plans made in it read by index (PostgreSQL's
  // in_batch_plans; nothing on SQLite). Sent with the batch's next statement, so it costs no
  // round trip of its own.
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
  // waiting when it calls them with the same arguments. Nothing on an engine that runs one
  // statement per row (SQLite): it has no pipeline to send them down.
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
  // new and every row of `ahead` was free and held its values (PostgreSQL's in_place_known,
  // whose miss raises SQLSTATE OO002: store/postgres/pg_connection.cpp).
  Result<std::vector<std::string>> write_outcomes(store::Connection& c,
                                                  std::span<const BatchOutcome> outcomes,
                                                  store::Then then,
                                                  const DecidedOn* ahead = nullptr);
  // True where a batch can be decided ahead (write_outcomes' `ahead`).
  bool decides_ahead() const { return dialect_.intake_ops.decides_ahead(); }
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
  const Dialect& dialect_;
  const IntakeSql& sql_;
};

}  // namespace onceorder::store
