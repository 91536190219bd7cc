#include "store/audit_store.hpp"
#include "store/sqlite/sql_text.hpp"

namespace onceorder::store::sqlite {

// Timestamps are ISO 8601 UTC text of one width, so a text range is a time range (over the
// created_at indexes of migrations 14–16) and the first 16 characters are the minute.
#define OO_SQLITE_PER_MINUTE(TABLE, EXTRA)                                                  \
  "SELECT substr(created_at, 1, 16), count(*) FROM " TABLE " WHERE created_at >= ?1 " EXTRA \
  " GROUP BY 1 ORDER BY 1"

const AuditSql& audit_sql() {
  static const AuditSql sql{
      .record = {"au_record",
                 "INSERT INTO operator_actions (principal, role, action, target, status, summary, "
                 "outcome) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING action_id"},
      .finish = {"au_finish",
                 "UPDATE operator_actions SET status = ?2, target = ?3, summary = ?4 WHERE "
                 "action_id = ?1 RETURNING action_id"},
      .list =
          {"au_list",
           "SELECT action_id, at, principal, role, action, target, status, summary, outcome FROM "
           "operator_actions WHERE (?1 IS NULL OR principal = ?1) AND (?2 IS NULL OR "
           "action = ?2) AND action_id < ?3 ORDER BY action_id DESC LIMIT ?4"},
      .orders_per_minute = {"au_orders_per_minute", OO_SQLITE_PER_MINUTE("orders", "")},
      .items_per_minute = {"au_items_per_minute", OO_SQLITE_PER_MINUTE("production_orders", "")},
      .numbers_per_minute = {"au_numbers_per_minute",
                             OO_SQLITE_PER_MINUTE("documents", "AND origin = 'issued'")},
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
