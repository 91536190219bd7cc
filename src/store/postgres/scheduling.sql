-- PostgreSQL: production scheduling: runs, items, claims and production orders.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it (store/scheduling_store.hpp) or, for the statements only this engine has, in
-- its operations (store/postgres/scheduling_ops.cpp).

-- name: sch_insert_source
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
VALUES ($1, $2, $3, $4)
ON CONFLICT DO NOTHING
RETURNING 1;

-- name: sch_source_quantity
SELECT quantity FROM source_orders WHERE site_code = $1 AND order_no = $2 AND lot_no = $3;

-- name: sch_insert_run
INSERT INTO schedule_runs (kind, status, owner) VALUES ($1, 'creating', $2) RETURNING run_id;

-- name: sch_insert_candidates
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT $1::bigint, f.site_code, f.order_no, f.lot_no, 'wait'
FROM schedule_key_facts f
WHERE NOT f.cancelled AND NOT f.has_success AND NOT f.has_live AND NOT f.legacy_pending AND f.failed
    < $2::bigint
ORDER BY f.site_code, f.order_no, f.lot_no FOR SHARE OF f
ON CONFLICT (site_code, order_no, lot_no)
WHERE status NOT IN ('failed', 'aborted') DO NOTHING
RETURNING item_id;

-- name: sch_insert_item_for
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT $1::bigint, f.site_code, f.order_no, f.lot_no, 'wait'
FROM schedule_key_facts f
WHERE f.site_code = $2::text AND f.order_no = $3::text AND f.lot_no = $4::text AND NOT f.cancelled
    AND NOT f.has_success AND NOT f.has_live AND NOT f.legacy_pending AND f.failed < $5::bigint
ORDER BY f.site_code, f.order_no, f.lot_no FOR SHARE OF f
ON CONFLICT (site_code, order_no, lot_no)
WHERE status NOT IN ('failed', 'aborted') DO NOTHING
RETURNING item_id;

-- name: sch_insert_items_for
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
SELECT $1::bigint, f.site_code, f.order_no, f.lot_no, 'wait'
FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e (k, n)
CROSS JOIN LATERAL (
  SELECT f.site_code, f.order_no, f.lot_no
  FROM schedule_key_facts f
  WHERE f.site_code = e.k->>0 AND f.order_no = e.k->>1 AND f.lot_no = e.k->>2 AND NOT f.cancelled
      AND NOT f.has_success AND NOT f.has_live AND NOT f.legacy_pending AND f.failed < $3::bigint
      FOR SHARE OF f
) f
ORDER BY e.n
ON CONFLICT (site_code, order_no, lot_no)
WHERE status NOT IN ('failed', 'aborted') DO NOTHING
RETURNING site_code, order_no, lot_no;

-- The skipped keys' facts at once, a key at a time (LATERAL, as above).
-- name: sch_key_states
SELECT f.site_code, f.order_no, f.lot_no, f.has_success, f.has_live, f.failed, f.cancelled,
    f.legacy_pending
FROM jsonb_array_elements($1::jsonb) e
CROSS JOIN LATERAL (
  SELECT *
  FROM schedule_key_facts f
  WHERE f.site_code = e->>0 AND f.order_no = e->>1 AND f.lot_no = e->>2
) f;

-- name: sch_key_state
SELECT f.has_success, f.has_live, f.failed, f.cancelled, f.legacy_pending
FROM schedule_key_facts f
WHERE f.site_code = $1 AND f.order_no = $2 AND f.lot_no = $3;

-- name: sch_set_run_status
UPDATE schedule_runs
SET status = $2::text, error = $3::text, heartbeat_at = now(), finished_at = CASE WHEN $2::text IN ('done',
    'error') THEN now() ELSE NULL END
WHERE run_id = $1 AND status IN ('creating', 'running')
RETURNING run_id;

-- name: sch_heartbeat
UPDATE schedule_runs
SET heartbeat_at = now()
WHERE run_id = $1 AND status IN ('creating', 'running')
RETURNING run_id, stop_requested_at IS NOT NULL;

-- name: sch_abort_run_waits
UPDATE schedule_items
SET status = 'aborted', error = $2, updated_at = now()
WHERE run_id = $1 AND status = 'wait'
RETURNING item_id;

-- name: sch_fail_run_processing
UPDATE schedule_items
SET status = 'failed', error = $2, lease_until = NULL, updated_at = now()
WHERE run_id = $1 AND status = 'processing'
RETURNING item_id;

-- name: sch_claim
UPDATE schedule_items i
SET status = 'processing', attempt = i.attempt + 1, owner = $2,
    lease_until = now() + $4::float8 * interval '1 millisecond', updated_at = now()
