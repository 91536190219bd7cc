#include "store/scheduling_store.hpp"

#include <map>
#include <string>

#include "onceorder/core/principal.hpp"
#include "onceorder/core/text.hpp"
#include "store/dialect.hpp"
#include "store/numbering_store.hpp"

namespace onceorder::store {
namespace {

using store::Param;
using store::Row;

std::string_view sv(const std::string& s) { return s; }

// run_id, kind, status, owner, error, created_at, finished_at, wait, processing, success,
// failed, aborted
Run run_from(const Row& r) {
  Run run;
  run.run_id = r.i64(0);
  run.kind = r.text(1);
  run.status = parse_run_status(r.text(2)).value_or(RunStatus::error);
  run.owner = r.text(3);
  run.error = r.text(4);
  run.created_at = r.text(5);
  run.finished_at = r.text(6);
  run.counts = RunCounts{r.i64(7), r.i64(8), r.i64(9), r.i64(10), r.i64(11)};
  return run;
}

// item_id, run_id, site, order, lot, status, attempt, owner, lease_until, error,
// created_at, updated_at
ScheduleItem item_from(const Row& r) {
  ScheduleItem i;
  i.item_id = r.i64(0);
  i.run_id = r.i64(1);
  i.key = {r.text(2), r.text(3), r.text(4)};
  i.status = parse_item_status(r.text(5)).value_or(ItemStatus::wait);
  i.attempt = static_cast<int>(r.i64(6));
  i.owner = r.text(7);
  i.lease_until = r.text(8);
  i.error = r.text(9);
  i.created_at = r.text(10);
  i.updated_at = r.text(11);
  return i;
}

// site, order, lot, item_id, quantity, scope, value, number, created_at
ProductionOrder production_from(const Row& r) {
  return ProductionOrder{{r.text(0), r.text(1), r.text(2)},
                         r.i64(3),
                         r.i64(4),
                         r.text(5),
                         r.i64(6),
                         r.text(7),
                         r.text(8)};
}

Param opt(const std::optional<std::string>& s) { return s ? Param(sv(*s)) : Param(nullptr); }

// A production scope's format when its first production order creates it: wide enough that
// a site does not run out.
constexpr ScopeFormat kProductionScopeFormat{9, 10, 999999999};

// One claim of a batch as a JSON row: [item_id, owner, attempt] (then scope and title).
void append_claim_row(std::string& out, const Claim& cl) {
  out += out.size() > 1 ? ",[" : "[";
  out += std::to_string(cl.item_id);
  out += ',';
  append_json_string(out, cl.owner);
  out += ',';
  out += std::to_string(cl.attempt);
}

// Order keys as a JSON array of [site, order, lot], in the given order.
std::string order_keys_json(const std::vector<OrderKey>& keys) {
  std::string out = "[";
  for (const OrderKey& k : keys) {
    out += out.size() > 1 ? ",[" : "[";
    append_json_string(out, k.site_code);
    out += ',';
    append_json_string(out, k.order_no);
    out += ',';
    append_json_string(out, k.lot_no);
    out += ']';
  }
  return out + ']';
}

// has_success, has_live, failed, cancelled, legacy_pending from column `from` on.
KeyState key_state_from(const Row& r, int from) {
  return KeyState{true,
                  r.boolean(from),
                  r.boolean(from + 1),
                  r.i64(from + 2),
                  r.boolean(from + 3),
                  r.boolean(from + 4)};
}

}  // namespace

SchedulingStore::SchedulingStore(const Dialect& dialect)
    : dialect_(dialect), sql_(dialect.scheduling) {}

Result<bool> SchedulingStore::insert_source(store::Connection& c, const SourceOrder& o) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.insert_source,
                         {sv(o.key.site_code), sv(o.key.order_no), sv(o.key.lot_no), o.quantity}));
  return !rows.empty();
}

