-- SQLite: order intake: receipts, placement and cancel.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it (IntakeSql), or for SQLite's own in store/sqlite/intake_ops.cpp.

-- name: in_insert_receipt
INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, normalization)
VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT DO NOTHING
RETURNING 1;

-- name: in_find_receipt
SELECT warehouse_id, normalized, normalization, outcome, order_id, shortages
FROM order_receipts
WHERE customer_id = ?1 AND idempotency_key = ?2;

-- name: in_lock_stock
SELECT sku_id, available, price_cents
FROM stock
WHERE warehouse_id = ?1 AND sku_id IN (SELECT value FROM json_each('[' || ?2 || ']'))
ORDER BY sku_id;

-- name: in_out_of_stock
UPDATE order_receipts
SET outcome = 'out_of_stock', shortages = ?3
WHERE customer_id = ?1 AND idempotency_key = ?2;

-- No DML in CTEs: the placement runs as one statement per row (store/sqlite/intake_ops.cpp).
-- name: in_insert_order
INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
VALUES (?1, ?2, ?3, ?4, 'placed', ?5, ?6)
RETURNING created_at;

-- name: in_insert_line
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
VALUES (?1, ?2, ?3, ?4, ?5);

-- name: in_deduct
UPDATE stock
SET available = available - ?3, reserved = reserved + ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE warehouse_id = ?1 AND sku_id = ?2 AND available >= ?3
RETURNING sku_id;

-- name: in_insert_source
INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES (?1, ?2, ?3, ?4);

-- name: in_receipt_placed
UPDATE order_receipts
SET outcome = 'placed', order_id = ?3
WHERE customer_id = ?1 AND idempotency_key = ?2;

-- name: in_get_order
SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents, created_at, principal
FROM orders
WHERE order_id = ?1;

-- name: in_get_lines
SELECT line_no, sku_id, quantity, unit_price_cents
FROM order_lines
WHERE order_id = ?1
ORDER BY line_no;

-- name: in_lock_order
SELECT status, warehouse_id, order_no FROM orders WHERE order_id = ?1;

-- name: in_lock_sources
SELECT lot_no FROM source_orders WHERE site_code = ?1 AND order_no = ?2 ORDER BY lot_no;

-- name: in_cancel_sources
UPDATE source_orders
SET cancelled_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE site_code = ?1 AND order_no = ?2 AND cancelled_at IS NULL;

-- name: in_abort_items
UPDATE schedule_items
SET status = 'aborted', error = 'the order was cancelled', lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE site_code = ?1 AND order_no = ?2 AND status IN ('wait', 'processing')
RETURNING item_id;

-- name: in_count_production
SELECT count(*) FROM production_orders WHERE site_code = ?1 AND order_no = ?2;

-- name: in_lock_reserved_stock
SELECT line_no, sku_id, quantity FROM order_lines WHERE order_id = ?1 ORDER BY sku_id;

-- name: in_restore
UPDATE stock
SET available = available + ?3, reserved = reserved - ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE warehouse_id = ?1 AND sku_id = ?2;

-- name: in_mark_cancelled
UPDATE orders
SET status = 'cancelled', cancelled_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE order_id = ?1;
