#include "store/intake_store.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "store/dialect.hpp"

namespace onceorder::store {
namespace {

std::vector<Shortage> parse_shortages(const std::string& text) {
  std::vector<Shortage> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    Shortage s;
    if (std::sscanf(text.substr(pos, end - pos).c_str(), "%ld:%ld:%ld", &s.sku_id, &s.requested,
                    &s.available) == 3) {
      out.push_back(s);
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace

OrderReceipt receipt_row(const Row& r, std::size_t at) {
  return OrderReceipt{r.i64(at),      r.text(at + 1), static_cast<int>(r.i64(at + 2)),
                      r.text(at + 3), r.i64(at + 4),  parse_shortages(r.text(at + 5))};
}

Order order_row(const Row& r, std::size_t at) {
  return Order{r.i64(at),     r.text(at + 1), r.text(at + 2),
               r.i64(at + 3), r.i64(at + 4),  {},
               r.i64(at + 5), r.text(at + 6), r.is_null(at + 7) ? "" : r.text(at + 7)};
}

OrderLine line_row(const Row& r, std::size_t at) {
  return OrderLine{static_cast<int>(r.i64(at)), r.i64(at + 1), r.i64(at + 2), r.i64(at + 3)};
}

StockRow stock_row(const Row& r, std::size_t at) {
  return StockRow{r.i64(at), r.i64(at + 1), r.i64(at + 2)};
}

std::string sku_list(const Cart& cart) {
  std::string out;
  for (const auto& l : cart.lines) {
    if (!out.empty()) out += ',';
    out += std::to_string(l.sku_id);
  }
  return out;
}

std::string shortages_text(const std::vector<Shortage>& s) {
  std::string out;
  for (const auto& x : s) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}:{}", x.sku_id, x.requested, x.available);
  }
  return out;
}

bool OrderReceipt::is_for(const Cart& cart) const {
  return normalized == cart.text() && warehouse_id == cart.warehouse_id &&
         version == kNormalizationVersion;
}

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
  return std::optional<OrderReceipt>(receipt_row(rows[0]));
}

Status IntakeStore::plan_for_batch(store::Connection& c) {
  return dialect_.intake_ops.plan_for_batch(c);
}

Result<std::vector<StockRow>> IntakeStore::lock_stock(store::Connection& c, const Cart& cart) {
  const std::string list = sku_list(cart);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.lock_stock, {cart.warehouse_id, std::string_view(list)}));
  std::vector<StockRow> out;
  for (const auto& r : rows) out.push_back(stock_row(r));
  return out;
}

Result<FreeStock> IntakeStore::lock_free_stock(store::Connection& c, const Cart& cart) {
  return dialect_.intake_ops.lock_free_stock(c, cart);
}

Status IntakeStore::record_out_of_stock(store::Connection& c, std::int64_t customer,
                                        const std::string& key,
                                        const std::vector<Shortage>& shortages, store::Then then) {
  const std::string text = shortages_text(shortages);
  return c.query(sql_.out_of_stock, {customer, std::string_view(key), std::string_view(text)}, then)
      .status();
}

Result<std::string> IntakeStore::place(store::Connection& c, const Order& o, const std::string& key,
                                       store::Then then) {
  return dialect_.intake_ops.place(c, o, key, then);
}

Result<std::optional<Order>> IntakeStore::get_order(store::Connection& c, std::int64_t order_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.get_order, {order_id}));
  if (rows.empty()) return std::optional<Order>();
  Order o = order_row(rows[0]);
  OO_ASSIGN_OR_RETURN(auto lines, c.query(sql_.get_lines, {order_id}));
  for (const auto& l : lines) o.lines.push_back(line_row(l));
  return std::optional<Order>(std::move(o));
}

Result<std::vector<bool>> IntakeStore::insert_receipts(store::Connection& c,
                                                       std::span<const NewOrderReceipt> receipts) {
  if (receipts.empty()) return std::vector<bool>();
  return dialect_.intake_ops.insert_receipts(c, receipts);
}

Result<ReceiptsAndStock> IntakeStore::insert_receipts_and_lock(
    store::Connection& c, std::span<const NewOrderReceipt> receipts, const Cart& stock) {
  if (!receipts.empty()) return dialect_.intake_ops.insert_receipts_and_lock(c, receipts, stock);
  ReceiptsAndStock out;
  OO_ASSIGN_OR_RETURN(out.stock, lock_free_stock(c, stock));
  return out;
}

void IntakeStore::open_receipts_and_lock(const store::Connection::SendOpening& send,
                                         std::uint64_t token,
                                         std::span<const NewOrderReceipt> receipts,
                                         const Cart& stock) {
  if (receipts.empty()) return;
  dialect_.intake_ops.open_receipts_and_lock(send, token, receipts, stock);
}

Result<std::vector<std::optional<StoredReceipt>>> IntakeStore::find_receipts(
    store::Connection& c, std::span<const ReceiptKey> keys) {
  if (keys.empty()) return std::vector<std::optional<StoredReceipt>>();
  return dialect_.intake_ops.find_receipts(c, keys);
}

Result<std::vector<std::string>> IntakeStore::write_outcomes(store::Connection& c,
                                                             std::span<const BatchOutcome> outcomes,
                                                             store::Then then,
                                                             const DecidedOn* ahead) {
  if (ahead && !decides_ahead())
    return Status(Code::internal, "this engine cannot write a batch decided ahead");
  return dialect_.intake_ops.write_outcomes(c, outcomes, then, ahead);
}

Result<std::optional<OrderHead>> IntakeStore::lock_order(store::Connection& c,
                                                         std::int64_t order_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.lock_order, {order_id}));
  if (rows.empty()) return std::optional<OrderHead>();
  return std::optional<OrderHead>(OrderHead{rows[0].text(0), rows[0].i64(1), rows[0].text(2)});
}

Result<std::vector<std::string>> IntakeStore::lock_sources(store::Connection& c,
                                                           std::string_view site,
                                                           std::string_view order_no) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.lock_sources, {site, order_no}));
  std::vector<std::string> lots;
  for (const auto& r : rows) lots.push_back(r.text(0));
  return lots;
}

Result<std::int64_t> IntakeStore::count_production(store::Connection& c, std::string_view site,
                                                   std::string_view order_no) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.count_production, {site, order_no}));
  return rows.at(0).i64(0);
}

Status IntakeStore::cancel_sources(store::Connection& c, std::string_view site,
                                   std::string_view order_no) {
  return c.query(sql_.cancel_sources, {site, order_no}).status();
}

Result<std::vector<std::int64_t>> IntakeStore::abort_items(store::Connection& c,
                                                           std::string_view site,
                                                           std::string_view order_no) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.abort_items, {site, order_no}));
  return first_column_i64(rows);
}

Result<std::vector<Reservation>> IntakeStore::lock_reserved_stock(store::Connection& c,
                                                                  std::int64_t order_id,
                                                                  const OrderHead& head) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.lock_reserved_stock, {order_id, head.warehouse_id}));
  std::vector<Reservation> out;
  for (const auto& r : rows) out.push_back({r.i64(0), head.warehouse_id, r.i64(1), r.i64(2)});
  return out;
}

Status IntakeStore::restore_stock(store::Connection& c, const Reservation& r) {
  return c.query(sql_.restore, {r.warehouse_id, r.sku_id, r.quantity}).status();
}

Status IntakeStore::mark_cancelled(store::Connection& c, std::int64_t order_id) {
  return c.query(sql_.mark_cancelled, {order_id}).status();
}

}  // namespace onceorder::store
