// PostgreSQL's scheduling operations (SchedulingOps, store/scheduling_store.hpp): each is one
// statement of store/postgres/scheduling.sql, over JSON arrays and data-modifying CTEs, so a
// set of keys, a batch's completion or a production order is one round trip.
#include <map>
#include <set>
#include <string>

#include "onceorder/core/principal.hpp"
#include "onceorder/core/text.hpp"
#include "store/postgres/dialect.hpp"
#include "store/scheduling_store.hpp"
#include "store/sql_catalog.hpp"

namespace onceorder::store::postgres {
namespace {

class PgSchedulingOps final : public SchedulingOps {
 public:
  explicit PgSchedulingOps(const SqlCatalog& catalog)
      : insert_items_for_(catalog.get("sch_insert_items_for")),
        key_states_(catalog.get("sch_key_states")),
        complete_numbered_(catalog.get("sch_complete_numbered")),
        produce_standard_(catalog.get("sch_produce_standard")) {}

  Result<std::set<OrderKey>> insert_items_for(Connection& c, std::int64_t run_id,
                                              const std::vector<OrderKey>& keys,
                                              int max_attempts) const override {
    const std::string json = order_keys_json(keys);
    OO_ASSIGN_OR_RETURN(auto rows, c.query(insert_items_for_, {run_id, std::string_view(json),
                                                               std::int64_t{max_attempts}}));
    std::set<OrderKey> made;
    for (const Row& r : rows) made.insert(order_key_row(r, 0));
    return made;
  }

  // sch_key_states: the key, then sch_key_state's columns.
  Result<std::map<OrderKey, KeyState>> key_states(
      Connection& c, const std::vector<OrderKey>& keys) const override {
    constexpr size_t state_at = 3;
    const std::string json = order_keys_json(keys);
    OO_ASSIGN_OR_RETURN(auto rows, c.query(key_states_, {std::string_view(json)}));
    std::map<OrderKey, KeyState> out;
    for (const Row& r : rows) out.emplace(order_key_row(r, 0), key_state_row(r, state_at));
    return out;
  }

  // The batch as [item_id, owner, attempt, scope, title] rows; the statement fails unless
  // every claim was fenced and produced.
  Status complete_numbered(Connection& c, std::span<const NumberedClaim> claims,
                           Then then) const override {
    std::string json = "[";
    for (const NumberedClaim& nc : claims) {
      append_claim_row(json, nc.claim);
      json += ',';
      append_json_string(json, nc.scope);
      json += ',';
      append_json_string(json, nc.title);
      json += ']';
    }
    json += ']';
    return c
        .query(
            complete_numbered_,
            {std::string_view(json), static_cast<std::int64_t>(claims.size()),
             std::int64_t{kProductionScopeFormat.width}, std::int64_t{kProductionScopeFormat.radix},
             kProductionScopeFormat.max, kProductionPrincipal},
            then)
        .status();
  }

  // No row: the scope had no number left (its counter did not move), or the source order
  // is gone.
  Result<ProductionOrder> produce_numbered(Connection& c, const Claim& cl, std::string_view scope,
                                           std::string_view title) const override {
    OO_ASSIGN_OR_RETURN(
        auto rows, c.query(produce_standard_,
                           {scope, title, cl.item_id, std::string_view(cl.key.site_code),
                            std::string_view(cl.key.order_no), std::string_view(cl.key.lot_no),
                            std::int64_t{kProductionScopeFormat.width},
                            std::int64_t{kProductionScopeFormat.radix}, kProductionScopeFormat.max,
                            kProductionPrincipal}));
    if (rows.empty()) {
      return Status(Code::scope_exhausted, "no production order: scope '" + std::string(scope) +
                                               "' is exhausted or the source order vanished");
    }
    return production_row(rows[0]);
  }

 private:
  // (run_id, keys JSON array of [site, order, lot] in key order, max_attempts) → site, order,
  // lot per item made.
  Statement insert_items_for_;
  // (keys JSON array) → site, order, lot, then sch_key_state's columns, per key with a
  // source order.
  Statement key_states_;
  // (claims JSON array of [item_id, owner, attempt, scope, title], count, width, radix, max,
  // principal) fences every claim, takes each scope's numbers at once (in array order),
  // inserts the documents and production orders; fails (OO001) unless every claim was fenced
  // and produced.
  Statement complete_numbered_;
  // (scope, title, item_id, site, order, lot, width, radix, max, principal) → production_row's
  // columns; width, radix and max: a new scope's format.
  Statement produce_standard_;
};

}  // namespace

const SchedulingOps& scheduling_ops(const SqlCatalog& catalog) {
  static const PgSchedulingOps ops(catalog);
  return ops;
}

}  // namespace onceorder::store::postgres
