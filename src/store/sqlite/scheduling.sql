-- SQLite: production scheduling: runs, items, claims and production orders.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it (store/scheduling_store.hpp) or, for the statements only this engine has, in
-- its operations (store/sqlite/scheduling_ops.cpp).

-- name: sch_insert_source
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT DO NOTHING
RETURNING 1;

-- name: sch_source_quantity
SELECT quantity FROM source_orders WHERE site_code = ?1 AND order_no = ?2 AND lot_no = ?3;

-- name: sch_insert_run
INSERT INTO schedule_runs (kind, status, owner) VALUES (?1, 'creating', ?2) RETURNING run_id;

-- name: sch_insert_candidates
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT ?1, f.site_code, f.order_no, f.lot_no, 'wait'
FROM schedule_key_facts f
WHERE NOT f.cancelled AND NOT f.has_success AND NOT f.has_live AND NOT f.legacy_pending AND f.failed
    < ?2
ORDER BY f.site_code, f.order_no, f.lot_no
ON CONFLICT (site_code, order_no, lot_no)
WHERE status NOT IN ('failed', 'aborted') DO NOTHING
RETURNING item_id;

-- name: sch_insert_item_for
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT ?1, f.site_code, f.order_no, f.lot_no, 'wait'
FROM schedule_key_facts f
WHERE f.site_code = ?2 AND f.order_no = ?3 AND f.lot_no = ?4 AND NOT f.cancelled AND NOT
    f.has_success AND NOT f.has_live AND NOT f.legacy_pending AND f.failed < ?5
ORDER BY f.site_code, f.order_no, f.lot_no
ON CONFLICT (site_code, order_no, lot_no)
WHERE status NOT IN ('failed', 'aborted') DO NOTHING
RETURNING item_id;

-- name: sch_key_state
SELECT f.has_success, f.has_live, f.failed, f.cancelled, f.legacy_pending
FROM schedule_key_facts f
WHERE f.site_code = ?1 AND f.order_no = ?2 AND f.lot_no = ?3;

-- name: sch_set_run_status
UPDATE schedule_runs
SET status = ?2, error = ?3, heartbeat_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
    finished_at = CASE WHEN ?2 IN ('done', 'error') THEN strftime('%Y-%m-%dT%H:%M:%fZ',
    'now') ELSE NULL END
WHERE run_id = ?1 AND status IN ('creating', 'running')
RETURNING run_id;

-- name: sch_heartbeat
UPDATE schedule_runs
SET heartbeat_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE run_id = ?1 AND status IN ('creating', 'running')
RETURNING run_id, stop_requested_at IS NOT NULL;

-- name: sch_abort_run_waits
UPDATE schedule_items
SET status = 'aborted', error = ?2, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE run_id = ?1 AND status = 'wait'
RETURNING item_id;

-- name: sch_fail_run_processing
UPDATE schedule_items
SET status = 'failed', error = ?2, lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE run_id = ?1 AND status = 'processing'
RETURNING item_id;

-- name: sch_claim
UPDATE schedule_items
SET status = 'processing', attempt = attempt + 1, owner = ?2, lease_until = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now', '+' || (?4 / 1000.0) || ' seconds'), updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE item_id IN (
  SELECT item_id
  FROM schedule_items
  WHERE run_id = ?1 AND status = 'wait'
  ORDER BY item_id
  LIMIT ?3
) AND EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = ?1 AND r.status = 'running'
)
RETURNING item_id, run_id, site_code, order_no, lot_no, attempt;

-- name: sch_fence_success
UPDATE schedule_items
SET status = 'success', lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE item_id = ?1 AND status = 'processing' AND owner = ?2 AND attempt = ?3 AND EXISTS (
  SELECT 1
  FROM source_orders so
  WHERE so.site_code = schedule_items.site_code AND so.order_no = schedule_items.order_no AND
      so.lot_no = schedule_items.lot_no AND so.cancelled_at IS NULL
)
RETURNING item_id;

-- name: sch_mark_failed
UPDATE schedule_items
SET status = 'failed', error = ?4, lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE item_id = ?1 AND status = 'processing' AND owner = ?2 AND attempt = ?3
RETURNING item_id;

-- name: sch_abort_if_cancelled
UPDATE schedule_items
SET status = 'aborted', error = 'the order was cancelled', lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE item_id = ?1 AND status = 'processing' AND owner = ?2 AND attempt = ?3 AND EXISTS (
  SELECT 1
  FROM source_orders so
  WHERE so.site_code = schedule_items.site_code AND so.order_no = schedule_items.order_no AND
      so.lot_no = schedule_items.lot_no AND so.cancelled_at IS NOT NULL
)
RETURNING item_id;

