#include "store/scheduling_store.hpp"

#include <map>
#include <string>

#include "onceorder/core/text.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {
namespace {

using store::Param;
using store::Row;

std::string_view sv(const std::string& s) { return s; }

// run_id, kind, status, owner, error, created_at, finished_at, wait, processing, success,
// failed, aborted: sch_get_run's and sch_list_runs' columns.
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
// created_at, updated_at: sch_list_items' columns.
ScheduleItem item_from(const Row& r) {
  constexpr size_t key_at = 2;
  ScheduleItem i;
  i.item_id = r.i64(0);
  i.run_id = r.i64(1);
  i.key = order_key_row(r, key_at);
  i.status = parse_item_status(r.text(5)).value_or(ItemStatus::wait);
  i.attempt = static_cast<int>(r.i64(6));
  i.owner = r.text(7);
  i.lease_until = r.text(8);
  i.error = r.text(9);
  i.created_at = r.text(10);
  i.updated_at = r.text(11);
  return i;
}

// item_id, run_id, site, order, lot, attempt: sch_claim's columns; the owner is the caller.
Claim claim_from(const Row& r, const std::string& owner) {
  constexpr size_t key_at = 2;
  return Claim{r.i64(0), r.i64(1), order_key_row(r, key_at), static_cast<int>(r.i64(5)), owner};
}

// site, order, lot, failed counted, failed in all, requeues' last time, last error, last
// failure time: sch_list_exhausted's columns.
ExhaustedKey exhausted_from(const Row& r) {
  return {order_key_row(r, 0), r.i64(3), r.i64(4), r.text(5), r.text(6), r.text(7)};
}

Param opt(const std::optional<std::string>& s) { return s ? Param(sv(*s)) : Param(nullptr); }

// Claims (or numbered claims) as fence_json writes them.
template <typename Each>
std::string claims_json(size_t n, Each claim_at) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) {
    append_claim_row(out, claim_at(i));
    out += ']';
  }
  return out + ']';
}

}  // namespace

OrderKey order_key_row(const Row& r, size_t at) {
  return {r.text(at), r.text(at + 1), r.text(at + 2)};
}

KeyState key_state_row(const Row& r, size_t at) {
  return KeyState{true,          r.boolean(at),     r.boolean(at + 1),
                  r.i64(at + 2), r.boolean(at + 3), r.boolean(at + 4)};
}

ProductionOrder production_row(const Row& r) {
  constexpr size_t item_at = 3;
  return ProductionOrder{order_key_row(r, 0), r.i64(item_at),     r.i64(item_at + 1),
                         r.text(item_at + 2), r.i64(item_at + 3), r.text(item_at + 4),
                         r.text(item_at + 5)};
}

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

std::string fence_json(std::span<const Claim> claims) {
  return claims_json(claims.size(), [&](size_t i) -> const Claim& { return claims[i]; });
}

std::string fence_json(std::span<const NumberedClaim> claims) {
  return claims_json(claims.size(), [&](size_t i) -> const Claim& { return claims[i].claim; });
}

void append_claim_row(std::string& out, const Claim& cl) {
  out += out.size() > 1 ? ",[" : "[";
  out += std::to_string(cl.item_id);
  out += ',';
  append_json_string(out, cl.owner);
  out += ',';
  out += std::to_string(cl.attempt);
}

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
  return key_state_row(rows[0], 0);
}

Result<std::set<OrderKey>> SchedulingStore::insert_items_for(store::Connection& c,
                                                             std::int64_t run_id,
                                                             const std::vector<OrderKey>& keys,
                                                             int max_attempts) {
  return dialect_.scheduling_ops.insert_items_for(c, run_id, keys, max_attempts);
}

Result<std::map<OrderKey, KeyState>> SchedulingStore::key_states(
    store::Connection& c, const std::vector<OrderKey>& keys) {
  return dialect_.scheduling_ops.key_states(c, keys);
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
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(exhausted_from(r));
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
  for (const Row& r : rows) out.push_back(claim_from(r, owner));
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
  const std::string json = fence_json(claims);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.fence_many, {std::string_view(json)}));
  return static_cast<std::int64_t>(rows.size());
}

Status SchedulingStore::complete_numbered(store::Connection& c,
                                          std::span<const NumberedClaim> claims, store::Then then) {
  return dialect_.scheduling_ops.complete_numbered(c, claims, then);
}

Result<bool> SchedulingStore::abort_if_cancelled(store::Connection& c, const Claim& cl) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.abort_if_cancelled,
                                         {cl.item_id, sv(cl.owner), std::int64_t{cl.attempt}}));
  return !rows.empty();
}

Result<ProductionOrder> SchedulingStore::produce_numbered(store::Connection& c, const Claim& cl,
                                                          std::string_view scope,
                                                          std::string_view title) {
  return dialect_.scheduling_ops.produce_numbered(c, cl, scope, title);
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
  for (const Row& r : rows) out.push_back(production_row(r));
  return out;
}

Result<std::vector<OrderKey>> SchedulingStore::stuck_orders(store::Connection& c,
                                                            int max_attempts) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.stuck_orders, {std::int64_t{max_attempts}}));
  std::vector<OrderKey> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(order_key_row(r, 0));
  return out;
}

Result<Progress> SchedulingStore::run_progress(store::Connection& c, std::int64_t run_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.run_remaining, {run_id}));
  const Row& r = rows.at(0);
  return Progress{r.i64(1) - r.i64(0), r.i64(1)};
}

}  // namespace onceorder::store