FROM (
  SELECT item_id
  FROM schedule_items
  WHERE run_id = $1 AND status = 'wait'
  ORDER BY item_id
  LIMIT $3 FOR
  UPDATE SKIP LOCKED
) c
WHERE i.item_id = c.item_id AND EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = $1 AND r.status = 'running' FOR SHARE
)
RETURNING i.item_id, i.run_id, i.site_code, i.order_no, i.lot_no, i.attempt;

-- name: sch_fence_success
UPDATE schedule_items
SET status = 'success', lease_until = NULL, updated_at = now()
WHERE item_id = $1 AND status = 'processing' AND owner = $2 AND attempt = $3 AND EXISTS (
  SELECT 1
  FROM source_orders so
  WHERE so.site_code = schedule_items.site_code AND so.order_no = schedule_items.order_no AND
      so.lot_no = schedule_items.lot_no AND so.cancelled_at IS NULL FOR SHARE
)
RETURNING item_id;

-- name: sch_mark_failed
UPDATE schedule_items
SET status = 'failed', error = $4, lease_until = NULL, updated_at = now()
WHERE item_id = $1 AND status = 'processing' AND owner = $2 AND attempt = $3
RETURNING item_id;

-- name: sch_abort_if_cancelled
UPDATE schedule_items
SET status = 'aborted', error = 'the order was cancelled', lease_until = NULL, updated_at = now()
WHERE item_id = $1 AND status = 'processing' AND owner = $2 AND attempt = $3 AND EXISTS (
  SELECT 1
  FROM source_orders so
  WHERE so.site_code = schedule_items.site_code AND so.order_no = schedule_items.order_no AND
      so.lot_no = schedule_items.lot_no AND so.cancelled_at IS NOT NULL
)
RETURNING item_id;

-- name: sch_fence_many
WITH t AS MATERIALIZED (
  SELECT (e->>0)::bigint AS item_id, e->>1 AS owner, (e->>2)::integer AS attempt, e->>3 AS scope,
      e->>4 AS title, o AS ord
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x (e, o)
),
f AS (
  UPDATE schedule_items i
  SET status = 'success', lease_until = NULL, updated_at = now()
  FROM t
  WHERE i.item_id = t.item_id AND i.status = 'processing' AND i.owner = t.owner AND i.attempt =
      t.attempt AND EXISTS (
    SELECT 1
    FROM source_orders so
    WHERE so.site_code = i.site_code AND so.order_no = i.order_no AND so.lot_no = i.lot_no AND
        so.cancelled_at IS NULL FOR SHARE
  )
  RETURNING i.item_id, i.site_code, i.order_no, i.lot_no
)
SELECT item_id
FROM f;

-- One round trip for a batch of standard production orders: `f` fences every claim, `n`
-- counts the claims per scope, `c` moves each scope's counter by that count at once (in
-- scope order: one lock order; created on first use, none of it past max), `v` gives the
-- claims the scope's numbers in claim order, `d` and `p` insert the documents and the
-- production orders. The assertions turn a lost claim or an exhausted scope into an error,
-- so that nothing of the batch commits and the items are settled one by one.
-- name: sch_complete_numbered
WITH t AS MATERIALIZED (
  SELECT (e->>0)::bigint AS item_id, e->>1 AS owner, (e->>2)::integer AS attempt, e->>3 AS scope,
      e->>4 AS title, o AS ord
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x (e, o)
),
f AS (
  UPDATE schedule_items i
  SET status = 'success', lease_until = NULL, updated_at = now()
  FROM t
  WHERE i.item_id = t.item_id AND i.status = 'processing' AND i.owner = t.owner AND i.attempt =
      t.attempt AND EXISTS (
    SELECT 1
    FROM source_orders so
    WHERE so.site_code = i.site_code AND so.order_no = i.order_no AND so.lot_no = i.lot_no AND
        so.cancelled_at IS NULL FOR SHARE
  )
  RETURNING i.item_id, i.site_code, i.order_no, i.lot_no
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
  SELECT so.site_code, so.order_no, so.lot_no, f.item_id, so.quantity, d.scope, d.value, d.number
  FROM v
  JOIN d ON d.scope = v.scope AND d.value = v.value
  JOIN f ON f.item_id = v.item_id
  JOIN source_orders so ON so.site_code = f.site_code AND so.order_no = f.order_no AND so.lot_no =
      f.lot_no
  RETURNING item_id
)
SELECT oo_assert((SELECT count(*) FROM f) = $2::bigint,
    'a claim in the batch was lost') AND oo_assert((SELECT count(*) FROM p) = $2::bigint,
    'a production scope of the batch is exhausted');

