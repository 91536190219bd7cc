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
      .expire_request = {"rc_expire_request",
                         OO_EXPIRE("request_receipts", "route, scope, idempotency_key")},
      .claim_request = {"rc_claim_request",
                        "INSERT INTO request_receipts (route, scope, idempotency_key, request) "
                        "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1"},
      .find_request = {"rc_find_request",
                       "SELECT request, answer, run_id FROM request_receipts WHERE route = $1 "
                       "AND scope = $2 AND idempotency_key = $3"},
      .answer_request = {"rc_answer_request",
                         "UPDATE request_receipts SET answer = $4, run_id = $5::bigint WHERE "
                         "route = $1 AND scope = $2 AND idempotency_key = $3 RETURNING 1"},
  };
  return sql;
}

}  // namespace onceorder::store::postgres
