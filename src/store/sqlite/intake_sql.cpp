#include "store/intake_store.hpp"

namespace onceorder::store::sqlite {

const IntakeSql& intake_sql() {
  static const IntakeSql sql{
      .insert_receipt =
          {"in_insert_receipt",
           "INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, "
           "normalization) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING RETURNING 1"},
      .find_receipt =
          {"in_find_receipt",
           "SELECT warehouse_id, normalized, normalization, outcome, order_id, shortages FROM "
           "order_receipts WHERE customer_id = ?1 AND idempotency_key = ?2"},
      .lock_stock = {"in_lock_stock",
                     "SELECT sku_id, available, price_cents FROM stock WHERE warehouse_id = ?1 AND "
                     "sku_id IN (SELECT value FROM json_each('[' || ?2 || ']')) ORDER BY sku_id"},
      .out_of_stock = {"in_out_of_stock",
                       "UPDATE order_receipts SET outcome = 'out_of_stock', shortages = ?3 WHERE "
                       "customer_id = ?1 AND idempotency_key = ?2"},
      // No DML in CTEs: the placement runs as one statement per row.
      .insert_order = {"in_insert_order",
                       "INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, "
                       "total_cents) VALUES (?1, ?2, ?3, ?4, 'placed', ?5) RETURNING created_at"},
      .insert_line = {"in_insert_line",
                      "INSERT INTO order_lines (order_id, line_no, sku_id, quantity, "
                      "unit_price_cents) VALUES (?1, ?2, ?3, ?4, ?5)"},
      .insert_reservation = {"in_insert_reservation",
                             "INSERT INTO reservations (order_id, line_no, warehouse_id, sku_id, "
                             "quantity, status) VALUES (?1, ?2, ?3, ?4, ?5, 'active')"},
      .deduct = {"in_deduct",
                 "UPDATE stock SET available = available - ?3, updated_at = "
                 "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE warehouse_id = ?1 AND sku_id = ?2 "
                 "AND available >= ?3 RETURNING sku_id"},
      .ledger = {"in_ledger",
                 "INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason, order_id, "
                 "line_no) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
      .insert_source = {"in_insert_source",
                        "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES "
                        "(?1, ?2, ?3, ?4)"},
      .receipt_placed = {"in_receipt_placed",
                         "UPDATE order_receipts SET outcome = 'placed', order_id = ?3 WHERE "
                         "customer_id = ?1 AND idempotency_key = ?2"},
      .get_order = {"in_get_order",
                    "SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents, "
                    "created_at FROM orders WHERE order_id = ?1"},
      .get_lines = {"in_get_lines",
                    "SELECT line_no, sku_id, quantity, unit_price_cents FROM order_lines WHERE "
                    "order_id = ?1 ORDER BY line_no"},
      .lock_order = {"in_lock_order",
                     "SELECT status, warehouse_id, order_no FROM orders WHERE order_id = ?1"},
      .lock_sources = {"in_lock_sources",
                       "SELECT lot_no FROM source_orders WHERE site_code = ?1 AND order_no = ?2 "
                       "ORDER BY lot_no"},
      .cancel_sources = {"in_cancel_sources",
                         "UPDATE source_orders SET cancelled_at = strftime('%Y-%m-%dT%H:%M:%fZ', "
                         "'now') WHERE site_code = ?1 AND order_no = ?2 AND cancelled_at IS NULL"},
      .abort_items =
          {"in_abort_items",
           "UPDATE schedule_items SET status = 'aborted', error = 'the order was cancelled', "
           "lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE site_code "
           "= ?1 AND order_no = ?2 AND status IN ('wait', 'processing') RETURNING item_id"},
      .count_production =
          {"in_count_production",
           "SELECT count(*) FROM production_orders WHERE site_code = ?1 AND order_no = ?2"},
      .lock_order_stock = {"in_lock_order_stock",
                           "SELECT s.sku_id FROM stock s JOIN reservations r ON r.warehouse_id = "
                           "s.warehouse_id AND r.sku_id = s.sku_id WHERE r.order_id = ?1 AND "
                           "r.status = 'active' ORDER BY s.sku_id"},
      .release = {"in_release",
                  "UPDATE reservations SET status = 'released', released_at = "
                  "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE order_id = ?1 AND status = 'active' "
                  "RETURNING line_no, warehouse_id, sku_id, quantity"},
      .restore = {"in_restore",
                  "UPDATE stock SET available = available + ?3, updated_at = "
                  "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .mark_cancelled = {"in_mark_cancelled",
                         "UPDATE orders SET status = 'cancelled', cancelled_at = "
                         "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE order_id = ?1"},
      .insert_sku = {"in_insert_sku",
                     "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) VALUES (?1, "
                     "?2, ?3, ?4) ON CONFLICT DO NOTHING RETURNING 1"},
      .lock_sku = {"in_lock_sku",
                   "SELECT available FROM stock WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .set_price =
          {"in_set_price",
           "UPDATE stock SET price_cents = ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
           "WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .adjust = {"in_adjust",
                 "UPDATE stock SET available = available + ?3, updated_at = "
                 "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE warehouse_id = ?1 AND sku_id = ?2"},
      .get_sku =
          {"in_get_sku",
           "SELECT s.available, coalesce((SELECT sum(r.quantity) FROM reservations r WHERE "
           "r.warehouse_id = s.warehouse_id AND r.sku_id = s.sku_id AND r.status = 'active'), 0), "
           "s.price_cents FROM stock s WHERE s.warehouse_id = ?1 AND s.sku_id = ?2"},
      .lease_candidate =
          {"in_lease_candidate",
           "SELECT node_id, lease_until_ms, CAST((julianday('now') - 2440587.5) * 86400000 AS "
           "INTEGER) FROM id_nodes WHERE lease_until_ms < CAST((julianday('now') - 2440587.5) * "
           "86400000 AS INTEGER) ORDER BY lease_until_ms, node_id LIMIT 1"},
      .lease_take = {"in_lease_take",
                     "UPDATE id_nodes SET holder = ?2, lease_until_ms = CAST((julianday('now') - "
                     "2440587.5) * 86400000 AS INTEGER) + ?3 WHERE node_id = ?1 AND lease_until_ms "
                     "= ?4 RETURNING lease_until_ms"},
      .lease_renew =
          {"in_lease_renew",
           "UPDATE id_nodes SET lease_until_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS "
           "INTEGER) + ?3 WHERE node_id = ?1 AND holder = ?2 AND lease_until_ms = ?4 AND "
           "lease_until_ms > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) RETURNING "
           "lease_until_ms, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"},
      .lease_release = {"in_lease_release",
                        "UPDATE id_nodes SET lease_until_ms = CAST((julianday('now') - 2440587.5) "
                        "* 86400000 AS INTEGER) WHERE node_id = ?1 AND holder = ?2"},
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
