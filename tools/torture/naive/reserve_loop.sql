-- The torture harness's broken variant onceorder-naive-reserve-loop (tools/torture/CMakeLists.txt):
-- PostgreSQL statements that replace the product's of the same name (store/sql_catalog.hpp).
-- Never in the product.
--
-- Seed 004's naive cart: the decision reads stock without locking it, and each line's
-- deduction that misses is let pass instead of undoing the whole order. A batch decided ahead
-- still says when its keys or rows moved (oo_assert_unmoved, SQLSTATE OO002), as the
-- product's does: the variant breaks the deductions only.

-- name: in_lock_stock may_wait
SELECT sku_id, available, price_cents
FROM stock
WHERE warehouse_id = $1::bigint AND sku_id = ANY (string_to_array($2, ',')::bigint[])
ORDER BY sku_id;

-- name: in_lock_free_stock
SELECT s.sku_id, x.available, x.price_cents
FROM stock s
LEFT JOIN LATERAL (
  SELECT y.available, y.price_cents
  FROM stock y
  WHERE y.warehouse_id = s.warehouse_id AND y.sku_id = s.sku_id
) x ON true
WHERE s.warehouse_id = $1::bigint AND s.sku_id = ANY (string_to_array($2, ',')::bigint[])
ORDER BY s.sku_id;

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
SELECT oo_assert(true, 'a locked stock row did not take its deduction'), (
  SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  FROM o
);

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
    WHERE y.warehouse_id = s.warehouse_id AND y.sku_id = s.sku_id
  ) x ON true
  WHERE s.warehouse_id = $6::bigint AND s.sku_id = ANY (string_to_array($7, ',')::bigint[])
  ORDER BY s.sku_id
);

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
  SELECT oo_assert(true, 'a locked stock row did not take its deduction') AS ok
)
SELECT io.order_id, to_char(io.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM ok
LEFT JOIN io ON ok.ok;

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
  ORDER BY s.sku_id
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
  SELECT oo_assert(ahead.ok AND true, 'a locked stock row did not take its deduction') AS ok
  FROM ahead
)
SELECT io.order_id, to_char(io.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM ok
LEFT JOIN io ON ok.ok;