-- A batch's fences: ?1 is a JSON array of [item_id, owner, attempt, …].
-- name: sch_fence_many
UPDATE schedule_items
SET status = 'success', lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM (
  SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS own, json_extract(value,
      '$[2]') AS att
  FROM json_each(?1)
) AS t
WHERE schedule_items.item_id = t.id AND schedule_items.status = 'processing' AND
    schedule_items.owner = t.own AND schedule_items.attempt = t.att AND EXISTS (
  SELECT 1
  FROM source_orders so
  WHERE so.site_code = schedule_items.site_code AND so.order_no = schedule_items.order_no AND
      so.lot_no = schedule_items.lot_no AND so.cancelled_at IS NULL
)
RETURNING item_id;

-- No DML in CTEs: the standard step takes three statements (store/sqlite/scheduling_ops.cpp).
-- name: sch_insert_production
INSERT INTO production_orders (site_code, order_no, lot_no, item_id, quantity, document_scope,
    document_value, document_number)
SELECT site_code, order_no, lot_no, ?1, quantity, ?2, ?3, ?4
FROM source_orders
WHERE site_code = ?5 AND order_no = ?6 AND lot_no = ?7
RETURNING site_code, order_no, lot_no, item_id, quantity, document_scope, document_value,
    document_number, created_at;

-- name: sch_insert_production_many
INSERT INTO production_orders (site_code, order_no, lot_no, item_id, quantity, document_scope,
    document_value, document_number)
SELECT so.site_code, so.order_no, so.lot_no, json_extract(e.value, '$[0]'), so.quantity, ?1,
    json_extract(e.value, '$[4]'), json_extract(e.value, '$[5]')
FROM json_each(?2) AS e
JOIN source_orders so ON so.site_code = json_extract(e.value, '$[1]') AND so.order_no = json_extract(e.value,
    '$[2]') AND so.lot_no = json_extract(e.value, '$[3]')
RETURNING item_id;

-- The orphans on a run's keys (?1: JSON array of [site, order, lot]; null: every key),
-- aborted before the run takes them; one writer at a time, so nothing moves in between.
-- name: sch_abort_orphans
UPDATE schedule_items
SET status = 'aborted', error = 'run is not alive', updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE item_id IN (
  SELECT i.item_id
  FROM json_each(?1) e
  JOIN schedule_items i ON i.site_code = json_extract(e.value, '$[0]') AND i.order_no = json_extract(e.value,
      '$[1]') AND i.lot_no = json_extract(e.value, '$[2]')
  WHERE i.status = 'wait' AND NOT EXISTS (
    SELECT 1
    FROM schedule_runs r
    WHERE r.run_id = i.run_id AND r.status IN ('creating', 'running') AND r.heartbeat_at >= strftime('%Y-%m-%dT%H:%M:%fZ',
        'now', '-' || (?2 / 1000.0) || ' seconds')
  )
  UNION ALL
  SELECT i.item_id
  FROM schedule_items i
  WHERE ?1 IS NULL AND i.status = 'wait' AND NOT EXISTS (
    SELECT 1
    FROM schedule_runs r
    WHERE r.run_id = i.run_id AND r.status IN ('creating', 'running') AND r.heartbeat_at >= strftime('%Y-%m-%dT%H:%M:%fZ',
        'now', '-' || (?2 / 1000.0) || ' seconds')
  )
)
RETURNING item_id;

-- name: sch_dead_runs
UPDATE schedule_runs
SET status = 'error', error = 'owner stopped heart-beating', finished_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE status IN ('creating', 'running') AND heartbeat_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now',
    '-' || (?1 / 1000.0) || ' seconds')
RETURNING run_id;

-- name: sch_orphan_waits
UPDATE schedule_items
SET status = 'aborted', error = 'run is not alive', updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE status = 'wait' AND NOT EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = schedule_items.run_id AND r.status IN ('creating', 'running')
)
RETURNING item_id;

-- name: sch_expired_leases
UPDATE schedule_items
SET status = 'failed', error = 'lease expired', lease_until = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE status = 'processing' AND lease_until < strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AND NOT EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = schedule_items.run_id AND r.kind = 'legacy'
)
RETURNING item_id;

-- name: sch_get_run
SELECT r.run_id, r.kind, r.status, r.owner, r.error, r.created_at, r.finished_at,
    coalesce(sum(CASE WHEN i.status = 'wait' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'processing' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'success' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'failed' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'aborted' THEN 1 ELSE 0 END), 0)
