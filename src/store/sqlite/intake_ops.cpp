// SQLite's intake operations (IntakeOps, store/intake_store.hpp): no DML in CTEs, so a
// placement is one statement per row and a batch loops over the one-request steps; SQLite has
// one writer at a time, so the extra statements cost no lock time, only calls into the
// library. A write transaction holds the database's write lock from BEGIN: locking stock rows
// is reading them, and nothing is ever held by another transaction.
#include "store/intake_store.hpp"
#include "store/sql_catalog.hpp"
#include "store/sqlite/dialect.hpp"
#include "store/stock_store.hpp"

namespace onceorder::store::sqlite {
namespace {

class SqliteIntakeOps final : public IntakeOps {
 public:
  explicit SqliteIntakeOps(const SqlCatalog& c)
      : insert_order_(c.get("in_insert_order")),
        insert_line_(c.get("in_insert_line")),
        deduct_(c.get("in_deduct")),
        insert_source_(c.get("in_insert_source")),
        receipt_placed_(c.get("in_receipt_placed")) {}

  bool one_writer() const override { return true; }
  bool decides_ahead() const override { return false; }
  Status plan_for_batch(Connection&) const override { return Status::Ok(); }

  Result<FreeStock> lock_free_stock(Connection& c, const Cart& cart) const override {
    FreeStock out;
    OO_ASSIGN_OR_RETURN(out.locked, IntakeStore(dialect()).lock_stock(c, cart));
    return out;
  }

  Result<std::string> place(Connection& c, const Order& o, const std::string& key,
                            Then then) const override;

  Result<std::vector<bool>> insert_receipts(
      Connection& c, std::span<const NewOrderReceipt> receipts) const override {
    IntakeStore store(dialect());
    std::vector<bool> fresh(receipts.size(), false);
    for (size_t i = 0; i < receipts.size(); ++i) {
      const NewOrderReceipt& r = receipts[i];
      OO_ASSIGN_OR_RETURN(bool inserted,
                          store.insert_receipt(c, r.customer_id, std::string(r.key), *r.cart));
      fresh[i] = inserted;
    }
    return fresh;
  }

  Result<ReceiptsAndStock> insert_receipts_and_lock(Connection& c,
                                                    std::span<const NewOrderReceipt> receipts,
                                                    const Cart& stock) const override {
    ReceiptsAndStock out;
    OO_ASSIGN_OR_RETURN(out.fresh, insert_receipts(c, receipts));
    OO_ASSIGN_OR_RETURN(out.stock, lock_free_stock(c, stock));
    return out;
  }

  // Nothing to send ahead: the next batch's first steps run in its own transaction.
  void open_receipts_and_lock(const Connection::SendOpening&, std::uint64_t,
                              std::span<const NewOrderReceipt>, const Cart&) const override {}

  Result<std::vector<std::optional<StoredReceipt>>> find_receipts(
      Connection& c, std::span<const ReceiptKey> keys) const override;

  // place and record_out_of_stock per outcome; never decided ahead (decides_ahead()).
  Result<std::vector<std::string>> write_outcomes(Connection& c,
                                                  std::span<const BatchOutcome> outcomes, Then then,
                                                  const DecidedOn*) const override;

 private:
  // (order_id, order_no, customer, warehouse, total, principal) → created_at
  const Statement insert_order_;
  const Statement insert_line_;  // (order_id, line, sku, qty, price)
  // (warehouse, sku, qty) → 1 row when deducted (moved from available to reserved)
  const Statement deduct_;
  const Statement insert_source_;   // (site, order_no, lot, qty)
  const Statement receipt_placed_;  // (customer, key, order_id)
};

Result<std::string> SqliteIntakeOps::place(Connection& c, const Order& o, const std::string& key,
                                           Then then) const {
  StockStore stock(dialect());  // the placement's ledger entries
  OO_ASSIGN_OR_RETURN(
      auto head,
      c.query(insert_order_, {o.order_id, std::string_view(o.order_no), o.customer_id,
                              o.warehouse_id, o.total_cents, std::string_view(o.principal)}));
  for (const auto& l : o.lines) {
    const std::int64_t line = l.line_no;
    const OrderKey source = source_order_key(o.warehouse_id, o.order_no, l.line_no);
    OO_RETURN_IF_ERROR(
        c.query(insert_line_, {o.order_id, line, l.sku_id, l.quantity, l.unit_price_cents})
            .status());
    OO_ASSIGN_OR_RETURN(auto deducted, c.query(deduct_, {o.warehouse_id, l.sku_id, l.quantity}));
    if (deducted.empty())
      return Status(Code::internal, "a locked stock row did not take its deduction");
    OO_RETURN_IF_ERROR(stock.add_ledger_entry(
        c, {o.warehouse_id, l.sku_id, -l.quantity, "reservation", std::nullopt, o.order_id, line}));
    OO_RETURN_IF_ERROR(c.query(insert_source_, {std::string_view(source.site_code),
                                                std::string_view(source.order_no),
                                                std::string_view(source.lot_no), l.quantity})
                           .status());
  }
  OO_RETURN_IF_ERROR(
      c.query(receipt_placed_, {o.customer_id, std::string_view(key), o.order_id}, then).status());
  return head.at(0).text(0);
}

Result<std::vector<std::optional<StoredReceipt>>> SqliteIntakeOps::find_receipts(
    Connection& c, std::span<const ReceiptKey> keys) const {
  IntakeStore store(dialect());
  std::vector<std::optional<StoredReceipt>> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    OO_ASSIGN_OR_RETURN(auto receipt,
                        store.find_receipt(c, keys[i].customer_id, std::string(keys[i].key)));
    if (!receipt) continue;
    std::optional<Order> order;
    if (receipt->outcome == "placed") {
      OO_ASSIGN_OR_RETURN(order, store.get_order(c, receipt->order_id));
    }
    out[i].emplace(StoredReceipt{std::move(*receipt), std::move(order)});
  }
  return out;
}

Result<std::vector<std::string>> SqliteIntakeOps::write_outcomes(
    Connection& c, std::span<const BatchOutcome> outcomes, Then then, const DecidedOn*) const {
  IntakeStore store(dialect());
  std::vector<std::string> created(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const BatchOutcome& w = outcomes[i];
    const Then last = i + 1 == outcomes.size() ? then : Then::stay;
    if (w.order) {
      OO_ASSIGN_OR_RETURN(created[i], place(c, *w.order, std::string(w.key), last));
    } else {
      OO_RETURN_IF_ERROR(
          store.record_out_of_stock(c, w.customer_id, std::string(w.key), *w.shortages, last));
    }
  }
  return created;
}

}  // namespace

const IntakeOps& intake_ops(const SqlCatalog& catalog) {
  static const SqliteIntakeOps ops(catalog);
  return ops;
}

}  // namespace onceorder::store::sqlite
