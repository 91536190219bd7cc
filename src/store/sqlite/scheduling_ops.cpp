// SQLite's scheduling operations (SchedulingOps, store/scheduling_store.hpp): no DML in CTEs,
// and one writer at a time, so each is the same steps as PostgreSQL's one statement, sent one
// by one in the caller's transaction: the extra statements cost no lock time, only calls into
// the library.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onceorder/core/principal.hpp"
#include "onceorder/core/text.hpp"
#include "store/numbering_store.hpp"
#include "store/scheduling_store.hpp"
#include "store/sql_catalog.hpp"
#include "store/sqlite/dialect.hpp"

namespace onceorder::store::sqlite {
namespace {

class SqliteSchedulingOps final : public SchedulingOps {
 public:
  SqliteSchedulingOps(const SqlCatalog& catalog, const SchedulingSql& sql)
      : sql_(sql),
        insert_production_(catalog.get("sch_insert_production")),
        insert_production_many_(catalog.get("sch_insert_production_many")) {}

  // Key by key (sch_insert_item_for).
  Result<std::set<OrderKey>> insert_items_for(Connection& c, std::int64_t run_id,
                                              const std::vector<OrderKey>& keys,
                                              int max_attempts) const override {
    std::set<OrderKey> made;
    for (const OrderKey& k : keys) {
      OO_ASSIGN_OR_RETURN(
          auto rows, c.query(sql_.insert_item_for,
                             {run_id, std::string_view(k.site_code), std::string_view(k.order_no),
                              std::string_view(k.lot_no), std::int64_t{max_attempts}}));
      if (!rows.empty()) made.insert(k);
    }
    return made;
  }

  // Key by key (sch_key_state).
  Result<std::map<OrderKey, KeyState>> key_states(
      Connection& c, const std::vector<OrderKey>& keys) const override {
    std::map<OrderKey, KeyState> out;
    for (const OrderKey& k : keys) {
      OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.key_state, {std::string_view(k.site_code),
                                                              std::string_view(k.order_no),
                                                              std::string_view(k.lot_no)}));
      if (!rows.empty()) out.emplace(k, key_state_row(rows[0], 0));
    }
    return out;
  }

  // The fences (sch_fence_many), then per scope (claim order kept within it) the counter
  // moved once, the documents and the production orders in one statement each. The
  // transaction commits after, so `then` has nothing to carry.
  Status complete_numbered(Connection& c, std::span<const NumberedClaim> claims,
                           Then /*then*/) const override {
    const std::string fences = fence_json(claims);
    OO_ASSIGN_OR_RETURN(auto fenced, c.query(sql_.fence_many, {std::string_view(fences)}));
    if (fenced.size() != claims.size())
      return Status(Code::conflict, "a claim in the batch was lost");
    std::map<std::string_view, std::vector<const NumberedClaim*>> by_scope;
    for (const NumberedClaim& nc : claims) by_scope[nc.scope].push_back(&nc);
    NumberingStore numbering(dialect());
    for (const auto& [scope, group] : by_scope)
      OO_RETURN_IF_ERROR(produce_scope(c, numbering, scope, group));
    return Status::Ok();
  }

  // The next number (the numbering store's ensure_scope and allocate), then
  // sch_insert_production.
  Result<ProductionOrder> produce_numbered(Connection& c, const Claim& cl, std::string_view scope,
                                           std::string_view title) const override {
    NumberingStore numbering(dialect());
    OO_RETURN_IF_ERROR(numbering.ensure_scope(c, scope, kProductionScopeFormat));
    OO_ASSIGN_OR_RETURN(auto doc,
                        numbering.allocate(c, scope, {title, kProductionPrincipal}, Then::stay));
    if (!doc)
      return Status(Code::scope_exhausted,
                    "production scope '" + std::string(scope) + "' is exhausted");
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(insert_production_,
                           {cl.item_id, scope, doc->value, std::string_view(doc->number),
                            std::string_view(cl.key.site_code), std::string_view(cl.key.order_no),
                            std::string_view(cl.key.lot_no)}));
    if (rows.empty()) return Status(Code::internal, "source order vanished during production");
    return production_row(rows[0]);
  }

 private:
  // One scope's part of complete_numbered: `group`'s numbers at once, then their documents
  // and production orders.
  Status produce_scope(Connection& c, NumberingStore& numbering, std::string_view scope,
                       const std::vector<const NumberedClaim*>& group) const {
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
    std::string json = "[";
    for (size_t i = 0; i < group.size(); ++i) {
      const Claim& cl = group[i]->claim;
      json += json.size() > 1 ? ",[" : "[";
      json += std::to_string(cl.item_id);
      for (const std::string* text : {&cl.key.site_code, &cl.key.order_no, &cl.key.lot_no}) {
        json += ',';
        append_json_string(json, *text);
      }
      json += ',' + std::to_string(docs[i].value) + ',';
      append_json_string(json, docs[i].number);
      json += ']';
    }
    json += ']';
    OO_ASSIGN_OR_RETURN(auto produced,
                        c.query(insert_production_many_, {scope, std::string_view(json)}));
    if (static_cast<std::int64_t>(produced.size()) != k)
      return Status(Code::internal, "source order vanished during production");
    return Status::Ok();
  }

  const SchedulingSql& sql_;
  // (item_id, scope, value, number, site, order, lot) → production_row's columns: a
  // production order numbered already.
  Statement insert_production_;
  // (scope, JSON array of [item_id, site, order, lot, value, number]) → item_id per
  // production order: a batch's, numbered already.
  Statement insert_production_many_;
};

}  // namespace

const SchedulingOps& scheduling_ops(const SqlCatalog& catalog, const SchedulingSql& sql) {
  static const SqliteSchedulingOps ops(catalog, sql);
  return ops;
}

}  // namespace onceorder::store::sqlite
