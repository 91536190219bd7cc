-- PostgreSQL: listings and lookups for the API.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: ls_list_orders
SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), principal
FROM orders
WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR warehouse_id = $2) AND order_id <
    $3
ORDER BY order_id DESC
LIMIT $4;

-- name: ls_list_customer_orders
SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), principal
FROM orders
WHERE customer_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR warehouse_id
    = $3) AND order_id < $4
ORDER BY order_id DESC
LIMIT $5;

-- name: ls_order_receipts
SELECT idempotency_key, warehouse_id, normalized, normalization, coalesce(outcome, ''),
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM order_receipts
WHERE customer_id = $1 AND order_id = $2
ORDER BY created_at, idempotency_key;

-- name: ls_list_skus
SELECT s.sku_id, s.available, s.reserved, s.price_cents
FROM stock s
WHERE s.warehouse_id = $1 AND s.sku_id > $2
ORDER BY s.sku_id
LIMIT $3;

-- name: ls_list_warehouses
WITH RECURSIVE w (id, n) AS (
  SELECT (SELECT min(warehouse_id) FROM stock WHERE warehouse_id > $1::bigint), 1
  UNION ALL
  SELECT (SELECT min(s.warehouse_id) FROM stock s WHERE s.warehouse_id > w.id), w.n + 1
  FROM w
  WHERE w.id IS NOT NULL AND w.n < $2::bigint
)
SELECT w.id, count(*), sum(s.available)::bigint, sum(s.reserved)::bigint
FROM w
JOIN stock s ON s.warehouse_id = w.id
GROUP BY w.id
ORDER BY w.id;

-- One statement, so that the page and the last position read come from one snapshot
-- and one horizon.
-- name: ls_follow_orders
WITH h AS MATERIALIZED (SELECT oo_event_horizon() AS x), s AS MATERIALIZED (
  SELECT e.tx, e.event_id, e.ref
  FROM events e, h
  WHERE (e.tx, e.event_id) > ($1::bigint, $2::bigint) AND e.tx < h.x AND e.type = 'order.placed'
  ORDER BY e.tx, e.event_id
  LIMIT $7
),
m AS (
  SELECT s.tx, s.event_id, o.order_id, o.order_no, o.status, o.customer_id, o.warehouse_id,
      o.total_cents, o.created_at, o.principal
  FROM s
  JOIN orders o ON o.order_id = s.ref
  WHERE ($3::text IS NULL OR o.status = $3) AND ($4::bigint IS NULL OR o.customer_id = $4) AND ($5::bigint
      IS NULL OR o.warehouse_id = $5)
  ORDER BY s.tx, s.event_id
  LIMIT $6
)
SELECT 'o', m.tx, m.event_id, m.order_id, m.order_no, m.status, m.customer_id, m.warehouse_id,
    m.total_cents, to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    m.principal
FROM m
UNION ALL (
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
WHERE s.scope > $1
ORDER BY s.scope
LIMIT $2;

-- name: ls_list_claims
SELECT i.item_id, i.run_id, r.kind, i.site_code, i.order_no, i.lot_no, i.attempt, coalesce(i.owner,
    ''), coalesce(to_char(i.lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ''),
    CASE WHEN i.lease_until IS NULL OR i.lease_until < now() THEN 1 ELSE 0 END
FROM schedule_items i
JOIN schedule_runs r ON r.run_id = i.run_id
WHERE i.status = 'processing' AND (i.lease_until IS NULL OR i.lease_until < now() + $1::bigint *
    interval '1 millisecond') AND i.item_id > $2
ORDER BY i.item_id
LIMIT $3;

-- name: ls_item_events
SELECT e.event_id, e.item_id, i.run_id, i.lot_no, e.kind, e.status, e.attempt, e.owner,
    to_char(e.lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), e.detail,
    to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), p.document_number
FROM schedule_items i
JOIN schedule_item_events e ON e.item_id = i.item_id
LEFT JOIN production_orders p ON p.item_id = e.item_id AND e.kind = 'produced'
WHERE e.item_id = $1
ORDER BY e.event_id
LIMIT $2;

-- name: ls_order_head
SELECT order_no, customer_id, warehouse_id, status, to_char(created_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(cancelled_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM orders
WHERE order_id = $1;

-- name: ls_order_sources
SELECT lot_no, quantity, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(cancelled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM source_orders
WHERE site_code = $1::text AND order_no = $2::text
ORDER BY length(lot_no), lot_no;

-- name: ls_order_events
SELECT e.event_id, e.item_id, i.run_id, i.lot_no, e.kind, e.status, e.attempt, e.owner,
    to_char(e.lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), e.detail,
    to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), p.document_number
FROM schedule_items i
JOIN schedule_item_events e ON e.item_id = i.item_id
LEFT JOIN production_orders p ON p.item_id = e.item_id AND e.kind = 'produced'
WHERE i.site_code = $1::text AND i.order_no = $2::text
ORDER BY e.event_id
LIMIT $3;
