#include "store/receipts_store.hpp"

namespace onceorder::store {

ReceiptsStore::ReceiptsStore(const Dialect& dialect) : sql_(dialect.receipts) {}

Result<std::int64_t> ReceiptsStore::expire(store::Connection& c, ReceiptKind kind,
                                           std::chrono::milliseconds retention, int batch) {
  const Statement& stmt = kind == ReceiptKind::order ? sql_.expire_order : sql_.expire_document;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(stmt, {static_cast<std::int64_t>(retention.count()),
                                                static_cast<std::int64_t>(batch)}));
  return static_cast<std::int64_t>(rows.size());
}

}  // namespace onceorder::store
