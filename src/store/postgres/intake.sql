-- PostgreSQL: order intake: receipts, placement and cancel.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it (IntakeSql), or for PostgreSQL's own in store/postgres/intake_ops.cpp.

-- name: in_insert_receipt
INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, normalization)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING
RETURNING 1;

-- name: in_find_receipt
SELECT warehouse_id, normalized, normalization, outcome, order_id, shortages
FROM order_receipts
WHERE customer_id = $1 AND idempotency_key = $2;

-- name: in_lock_stock may_wait
SELECT sku_id, available, price_cents
FROM stock
WHERE warehouse_id = $1::bigint AND sku_id = ANY (string_to_array($2, ',')::bigint[])
ORDER BY sku_id FOR
UPDATE;

-- The outer read finds every row that exists; the lateral one locks it unless another
-- transaction holds it, and then reads the locked (latest) version.
-- name: in_lock_free_stock
SELECT s.sku_id, x.available, x.price_cents
FROM stock s
LEFT JOIN LATERAL (
  SELECT y.available, y.price_cents
  FROM stock y
  WHERE y.warehouse_id = s.warehouse_id AND y.sku_id = s.sku_id FOR
  UPDATE SKIP LOCKED
) x ON true
WHERE s.warehouse_id = $1::bigint AND s.sku_id = ANY (string_to_array($2, ',')::bigint[])
ORDER BY s.sku_id;

-- name: in_out_of_stock
UPDATE order_receipts
SET outcome = 'out_of_stock', shortages = $3
WHERE customer_id = $1 AND idempotency_key = $2;

-- The source orders' site ($10) and lots ($11) come from source_order_key, the
-- rule's one home.
-- name: in_place_all
WITH l AS (
  SELECT t.sku_id, t.quantity, t.price, t.lot_no, t.line_no
  FROM unnest(string_to_array($6, ',')::bigint[], string_to_array($7, ',')::bigint[],
      string_to_array($8, ',')::bigint[], string_to_array($11::text, ',')) WITH ORDINALITY AS t(sku_id,
      quantity, price, lot_no, line_no)
),
o AS (
  INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
  VALUES ($1::bigint, $2::text, $3::bigint, $4::bigint, 'placed', $5::bigint, $12::text)
  RETURNING created_at
),
ol AS (
  INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
  SELECT $1::bigint, l.line_no, l.sku_id, l.quantity, l.price
  FROM l
),
st AS (
  UPDATE stock s
  SET available = s.available - l.quantity, reserved = s.reserved + l.quantity, updated_at = now()
  FROM l
  WHERE s.warehouse_id = $4::bigint AND s.sku_id = l.sku_id AND s.available >= l.quantity
  RETURNING s.sku_id
),
lg AS (
  INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
  SELECT $4::bigint, l.sku_id, -l.quantity, 'reservation', $1::bigint, l.line_no
  FROM l
),
so AS (
  INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT $10::text, $2::text, l.lot_no, l.quantity
  FROM l
),
rc AS (
  UPDATE order_receipts
  SET outcome = 'placed', order_id = $1::bigint
  WHERE customer_id = $3::bigint AND idempotency_key = $9::text
)
SELECT oo_assert((SELECT count(*) FROM st) = (SELECT count(*) FROM l),
    'a locked stock row did not take its deduction'), (
  SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  FROM o
);

-- name: in_get_order
SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), principal
FROM orders
WHERE order_id = $1;

-- name: in_get_lines
SELECT line_no, sku_id, quantity, unit_price_cents
FROM order_lines
WHERE order_id = $1
ORDER BY line_no;

-- name: in_lock_order may_wait
SELECT status, warehouse_id, order_no FROM orders WHERE order_id = $1 FOR UPDATE;

-- name: in_lock_sources may_wait
SELECT lot_no FROM source_orders WHERE site_code = $1 AND order_no = $2 ORDER BY lot_no FOR UPDATE;

