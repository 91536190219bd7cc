#include "checker.hpp"

#include "check_report.hpp"

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace onceorder::torture {
namespace {

using Json = nlohmann::json;
using Table = std::vector<std::vector<std::string>>;

std::int64_t i64(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }

Json without_marker(Json body) {
  if (body.is_object()) body.erase("_replayed");
  return body;
}

// The request's cart as OnceOrder normalizes it: quantities merged per SKU, SKUs ascending.
std::map<std::int64_t, std::int64_t> normalized(const Json& body) {
  std::map<std::int64_t, std::int64_t> cart;
  for (const auto& l : body.value("lines", Json::array()))
    cart[l.value("sku_id", std::int64_t{0})] += l.value("quantity", std::int64_t{0});
  return cart;
}

struct Line {
  std::int64_t sku = 0, quantity = 0, price = 0;
};
struct StoredOrder {
  std::string order_no, status;
  std::int64_t customer = 0, total = 0;
  std::map<int, Line> lines;
  // Per line, the quantities its ledger entries reserved and released (a reservation is a line
  // of a placed order; its entries are its history).
  std::map<int, std::int64_t> reserved, released;
  int reservation_entries = 0, release_entries = 0;
};
struct Source {
  std::int64_t quantity = 0;
  bool cancelled = false;
};
using SourceKey = std::tuple<std::string, std::string, std::string>;

void check_orders(const History& h, const Database& db, Report& r,
                  std::map<std::string, StoredOrder>& orders,
                  const std::map<SourceKey, Source>& sources,
                  const std::map<SourceKey, int>& produced) {
  for (const auto& row : db.rows("SELECT order_id, order_no, status, customer_id, total_cents "
                                 "FROM orders")) {
    orders[row[0]] = {row[1], row[2], i64(row[3]), i64(row[4]), {}, {}, {}, 0, 0};
  }
  for (const auto& row :
       db.rows("SELECT order_id, line_no, sku_id, quantity, unit_price_cents FROM order_lines")) {
    auto it = orders.find(row[0]);
    if (it == orders.end()) {
      r.violation("orders_whole", "order line of a missing order {}", row[0]);
      continue;
    }
    it->second.lines[static_cast<int>(i64(row[1]))] = {i64(row[2]), i64(row[3]), i64(row[4])};
  }
  for (const auto& row : db.rows("SELECT order_id, kind, coalesce(line_no, 0), delta FROM "
                                 "stock_ledger WHERE order_id IS NOT NULL")) {
    auto it = orders.find(row[0]);
    if (it == orders.end()) {
      r.violation("orders_whole", "ledger entry of a missing order {}", row[0]);
      continue;
    }
    const int line_no = static_cast<int>(i64(row[2]));
    if (row[1] == "reservation") {
      ++it->second.reservation_entries;
      it->second.reserved[line_no] -= i64(row[3]);
    }
    if (row[1] == "release") {
      ++it->second.release_entries;
      it->second.released[line_no] += i64(row[3]);
    }
  }
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> receipts;
  for (const auto& row : db.rows("SELECT customer_id, idempotency_key, coalesce(outcome, ''), "
                                 "coalesce(order_id, 0) FROM order_receipts")) {
    receipts[{row[0], row[1]}] = {row[2], row[3]};
  }
  r["orders_whole"];
  std::set<std::string> receipt_orders;
  for (const auto& [key, rc] : receipts) {
    if (rc.first == "placed") receipt_orders.insert(rc.second);
    if (rc.first.empty()) r.violation("orders_whole", "receipt {} has no outcome", key.second);
    if (rc.first == "placed" && !orders.contains(rc.second))
      r.violation("orders_whole", "receipt {} names a missing order {}", key.second, rc.second);
  }
  std::map<std::string, int> order_nos;
  for (const auto& [id, o] : orders) {
    const bool placed = o.status == "placed";
    const size_t n = o.lines.size();
    int sources_seen = 0, sources_cancelled = 0;
    for (const auto& [line_no, line] : o.lines) {
      auto s = sources.find({"W1", o.order_no, std::to_string(line_no)});
      if (s == sources.end()) continue;
      ++sources_seen;
      if (s->second.cancelled) ++sources_cancelled;
      if (s->second.quantity != line.quantity)
        r.violation("orders_whole", "order {} line {}: source order quantity {} for {}", id,
                    line_no, s->second.quantity, line.quantity);
    }
    bool whole = n > 0 && o.reserved.size() == n && o.reservation_entries == static_cast<int>(n) &&
                 sources_seen == static_cast<int>(n) && receipt_orders.contains(id);
    for (const auto& [line_no, line] : o.lines) {
      const auto res = o.reserved.find(line_no);
      const auto rel = o.released.find(line_no);
      whole = whole && res != o.reserved.end() && res->second == line.quantity &&
              (placed ? rel == o.released.end()
                      : rel != o.released.end() && rel->second == line.quantity);
    }
    whole = whole && o.release_entries == (placed ? 0 : static_cast<int>(n)) &&
            sources_cancelled == (placed ? 0 : static_cast<int>(n));
    if (!whole)
      r.violation("orders_whole",
                  "order {} ({}) is not whole: {} lines, {} reservation and {} release entries, "
                  "{} source orders ({} cancelled), receipt {}",
                  id, o.status, n, o.reservation_entries, o.release_entries, sources_seen,
                  sources_cancelled, receipt_orders.contains(id));
    ++order_nos[o.order_no];
    if (!placed) {
      int made = 0;
      for (const auto& [line_no, line] : o.lines)
        made += produced.contains({"W1", o.order_no, std::to_string(line_no)}) ? 1 : 0;
      if (made > 0)
        r.violation("cancelled_not_produced", "order {} is cancelled and has {} production orders",
                    id, made);
    }
  }
  r["order_numbers_unique"];
  for (const auto& [no, count] : order_nos)
    if (count > 1) r.violation("order_numbers_unique", "order number {} {} times", no, count);

  // The history's view: every key's answers, and what each key stored.
  struct KeyHistory {
    std::vector<const Op*> ops;
    bool any_ok = false, any_unknown = false;
  };
  std::map<std::pair<std::string, std::string>, KeyHistory> keys;
  for (const Op& op : h.ops) {
    if (op.type != "order") continue;
    const std::string customer = std::to_string(op.request.value("customer", 0));
    auto& k = keys[{customer, op.request.value("key", "")}];
    k.ops.push_back(&op);
    k.any_ok = k.any_ok || op.outcome == Outcome::ok;
    k.any_unknown = k.any_unknown || op.outcome == Outcome::unknown;
  }
  r["orders_acked"];
  r["answers_identical"];
  r["orders_from_history"];
  std::map<std::string, std::string> answered_nos;  // order_no → key
  for (const auto& [key, k] : keys) {
    const Op* first = nullptr;
    for (const Op* op : k.ops) {
      if (op->outcome != Outcome::ok) continue;
      if (!first) {
        first = op;
      } else if (op->status != first->status ||
                 without_marker(op->response) != without_marker(first->response)) {
        r.violation("answers_identical", "order key {}: answer {} {} after {} {}", key.second,
                    op->status, without_marker(op->response).dump(), first->status,
                    without_marker(first->response).dump());
      }
    }
    auto rc = receipts.find(key);
    if (!first) {
      // Only failures and unknowns: a key that only ever failed stored nothing.
      if (!k.any_unknown && rc != receipts.end())
        r.violation("orders_from_history", "key {} only failed but stored a receipt ({})",
                    key.second, rc->second.first);
      continue;
    }
    if (rc == receipts.end()) {
      r.violation("orders_acked", "key {} was answered {} but has no receipt", key.second,
                  first->status);
      continue;
    }
    if (first->status == 409) {
      if (rc->second.first != "out_of_stock")
        r.violation("orders_acked", "key {} was answered out_of_stock, stored {}", key.second,
                    rc->second.first);
      continue;
    }
    const Json& b = first->response;
    const std::string id = b.value("order_id", "");
    auto o = orders.find(id);
    if (rc->second.second != id || o == orders.end()) {
      r.violation("orders_acked", "key {}: answered order {} is not stored", key.second, id);
      continue;
    }
    const auto cart = normalized(first->request.value("body", Json::object()));
    std::map<std::int64_t, std::int64_t> stored, answered;
    for (const auto& [n, l] : o->second.lines) stored[l.sku] = l.quantity;
    for (const auto& l : b.value("lines", Json::array()))
      answered[l.value("sku_id", std::int64_t{0})] = l.value("quantity", std::int64_t{0});
    if (stored != cart || answered != cart || o->second.order_no != b.value("order_no", "") ||
        o->second.total != b.value("total_cents", std::int64_t{-1}))
      r.violation("orders_acked", "order {} (key {}) is stored otherwise than answered", id,
                  key.second);
    auto [it, fresh] = answered_nos.emplace(b.value("order_no", ""), key.second);
    if (!fresh && it->second != key.second)
      r.violation("order_numbers_unique", "order number {} answered to keys {} and {}", it->first,
                  it->second, key.second);
  }
  for (const auto& [key, rc] : receipts) {
    if (!keys.contains(key))
      r.violation("orders_from_history", "receipt {} of customer {} was never requested",
                  key.second, key.first);
  }
  for (const auto& [id, o] : orders) {
    if (!receipt_orders.contains(id))
      r.violation("orders_from_history", "order {} has no receipt", id);
  }

  r["cancels"];
  for (const Op& op : h.ops) {
    if (op.type != "cancel") continue;
    const std::string id = op.request.value("order_id", "");
    auto o = orders.find(id);
    if (op.outcome == Outcome::ok && (o == orders.end() || o->second.status != "cancelled"))
      r.violation("cancels", "cancel of {} was acknowledged, the order is {}", id,
                  o == orders.end() ? "missing" : o->second.status);
    if (op.status == 409 && op.response.is_object() &&
        op.response.value("code", "") == "in_production" && o != orders.end()) {
      bool made = false;
      for (const auto& [line_no, line] : o->second.lines)
        made = made || produced.contains({"W1", o->second.order_no, std::to_string(line_no)});
      if (!made) r.violation("cancels", "cancel of {} was refused in_production, nothing made", id);
    }
  }
}

using StoredDocuments = std::map<std::pair<std::string, std::int64_t>,
                                 std::vector<std::pair<std::string, std::string>>>;

// The stored documents, (scope, value) → (number, title), and their titles' counts: no
// number twice, no gap.
void check_stored_documents(const Database& db, Report& r, StoredDocuments& docs,
                            std::map<std::pair<std::string, std::string>, int>& titles) {
  std::map<std::string, std::vector<std::int64_t>> values;
  for (const auto& row :
       db.rows("SELECT scope, value, number, title, origin FROM documents ORDER BY scope, value")) {
    docs[{row[0], i64(row[1])}].push_back({row[2], row[3]});
    if (row[4] == "issued") values[row[0]].push_back(i64(row[1]));
    ++titles[{row[0], row[3]}];
  }
  r["documents_unique"];
  r["documents_contiguous"];
  for (const auto& [sv, list] : docs)
    if (list.size() > 1)
      r.violation("documents_unique", "scope {} number {} is stored {} times", sv.first, sv.second,
                  list.size());
  for (const auto& [scope, vals] : values) {
    std::set<std::int64_t> distinct(vals.begin(), vals.end());
    const std::int64_t top = distinct.empty() ? 0 : *distinct.rbegin();
    if (static_cast<std::int64_t>(distinct.size()) != top || (top > 0 && *distinct.begin() != 1))
      r.violation("documents_contiguous", "scope {}: {} distinct numbers up to {}", scope,
                  distinct.size(), top);
  }
}

void check_documents(const History& h, const Database& db, Report& r) {
  StoredDocuments docs;
  std::map<std::pair<std::string, std::string>, int> titles;
  check_stored_documents(db, r, docs, titles);
  r["documents_acked"];
  r["documents_once"];
  r["answers_identical"];
  std::map<std::pair<std::string, std::string>, const Op*> first_by_key;
  std::map<std::pair<std::string, std::int64_t>, std::string> answered;  // (scope,value) → title
  struct TitleHistory {
    bool any_ok = false, any_unknown = false;
  };
  std::map<std::pair<std::string, std::string>, TitleHistory> requested;
  for (const Op& op : h.ops) {
    if (op.type != "document") continue;
    const std::string scope = op.request.value("scope", "");
    const std::string title = op.request.value("title", "");
    auto& t = requested[{scope, title}];
    t.any_ok = t.any_ok || op.outcome == Outcome::ok;
    t.any_unknown = t.any_unknown || op.outcome == Outcome::unknown;
    if (op.outcome != Outcome::ok) continue;
    const std::string key = op.request.value("key", "");
    if (!key.empty()) {
      auto [it, fresh] = first_by_key.emplace(std::make_pair(scope, key), &op);
      if (!fresh && (op.status != it->second->status ||
                     without_marker(op.response) != without_marker(it->second->response)))
        r.violation("answers_identical", "document key {}: answer {} after {}", key,
                    without_marker(op.response).dump(),
                    without_marker(it->second->response).dump());
    }
    const std::int64_t value = op.response.value("value", std::int64_t{0});
    auto [a, fresh] = answered.emplace(std::make_pair(scope, value), title);
    if (!fresh && a->second != title)
      r.violation("documents_unique", "scope {} number {} answered to '{}' and '{}'", scope, value,
                  a->second, title);
    auto d = docs.find({scope, value});
    bool stored = false;
    if (d != docs.end())
      for (const auto& [number, t2] : d->second)
        stored = stored || (number == op.response.value("number", "") && t2 == title);
    if (!stored)
      r.violation("documents_acked", "scope {} number {} ('{}') was answered, not stored", scope,
                  value, title);
  }
  for (const auto& [st, count] : titles) {
    if (st.first.rfind("PO-", 0) == 0) continue;  // production documents: checked with them
    auto t = requested.find(st);
    if (t == requested.end()) {
      r.violation("documents_once", "scope {}: document '{}' was never requested", st.first,
                  st.second);
    } else if (count > 1) {
      r.violation("documents_once", "scope {}: '{}' made {} documents", st.first, st.second, count);
    }
  }
  for (const auto& [st, t] : requested)
    if (!t.any_ok && !t.any_unknown && titles.contains(st))
      r.violation("documents_once", "scope {}: '{}' only failed but was stored", st.first,
                  st.second);
}

void check_stock(const History& h, const Database& db, const CheckOptions& o, Report& r) {
  r["stock_conserved"];
  std::map<std::int64_t, std::int64_t> available, reserved, ledger_sum, supplied, active;
  for (const auto& row :
       db.rows("SELECT sku_id, available, reserved FROM stock WHERE warehouse_id = 1")) {
    available[i64(row[0])] = i64(row[1]);
    reserved[i64(row[0])] = i64(row[2]);
  }
  std::map<std::string, int> reasons;
  for (const auto& row : db.rows("SELECT sku_id, delta, kind, coalesce(reason, '') FROM "
                                 "stock_ledger WHERE warehouse_id = 1")) {
    const std::int64_t sku = i64(row[0]), delta = i64(row[1]);
    ledger_sum[sku] += delta;
    if (row[2] == "initial" || row[2] == "adjustment") supplied[sku] += delta;
    if (row[2] == "adjustment") ++reasons[row[3]];
  }
  // A reservation is a line of a placed order.
  for (const auto& row : db.rows("SELECT l.sku_id, sum(l.quantity) FROM orders o JOIN order_lines "
                                 "l ON l.order_id = o.order_id WHERE o.status = 'placed' AND "
                                 "o.warehouse_id = 1 GROUP BY l.sku_id"))
    active[i64(row[0])] = i64(row[1]);
  for (int sku = 1; sku <= o.skus; ++sku) {
    const std::int64_t a = available[sku];
    if (a < 0) r.violation("stock_conserved", "SKU {}: available {} < 0", sku, a);
    if (ledger_sum[sku] != a)
      r.violation("stock_conserved", "SKU {}: the ledger sums to {}, available is {}", sku,
                  ledger_sum[sku], a);
    if (reserved[sku] != active[sku])
      r.violation("stock_conserved", "SKU {}: reserved {}, but its placed orders hold {}", sku,
                  reserved[sku], active[sku]);
    if (supplied[sku] - active[sku] != a)
      r.violation("stock_conserved", "SKU {}: supplied {} - reserved {} = {}, but available is {}",
                  sku, supplied[sku], active[sku], supplied[sku] - active[sku], a);
  }
  std::set<std::string> invoked;
  for (const Op& op : h.ops) {
    if (op.type != "adjust") continue;
    const std::string reason = op.request.value("reason", "");
    invoked.insert(reason);
    const int n = reasons.contains(reason) ? reasons[reason] : 0;
    if (n > 1) r.violation("stock_conserved", "adjustment '{}' applied {} times", reason, n);
    if (op.outcome == Outcome::ok && n != 1)
      r.violation("stock_conserved", "adjustment '{}' was acknowledged, applied {} times", reason,
                  n);
    if (op.outcome == Outcome::fail && n != 0)
      r.violation("stock_conserved", "adjustment '{}' was refused ({}), applied {} times", reason,
                  op.status, n);
  }
  for (const auto& [reason, n] : reasons)
    if (!invoked.contains(reason))
      r.violation("stock_conserved", "adjustment '{}' was never requested", reason);
}

void check_scheduling(const History& h, const Database& db, const CheckOptions& o, Report& r,
                      const std::map<SourceKey, Source>& sources,
                      const std::map<SourceKey, int>& produced) {
  r["source_orders"];
  for (const Op& op : h.ops) {
    if (op.type != "source_orders") continue;
    int present = 0, total = 0;
    for (const auto& so : op.request["body"].value("orders", Json::array())) {
      ++total;
      auto s = sources.find(
          {so.value("site_code", ""), so.value("order_no", ""), so.value("lot_no", "")});
      if (s != sources.end() && s->second.quantity == so.value("quantity", std::int64_t{0}))
        ++present;
    }
    const bool ok = op.outcome == Outcome::ok     ? present == total
                    : op.outcome == Outcome::fail ? present == 0
                                                  : (present == 0 || present == total);
    if (!ok)
      r.violation("source_orders", "request {} ({}): {} of {} source orders stored", op.id,
                  outcome_name(op.outcome), present, total);
  }
  r["produced_once"];
  for (const auto& [key, n] : produced)
    if (n > 1)
      r.violation("produced_once", "{}/{}/{} has {} production orders", std::get<0>(key),
                  std::get<1>(key), std::get<2>(key), n);
  for (const auto& row :
       db.rows("SELECT p.item_id, coalesce(i.status, '') FROM production_orders p LEFT JOIN "
               "schedule_items i ON i.item_id = p.item_id WHERE coalesce(i.status, '') <> "
               "'success'"))
    r.violation("produced_once", "production order of item {} whose status is '{}'", row[0],
                row[1]);
  r["cancelled_not_produced"];
  r["production_settled"];
  std::map<SourceKey, int> failed;
  for (const auto& row : db.rows("SELECT site_code, order_no, lot_no, count(*) FROM "
                                 "schedule_items WHERE status = 'failed' GROUP BY site_code, "
                                 "order_no, lot_no"))
    failed[{row[0], row[1], row[2]}] = static_cast<int>(i64(row[3]));
  for (const auto& [key, s] : sources) {
    const bool made = produced.contains(key);
    if (s.cancelled && made)
      r.violation("cancelled_not_produced", "source order {}/{}/{} is cancelled and produced",
                  std::get<0>(key), std::get<1>(key), std::get<2>(key));
    if (!s.cancelled && !made && (failed.contains(key) ? failed[key] : 0) < o.max_attempts)
      r.violation("production_settled", "source order {}/{}/{} was never produced",
                  std::get<0>(key), std::get<1>(key), std::get<2>(key));
  }
}

}  // namespace

std::vector<CheckResult> check(const History& h, const Database& db, const CheckOptions& o) {
  Report r;
  std::map<SourceKey, Source> sources;
  for (const auto& row : db.rows("SELECT site_code, order_no, lot_no, quantity, CASE WHEN "
                                 "cancelled_at IS NULL THEN 0 ELSE 1 END FROM source_orders"))
    sources[{row[0], row[1], row[2]}] = {i64(row[3]), row[4] == "1"};
  std::map<SourceKey, int> produced;
  for (const auto& row : db.rows("SELECT site_code, order_no, lot_no FROM production_orders"))
    ++produced[{row[0], row[1], row[2]}];
  std::map<std::string, StoredOrder> orders;
  check_orders(h, db, r, orders, sources, produced);
  check_documents(h, db, r);
  check_stock(h, db, o, r);
  check_scheduling(h, db, o, r, sources, produced);
  check_outbox(h, db, o, r);

  r["invariants"];
  if (!o.onceorder_bin.empty()) {
    std::string out;
    const std::string cmd = "'" + o.onceorder_bin + "' --db '" + db.url() + "' check 2>&1";
    if (run_command(cmd, &out) != 0) {
      r.violation("invariants", "onceorder check failed:");
      size_t start = 0;
      while (start < out.size()) {
        size_t end = out.find('\n', start);
        if (end == std::string::npos) end = out.size();
        const std::string line = out.substr(start, end - start);
        if (line.rfind("FAIL", 0) == 0) r.violation("invariants", "{}", line);
        start = end + 1;
      }
    }
  }
  return r.take();
}

}  // namespace onceorder::torture