-- One round trip: number, document and production order together.
-- name: sch_produce_standard
WITH c AS (
  INSERT INTO doc_scopes AS s (scope, width, radix, max_value, last_value)
  VALUES ($1::text, $7::integer, $8::integer, $9::bigint, 1)
  ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1
  WHERE s.last_value < s.max_value
  RETURNING s.scope, s.last_value, s.width, s.radix
),
d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT scope, last_value, CASE WHEN radix = 10 THEN lpad((last_value)::text, greatest(width,
      length((last_value)::text)), '0') ELSE oo_format_number(last_value, radix, width) END,
      'issued', 'r' || radix || 'w' || width, $2::text, $10::text, NULL
  FROM c
  RETURNING *
)
INSERT INTO production_orders (site_code, order_no, lot_no, item_id, quantity, document_scope,
    document_value, document_number)
SELECT so.site_code, so.order_no, so.lot_no, $3::bigint, so.quantity, d.scope, d.value, d.number
FROM d, source_orders so
WHERE so.site_code = $4::text AND so.order_no = $5::text AND so.lot_no = $6::text
RETURNING site_code, order_no, lot_no, item_id, quantity, document_scope, document_value,
    document_number, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- The orphans on a run's keys ($1: JSON array of [site, order, lot]; null: every key), aborted
-- before the run takes them, in a transaction of its own (Scheduler::create_run). `c` finds
-- the keys that hold one (the given keys one by one, LATERAL, as sch_insert_items_for); `k`
-- shares their source-order rows one by one in key order (a nested loop keeps its outer
-- side's order) before any item is touched: the order of item creation and of cancel (row,
-- then items). A concurrent creation or reaper that aborted an orphan first leaves it not
-- `wait` any more, re-checked once the row lock is granted.
-- name: sch_abort_orphans
WITH c AS (
  SELECT i.site_code, i.order_no, i.lot_no
  FROM jsonb_array_elements($1::jsonb) e
  CROSS JOIN LATERAL (
    SELECT i.site_code, i.order_no, i.lot_no
    FROM schedule_items i
    WHERE i.site_code = e->>0 AND i.order_no = e->>1 AND i.lot_no = e->>2 AND i.status = 'wait' AND
        NOT EXISTS (
      SELECT 1
      FROM schedule_runs r
      WHERE r.run_id = i.run_id AND r.status IN ('creating',
          'running') AND r.heartbeat_at >= now() - $2::float8 * interval '1 millisecond'
    )
  ) i
  UNION
  SELECT i.site_code, i.order_no, i.lot_no
  FROM schedule_items i
  WHERE $1::jsonb IS NULL AND i.status = 'wait' AND NOT EXISTS (
    SELECT 1
    FROM schedule_runs r
    WHERE r.run_id = i.run_id AND r.status IN ('creating',
        'running') AND r.heartbeat_at >= now() - $2::float8 * interval '1 millisecond'
  )
), k AS MATERIALIZED (
  SELECT so.site_code, so.order_no, so.lot_no
  FROM (SELECT * FROM c ORDER BY site_code, order_no, lot_no) c
  CROSS JOIN LATERAL (
    SELECT s.site_code, s.order_no, s.lot_no
    FROM source_orders s
    WHERE s.site_code = c.site_code AND s.order_no = c.order_no AND s.lot_no = c.lot_no FOR SHARE
  ) so
)
UPDATE schedule_items i
SET status = 'aborted', error = 'run is not alive', updated_at = now()
FROM k
WHERE i.site_code = k.site_code AND i.order_no = k.order_no AND i.lot_no = k.lot_no AND i.status =
    'wait' AND NOT EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = i.run_id AND r.status IN ('creating',
      'running') AND r.heartbeat_at >= now() - $2::float8 * interval '1 millisecond'
)
RETURNING i.item_id;

-- name: sch_dead_runs
UPDATE schedule_runs
SET status = 'error', error = 'owner stopped heart-beating', finished_at = now()
WHERE status IN ('creating', 'running') AND heartbeat_at < now() - $1::float8 * interval
    '1 millisecond'
RETURNING run_id;

-- name: sch_orphan_waits
UPDATE schedule_items
SET status = 'aborted', error = 'run is not alive', updated_at = now()
WHERE status = 'wait' AND NOT EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = schedule_items.run_id AND r.status IN ('creating', 'running')
)
RETURNING item_id;

-- name: sch_expired_leases
UPDATE schedule_items
SET status = 'failed', error = 'lease expired', lease_until = NULL, updated_at = now()
WHERE status = 'processing' AND lease_until < now() AND NOT EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = schedule_items.run_id AND r.kind = 'legacy'
)
RETURNING item_id;

