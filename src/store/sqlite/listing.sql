-- SQLite: listings and lookups for the API.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: ls_list_orders
SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents, created_at, principal
FROM orders
WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR warehouse_id = ?2) AND order_id < ?3
ORDER BY order_id DESC
LIMIT ?4;

-- name: ls_list_customer_orders
SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents, created_at, principal
FROM orders
WHERE customer_id = ?1 AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR warehouse_id = ?3) AND
    order_id < ?4
ORDER BY order_id DESC
LIMIT ?5;

-- name: ls_order_receipts
SELECT idempotency_key, warehouse_id, normalized, normalization, coalesce(outcome, ''), created_at
FROM order_receipts
WHERE customer_id = ?1 AND order_id = ?2
ORDER BY created_at, idempotency_key;

-- name: ls_list_skus
SELECT s.sku_id, s.available, s.reserved, s.price_cents
FROM stock s
WHERE s.warehouse_id = ?1 AND s.sku_id > ?2
ORDER BY s.sku_id
LIMIT ?3;

-- name: ls_list_warehouses
WITH RECURSIVE w (id, n) AS (
  SELECT (SELECT min(warehouse_id) FROM stock WHERE warehouse_id > ?1), 1
  UNION ALL
  SELECT (SELECT min(s.warehouse_id) FROM stock s WHERE s.warehouse_id > w.id), w.n + 1
  FROM w
  WHERE w.id IS NOT NULL AND w.n < ?2
)
SELECT w.id, count(*), sum(s.available), sum(s.reserved)
FROM w
JOIN stock s ON s.warehouse_id = w.id
GROUP BY w.id
ORDER BY w.id;

-- One writer: event_id order is commit order, every committed event is visible.
-- name: ls_follow_orders
WITH s AS (
  SELECT e.tx, e.event_id, e.ref
  FROM events e
  WHERE (e.tx, e.event_id) > (?1, ?2) AND e.type = 'order.placed'
  ORDER BY e.tx, e.event_id
  LIMIT ?7
),
m AS (
  SELECT s.tx, s.event_id, o.order_id, o.order_no, o.status, o.customer_id, o.warehouse_id,
      o.total_cents, o.created_at, o.principal
  FROM s
  JOIN orders o ON o.order_id = s.ref
  WHERE (?3 IS NULL OR o.status = ?3) AND (?4 IS NULL OR o.customer_id = ?4) AND (?5 IS NULL OR
      o.warehouse_id = ?5)
  ORDER BY s.tx, s.event_id
  LIMIT ?6
)
SELECT 'o', m.tx, m.event_id, m.order_id, m.order_no, m.status, m.customer_id, m.warehouse_id,
    m.total_cents, m.created_at, m.principal
FROM m
UNION ALL
SELECT *
FROM (
  SELECT 'p', s.tx, s.event_id, 0, '', '', 0, 0, 0, '', NULL
  FROM s
  ORDER BY s.tx DESC, s.event_id DESC
  LIMIT 1
);

-- name: ls_list_scopes
SELECT s.scope, s.width, s.radix, s.max_value, s.last_value, (
  SELECT count(*)
  FROM documents d
  WHERE d.scope = s.scope AND d.origin = 'issued'
), (
  SELECT count(*)
  FROM documents d
  WHERE d.scope = s.scope AND d.origin = 'legacy'
), (
  SELECT count(*)
  FROM documents d
  WHERE d.scope = s.scope AND d.origin = 'issued' AND d.value > 1 AND NOT EXISTS (
    SELECT 1
    FROM documents p
    WHERE p.scope = d.scope AND p.value = d.value - 1
  )
) + CASE WHEN s.last_value <> coalesce((SELECT max(d.value) FROM documents d WHERE d.scope = s.scope),
    0) THEN 1 ELSE 0 END, s.last_value - (
  SELECT count(*)
  FROM documents d
  WHERE d.scope = s.scope AND d.value <= s.last_value
)
FROM doc_scopes s
WHERE s.scope > ?1
ORDER BY s.scope
LIMIT ?2;

-- name: ls_list_claims
SELECT i.item_id, i.run_id, r.kind, i.site_code, i.order_no, i.lot_no, i.attempt, coalesce(i.owner,
    ''), coalesce(i.lease_until, ''), CASE WHEN i.lease_until IS NULL OR i.lease_until < strftime('%Y-%m-%dT%H:%M:%fZ',
    'now') THEN 1 ELSE 0 END
FROM schedule_items i INDEXED BY schedule_items_processing
JOIN schedule_runs r ON r.run_id = i.run_id
WHERE i.status = 'processing' AND (i.lease_until IS NULL OR i.lease_until < strftime('%Y-%m-%dT%H:%M:%fZ',
    'now', '+' || (?1 / 1000.0) || ' seconds')) AND i.item_id > ?2
ORDER BY i.item_id
LIMIT ?3;

-- name: ls_item_events
SELECT e.event_id, e.item_id, i.run_id, i.lot_no, e.kind, e.status, e.attempt, e.owner,
    e.lease_until, e.detail, e.at, p.document_number
FROM schedule_items i
JOIN schedule_item_events e ON e.item_id = i.item_id
LEFT JOIN production_orders p ON p.item_id = e.item_id AND e.kind = 'produced'
WHERE e.item_id = ?1
ORDER BY e.event_id
LIMIT ?2;

-- name: ls_order_head
SELECT order_no, customer_id, warehouse_id, status, created_at, cancelled_at
FROM orders
WHERE order_id = ?1;

-- name: ls_order_sources
SELECT lot_no, quantity, created_at, cancelled_at
FROM source_orders
WHERE site_code = ?1 AND order_no = ?2
ORDER BY length(lot_no), lot_no;

-- name: ls_order_events
SELECT e.event_id, e.item_id, i.run_id, i.lot_no, e.kind, e.status, e.attempt, e.owner,
    e.lease_until, e.detail, e.at, p.document_number
FROM schedule_items i
JOIN schedule_item_events e ON e.item_id = i.item_id
LEFT JOIN production_orders p ON p.item_id = e.item_id AND e.kind = 'produced'
WHERE i.site_code = ?1 AND i.order_no = ?2
ORDER BY e.event_id
LIMIT ?3;