Result<std::optional<std::int64_t>> SchedulingStore::source_quantity(store::Connection& c,
                                                                     const OrderKey& k) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.source_quantity, {sv(k.site_code), sv(k.order_no), sv(k.lot_no)}));
  if (rows.empty()) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(rows[0].i64(0));
}

Result<std::int64_t> SchedulingStore::insert_run(store::Connection& c, RunKind kind,
                                                 const std::string& owner) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_run, {to_string(kind), sv(owner)}));
  return rows.at(0).i64(0);
}

Result<std::int64_t> SchedulingStore::insert_candidates(store::Connection& c, std::int64_t run_id,
                                                        int max_attempts) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.insert_candidates, {run_id, std::int64_t{max_attempts}}));
  return static_cast<std::int64_t>(rows.size());
}

Result<bool> SchedulingStore::insert_item_for(store::Connection& c, std::int64_t run_id,
                                              const OrderKey& k, int max_attempts) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.insert_item_for, {run_id, sv(k.site_code), sv(k.order_no),
                                                     sv(k.lot_no), std::int64_t{max_attempts}}));
  return !rows.empty();
}

Result<KeyState> SchedulingStore::key_state(store::Connection& c, const OrderKey& k) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.key_state, {sv(k.site_code), sv(k.order_no), sv(k.lot_no)}));
  if (rows.empty()) return KeyState{};
  return key_state_from(rows[0], 0);
}

Result<std::set<OrderKey>> SchedulingStore::insert_items_for(store::Connection& c,
                                                             std::int64_t run_id,
                                                             const std::vector<OrderKey>& keys,
                                                             int max_attempts) {
  std::set<OrderKey> made;
  if (sql_.insert_items_for.sql.empty()) {
    for (const OrderKey& k : keys) {
      OO_ASSIGN_OR_RETURN(bool inserted, insert_item_for(c, run_id, k, max_attempts));
      if (inserted) made.insert(k);
    }
    return made;
  }
  const std::string json = order_keys_json(keys);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_items_for, {run_id, std::string_view(json),
                                                                 std::int64_t{max_attempts}}));
  for (const Row& r : rows) made.insert({r.text(0), r.text(1), r.text(2)});
  return made;
}

Result<std::map<OrderKey, KeyState>> SchedulingStore::key_states(
    store::Connection& c, const std::vector<OrderKey>& keys) {
  std::map<OrderKey, KeyState> out;
  if (sql_.key_states.sql.empty()) {
    for (const OrderKey& k : keys) {
      OO_ASSIGN_OR_RETURN(KeyState s, key_state(c, k));
      if (s.has_source) out.emplace(k, s);
    }
    return out;
  }
  const std::string json = order_keys_json(keys);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.key_states, {std::string_view(json)}));
  for (const Row& r : rows)
    out.emplace(OrderKey{r.text(0), r.text(1), r.text(2)}, key_state_from(r, 3));
  return out;
}

Result<bool> SchedulingStore::set_run_status(store::Connection& c, std::int64_t run_id,
                                             RunStatus status, const std::string& error) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.set_run_status, {run_id, to_string(status),
                                               error.empty() ? Param(nullptr) : Param(sv(error))}));
  return !rows.empty();
}

Result<Beat> SchedulingStore::heartbeat(store::Connection& c, std::int64_t run_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.heartbeat, {run_id}));
  if (rows.empty()) return Beat{};
  return Beat{true, rows[0].boolean(1)};
}

Result<bool> SchedulingStore::request_stop(store::Connection& c, std::int64_t run_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.request_stop, {run_id}));
  return !rows.empty();
}

Result<std::vector<ExhaustedKey>> SchedulingStore::list_exhausted(store::Connection& c,
                                                                  const ExhaustedFilter& f,
                                                                  int max_attempts) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.list_exhausted,
                         {opt(f.site_code), sv(f.after.site_code), sv(f.after.order_no),
                          sv(f.after.lot_no), std::int64_t{max_attempts}, std::int64_t{f.limit}}));
  std::vector<ExhaustedKey> out;
  for (const Row& r : rows) {
    out.push_back(
        {{r.text(0), r.text(1), r.text(2)}, r.i64(3), r.i64(4), r.text(5), r.text(6), r.text(7)});
  }
  return out;
}

