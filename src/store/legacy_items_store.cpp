#include "store/legacy_items_store.hpp"

namespace onceorder::store {
namespace {

// site, order, lot from `at`.
OrderKey key_at(const Row& r, size_t at) { return {r.text(at), r.text(at + 1), r.text(at + 2)}; }

// leg_pending's and leg_pending_before_resolution's row.
StagedItem staged_item(const Row& r) {
  return {r.i64(0),     static_cast<int>(r.i64(1)),
          key_at(r, 2), r.text(5),
          r.text(6),    r.is_null(7) ? std::nullopt : std::optional<std::string>(r.text(7))};
}

// leg_live_rows' row.
LiveItem live_item(const Row& r) { return {r.i64(0), key_at(r, 1), r.text(4), r.text(5)}; }

}  // namespace

LegacyItemsStore::LegacyItemsStore(const Dialect& dialect)
    : dialect_(dialect), sql_(dialect.legacy_items) {}

Status LegacyItemsStore::insert_staged(store::Connection& c, int line_no, const OrderKey& key,
                                       std::string_view status, std::string_view created_at,
                                       std::string_view run_id) {
  return c
      .query(sql_.insert_staged,
             {std::int64_t{line_no}, key.site_code, key.order_no, key.lot_no, status, created_at,
              run_id.empty() ? Param(nullptr) : Param(run_id)})
      .status();
}

Result<std::vector<StagedItem>> LegacyItemsStore::pending(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto has_resolution, c.query(sql_.has_resolution, {}));
  OO_ASSIGN_OR_RETURN(
      auto rows,
      c.query(has_resolution.at(0).i64(0) > 0 ? sql_.pending : sql_.pending_before_resolution, {}));
  std::vector<StagedItem> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(staged_item(r));
  return out;
}

Status LegacyItemsStore::lock_pending(store::Connection& c) {
  return dialect_.legacy_items_ops.lock_pending(c);
}

Result<std::vector<LiveItem>> LegacyItemsStore::live_rows(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.live_rows, {}));
  std::vector<LiveItem> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(live_item(r));
  return out;
}

Result<std::vector<OrderKey>> LegacyItemsStore::missing_sources(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.missing_sources, {}));
  std::vector<OrderKey> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(key_at(r, 0));
  return out;
}

Result<std::int64_t> LegacyItemsStore::insert_run(store::Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_run, {}));
  return rows.at(0).i64(0);
}

Result<std::int64_t> LegacyItemsStore::insert_item(store::Connection& c, std::int64_t run_id,
                                                   const OrderKey& key, std::string_view status,
                                                   std::string_view created_at,
                                                   std::string_view note) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.insert_item, {run_id, key.site_code, key.order_no,
                                                            key.lot_no, status, created_at, note}));
  return rows.at(0).i64(0);
}

Status LegacyItemsStore::mark_moved(store::Connection& c, std::int64_t legacy_id,
                                    std::int64_t item_id) {
  return c.query(sql_.mark_moved, {legacy_id, item_id}).status();
}

Status LegacyItemsStore::abort_item(store::Connection& c, std::int64_t item_id,
                                    std::string_view why) {
  return c.query(sql_.abort_item, {item_id, why}).status();
}

Result<std::int64_t> LegacyItemsStore::resolve_staged(store::Connection& c, const OrderKey& key,
                                                      std::string_view outcome) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.resolve_staged, {key.site_code, key.order_no, key.lot_no, outcome}));
  return static_cast<std::int64_t>(rows.size());
}

Result<std::vector<std::int64_t>> LegacyItemsStore::settle_moved(store::Connection& c,
                                                                 const OrderKey& key,
                                                                 std::string_view status,
                                                                 std::string_view note) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.settle_moved,
                                         {key.site_code, key.order_no, key.lot_no, status, note}));
  return first_column_i64(rows);
}

Status LegacyItemsStore::note_moved(store::Connection& c, std::int64_t item_id,
                                    std::string_view outcome) {
  return c.query(sql_.note_moved, {item_id, outcome}).status();
}

}  // namespace onceorder::store
