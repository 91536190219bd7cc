#include "store/intake_store.hpp"

#include "store/dialect.hpp"

#include <fmt/format.h>

namespace onceorder::store {
namespace {

std::string join(const std::vector<std::int64_t>& values) {
  std::string out;
  for (auto v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

}  // namespace

IntakeStore::IntakeStore(const Dialect& dialect) : dialect_(dialect), sql_(dialect.intake) {}

Result<bool> IntakeStore::insert_receipt(store::Connection& c, std::int64_t customer,
                                         const std::string& key, const Cart& cart) {
  const std::string text = cart.text();
  OO_ASSIGN_OR_RETURN(
      auto rows,
      c.query(sql_.insert_receipt, {customer, std::string_view(key), cart.warehouse_id,
                                    std::string_view(text), std::int64_t{kNormalizationVersion}}));
  return !rows.empty();
}

Result<std::optional<OrderReceipt>> IntakeStore::find_receipt(store::Connection& c,
                                                              std::int64_t customer,
                                                              const std::string& key) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.find_receipt, {customer, std::string_view(key)}));
  if (rows.empty()) return std::optional<OrderReceipt>();
  const auto& r = rows[0];
  return std::optional<OrderReceipt>(OrderReceipt{r.i64(0), r.text(1), static_cast<int>(r.i64(2)),
                                                  r.text(3), r.i64(4), r.text(5)});
}

Result<std::vector<StockRow>> IntakeStore::lock_stock(store::Connection& c, const Cart& cart) {
  std::vector<std::int64_t> skus;
  for (const auto& l : cart.lines) skus.push_back(l.sku_id);
  const std::string list = join(skus);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.lock_stock, {cart.warehouse_id, std::string_view(list)}));
  std::vector<StockRow> out;
  for (const auto& r : rows) out.push_back({r.i64(0), r.i64(1), r.i64(2)});
  return out;
}

Status IntakeStore::record_out_of_stock(store::Connection& c, std::int64_t customer,
                                        const std::string& key, const std::string& shortages,
                                        store::Then then) {
  return c
      .query(sql_.out_of_stock, {customer, std::string_view(key), std::string_view(shortages)},
             then)
      .status();
}

Result<std::string> IntakeStore::place(store::Connection& c, const Order& o, const std::string& key,
                                       store::Then then) {
  if (dialect_.writes_in_one_statement) {
    std::vector<std::int64_t> skus, qtys, prices;
    for (const auto& l : o.lines) {
      skus.push_back(l.sku_id);
      qtys.push_back(l.quantity);
      prices.push_back(l.unit_price_cents);
    }
    const std::string s = join(skus), q = join(qtys), p = join(prices);
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(sql_.place_all,
                           {o.order_id, std::string_view(o.order_no), o.customer_id, o.warehouse_id,
                            o.total_cents, std::string_view(s), std::string_view(q),
                            std::string_view(p), std::string_view(key)},
                           then));
    // The statement itself raised if a deduction missed: nothing was committed.
    return rows.at(0).text(1);
  }
  OO_ASSIGN_OR_RETURN(auto head,
                      c.query(sql_.insert_order, {o.order_id, std::string_view(o.order_no),
                                                  o.customer_id, o.warehouse_id, o.total_cents}));
  const std::string site = fmt::format("W{}", o.warehouse_id);
  for (const auto& l : o.lines) {
    const std::int64_t line = l.line_no;
    const std::string lot = std::to_string(l.line_no);
    OO_RETURN_IF_ERROR(
        c.query(sql_.insert_line, {o.order_id, line, l.sku_id, l.quantity, l.unit_price_cents})
            .status());
    OO_RETURN_IF_ERROR(
        c.query(sql_.insert_reservation, {o.order_id, line, o.warehouse_id, l.sku_id, l.quantity})
            .status());
    OO_ASSIGN_OR_RETURN(auto deducted,
                        c.query(sql_.deduct, {o.warehouse_id, l.sku_id, l.quantity}));
    if (deducted.empty())
      return Status(Code::internal, "a locked stock row did not take its deduction");
    OO_RETURN_IF_ERROR(
        c.query(sql_.ledger, {o.warehouse_id, l.sku_id, -l.quantity,
                              std::string_view("reservation"), nullptr, o.order_id, line})
            .status());
    OO_RETURN_IF_ERROR(
        c.query(sql_.insert_source, {std::string_view(site), std::string_view(o.order_no),
                                     std::string_view(lot), l.quantity})
            .status());
  }
  OO_RETURN_IF_ERROR(
      c.query(sql_.receipt_placed, {o.customer_id, std::string_view(key), o.order_id}, then)
          .status());
  return head.at(0).text(0);
}

Result<std::optional<Order>> IntakeStore::get_order(store::Connection& c, std::int64_t order_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.get_order, {order_id}));
  if (rows.empty()) return std::optional<Order>();
  const auto& r = rows[0];
  Order o{r.i64(0), r.text(1), r.text(2), r.i64(3), r.i64(4), {}, r.i64(5), r.text(6)};
  OO_ASSIGN_OR_RETURN(auto lines, c.query(sql_.get_lines, {order_id}));
  for (const auto& l : lines)
    o.lines.push_back({static_cast<int>(l.i64(0)), l.i64(1), l.i64(2), l.i64(3)});
  return std::optional<Order>(std::move(o));
}

Result<std::optional<OrderHead>> IntakeStore::lock_order(store::Connection& c,
                                                         std::int64_t order_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.lock_order, {order_id}));
  if (rows.empty()) return std::optional<OrderHead>();
  return std::optional<OrderHead>(OrderHead{rows[0].text(0), rows[0].i64(1), rows[0].text(2)});
}

}  // namespace onceorder::store
