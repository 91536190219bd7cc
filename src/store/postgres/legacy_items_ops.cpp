// PostgreSQL's legacy item operations (LegacyItemsOps, store/legacy_items_store.hpp): `apply`
// locks the staged rows it moves, so that a concurrent `legacy resolve` waits and the rows
// move with the word `apply` read.
#include "store/legacy_items_store.hpp"
#include "store/postgres/dialect.hpp"
#include "store/sql_catalog.hpp"

namespace onceorder::store::postgres {
namespace {

class PgLegacyItemsOps final : public LegacyItemsOps {
 public:
  explicit PgLegacyItemsOps(const SqlCatalog& sql) : lock_pending_(sql.get("leg_lock_pending")) {}

  Status lock_pending(Connection& c) const override { return c.query(lock_pending_, {}).status(); }

 private:
  Statement lock_pending_;  // the staged rows not moved yet, locked
};

}  // namespace

const LegacyItemsOps& legacy_items_ops(const SqlCatalog& sql) {
  static const PgLegacyItemsOps ops(sql);
  return ops;
}

}  // namespace onceorder::store::postgres
