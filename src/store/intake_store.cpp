#include "store/intake_store.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "store/dialect.hpp"

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

// Appends `v` to a PostgreSQL text[] literal being built ("{" so far, or elements): quoted,
// `"` and `\` escaped, so any text (commas and braces too) comes back as it went in.
void append_text_element(std::string& literal, std::string_view v) {
  if (literal.size() > 1) literal += ',';
  literal += '"';
  for (char ch : v) {
    if (ch == '"' || ch == '\\') literal += '\\';
    literal += ch;
  }
  literal += '"';
}

// A PostgreSQL text[] literal ("{"a","b\"c"}") of `values`.
template <class Texts>
std::string text_array(const Texts& values) {
  std::string out = "{";
  for (const auto& v : values) append_text_element(out, v);
  out += '}';
  return out;
}

// Batches pass their rows as one parameter per column (numbers as "1,2,3" for
// string_to_array, texts as text[] literals), unnested together. PostgreSQL reads them in
// 60 % of the CPU the same rows took as jsonb (docs/BENCHMARKS.md, "Batch rows as arrays"),
// and the row estimate of unnest over a parameter (10) keeps the receipt lookups on
// their index, where jsonb_to_recordset's (100) made PostgreSQL hash the whole receipts table
// for every batch ("Collision lanes and receipts on their index").
struct ReceiptColumns {
  std::string customers, keys, warehouses, carts;

  // The receipt statements' parameters: these four, the normalization version, then `more`.
  std::vector<Param> params(std::initializer_list<Param> more = {}) const {
    std::vector<Param> out = {std::string_view(customers), std::string_view(keys),
                              std::string_view(warehouses), std::string_view(carts),
                              std::int64_t{kNormalizationVersion}};
    out.insert(out.end(), more);
    return out;
  }
};

ReceiptColumns receipt_columns(std::span<const NewOrderReceipt> receipts) {
  std::vector<std::int64_t> customers, warehouses;
  std::vector<std::string_view> keys;
  std::vector<std::string> carts;
  for (const NewOrderReceipt& r : receipts) {
    customers.push_back(r.customer_id);
    keys.push_back(r.key);
    warehouses.push_back(r.cart->warehouse_id);
    carts.push_back(r.cart->text());
  }
  return {join(customers), text_array(keys), join(warehouses), text_array(carts)};
}

// The cart's SKUs as the stock-locking statements take them: "sku,sku,…".
std::string sku_list(const Cart& cart) {
  std::vector<std::int64_t> skus;
  for (const auto& l : cart.lines) skus.push_back(l.sku_id);
  return join(skus);
}

// Which of `receipts` were new, from the (customer, key) rows the insert returned.
std::vector<bool> fresh_of(std::span<const NewOrderReceipt> receipts, const Rows& inserted_rows) {
  std::set<std::pair<std::int64_t, std::string_view>> inserted;
  for (const auto& row : inserted_rows) inserted.emplace(row.i64(0), row.text(1));
  std::vector<bool> fresh(receipts.size(), false);
  for (size_t i = 0; i < receipts.size(); ++i)
    fresh[i] = inserted.contains({receipts[i].customer_id, receipts[i].key});
  return fresh;
}

// The receipt's shortages column: "sku:requested:available,…".
std::string shortages_text(const std::vector<Shortage>& s) {
  std::string out;
  for (const auto& x : s) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}:{}", x.sku_id, x.requested, x.available);
  }
  return out;
}

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

// Columns order_id, order_no, status, customer_id, warehouse_id, total_cents, created_at,
// principal from `at` on (in_get_order's).
Order order_head(const Row& r, size_t at) {
  return Order{r.i64(at),     r.text(at + 1), r.text(at + 2),
               r.i64(at + 3), r.i64(at + 4),  {},
               r.i64(at + 5), r.text(at + 6), r.is_null(at + 7) ? "" : r.text(at + 7)};
}

