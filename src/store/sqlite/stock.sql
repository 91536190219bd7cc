-- SQLite: stock rows and their ledger.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: in_insert_sku
INSERT INTO stock (warehouse_id, sku_id, available, price_cents)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT DO NOTHING
RETURNING 1;

-- name: in_lock_sku
SELECT available FROM stock WHERE warehouse_id = ?1 AND sku_id = ?2;

-- name: in_set_price
UPDATE stock
SET price_cents = ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE warehouse_id = ?1 AND sku_id = ?2;

-- name: in_adjust
UPDATE stock
SET available = available + ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE warehouse_id = ?1 AND sku_id = ?2;

-- name: in_get_sku
SELECT s.available, s.reserved, s.price_cents
FROM stock s
WHERE s.warehouse_id = ?1 AND s.sku_id = ?2;

-- name: in_ledger
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason, order_id, line_no)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);
