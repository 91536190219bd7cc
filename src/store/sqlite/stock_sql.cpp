#include "store/sqlite/sql_text.hpp"
#include "store/stock_store.hpp"

namespace onceorder::store::sqlite {

const StockSql& stock_sql() {
  static const StockSql sql{
      .insert_sku = {"in_insert_sku",
                     "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) VALUES (?1, "
                     "?2, ?3, ?4) ON CONFLICT DO NOTHING RETURNING 1"},
      .lock_sku = {"in_lock_sku",
                   "SELECT available FROM stock WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .set_price = {"in_set_price", "UPDATE stock SET price_cents = ?3, updated_at = " OO_SQLITE_NOW
                                    " WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .adjust = {"in_adjust",
                 "UPDATE stock SET available = available + ?3, updated_at = " OO_SQLITE_NOW
                 " WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .get_sku = {"in_get_sku",
                  "SELECT s.available, s.reserved, s.price_cents FROM stock s WHERE s.warehouse_id "
                  "= ?1 AND s.sku_id = ?2"},
      .ledger = {"in_ledger",
                 "INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason, order_id, "
                 "line_no) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
