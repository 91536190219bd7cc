#include "store/receipts_store.hpp"
#include "store/sqlite/sql_text.hpp"

namespace onceorder::store::sqlite {

// created_at is ISO 8601 text with milliseconds: compared as text, as it sorts.
#define OO_RETENTION_AGO OO_SQLITE_TIME("'now', '-' || (?1 / 1000.0) || ' seconds'")
#define OO_EXPIRE(TABLE, KEY)                                            \
  "DELETE FROM " TABLE " WHERE (" KEY ") IN (SELECT " KEY " FROM " TABLE \
  " WHERE created_at < " OO_RETENTION_AGO " ORDER BY created_at LIMIT ?2) RETURNING 1"

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
                        "VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING RETURNING 1"},
      .find_request = {"rc_find_request",
                       "SELECT request, answer, run_id FROM request_receipts WHERE route = ?1 "
                       "AND scope = ?2 AND idempotency_key = ?3"},
      .answer_request = {"rc_answer_request",
                         "UPDATE request_receipts SET answer = ?4, run_id = ?5 WHERE "
                         "route = ?1 AND scope = ?2 AND idempotency_key = ?3 RETURNING 1"},
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
