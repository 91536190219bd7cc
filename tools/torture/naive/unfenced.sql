-- The torture harness's broken variant onceorder-naive-unfenced (tools/torture/CMakeLists.txt):
-- PostgreSQL statements that replace the product's of the same name (store/sql_catalog.hpp).
-- Never in the product.
--
-- The naive worker: its work takes 3 s after the claim, holding no lock (longer than the
-- harness's 2 s lease), then it marks the item done if it is still processing, ignores whose
-- claim it is and whether that update found the row, and produces anyway. The set-based batch
-- is fenced, so this variant runs without it and completes item by item.

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

-- without: sch_fence_many

-- without: sch_complete_numbered