Result<bool> SchedulingStore::requeue_key(store::Connection& c, const OrderKey& k,
                                          int max_attempts) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.requeue_key, {sv(k.site_code), sv(k.order_no), sv(k.lot_no),
                                                 std::int64_t{max_attempts}}));
  return !rows.empty();
}

Status SchedulingStore::cascade_run_error(store::Connection& c, std::int64_t run_id,
                                          const std::string& why) {
  OO_RETURN_IF_ERROR(c.query(sql_.abort_run_waits, {run_id, sv(why)}).status());
  return c.query(sql_.fail_run_processing, {run_id, sv(why)}).status();
}

Result<std::vector<Claim>> SchedulingStore::claim(store::Connection& c, std::int64_t run_id,
                                                  const std::string& owner, int limit,
                                                  std::int64_t lease_ms) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.claim, {run_id, sv(owner), std::int64_t{limit}, lease_ms}));
  std::vector<Claim> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back(Claim{
        r.i64(0), r.i64(1), {r.text(2), r.text(3), r.text(4)}, static_cast<int>(r.i64(5)), owner});
  }
  return out;
}

Result<bool> SchedulingStore::fence_success(store::Connection& c, const Claim& cl) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.fence_success, {cl.item_id, sv(cl.owner), std::int64_t{cl.attempt}}));
  return !rows.empty();
}

Result<bool> SchedulingStore::mark_failed(store::Connection& c, const Claim& cl,
                                          const std::string& error) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.mark_failed, {cl.item_id, sv(cl.owner),
                                                            std::int64_t{cl.attempt}, sv(error)}));
  return !rows.empty();
}

Result<std::int64_t> SchedulingStore::fence_many(store::Connection& c,
                                                 std::span<const Claim> claims) {
  if (sql_.fence_many.sql.empty()) {
    std::int64_t fenced = 0;
    for (const Claim& cl : claims) {
      OO_ASSIGN_OR_RETURN(bool ok, fence_success(c, cl));
      fenced += ok ? 1 : 0;
    }
    return fenced;
  }
  std::string rows_json = "[";
  for (const Claim& cl : claims) {
    append_claim_row(rows_json, cl);
    rows_json += ']';
  }
  rows_json += ']';
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.fence_many, {std::string_view(rows_json)}));
  return static_cast<std::int64_t>(rows.size());
}