// A batch's outcomes as place_many's columns: one array per column (receipt_columns says
// why), the placed orders, their lines, and the out-of-stock receipts.
struct BatchColumns {
  std::vector<std::int64_t> order_ids, customers, order_warehouses, totals;
  std::vector<std::string_view> order_nos, principals;
  std::vector<std::int64_t> line_orders, line_nos, line_warehouses, skus, line_quantities, prices;
  std::vector<std::string> sites, source_nos, lots;
  std::map<std::int64_t, size_t> at;  // order_id → its outcome
  std::vector<std::int64_t> short_customers;
  std::vector<std::string_view> placed_keys, short_keys;
  std::vector<std::string> short_texts, short_carts, placed_carts;
};

void add_placed(BatchColumns& b, const BatchOutcome& w, size_t i, bool ahead) {
  const Order& o = *w.order;
  b.at[o.order_id] = i;
  b.placed_keys.push_back(w.key);
  if (ahead) b.placed_carts.push_back(w.cart->text());
  b.order_ids.push_back(o.order_id);
  b.order_nos.push_back(o.order_no);
  b.principals.push_back(o.principal);
  b.customers.push_back(o.customer_id);
  b.order_warehouses.push_back(o.warehouse_id);
  b.totals.push_back(o.total_cents);
  for (const auto& l : o.lines) {
    // The source orders' site and lots come from source_order_key, the rule's one home.
    OrderKey source = source_order_key(o.warehouse_id, o.order_no, l.line_no);
    b.line_orders.push_back(o.order_id);
    b.line_nos.push_back(l.line_no);
    b.line_warehouses.push_back(o.warehouse_id);
    b.skus.push_back(l.sku_id);
    b.line_quantities.push_back(l.quantity);
    b.prices.push_back(l.unit_price_cents);
    b.sites.push_back(std::move(source.site_code));
    b.source_nos.push_back(std::move(source.order_no));
    b.lots.push_back(std::move(source.lot_no));
  }
}

BatchColumns batch_columns(std::span<const BatchOutcome> outcomes, bool ahead) {
  BatchColumns b;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const BatchOutcome& w = outcomes[i];
    if (w.order) {
      add_placed(b, w, i, ahead);
      continue;
    }
    b.short_customers.push_back(w.customer_id);
    b.short_keys.push_back(w.key);
    b.short_texts.push_back(shortages_text(*w.shortages));
    if (ahead) b.short_carts.push_back(w.cart->text());
  }
  return b;
}

// The texts of place_many's parameters $1–$23.
constexpr size_t kBatchTexts = 23;

// place_many's texts, then place_known's five (when `ahead`), then the orders' principals.
std::vector<std::string> batch_texts(const BatchColumns& b, std::span<const BatchOutcome> outcomes,
                                     const DecidedOn* ahead) {
  // The deductions summed per stock row: an UPDATE … FROM applies one source row only.
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> deduct;  // (warehouse, sku)
  for (const BatchOutcome& w : outcomes)
    if (w.order)
      for (const auto& l : w.order->lines) deduct[{w.order->warehouse_id, l.sku_id}] += l.quantity;
  std::vector<std::int64_t> deduct_warehouses, deduct_skus, deductions;
  for (const auto& [row, quantity] : deduct) {
    deduct_warehouses.push_back(row.first);
    deduct_skus.push_back(row.second);
    deductions.push_back(quantity);
  }
  std::vector<std::string> texts = {
      // $1–$5: the orders.
      join(b.order_ids), text_array(b.order_nos), join(b.customers), join(b.order_warehouses),
      join(b.totals),
      // $6–$14: their lines.
      join(b.line_orders), join(b.line_nos), join(b.line_warehouses), join(b.skus),
      join(b.line_quantities), join(b.prices), text_array(b.sites), text_array(b.source_nos),
      text_array(b.lots),
      // $15: the out-of-stock receipts' customers; $16–$18: the deductions; $19–$20: the
      // out-of-stock receipts' keys and shortages; $21–$23: the placed receipts.
      join(b.short_customers), join(deduct_warehouses), join(deduct_skus), join(deductions),
      text_array(b.short_keys), text_array(b.short_texts), join(b.order_ids), join(b.customers),
      text_array(b.placed_keys)};
  if (ahead) {
    std::vector<std::int64_t> skus, available, prices;
    for (const StockRow& r : ahead->rows) {
      skus.push_back(r.sku_id);
      available.push_back(r.available);
      prices.push_back(r.price_cents);
    }
    texts.push_back(text_array(b.placed_carts));
    texts.push_back(text_array(b.short_carts));
    texts.push_back(join(skus));
    texts.push_back(join(available));
    texts.push_back(join(prices));
  }
  texts.push_back(text_array(b.principals));
  return texts;
}

}  // namespace

