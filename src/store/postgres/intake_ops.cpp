// PostgreSQL's intake operations (IntakeOps, store/intake_store.hpp): a placement, a batch's
// receipts, its stock rows and its writes are each one statement (data-modifying CTEs), stock
// rows are locked without waiting (SKIP LOCKED), and a batch can be decided ahead.
#include <map>
#include <set>
#include <utility>

#include "store/intake_store.hpp"
#include "store/postgres/dialect.hpp"
#include "store/sql_catalog.hpp"

namespace onceorder::store::postgres {
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
// string_to_array, texts as text[] literals), unnested together: PostgreSQL parses arrays in
// less CPU than the same rows as jsonb, and its row estimate for unnest over a parameter is
// small enough to keep the receipt lookups on their index, where jsonb_to_recordset's larger
// one has it hash the whole receipts table.
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

// Which of `receipts` were new, from the (customer, key) rows the insert returned.
std::vector<bool> fresh_of(std::span<const NewOrderReceipt> receipts, const Rows& inserted_rows) {
  std::set<std::pair<std::int64_t, std::string_view>> inserted;
  for (const auto& row : inserted_rows) inserted.emplace(row.i64(0), row.text(1));
  std::vector<bool> fresh(receipts.size(), false);
  for (size_t i = 0; i < receipts.size(); ++i)
    fresh[i] = inserted.contains({receipts[i].customer_id, receipts[i].key});
  return fresh;
}

// in_lock_free_stock's columns from `at` on (sku, available, price; available and price NULL
// where another transaction holds the row), into `out`.
void add_free_stock(FreeStock& out, const Row& r, std::size_t at) {
  if (r.is_null(at + 1))
    out.held.push_back(r.i64(at));
  else
    out.locked.push_back(stock_row(r, at));
}

// in_find_receipts' columns: the key's index, then in_find_receipt's, in_get_order's and
// in_get_lines' side by side (the order's and the line's NULL where there are none).
constexpr std::size_t kKeyIndexAt = 0;
constexpr std::size_t kReceiptAt = kKeyIndexAt + 1;
constexpr std::size_t kOrderAt = kReceiptAt + kReceiptColumns;
constexpr std::size_t kLineAt = kOrderAt + kOrderColumns;

// in_insert_receipts_lock_stock's columns: a receipt inserted (customer, key: fresh_of's) or,
// from kFreeStockAt on, a stock row as in_lock_free_stock answers.
constexpr std::size_t kFreeStockAt = 2;

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

class PgIntakeOps final : public IntakeOps {
 public:
  explicit PgIntakeOps(const SqlCatalog& c)
      : lock_free_stock_(c.get("in_lock_free_stock")),
        place_all_(c.get("in_place_all")),
        insert_receipts_(c.get("in_insert_receipts")),
        insert_receipts_lock_stock_(c.get("in_insert_receipts_lock_stock")),
        find_receipts_(c.get("in_find_receipts")),
        place_many_(c.get("in_place_many")),
        place_known_(c.get("in_place_known")),
        batch_plans_(c.get("in_batch_plans")) {}

  // Row locks: requests of different stock rows are written side by side.
  bool one_writer() const override { return false; }
  bool decides_ahead() const override { return true; }

  Status plan_for_batch(Connection& c) const override {
    return c.query(batch_plans_, {}, Then::with_next).status();
  }

  Result<FreeStock> lock_free_stock(Connection& c, const Cart& cart) const override {
    const std::string list = sku_list(cart);
    OO_ASSIGN_OR_RETURN(auto rows,
                        c.query(lock_free_stock_, {cart.warehouse_id, std::string_view(list)}));
    FreeStock out;
    for (const auto& r : rows) add_free_stock(out, r, 0);
    return out;
  }

  Result<std::string> place(Connection& c, const Order& o, const std::string& key,
                            Then then) const override;

  Result<std::vector<bool>> insert_receipts(
      Connection& c, std::span<const NewOrderReceipt> receipts) const override {
    const ReceiptColumns r = receipt_columns(receipts);
    OO_ASSIGN_OR_RETURN(auto rows, c.query(insert_receipts_, r.params()));
    return fresh_of(receipts, rows);
  }

  Result<ReceiptsAndStock> insert_receipts_and_lock(Connection& c,
                                                    std::span<const NewOrderReceipt> receipts,
                                                    const Cart& stock) const override;

  void open_receipts_and_lock(const Connection::SendOpening& send, std::uint64_t token,
                              std::span<const NewOrderReceipt> receipts,
                              const Cart& stock) const override {
    const ReceiptColumns r = receipt_columns(receipts);
    const std::string list = sku_list(stock);
    const Call calls[] = {
        {batch_plans_, {}},
        {insert_receipts_lock_stock_, r.params({stock.warehouse_id, std::string_view(list)})}};
    send(token, calls);
  }

  Result<std::vector<std::optional<StoredReceipt>>> find_receipts(
      Connection& c, std::span<const ReceiptKey> keys) const override;

  Result<std::vector<std::string>> write_outcomes(Connection& c,
                                                  std::span<const BatchOutcome> outcomes, Then then,
                                                  const DecidedOn* ahead) const override;