Status SchedulingStore::complete_numbered_apart(store::Connection& c,
                                                std::span<const NumberedClaim> claims) {
  std::vector<Claim> plain;
  plain.reserve(claims.size());
  for (const NumberedClaim& nc : claims) plain.push_back(nc.claim);
  OO_ASSIGN_OR_RETURN(std::int64_t fenced, fence_many(c, plain));
  if (fenced != static_cast<std::int64_t>(claims.size()))
    return Status(Code::conflict, "a claim in the batch was lost");
  if (sql_.insert_production_many.sql.empty()) {  // each claim as the standard step would
    for (const NumberedClaim& nc : claims)
      OO_RETURN_IF_ERROR(produce_numbered(c, nc.claim, nc.scope, nc.title).status());
    return Status::Ok();
  }
  // Per scope (claim order kept within it): the counter moved once, then the documents
  // and the production orders in one statement each.
  std::map<std::string_view, std::vector<const NumberedClaim*>> by_scope;
  for (const NumberedClaim& nc : claims) by_scope[nc.scope].push_back(&nc);
  NumberingStore numbering(dialect_);
  for (const auto& [scope, group] : by_scope) {
    OO_RETURN_IF_ERROR(numbering.ensure_scope(c, scope, kProductionScopeFormat));
    OO_ASSIGN_OR_RETURN(auto row, numbering.lock_scope(c, scope));
    const auto k = static_cast<std::int64_t>(group.size());
    if (!row || row->last_value > row->format.max - k)
      return Status(Code::scope_exhausted,
                    "production scope '" + std::string(scope) + "' is exhausted");
    std::vector<NewDocument> new_docs;
    new_docs.reserve(group.size());
    for (const NumberedClaim* nc : group) new_docs.push_back({nc->title, kProductionPrincipal});
    OO_ASSIGN_OR_RETURN(
        auto docs, numbering.allocate_many(c, scope, row->last_value, new_docs, {}, Then::stay));
    std::string rows_json = "[";
    for (size_t i = 0; i < group.size(); ++i) {
      const Claim& cl = group[i]->claim;
      rows_json += rows_json.size() > 1 ? ",[" : "[";
      rows_json += std::to_string(cl.item_id);
      for (const std::string* text : {&cl.key.site_code, &cl.key.order_no, &cl.key.lot_no}) {
        rows_json += ',';
        append_json_string(rows_json, *text);
      }
      rows_json += ',' + std::to_string(docs[i].value) + ',';
      append_json_string(rows_json, docs[i].number);
      rows_json += ']';
    }
    rows_json += ']';
    OO_ASSIGN_OR_RETURN(auto produced,
                        c.query(sql_.insert_production_many, {scope, std::string_view(rows_json)}));
    if (static_cast<std::int64_t>(produced.size()) != k)
      return Status(Code::internal, "source order vanished during production");
  }
  return Status::Ok();
}

Status SchedulingStore::complete_numbered(store::Connection& c,
                                          std::span<const NumberedClaim> claims, store::Then then) {
  if (sql_.complete_numbered.sql.empty()) return complete_numbered_apart(c, claims);
  std::string rows_json = "[";
  for (const NumberedClaim& nc : claims) {
    append_claim_row(rows_json, nc.claim);
    rows_json += ',';
    append_json_string(rows_json, nc.scope);
    rows_json += ',';
    append_json_string(rows_json, nc.title);
    rows_json += ']';
  }
  rows_json += ']';
  return c
      .query(
          sql_.complete_numbered,
          {std::string_view(rows_json), static_cast<std::int64_t>(claims.size()),
           std::int64_t{kProductionScopeFormat.width}, std::int64_t{kProductionScopeFormat.radix},
           kProductionScopeFormat.max, kProductionPrincipal},
          then)
      .status();
}

Result<bool> SchedulingStore::abort_if_cancelled(store::Connection& c, const Claim& cl) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.abort_if_cancelled,
                                         {cl.item_id, sv(cl.owner), std::int64_t{cl.attempt}}));
  return !rows.empty();
}

Result<ProductionOrder> SchedulingStore::produce_numbered(store::Connection& c, const Claim& cl,
                                                          std::string_view scope,
                                                          std::string_view title) {
  if (dialect_.writes_in_one_statement) {
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(sql_.produce_standard,
                           {scope, title, cl.item_id, sv(cl.key.site_code), sv(cl.key.order_no),
                            sv(cl.key.lot_no), std::int64_t{kProductionScopeFormat.width},
                            std::int64_t{kProductionScopeFormat.radix}, kProductionScopeFormat.max,
                            kProductionPrincipal}));
    if (rows.empty()) {
      return Status(Code::scope_exhausted, "no production order: scope '" + std::string(scope) +
                                               "' is exhausted or the source order vanished");
    }
    return production_from(rows[0]);
  }
  NumberingStore numbering(dialect_);
  OO_RETURN_IF_ERROR(numbering.ensure_scope(c, scope, kProductionScopeFormat));
  OO_ASSIGN_OR_RETURN(
      auto doc, numbering.allocate(c, scope, {title, kProductionPrincipal}, store::Then::stay));
  if (!doc)
    return Status(Code::scope_exhausted,
                  "production scope '" + std::string(scope) + "' is exhausted");
  return insert_production(c, cl, scope, doc->value, doc->number);
}