bool OrderReceipt::is_for(const Cart& cart) const {
  return normalized == cart.text() && warehouse_id == cart.warehouse_id &&
         version == kNormalizationVersion;
}

IntakeStore::IntakeStore(const Dialect& dialect)
    : dialect_(dialect), sql_(dialect.intake), stock_(dialect) {}

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
                                                  r.text(3), r.i64(4), parse_shortages(r.text(5))});
}

Status IntakeStore::plan_for_batch(store::Connection& c) {
  if (sql_.batch_plans.name.empty()) return Status::Ok();
  return c.query(sql_.batch_plans, {}, store::Then::with_next).status();
}

Result<std::vector<StockRow>> IntakeStore::lock_stock(store::Connection& c, const Cart& cart) {
  const std::string list = sku_list(cart);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.lock_stock, {cart.warehouse_id, std::string_view(list)}));
  std::vector<StockRow> out;
  for (const auto& r : rows) out.push_back({r.i64(0), r.i64(1), r.i64(2)});
  return out;
}

Result<FreeStock> IntakeStore::lock_free_stock(store::Connection& c, const Cart& cart) {
  FreeStock out;
  if (sql_.lock_free_stock.name.empty()) {
    OO_ASSIGN_OR_RETURN(out.locked, lock_stock(c, cart));
    return out;
  }
  const std::string list = sku_list(cart);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.lock_free_stock, {cart.warehouse_id, std::string_view(list)}));
  for (const auto& r : rows) {
    if (r.is_null(1))
      out.held.push_back(r.i64(0));
    else
      out.locked.push_back({r.i64(0), r.i64(1), r.i64(2)});
  }
  return out;
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
  if (dialect_.writes_in_one_statement) {
    std::vector<std::int64_t> skus, qtys, prices;
    std::string lots;
    for (const auto& l : o.lines) {
      skus.push_back(l.sku_id);
      qtys.push_back(l.quantity);
      prices.push_back(l.unit_price_cents);
      if (!lots.empty()) lots += ',';
      lots += source_order_key(o.warehouse_id, o.order_no, l.line_no).lot_no;
    }
    const std::string s = join(skus), q = join(qtys), p = join(prices);
    const std::string site = warehouse_site(o.warehouse_id);
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(sql_.place_all,
                           {o.order_id, std::string_view(o.order_no), o.customer_id, o.warehouse_id,
                            o.total_cents, std::string_view(s), std::string_view(q),
                            std::string_view(p), std::string_view(key), std::string_view(site),
                            std::string_view(lots), std::string_view(o.principal)},
                           then));
    // The statement itself raised if a deduction missed: nothing was committed.
    return rows.at(0).text(1);
  }
  OO_ASSIGN_OR_RETURN(
      auto head,
      c.query(sql_.insert_order, {o.order_id, std::string_view(o.order_no), o.customer_id,
                                  o.warehouse_id, o.total_cents, std::string_view(o.principal)}));
  for (const auto& l : o.lines) {
    const std::int64_t line = l.line_no;
    const OrderKey source = source_order_key(o.warehouse_id, o.order_no, l.line_no);
    OO_RETURN_IF_ERROR(
        c.query(sql_.insert_line, {o.order_id, line, l.sku_id, l.quantity, l.unit_price_cents})
            .status());
    OO_ASSIGN_OR_RETURN(auto deducted,
                        c.query(sql_.deduct, {o.warehouse_id, l.sku_id, l.quantity}));
    if (deducted.empty())
      return Status(Code::internal, "a locked stock row did not take its deduction");
    OO_RETURN_IF_ERROR(stock_.add_ledger_entry(
        c, {o.warehouse_id, l.sku_id, -l.quantity, "reservation", std::nullopt, o.order_id, line}));
    OO_RETURN_IF_ERROR(c.query(sql_.insert_source, {std::string_view(source.site_code),
                                                    std::string_view(source.order_no),
                                                    std::string_view(source.lot_no), l.quantity})
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
  Order o = order_head(r, 0);
  OO_ASSIGN_OR_RETURN(auto lines, c.query(sql_.get_lines, {order_id}));
  for (const auto& l : lines)
    o.lines.push_back({static_cast<int>(l.i64(0)), l.i64(1), l.i64(2), l.i64(3)});
  return std::optional<Order>(std::move(o));
}

Result<std::vector<bool>> IntakeStore::insert_receipts(store::Connection& c,
                                                       std::span<const NewOrderReceipt> receipts) {
  std::vector<bool> fresh(receipts.size(), false);
  if (receipts.empty()) return fresh;
  if (!dialect_.writes_in_one_statement) {
    for (size_t i = 0; i < receipts.size(); ++i) {
      const NewOrderReceipt& r = receipts[i];
      OO_ASSIGN_OR_RETURN(bool inserted,
                          insert_receipt(c, r.customer_id, std::string(r.key), *r.cart));
      fresh[i] = inserted;
    }
    return fresh;
  }
  const ReceiptColumns r = receipt_columns(receipts);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_receipts, r.params()));
  return fresh_of(receipts, rows);
}