 private:
  // (warehouse, "sku,sku") → sku, available, price per stock row: locked when free,
  //   available and price NULL when another transaction holds it (SKIP LOCKED); ascending sku
  const Statement lock_free_stock_;
  // The whole placement: (order_id, order_no, customer, warehouse, total, "sku,…", "qty,…",
  //   "price,…", key, site, "lot,…", principal) → ok, created_at
  const Statement place_all_;
  // A row per request comes as one parameter per column: "1,2,…" for numbers, a text[]
  // literal {"a","b"} for texts.
  // ("customer,…", {key,…}, "warehouse,…", {cart text,…}, version) → customer, key of each
  //   receipt inserted, inserted in the order given
  const Statement insert_receipts_;
  // insert_receipts then lock_free_stock as one statement: (insert_receipts' five,
  //   warehouse, "sku,sku") → (customer, key, NULL, NULL, NULL) per receipt inserted, then
  //   (NULL, NULL, sku, available, price) per stock row as lock_free_stock answers, after
  //   every receipt is in
  const Statement insert_receipts_lock_stock_;
  // ("customer,…", {key,…}) → i, the find_receipt columns, the get_order columns, the get_lines
  //   columns (NULL when out of stock); ordered by i, line
  const Statement find_receipts_;
  // (orders: id, order_no, customer, warehouse, total; their lines: order_id, line_no,
  //   warehouse, sku, qty, price, site, source order_no, lot; out-of-stock customers;
  //   deductions summed per stock row: warehouse, sku, qty; out-of-stock keys, shortages;
  //   placed receipts: order_id, customer, key; the orders' principals, last) → order_id,
  //   created_at per order (one row of NULLs if none)
  const Statement place_many_;
  // place_many for a batch decided ahead, on the stock rows as its lane's last batch left them
  // (no receipts round trip): place_many's parameters, then the placed receipts' carts, the
  // out-of-stock receipts' carts, the warehouse, the normalization version, and the stock
  // rows the decisions read ("sku,…", "available,…", "price,…"), and the orders' principals
  // last. Inserts every receipt with its decision (failing as a whole if one is stored
  // already) and fails with SQLSTATE OO002 (retry_transaction: pg_connection.cpp), before any
  // commit, unless every one of those rows was free and held exactly those values.
  const Statement place_known_;
  // Run first in a batch's transaction: its statements join a few keys to tables that grow,
  // and a plan PostgreSQL made and kept while a table was new would hash the whole table.
  // Plans made in the transaction read by index, and each batch statement keeps its one
  // generic plan: left to choose, PostgreSQL plans place_many anew for every small batch, which
  // a batch's unnested arrays make look cheaper custom.
  const Statement batch_plans_;
};

Result<std::string> PgIntakeOps::place(Connection& c, const Order& o, const std::string& key,
                                       Then then) const {
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
      auto rows, c.query(place_all_,
                         {o.order_id, std::string_view(o.order_no), o.customer_id, o.warehouse_id,
                          o.total_cents, std::string_view(s), std::string_view(q),
                          std::string_view(p), std::string_view(key), std::string_view(site),
                          std::string_view(lots), std::string_view(o.principal)},
                         then));
  // The statement itself raised if a deduction missed: nothing was committed.
  return rows.at(0).text(1);
}

Result<ReceiptsAndStock> PgIntakeOps::insert_receipts_and_lock(
    Connection& c, std::span<const NewOrderReceipt> receipts, const Cart& stock) const {
  const ReceiptColumns r = receipt_columns(receipts);
  const std::string list = sku_list(stock);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(insert_receipts_lock_stock_,
                                         r.params({stock.warehouse_id, std::string_view(list)})));
  ReceiptsAndStock out;
  Rows inserted;
  for (auto& row : rows) {
    if (row.is_null(0))
      add_free_stock(out.stock, row, kFreeStockAt);
    else
      inserted.push_back(std::move(row));
  }
  out.fresh = fresh_of(receipts, inserted);
  return out;
}

Result<std::vector<std::optional<StoredReceipt>>> PgIntakeOps::find_receipts(
    Connection& c, std::span<const ReceiptKey> keys) const {
  std::vector<std::optional<StoredReceipt>> out(keys.size());
  std::vector<std::int64_t> customers;
  std::vector<std::string_view> key_texts;
  for (const ReceiptKey& k : keys) {
    customers.push_back(k.customer_id);
    key_texts.push_back(k.key);
  }
  const std::string cs = join(customers), ks = text_array(key_texts);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(find_receipts_, {std::string_view(cs), std::string_view(ks)}));
  for (const auto& r : rows) {
    auto& slot = out.at(static_cast<size_t>(r.i64(kKeyIndexAt)));
    if (!slot) {
      slot.emplace(StoredReceipt{receipt_row(r, kReceiptAt), std::nullopt});
      if (!r.is_null(kOrderAt)) slot->order = order_row(r, kOrderAt);
    }
    if (slot->order && !r.is_null(kLineAt)) slot->order->lines.push_back(line_row(r, kLineAt));
  }
  return out;
}

Result<std::vector<std::string>> PgIntakeOps::write_outcomes(Connection& c,
                                                             std::span<const BatchOutcome> outcomes,
                                                             Then then,
                                                             const DecidedOn* ahead) const {
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
  // The statement itself raised if a deduction missed: nothing was committed. A batch decided
  // ahead on rows or keys that had moved fails with retry_transaction (SQLSTATE OO002).
  OO_ASSIGN_OR_RETURN(auto rows, c.query(ahead ? place_known_ : place_many_, params, then));
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

}  // namespace

const IntakeOps& intake_ops(const SqlCatalog& catalog) {
  static const PgIntakeOps ops(catalog);
  return ops;
}

}  // namespace onceorder::store::postgres