Result<ProductionOrder> SchedulingStore::insert_production(store::Connection& c, const Claim& cl,
                                                           std::string_view scope,
                                                           std::int64_t value,
                                                           const std::string& number) {
  OO_ASSIGN_OR_RETURN(
      auto rows,
      c.query(sql_.insert_production, {cl.item_id, scope, value, sv(number), sv(cl.key.site_code),
                                       sv(cl.key.order_no), sv(cl.key.lot_no)}));
  if (rows.empty()) return Status(Code::internal, "source order vanished during production");
  return production_from(rows[0]);
}

Result<std::int64_t> SchedulingStore::abort_orphans(
    store::Connection& c, const std::optional<std::vector<OrderKey>>& keys,
    std::int64_t timeout_ms) {
  const std::string keys_json = keys ? order_keys_json(*keys) : std::string();
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.abort_orphans,
                         {keys ? Param(std::string_view(keys_json)) : Param(nullptr), timeout_ms}));
  return static_cast<std::int64_t>(rows.size());
}

Result<std::vector<std::int64_t>> SchedulingStore::dead_runs(store::Connection& c,
                                                             std::int64_t timeout_ms) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.dead_runs, {timeout_ms}));
  return first_column_i64(rows);
}

Result<std::int64_t> SchedulingStore::orphan_waits(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.orphan_waits, {}));
  return static_cast<std::int64_t>(rows.size());
}

Result<std::int64_t> SchedulingStore::expired_leases(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.expired_leases, {}));
  return static_cast<std::int64_t>(rows.size());
}

Result<std::optional<Run>> SchedulingStore::get_run(store::Connection& c, std::int64_t run_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.get_run, {run_id}));
  if (rows.empty()) return std::optional<Run>();
  return std::optional<Run>(run_from(rows[0]));
}

Result<std::vector<Run>> SchedulingStore::list_runs(store::Connection& c,
                                                    std::optional<RunStatus> status, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.list_runs, {status ? Param(to_string(*status)) : Param(nullptr),
                                               std::int64_t{limit}}));
  std::vector<Run> out;
  for (const Row& r : rows) out.push_back(run_from(r));
  return out;
}

Result<std::vector<ScheduleItem>> SchedulingStore::list_items(store::Connection& c,
                                                              const ItemFilter& f) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.list_items, {f.status ? Param(to_string(*f.status)) : Param(nullptr),
                                           opt(f.site_code), opt(f.order_no), opt(f.lot_no),
                                           f.run_id ? Param(*f.run_id) : Param(nullptr), f.after,
                                           std::int64_t{f.limit}}));
  std::vector<ScheduleItem> out;
  for (const Row& r : rows) out.push_back(item_from(r));
  return out;
}

Result<std::vector<ProductionOrder>> SchedulingStore::list_production(
    store::Connection& c, const std::optional<std::string>& site, std::int64_t after, int limit) {
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.list_production, {opt(site), after, std::int64_t{limit}}));
  std::vector<ProductionOrder> out;
  for (const Row& r : rows) out.push_back(production_from(r));
  return out;
}

Result<std::vector<OrderKey>> SchedulingStore::stuck_orders(store::Connection& c,
                                                            int max_attempts) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.stuck_orders, {std::int64_t{max_attempts}}));
  std::vector<OrderKey> out;
  for (const Row& r : rows) out.push_back({r.text(0), r.text(1), r.text(2)});
  return out;
}

Result<Progress> SchedulingStore::run_progress(store::Connection& c, std::int64_t run_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.run_remaining, {run_id}));
  const Row& r = rows.at(0);
  return Progress{r.i64(1) - r.i64(0), r.i64(1)};
}

}  // namespace onceorder::store
