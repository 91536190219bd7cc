// SQLite's legacy item operations (LegacyItemsOps, store/legacy_items_store.hpp): a write
// transaction holds the database's one write lock from BEGIN IMMEDIATE, so no `legacy
// resolve` can run while `apply` moves rows, and a statement that would only lock them is not
// sent.
#include "store/legacy_items_store.hpp"
#include "store/sqlite/dialect.hpp"

namespace onceorder::store::sqlite {
namespace {

class SqliteLegacyItemsOps final : public LegacyItemsOps {
 public:
  Status lock_pending(Connection&) const override { return Status::Ok(); }
};

}  // namespace

const LegacyItemsOps& legacy_items_ops() {
  static const SqliteLegacyItemsOps ops;
  return ops;
}

}  // namespace onceorder::store::sqlite
