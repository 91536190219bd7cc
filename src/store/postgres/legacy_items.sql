-- PostgreSQL: legacy item import and dedup.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it, or for the engine's own steps in its operations (legacy_items_ops.cpp).

-- name: leg_insert_staged
INSERT INTO legacy_items (line_no, site_code, order_no, lot_no, status, created_at, run_id)
VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7);

-- name: leg_has_resolution
SELECT count(*)
FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'legacy_items' AND column_name = 'resolution';

-- name: leg_pending
SELECT legacy_id, line_no, site_code, order_no, lot_no, status,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), resolution
FROM legacy_items
WHERE moved_at IS NULL
ORDER BY legacy_id;

-- name: leg_pending_before_resolution
SELECT legacy_id, line_no, site_code, order_no, lot_no, status,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NULL::text
FROM legacy_items
WHERE moved_at IS NULL
ORDER BY legacy_id;

-- A concurrent `legacy resolve` waits, so `apply` moves rows with the word it read.
-- name: leg_lock_pending
SELECT legacy_id FROM legacy_items WHERE moved_at IS NULL ORDER BY legacy_id FOR UPDATE;

-- name: leg_live_rows
SELECT i.item_id, i.site_code, i.order_no, i.lot_no, i.status,
    to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM schedule_items i
WHERE i.status NOT IN ('failed', 'aborted') AND (EXISTS (
  SELECT 1 FROM legacy_items l WHERE l.moved_at IS NULL AND l.site_code = i.site_code AND l.order_no
      = i.order_no AND l.lot_no = i.lot_no
) OR (
  SELECT count(*) FROM schedule_items j WHERE j.site_code = i.site_code AND j.order_no = i.order_no
      AND j.lot_no = i.lot_no AND j.status NOT IN ('failed', 'aborted')
) > 1)
ORDER BY i.item_id;

-- name: leg_missing_sources
SELECT DISTINCT l.site_code, l.order_no, l.lot_no
FROM legacy_items l
WHERE l.moved_at IS NULL AND NOT EXISTS (
  SELECT 1
  FROM source_orders so
  WHERE so.site_code = l.site_code AND so.order_no = l.order_no AND so.lot_no = l.lot_no
)
ORDER BY 1, 2, 3;

-- name: leg_insert_run
INSERT INTO schedule_runs (kind, status, owner, finished_at)
VALUES ('legacy', 'done', 'legacy-import', now())
RETURNING run_id;

-- name: leg_insert_item
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, lease_until, error,
    created_at, updated_at)
VALUES ($1, $2, $3, $4, $5::text, CASE WHEN $5::text = 'processing' THEN now() ELSE NULL END, $7,
    $6::timestamptz, now())
RETURNING item_id;

-- name: leg_mark_moved
UPDATE legacy_items SET moved_at = now(), item_id = $2 WHERE legacy_id = $1;

-- name: leg_abort_item
UPDATE schedule_items
SET status = 'aborted', error = $2, updated_at = now()
WHERE item_id = $1 AND status NOT IN ('failed', 'aborted');

-- name: leg_resolve_staged
UPDATE legacy_items
SET resolution = $4, resolved_at = now()
WHERE moved_at IS NULL AND site_code = $1 AND order_no = $2 AND lot_no = $3 AND status IN ('wait',
    'processing')
RETURNING legacy_id;

-- name: leg_settle_moved
UPDATE schedule_items
SET status = $4, error = coalesce(error || '; ', '') || $5, lease_until = NULL, updated_at = now()
WHERE site_code = $1 AND order_no = $2 AND lot_no = $3 AND status IN ('wait',
    'processing') AND run_id IN (SELECT run_id FROM schedule_runs WHERE kind = 'legacy')
RETURNING item_id;

-- name: leg_note_moved
UPDATE legacy_items SET resolution = $2, resolved_at = now() WHERE item_id = $1;
