-- The torture harness's broken variant onceorder-naive-run-key (tools/torture/CMakeLists.txt):
-- PostgreSQL statements that replace the product's of the same name (store/sql_catalog.hpp).
-- Never in the product.
--
-- Seed 000's root bug: the items' unique key includes run_id, and a run trusts it, as the
-- seed's did, to keep an order from being scheduled twice: it skips orders already done, not
-- orders queued or being processed in another run, and shares no row. A batch run and a manual
-- run then each make a live item for one order, and both produce it.

-- name: sch_insert_candidates
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT $1::bigint, f.site_code, f.order_no, f.lot_no, 'wait'
FROM schedule_key_facts f
WHERE NOT f.cancelled AND NOT f.has_success AND NOT f.legacy_pending AND f.failed < $2::bigint
ORDER BY f.site_code, f.order_no, f.lot_no
ON CONFLICT (run_id, site_code, order_no, lot_no) DO NOTHING
RETURNING item_id;

-- name: sch_insert_item_for
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT $1::bigint, f.site_code, f.order_no, f.lot_no, 'wait'
FROM schedule_key_facts f
WHERE f.site_code = $2::text AND f.order_no = $3::text AND f.lot_no = $4::text AND NOT f.cancelled
    AND NOT f.has_success AND NOT f.legacy_pending AND f.failed < $5::bigint
ORDER BY f.site_code, f.order_no, f.lot_no
ON CONFLICT (run_id, site_code, order_no, lot_no) DO NOTHING
RETURNING item_id;

-- name: sch_insert_items_for
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT $1::bigint, f.site_code, f.order_no, f.lot_no, 'wait'
FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e (k, n)
CROSS JOIN LATERAL (
  SELECT f.site_code, f.order_no, f.lot_no
  FROM schedule_key_facts f
  WHERE f.site_code = e.k->>0 AND f.order_no = e.k->>1 AND f.lot_no = e.k->>2 AND NOT f.cancelled
      AND NOT f.has_success AND NOT f.legacy_pending AND f.failed < $3::bigint
) f
ORDER BY e.n
ON CONFLICT (run_id, site_code, order_no, lot_no) DO NOTHING
RETURNING site_code, order_no, lot_no;