Result<ReceiptsAndStock> IntakeStore::insert_receipts_and_lock(
    store::Connection& c, std::span<const NewOrderReceipt> receipts, const Cart& stock) {
  if (sql_.insert_receipts_lock_stock.name.empty() || receipts.empty()) {
    ReceiptsAndStock out;
    OO_ASSIGN_OR_RETURN(out.fresh, insert_receipts(c, receipts));
    OO_ASSIGN_OR_RETURN(out.stock, lock_free_stock(c, stock));
    return out;
  }
  const ReceiptColumns r = receipt_columns(receipts);
  const std::string list = sku_list(stock);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_receipts_lock_stock,
                                         r.params({stock.warehouse_id, std::string_view(list)})));
  ReceiptsAndStock out;
  store::Rows inserted;
  for (auto& row : rows) {
    if (!row.is_null(0))
      inserted.push_back(std::move(row));
    else if (row.is_null(3))
      out.stock.held.push_back(row.i64(2));
    else
      out.stock.locked.push_back({row.i64(2), row.i64(3), row.i64(4)});
  }
  out.fresh = fresh_of(receipts, inserted);
  return out;
}

void IntakeStore::open_receipts_and_lock(const store::Connection::SendOpening& send,
                                         std::uint64_t token,
                                         std::span<const NewOrderReceipt> receipts,
                                         const Cart& stock) {
  if (sql_.insert_receipts_lock_stock.name.empty() || receipts.empty()) return;
  const ReceiptColumns r = receipt_columns(receipts);
  const std::string list = sku_list(stock);
  std::vector<store::Call> calls;
  if (!sql_.batch_plans.name.empty()) calls.push_back({sql_.batch_plans, {}});
  calls.push_back(
      {sql_.insert_receipts_lock_stock, r.params({stock.warehouse_id, std::string_view(list)})});
  send(token, calls);
}

