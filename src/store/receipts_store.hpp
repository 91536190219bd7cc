// SQL for receipt expiry: one engine-neutral class over a per-engine pair of statements
// (store/<engine>/receipts_sql.cpp). Methods run in the caller's transaction.
//
// Thread-safety: immutable after construction; the Connection passed in is the caller's.
#pragma once

#include <chrono>
#include <cstdint>

#include "onceorder/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct ReceiptsSql {
  // (retention ms, batch) → one row per receipt deleted, at most `batch`, oldest first.
  store::Statement expire_order;
  store::Statement expire_document;
};

enum class ReceiptKind { order, document };

class ReceiptsStore {
 public:
  explicit ReceiptsStore(const Dialect& dialect);

  // Deletes at most `batch` receipts of `kind` created longer than `retention` ago, oldest
  // first: how many.
  Result<std::int64_t> expire(store::Connection& c, ReceiptKind kind,
                              std::chrono::milliseconds retention, int batch);

 private:
  const ReceiptsSql& sql_;
};

}  // namespace onceorder::store