-- name: in_cancel_sources
UPDATE source_orders
SET cancelled_at = now()
WHERE site_code = $1 AND order_no = $2 AND cancelled_at IS NULL;

-- name: in_abort_items
UPDATE schedule_items
SET status = 'aborted', error = 'the order was cancelled', lease_until = NULL, updated_at = now()
WHERE site_code = $1 AND order_no = $2 AND status IN ('wait', 'processing')
RETURNING item_id;

-- name: in_count_production
SELECT count(*) FROM production_orders WHERE site_code = $1 AND order_no = $2;

-- name: in_lock_reserved_stock may_wait
SELECT l.line_no, l.sku_id, l.quantity
FROM order_lines l
JOIN stock s ON s.warehouse_id = $2 AND s.sku_id = l.sku_id
WHERE l.order_id = $1
ORDER BY s.sku_id FOR
UPDATE OF s;

-- name: in_restore
UPDATE stock
SET available = available + $3, reserved = reserved - $3, updated_at = now()
WHERE warehouse_id = $1 AND sku_id = $2;

-- name: in_mark_cancelled
UPDATE orders SET status = 'cancelled', cancelled_at = now() WHERE order_id = $1;

-- A batch's receipts, inserted in the caller's (sorted) order.
-- name: in_insert_receipts
INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, normalization)
SELECT r.c, r.k, r.w, r.n, $5::integer
FROM unnest(string_to_array($1, ',')::bigint[], $2::text[], string_to_array($3, ',')::bigint[],
    $4::text[]) WITH ORDINALITY AS r(c, k, w, n, i)
ORDER BY r.i
ON CONFLICT DO NOTHING
RETURNING customer_id, idempotency_key;

-- insert_receipts and lock_free_stock as one. Append runs its inputs in order, so every
-- receipt is in (or waited for) before the first stock row is locked, as when they were
-- sent one after the other.
-- name: in_insert_receipts_lock_stock
WITH r AS (
  INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, normalization)
  SELECT r.c, r.k, r.w, r.n, $5::integer
  FROM unnest(string_to_array($1, ',')::bigint[], $2::text[], string_to_array($3, ',')::bigint[],
      $4::text[]) WITH ORDINALITY AS r(c, k, w, n, i)
  ORDER BY r.i
  ON CONFLICT DO NOTHING
  RETURNING customer_id, idempotency_key
)
SELECT customer_id, idempotency_key, NULL::bigint, NULL::bigint, NULL::bigint
FROM r
UNION ALL (
  SELECT NULL, NULL, s.sku_id, x.available, x.price_cents
  FROM stock s
  LEFT JOIN LATERAL (
    SELECT y.available, y.price_cents
    FROM stock y
    WHERE y.warehouse_id = s.warehouse_id AND y.sku_id = s.sku_id FOR
    UPDATE SKIP LOCKED
  ) x ON true
  WHERE s.warehouse_id = $6::bigint AND s.sku_id = ANY (string_to_array($7, ',')::bigint[])
  ORDER BY s.sku_id
);

-- name: in_find_receipts
SELECT q.n - 1, r.warehouse_id, r.normalized, r.normalization, r.outcome, r.order_id, r.shortages,
    o.order_id, o.order_no, o.status, o.customer_id, o.warehouse_id, o.total_cents,
    to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), o.principal,
    l.line_no, l.sku_id, l.quantity, l.unit_price_cents
FROM unnest(string_to_array($1, ',')::bigint[], $2::text[]) WITH ORDINALITY AS q(c, k, n)
JOIN order_receipts r ON r.customer_id = q.c AND r.idempotency_key = q.k
LEFT JOIN orders o ON o.order_id = r.order_id
LEFT JOIN order_lines l ON l.order_id = o.order_id
ORDER BY q.n, l.line_no;