Result<std::vector<std::optional<StoredReceipt>>> IntakeStore::find_receipts(
    store::Connection& c, std::span<const ReceiptKey> keys) {
  std::vector<std::optional<StoredReceipt>> out(keys.size());
  if (keys.empty()) return out;
  if (!dialect_.writes_in_one_statement) {
    for (size_t i = 0; i < keys.size(); ++i) {
      OO_ASSIGN_OR_RETURN(auto receipt,
                          find_receipt(c, keys[i].customer_id, std::string(keys[i].key)));
      if (!receipt) continue;
      std::optional<Order> order;
      if (receipt->outcome == "placed") {
        OO_ASSIGN_OR_RETURN(order, get_order(c, receipt->order_id));
      }
      out[i].emplace(StoredReceipt{std::move(*receipt), std::move(order)});
    }
    return out;
  }
  std::vector<std::int64_t> customers;
  std::vector<std::string_view> key_texts;
  for (const ReceiptKey& k : keys) {
    customers.push_back(k.customer_id);
    key_texts.push_back(k.key);
  }
  const std::string cs = join(customers), ks = text_array(key_texts);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.find_receipts, {std::string_view(cs), std::string_view(ks)}));
  // Columns: i, 6 receipt columns (1–6), 7 order columns (7–13), 4 line columns (14–17).
  for (const auto& r : rows) {
    auto& slot = out.at(static_cast<size_t>(r.i64(0)));
    if (!slot) {
      slot.emplace(StoredReceipt{OrderReceipt{r.i64(1), r.text(2), static_cast<int>(r.i64(3)),
                                              r.text(4), r.i64(5), parse_shortages(r.text(6))},
                                 std::nullopt});
      if (!r.is_null(7)) slot->order = order_head(r, 7);
    }
    if (slot->order && !r.is_null(14))
      slot->order->lines.push_back({static_cast<int>(r.i64(15)), r.i64(16), r.i64(17), r.i64(18)});
  }
  return out;
}

Result<std::vector<std::string>> IntakeStore::write_outcomes(store::Connection& c,
                                                             std::span<const BatchOutcome> outcomes,
                                                             store::Then then,
                                                             const DecidedOn* ahead) {
  if (ahead && !decides_ahead())
    return Status(Code::internal, "this engine cannot write a batch decided ahead");
  if (!dialect_.writes_in_one_statement) return write_one_by_one(c, outcomes, then);
  const BatchColumns columns = batch_columns(outcomes, ahead != nullptr);
  const std::vector<std::string> texts = batch_texts(columns, outcomes, ahead);
  // place_many's $1–$23, then place_known's $24–$30 (two of them numbers), then the orders'
  // principals: $24 of place_many, $31 of place_known.
  std::vector<Param> params(texts.begin(), texts.begin() + kBatchTexts);
  if (ahead) {
    params.insert(params.end(),
                  {std::string_view(texts[23]), std::string_view(texts[24]), ahead->warehouse_id,
                   std::int64_t{kNormalizationVersion}, std::string_view(texts[25]),
                   std::string_view(texts[26]), std::string_view(texts[27])});
  }
  params.push_back(std::string_view(texts.back()));
  // The statement itself raised if a deduction missed: nothing was committed.
  auto placed = c.query(ahead ? sql_.place_known : sql_.place_many, params, then);
  if (ahead && !placed.ok() &&
      placed.status().message().find(OO_DECIDED_AHEAD_MOVED) != std::string::npos)
    return Status(Code::retry_transaction, OO_DECIDED_AHEAD_MOVED);
  OO_ASSIGN_OR_RETURN(auto rows, std::move(placed));
  std::vector<std::string> created(outcomes.size());
  for (const auto& r : rows) {
    if (r.is_null(0)) continue;
    auto it = columns.at.find(r.i64(0));
    if (it == columns.at.end())
      return Status(Code::internal, "the batch returned an order it was not given");
    created[it->second] = r.text(1);
  }
  for (const auto& [id, i] : columns.at)
    if (created[i].empty()) return Status(Code::internal, "the batch did not place an order");
  return created;
}

Result<std::vector<std::string>> IntakeStore::write_one_by_one(
    store::Connection& c, std::span<const BatchOutcome> outcomes, store::Then then) {
  std::vector<std::string> created(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const BatchOutcome& w = outcomes[i];
    const Then last = i + 1 == outcomes.size() ? then : Then::stay;
    if (w.order) {
      OO_ASSIGN_OR_RETURN(created[i], place(c, *w.order, std::string(w.key), last));
    } else {
      OO_RETURN_IF_ERROR(
          record_out_of_stock(c, w.customer_id, std::string(w.key), *w.shortages, last));
    }
  }
  return created;
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