-- name: sch_get_run
SELECT r.run_id, r.kind, r.status, r.owner, r.error, to_char(r.created_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(r.finished_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), coalesce(sum(CASE WHEN i.status = 'wait' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'processing' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'success' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'failed' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'aborted' THEN 1 ELSE 0 END), 0)
FROM schedule_runs r
LEFT JOIN schedule_items i ON i.run_id = r.run_id
WHERE r.run_id = $1
GROUP BY r.run_id;

-- name: sch_list_runs
SELECT r.run_id, r.kind, r.status, r.owner, r.error, to_char(r.created_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(r.finished_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), coalesce(sum(CASE WHEN i.status = 'wait' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'processing' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'success' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'failed' THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN i.status = 'aborted' THEN 1 ELSE 0 END), 0)
FROM schedule_runs r
LEFT JOIN schedule_items i ON i.run_id = r.run_id
WHERE ($1::text IS NULL OR r.status = $1::text)
GROUP BY r.run_id
ORDER BY r.run_id DESC
LIMIT $2;

-- name: sch_list_items
SELECT item_id, run_id, site_code, order_no, lot_no, status, attempt, owner,
    to_char(lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), error,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM schedule_items
WHERE ($1::text IS NULL OR status = $1::text) AND ($2::text IS NULL OR site_code = $2::text) AND ($3::text
    IS NULL OR order_no = $3::text) AND ($4::text IS NULL OR lot_no = $4::text) AND ($5::bigint IS
    NULL OR run_id = $5::bigint) AND item_id > $6
ORDER BY item_id
LIMIT $7;

-- name: sch_list_production
SELECT site_code, order_no, lot_no, item_id, quantity, document_scope, document_value,
    document_number, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM production_orders
WHERE ($1::text IS NULL OR site_code = $1::text) AND item_id > $2
ORDER BY item_id
LIMIT $3;

-- name: sch_stuck_orders
SELECT f.site_code, f.order_no, f.lot_no
FROM schedule_key_facts f
WHERE NOT f.cancelled AND NOT f.has_success AND NOT f.has_live AND f.failed >= $1::bigint
ORDER BY 1, 2, 3;

-- name: sch_run_remaining
SELECT coalesce(sum(CASE WHEN status IN ('wait', 'processing') THEN 1 ELSE 0 END), 0), count(*)
FROM schedule_items
WHERE run_id = $1;

-- The keys are read from the failed items' partial index (only failed items, by key), grouped
-- by key; per key, laterally (one index probe each, never a hash of every item): its source
-- order, live and not cancelled, and whether it has a live or successful item (the live-item
-- index). A key counts when its failed items not re-queued reach the limit.
-- name: sch_list_exhausted
SELECT g.site_code, g.order_no, g.lot_no, g.total - s.requeued_failures, g.total,
    to_char(s.requeued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), l.error,
    to_char(l.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM (
  SELECT i.site_code, i.order_no, i.lot_no, count(*) AS total, max(i.item_id) AS last_item
  FROM schedule_items i
  WHERE i.status = 'failed' AND ($1::text IS NULL OR i.site_code = $1::text) AND (i.site_code,
      i.order_no, i.lot_no) > ($2::text, $3::text, $4::text)
  GROUP BY i.site_code, i.order_no, i.lot_no
) g
CROSS JOIN LATERAL (
  SELECT so.requeued_failures, so.requeued_at
  FROM source_orders so
  WHERE so.site_code = g.site_code AND so.order_no = g.order_no AND so.lot_no = g.lot_no AND
      so.cancelled_at IS NULL
  LIMIT 1
) s
LEFT JOIN LATERAL (
  SELECT 1 AS found
  FROM schedule_items x
  WHERE x.site_code = g.site_code AND x.order_no = g.order_no AND x.lot_no = g.lot_no AND x.status
      NOT IN ('failed', 'aborted')
  LIMIT 1
) v ON true
JOIN schedule_items l ON l.item_id = g.last_item
WHERE v.found IS NULL AND g.total - s.requeued_failures >= $5::bigint
ORDER BY g.site_code, g.order_no, g.lot_no
LIMIT $6;

-- The row lock on the source order serializes this with a second re-queue (which then
-- re-reads the row: nothing left to re-queue) and with a run's item creation (which
-- shares the row through schedule_key_facts and re-checks it). GREATEST: the count only
-- grows, even when read from an older snapshot.
-- name: sch_requeue_key
UPDATE source_orders so
SET requeued_failures = greatest(so.requeued_failures, (
  SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code AND i.order_no =
      so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed'
)), requeued_at = now()
WHERE so.site_code = $1 AND so.order_no = $2 AND so.lot_no = $3 AND so.cancelled_at IS NULL AND (
  SELECT count(*)
  FROM schedule_items i
  WHERE i.site_code = so.site_code AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND
      i.status = 'failed'
) - so.requeued_failures >= $4::bigint AND NOT EXISTS (
  SELECT 1
  FROM schedule_items i
  WHERE i.site_code = so.site_code AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND
      i.status IN ('wait', 'processing', 'success')
)
RETURNING 1;

-- name: sch_request_stop
UPDATE schedule_runs
SET stop_requested_at = coalesce(stop_requested_at, now())
WHERE run_id = $1 AND status IN ('creating', 'running')
RETURNING run_id;
