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
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