-- in_place_all for many orders, and the batch's out-of-stock receipts. Deductions come
-- summed per stock row (`d`, $16–$18): an UPDATE … FROM applies only one matching source
-- row. Every row comes as one array per column, whose row estimate (10) keeps the stock
-- and receipt updates on their indexes (jsonb_to_recordset's, 100, made the receipt
-- updates hash the whole receipts table), and which PostgreSQL reads with less CPU than
-- the same rows as jsonb.
-- name: in_place_many
WITH o AS (
  SELECT *
  FROM unnest(string_to_array($1, ',')::bigint[], $2::text[], string_to_array($3, ',')::bigint[],
      string_to_array($4, ',')::bigint[], string_to_array($5, ',')::bigint[], $24::text[]) AS t(id,
      ono, c, w, t, pr)
),
l AS (
  SELECT *
  FROM unnest(string_to_array($6, ',')::bigint[], string_to_array($7, ',')::integer[],
      string_to_array($8, ',')::bigint[], string_to_array($9, ',')::bigint[], string_to_array($10,
      ',')::bigint[], string_to_array($11, ',')::bigint[], $12::text[], $13::text[],
      $14::text[]) AS t(id, n, w, sku, q, p, site, ono, lot)
),
d AS (
  SELECT *
  FROM unnest(string_to_array($16, ',')::bigint[], string_to_array($17, ',')::bigint[],
      string_to_array($18, ',')::bigint[]) AS t(w, sku, quantity)
),
io AS (
  INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
  SELECT id, ono, c, w, 'placed', t, pr
  FROM o
  RETURNING order_id, created_at
),
ol AS (
  INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
  SELECT id, n, sku, q, p
  FROM l
),
st AS (
  UPDATE stock s
  SET available = s.available - d.quantity, reserved = s.reserved + d.quantity, updated_at = now()
  FROM d d
  WHERE s.warehouse_id = d.w AND s.sku_id = d.sku AND s.available >= d.quantity
  RETURNING d.quantity
),
lg AS (
  INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
  SELECT w, sku, -q, 'reservation', id, n
  FROM l
),
so AS (
  INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT site, ono, lot, q
  FROM l
),
rc AS (
  UPDATE order_receipts r
  SET outcome = 'placed', order_id = x.id
  FROM unnest(string_to_array($21, ',')::bigint[], string_to_array($22, ',')::bigint[],
      $23::text[]) AS x(id, c, k)
  WHERE r.customer_id = x.c AND r.idempotency_key = x.k
),
ro AS (
  UPDATE order_receipts r
  SET outcome = 'out_of_stock', shortages = x.s
  FROM unnest(string_to_array($15, ',')::bigint[], $19::text[], $20::text[]) AS x(c, k, s)
  WHERE r.customer_id = x.c AND r.idempotency_key = x.k
),
ok AS (
  SELECT oo_assert((SELECT count(*) FROM st) = (SELECT count(*) FROM d) AND (SELECT coalesce(sum(quantity),
      0) FROM st) = (SELECT coalesce(sum(q), 0) FROM l),
      'a locked stock row did not take its deduction') AS ok
)
SELECT io.order_id, to_char(io.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM ok
LEFT JOIN io ON ok.ok;

-- in_place_many for a batch decided on the stock its lane's last batch left
-- (store/postgres/intake_ops.cpp, place_known_): the receipts are inserted with their decisions ($24, $25:
-- the placed and the out-of-stock carts; $26 warehouse, $27 normalization version), in
-- (customer, key) order before any stock row is locked, and the stock rows the decisions
-- read ($28–$30: sku, available, price) are locked without waiting only where they still
-- hold those values ($31: the orders' principals). Anything else (a key stored already, a
-- row moved or held) raises SQLSTATE OO002 (oo_assert_unmoved, migration 28: the connection
-- answers retry_transaction and the batch is decided again) before the writes can commit.
-- name: in_place_known
WITH rcp AS (
  INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, normalization,
      outcome, order_id, shortages)
  SELECT x.c, x.k, $26::bigint, x.n, $27::integer, x.oc, x.id, x.s
  FROM (
    SELECT p.c, p.k, p.n, 'placed' AS oc, p.id, NULL::text AS s
    FROM unnest(string_to_array($21, ',')::bigint[], string_to_array($22, ',')::bigint[],
        $23::text[], $24::text[]) AS p(id, c, k, n)
    UNION ALL
    SELECT q.c, q.k, q.n, 'out_of_stock', NULL::bigint, q.s
    FROM unnest(string_to_array($15, ',')::bigint[], $19::text[], $20::text[], $25::text[]) AS q(c,
        k, s, n)
  ) x
  ORDER BY x.c, x.k COLLATE "C"
  ON CONFLICT DO NOTHING
  RETURNING 1
),
k AS (
  SELECT *
  FROM unnest(string_to_array($28, ',')::bigint[], string_to_array($29, ',')::bigint[],
      string_to_array($30, ',')::bigint[]) AS t(sku, a, p)
),
lk AS (
  SELECT s.sku_id
  FROM stock s
  JOIN k ON s.warehouse_id = $26::bigint AND s.sku_id = k.sku
  WHERE s.available = k.a AND s.price_cents = k.p AND (SELECT count(*) FROM rcp) >= 0
  ORDER BY s.sku_id FOR
  UPDATE OF s SKIP LOCKED
),
o AS (
  SELECT *
  FROM unnest(string_to_array($1, ',')::bigint[], $2::text[], string_to_array($3, ',')::bigint[],
      string_to_array($4, ',')::bigint[], string_to_array($5, ',')::bigint[], $31::text[]) AS t(id,
      ono, c, w, t, pr)
),
l AS (
  SELECT *
  FROM unnest(string_to_array($6, ',')::bigint[], string_to_array($7, ',')::integer[],
      string_to_array($8, ',')::bigint[], string_to_array($9, ',')::bigint[], string_to_array($10,
      ',')::bigint[], string_to_array($11, ',')::bigint[], $12::text[], $13::text[],
      $14::text[]) AS t(id, n, w, sku, q, p, site, ono, lot)
),
d AS (
  SELECT *
  FROM unnest(string_to_array($16, ',')::bigint[], string_to_array($17, ',')::bigint[],
      string_to_array($18, ',')::bigint[]) AS t(w, sku, quantity)
), dk AS (SELECT d.* FROM d JOIN lk ON lk.sku_id = d.sku),
io AS (
  INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
  SELECT id, ono, c, w, 'placed', t, pr
  FROM o
  RETURNING order_id, created_at
),
ol AS (
  INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
  SELECT id, n, sku, q, p
  FROM l
),
st AS (
  UPDATE stock s
  SET available = s.available - d.quantity, reserved = s.reserved + d.quantity, updated_at = now()
  FROM dk d
  WHERE s.warehouse_id = d.w AND s.sku_id = d.sku AND s.available >= d.quantity
  RETURNING d.quantity
),
lg AS (
  INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
  SELECT w, sku, -q, 'reservation', id, n
  FROM l
),
so AS (
  INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT site, ono, lot, q
  FROM l
),
ahead AS (
  SELECT oo_assert_unmoved((SELECT count(*) FROM rcp) = cardinality(string_to_array($22, ',')) + cardinality(string_to_array($15,
      ',')) AND (SELECT count(*) FROM lk) = (SELECT count(*) FROM k),
      'the stock or receipts the batch was decided on had moved') AS ok
),
ok AS (
  SELECT oo_assert(ahead.ok AND (SELECT count(*) FROM st) = (SELECT count(*) FROM d) AND (SELECT
      coalesce(sum(quantity), 0) FROM st) = (SELECT coalesce(sum(q), 0) FROM l),
      'a locked stock row did not take its deduction') AS ok
  FROM ahead
)
SELECT io.order_id, to_char(io.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM ok
LEFT JOIN io ON ok.ok;

-- Local to the transaction (store/postgres/intake_ops.cpp, batch_plans_, says why).
-- name: in_batch_plans
SELECT set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
    set_config('enable_mergejoin', 'off', true), set_config('plan_cache_mode', 'force_generic_plan',
    true);