FROM schedule_runs r
LEFT JOIN schedule_items i ON i.run_id = r.run_id
WHERE r.run_id = ?1
GROUP BY r.run_id;

-- name: sch_list_runs
SELECT r.run_id, r.kind, r.status, r.owner, r.error, r.created_at, r.finished_at,
    coalesce(sum(CASE WHEN i.status = 'wait' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'processing' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'success' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'failed' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'aborted' THEN 1 ELSE 0 END), 0)
FROM schedule_runs r
LEFT JOIN schedule_items i ON i.run_id = r.run_id
WHERE (?1 IS NULL OR r.status = ?1)
GROUP BY r.run_id
ORDER BY r.run_id DESC
LIMIT ?2;

-- name: sch_list_items
SELECT item_id, run_id, site_code, order_no, lot_no, status, attempt, owner, lease_until, error,
    created_at, updated_at
FROM schedule_items
WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR site_code = ?2) AND (?3 IS NULL OR order_no =
    ?3) AND (?4 IS NULL OR lot_no = ?4) AND (?5 IS NULL OR run_id = ?5) AND item_id > ?6
ORDER BY item_id
LIMIT ?7;

-- name: sch_list_production
SELECT site_code, order_no, lot_no, item_id, quantity, document_scope, document_value,
    document_number, created_at
FROM production_orders
WHERE (?1 IS NULL OR site_code = ?1) AND item_id > ?2
ORDER BY item_id
LIMIT ?3;

-- name: sch_stuck_orders
SELECT f.site_code, f.order_no, f.lot_no
FROM schedule_key_facts f
WHERE NOT f.cancelled AND NOT f.has_success AND NOT f.has_live AND f.failed >= ?1
ORDER BY 1, 2, 3;

-- name: sch_run_remaining
SELECT coalesce(sum(CASE WHEN status IN ('wait', 'processing') THEN 1 ELSE 0 END), 0), count(*)
FROM schedule_items
WHERE run_id = ?1;

-- The keys are read from the failed items' partial index (named: without statistics
-- SQLite would walk the index of every item), grouped by key in its order; a key
-- counts when its failed items not re-queued reach the limit and it has no live or
-- successful item.
-- name: sch_list_exhausted
SELECT g.site_code, g.order_no, g.lot_no, g.counted, g.total, so.requeued_at, l.error, l.updated_at
FROM (
  SELECT i.site_code, i.order_no, i.lot_no, count(*) - so.requeued_failures AS counted,
      count(*) AS total, max(i.item_id) AS last_item
  FROM schedule_items i INDEXED BY schedule_items_failed
  JOIN source_orders so ON so.site_code = i.site_code AND so.order_no = i.order_no AND so.lot_no =
      i.lot_no
  WHERE i.status = 'failed' AND (?1 IS NULL OR i.site_code = ?1) AND (i.site_code, i.order_no,
      i.lot_no) > (?2, ?3, ?4) AND so.cancelled_at IS NULL
  GROUP BY i.site_code, i.order_no, i.lot_no
  HAVING count(*) - so.requeued_failures >= ?5 AND NOT EXISTS (
    SELECT 1
    FROM schedule_items x
    WHERE x.site_code = i.site_code AND x.order_no = i.order_no AND x.lot_no = i.lot_no AND x.status
        IN ('wait', 'processing', 'success')
  )
  ORDER BY i.site_code, i.order_no, i.lot_no
  LIMIT ?6
) g
JOIN schedule_items l ON l.item_id = g.last_item
JOIN source_orders so ON so.site_code = g.site_code AND so.order_no = g.order_no AND so.lot_no =
    g.lot_no
ORDER BY g.site_code, g.order_no, g.lot_no;

-- One writer at a time (SQLite): the check and the update see the same state.
-- name: sch_requeue_key
UPDATE source_orders AS so
SET requeued_failures = max(so.requeued_failures, (
  SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code AND i.order_no =
      so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed'
)), requeued_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE so.site_code = ?1 AND so.order_no = ?2 AND so.lot_no = ?3 AND so.cancelled_at IS NULL AND (
  SELECT count(*)
  FROM schedule_items i
  WHERE i.site_code = so.site_code AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND
      i.status = 'failed'
) - so.requeued_failures >= ?4 AND NOT EXISTS (
  SELECT 1
  FROM schedule_items i
  WHERE i.site_code = so.site_code AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND
      i.status IN ('wait', 'processing', 'success')
)
RETURNING 1;

-- name: sch_request_stop
UPDATE schedule_runs
SET stop_requested_at = coalesce(stop_requested_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
WHERE run_id = ?1 AND status IN ('creating', 'running')
RETURNING run_id;
