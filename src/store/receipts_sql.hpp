// SQL for receipt expiry, per engine (store/<engine>/receipts_sql.cpp).
#pragma once

#include "onceorder/store.hpp"

namespace onceorder::store {

struct ReceiptsSql {
  // (retention ms, batch) → one row per receipt deleted, at most `batch`, oldest first.
  store::Statement expire_order;
  store::Statement expire_document;
};

}  // namespace onceorder::store
