#include "store/receipts_store.hpp"

namespace onceorder::store::postgres {

// By primary key, a batch at a time; SKIP LOCKED: a receipt a request holds right now is
// taken by a later pass rather than waited for.
#define OO_EXPIRE(TABLE, KEY)                                                              \
  "DELETE FROM " TABLE " WHERE (" KEY ") IN (SELECT " KEY " FROM " TABLE                   \
  " WHERE created_at < now() - $1::bigint * interval '1 millisecond' ORDER BY created_at " \
  "LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING 1"

const ReceiptsSql& receipts_sql() {
  static const ReceiptsSql sql{
      .expire_order = {"rc_expire_order",
                       OO_EXPIRE("order_receipts", "customer_id, idempotency_key")},
      .expire_document = {"rc_expire_document",
                          OO_EXPIRE("document_receipts", "scope, idempotency_key")},
  };
  return sql;
}

}  // namespace onceorder::store::postgres
