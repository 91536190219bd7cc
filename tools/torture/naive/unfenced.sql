-- The torture harness's broken variant onceorder-naive-unfenced (tools/torture/CMakeLists.txt):
-- PostgreSQL statements that replace the product's of the same name (store/sql_catalog.hpp).
-- Never in the product.
--
-- The naive worker: its work takes 3 s after the claim, holding no lock (longer than the
-- harness's 2 s lease), then it marks the item done if it is still processing, ignores whose
-- claim it is and whether that update found the row, and produces anyway. Every statement that
-- completes a claim is broken that way: the one-by-one fence, the batch's fences and the
-- batch's one-statement completion. The work (`work`) is done once per transaction
-- (oo.naive_worked), first, before the statement touches a row.

-- name: sch_fence_success
WITH work AS MATERIALIZED (
  SELECT pg_sleep(CASE WHEN coalesce(current_setting('oo.naive_worked', true),
      '') = '' THEN 3 ELSE 0 END), set_config('oo.naive_worked', 'yes', true)
),
u AS (
  UPDATE schedule_items
  SET status = 'success', lease_until = NULL, updated_at = now()
  WHERE item_id = $1 AND status = 'processing' AND EXISTS (SELECT 1 FROM work)
  RETURNING item_id
)
SELECT $1::bigint, $2::text, $3::integer
FROM work;

-- Every claim of the batch counts as fenced.
-- name: sch_fence_many
WITH work AS MATERIALIZED (
  SELECT pg_sleep(CASE WHEN coalesce(current_setting('oo.naive_worked', true),
      '') = '' THEN 3 ELSE 0 END), set_config('oo.naive_worked', 'yes', true)
),
t AS MATERIALIZED (
  SELECT (e->>0)::bigint AS item_id
  FROM work
  CROSS JOIN jsonb_array_elements($1::jsonb) AS x (e)
),
u AS (
  UPDATE schedule_items i
  SET status = 'success', lease_until = NULL, updated_at = now()
  FROM t
  WHERE i.item_id = t.item_id AND i.status = 'processing'
  RETURNING i.item_id
)
SELECT item_id
FROM t;

-- The product's statement with the naive fence: `u` marks the claims done where still
-- processing, and `p` produces every claim's order, fenced or not (its key read from the
-- item). Only an exhausted scope fails the batch.
-- name: sch_complete_numbered
WITH work AS MATERIALIZED (
  SELECT pg_sleep(CASE WHEN coalesce(current_setting('oo.naive_worked', true),
      '') = '' THEN 3 ELSE 0 END), set_config('oo.naive_worked', 'yes', true)
),
t AS MATERIALIZED (
  SELECT (e->>0)::bigint AS item_id, e->>3 AS scope, e->>4 AS title, o AS ord
  FROM work
  CROSS JOIN jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x (e, o)
),
u AS (
  UPDATE schedule_items i
  SET status = 'success', lease_until = NULL, updated_at = now()
  FROM t
  WHERE i.item_id = t.item_id AND i.status = 'processing'
  RETURNING i.item_id
), n AS (SELECT scope, count(*) AS k FROM t GROUP BY scope),
c AS (
  INSERT INTO doc_scopes AS s (scope, width, radix, max_value, last_value)
  SELECT scope, $3::integer, $4::integer, $5::bigint, k
  FROM n
  ORDER BY scope
  ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + excluded.last_value
  WHERE s.last_value + excluded.last_value <= s.max_value
  RETURNING s.scope, s.last_value, s.width, s.radix
),
v AS (
  SELECT t.item_id, t.title, c.scope, c.radix, c.width, c.last_value - n.k + row_number() OVER (PARTITION
      BY t.scope ORDER BY t.ord) AS value
  FROM t
  JOIN n ON n.scope = t.scope
  JOIN c ON c.scope = t.scope
),
d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal)
  SELECT scope, value, oo_format_number(value, radix, width), 'issued', 'r' || radix || 'w' || width,
      title, $6::text
  FROM v
  RETURNING scope, value, number
),
p AS (
  INSERT INTO production_orders (site_code, order_no, lot_no, item_id, quantity, document_scope,
      document_value, document_number)
  SELECT so.site_code, so.order_no, so.lot_no, v.item_id, so.quantity, d.scope, d.value, d.number
  FROM v
  JOIN d ON d.scope = v.scope AND d.value = v.value
  JOIN schedule_items i ON i.item_id = v.item_id
  JOIN source_orders so ON so.site_code = i.site_code AND so.order_no = i.order_no AND so.lot_no =
      i.lot_no
  RETURNING item_id
)
SELECT oo_assert((SELECT count(*) FROM p) = $2::bigint,
    'a production scope of the batch is exhausted');
