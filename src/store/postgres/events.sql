-- PostgreSQL: the event feed, its consumers, endpoints and deliveries.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- One statement, so the page and the head come from one snapshot and one horizon: read
-- apart, the head could include events that committed after the page was read.
-- name: ev_feed
WITH h AS MATERIALIZED (SELECT oo_event_horizon() AS x),
p AS (
  SELECT e.*
  FROM events e, h
  WHERE (e.tx, e.event_id) > ($1::bigint, $2::bigint) AND e.tx < h.x AND ($3::text = '' OR e.type =
      ANY (string_to_array($3::text, ',')))
  ORDER BY e.tx, e.event_id
  LIMIT $4
),
t AS (
  SELECT e.tx, e.event_id
  FROM events e, h
  WHERE e.tx < h.x
  ORDER BY e.tx DESC, e.event_id DESC
  LIMIT 1
)
SELECT 'e', p.event_id, p.tx, p.type, p.key, to_char(p.occurred_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), coalesce(CASE p.type WHEN 'order.placed' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id ||
      ',"total_cents":' || xo.total_cents || ',"lines":[' || coalesce((
    SELECT string_agg('{"line_no":' || xl.line_no || ',"sku_id":' || xl.sku_id || ',"quantity":' ||
        xl.quantity || ',"unit_price_cents":' || xl.unit_price_cents || '}',
        ',' ORDER BY xl.line_no) FROM order_lines xl WHERE xl.order_id = xo.order_id
  ), '') || ']}' FROM orders xo WHERE xo.order_id = p.ref
) WHEN 'order.cancelled' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id || '}' FROM
      orders xo WHERE xo.order_id = p.ref
) WHEN 'production_order.created' THEN (
  SELECT '{"site_code":' || oo_js(xp.site_code) || ',"order_no":' || oo_js(xp.order_no) ||
      ',"lot_no":' || oo_js(xp.lot_no) || ',"quantity":' || xp.quantity || ',"document_scope":' ||
      oo_js(xp.document_scope) || ',"document_number":' || oo_js(xp.document_number) || ',"run_id":'
      || coalesce(xi.run_id::text, 'null') || ',"item_id":' || xp.item_id || '}' FROM
      production_orders xp LEFT JOIN schedule_items xi ON xi.item_id = xp.item_id WHERE xp.item_id =
      p.ref
) WHEN 'document.issued' THEN (
  SELECT '{"scope":' || oo_js(xd.scope) || ',"value":' || xd.value || ',"number":' || oo_js(xd.number)
      || ',"title":' || oo_js(xd.title) || '}' FROM documents xd WHERE xd.scope = p.ref_scope AND
      xd.value = p.ref
) WHEN 'run.finished' THEN (
  SELECT '{"run_id":' || xr.run_id || ',"kind":' || oo_js(xr.kind) || ',"status":' || oo_js(xr.status)
      || ',"error":' || oo_js(xr.error) || ',"created_at":' || oo_utc(xr.created_at) || '}' FROM
      schedule_runs xr WHERE xr.run_id = p.ref
) END, 'null')
FROM p
UNION ALL
SELECT 'h', t.event_id, t.tx, '', '', '', ''
FROM t;

-- name: ev_prime
SELECT count(*) FROM pg_stat_activity;

-- name: ev_head
SELECT e.tx, e.event_id
FROM events e
WHERE e.tx < oo_event_horizon()
ORDER BY e.tx DESC, e.event_id DESC
LIMIT 1;

-- name: ev_lag
SELECT count(*), extract(epoch FROM now() - min(x.occurred_at))
FROM (
  SELECT e.occurred_at
  FROM events e
  WHERE (e.tx, e.event_id) > ($1::bigint, $2::bigint) AND e.tx < oo_event_horizon()
  ORDER BY e.tx, e.event_id
  LIMIT $3
) x;

-- name: ev_held
SELECT extract(epoch FROM now() - min(e.occurred_at)) FROM events e WHERE e.tx >= oo_event_horizon();

-- name: ev_consumer_get
SELECT name, after_tx, after_id, to_char(updated_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM event_consumers
WHERE name = $1;

-- name: ev_consumer_list
SELECT name, after_tx, after_id, to_char(updated_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM event_consumers
ORDER BY name;

-- name: ev_consumer_put
INSERT INTO event_consumers (name, after_tx, after_id)
VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET after_tx = excluded.after_tx, after_id = excluded.after_id,
    updated_at = now()
RETURNING name, after_tx, after_id, to_char(updated_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- name: ev_consumer_delete
DELETE FROM event_consumers WHERE name = $1 RETURNING name;

-- name: ev_endpoint_get
SELECT name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM endpoints
WHERE name = $1;

-- name: ev_endpoint_target
SELECT url, secret FROM endpoints WHERE name = $1;

-- name: ev_endpoint_list
SELECT name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM endpoints
ORDER BY name;

-- name: ev_endpoint_count
SELECT count(*) FROM endpoints;

-- name: ev_endpoint_put
INSERT INTO endpoints (name, url, types, secret, delivery, max_attempts, backoff_seconds, after_tx,
    after_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (name) DO UPDATE SET url = excluded.url, types = excluded.types,
    secret = excluded.secret, delivery = excluded.delivery, max_attempts = excluded.max_attempts,
    backoff_seconds = excluded.backoff_seconds, updated_at = now()
RETURNING name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- name: ev_endpoint_delete
DELETE FROM endpoints WHERE name = $1 RETURNING name;

-- name: ev_endpoint_lock
SELECT types, after_tx, after_id FROM endpoints WHERE name = $1 FOR UPDATE SKIP LOCKED;

-- name: ev_endpoint_advance
UPDATE endpoints SET after_tx = $2, after_id = $3 WHERE name = $1;

-- name: ev_insert_deliveries
INSERT INTO deliveries (endpoint, event_id, ev_tx, key, status)
SELECT $1, (r->>0)::bigint, (r->>1)::bigint, r->>2, 'pending'
FROM jsonb_array_elements($2::jsonb) r
ON CONFLICT DO NOTHING
RETURNING event_id;

-- name: ev_delivery_counts
SELECT d.endpoint, d.status, count(*), CASE WHEN d.status IN ('pending',
    'sending') THEN extract(epoch FROM now() - min(e.occurred_at)) END
FROM deliveries d
JOIN events e ON e.event_id = d.event_id
WHERE d.status <> 'delivered'
GROUP BY d.endpoint, d.status
ORDER BY d.endpoint, d.status;

-- The window is read from the front of deliveries_due in its order and stops, whatever the
-- statistics say (an anti-join planned from a table of delivered rows once took seconds
-- per claim). A windowed delivery that waits for an earlier one of its key is parked
-- (next_at 'infinity') rather than claimed, so waiting ones never fill the window.
-- name: ev_claim
WITH w AS (
  SELECT d.endpoint, d.event_id, d.ev_tx, d.key, d.next_at
  FROM deliveries d
  WHERE d.status = 'pending' AND d.next_at <= now()
  ORDER BY d.next_at, d.ev_tx, d.event_id
  LIMIT $2 FOR
  UPDATE OF d SKIP LOCKED
),
b AS (
  SELECT w.*, EXISTS (
    SELECT p.event_id
    FROM deliveries p
    WHERE p.endpoint = w.endpoint AND p.key = w.key AND p.status <> 'delivered' AND (p.ev_tx,
        p.event_id) < (w.ev_tx, w.event_id)
  ) AS waits
  FROM w
),
parked AS (
  UPDATE deliveries d
  SET next_at = 'infinity'
  FROM b
  WHERE b.waits AND d.endpoint = b.endpoint AND d.event_id = b.event_id
)
UPDATE deliveries d
SET status = 'sending', attempt = d.attempt + 1, owner = $1,
    lease_until = now() + $3::float8 * interval '1 millisecond', mode = ep.delivery, sent_at = now()
FROM b, endpoints ep, events e
WHERE NOT b.waits AND d.endpoint = b.endpoint AND d.event_id = b.event_id AND ep.name = d.endpoint
    AND e.event_id = d.event_id
RETURNING d.endpoint, ep.url, ep.secret, ep.delivery, ep.max_attempts, ep.backoff_seconds, d.attempt,
    d.budget_from, e.event_id, e.tx, e.type, e.key, to_char(e.occurred_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), coalesce(CASE e.type WHEN 'order.placed' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id ||
      ',"total_cents":' || xo.total_cents || ',"lines":[' || coalesce((
    SELECT string_agg('{"line_no":' || xl.line_no || ',"sku_id":' || xl.sku_id || ',"quantity":' ||
        xl.quantity || ',"unit_price_cents":' || xl.unit_price_cents || '}',
        ',' ORDER BY xl.line_no) FROM order_lines xl WHERE xl.order_id = xo.order_id
  ), '') || ']}' FROM orders xo WHERE xo.order_id = e.ref
) WHEN 'order.cancelled' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id || '}' FROM
      orders xo WHERE xo.order_id = e.ref
) WHEN 'production_order.created' THEN (
  SELECT '{"site_code":' || oo_js(xp.site_code) || ',"order_no":' || oo_js(xp.order_no) ||
      ',"lot_no":' || oo_js(xp.lot_no) || ',"quantity":' || xp.quantity || ',"document_scope":' ||
      oo_js(xp.document_scope) || ',"document_number":' || oo_js(xp.document_number) || ',"run_id":'
      || coalesce(xi.run_id::text, 'null') || ',"item_id":' || xp.item_id || '}' FROM
      production_orders xp LEFT JOIN schedule_items xi ON xi.item_id = xp.item_id WHERE xp.item_id =
      e.ref
) WHEN 'document.issued' THEN (
  SELECT '{"scope":' || oo_js(xd.scope) || ',"value":' || xd.value || ',"number":' || oo_js(xd.number)
      || ',"title":' || oo_js(xd.title) || '}' FROM documents xd WHERE xd.scope = e.ref_scope AND
      xd.value = e.ref
) WHEN 'run.finished' THEN (
  SELECT '{"run_id":' || xr.run_id || ',"kind":' || oo_js(xr.kind) || ',"status":' || oo_js(xr.status)
      || ',"error":' || oo_js(xr.error) || ',"created_at":' || oo_utc(xr.created_at) || '}' FROM
      schedule_runs xr WHERE xr.run_id = e.ref
) END, 'null');

-- A delivered one releases the parked deliveries of its key; the next claim parks again
-- any that still waits for another.
-- name: ev_settle
WITH s AS (
  UPDATE deliveries d
  SET status = o.status, lease_until = NULL, next_at = CASE WHEN o.status = 'pending' THEN now() +
      o.retry_ms * interval '1 millisecond' ELSE d.next_at END, last_error = o.error,
      last_status = o.http_status, delivered_at = CASE WHEN o.status = 'delivered' THEN now() ELSE
      d.delivered_at END
  FROM jsonb_to_recordset($1::jsonb) AS o(endpoint text, event_id bigint, owner text,
      attempt integer, status text, retry_ms bigint, error text, http_status integer)
  WHERE d.endpoint = o.endpoint AND d.event_id = o.event_id AND d.owner = o.owner AND d.attempt =
      o.attempt AND d.status = 'sending'
  RETURNING d.endpoint, d.event_id, d.key, d.status
),
u AS (
  UPDATE deliveries f
  SET next_at = now()
  FROM (SELECT s.endpoint, s.key FROM s WHERE s.status = 'delivered') k
  WHERE f.endpoint = k.endpoint AND f.key = k.key AND f.status = 'pending' AND f.next_at =
      'infinity'
)
SELECT endpoint, event_id
FROM s;

-- Also releases a parked delivery that waits for nothing any more (its key's earlier one
-- settled delivered by an operator's word, or by a settle that raced the parking).
-- name: ev_reap
WITH u AS (
  UPDATE deliveries f
  SET next_at = now()
  WHERE f.status = 'pending' AND f.next_at = 'infinity' AND NOT EXISTS (
    SELECT p.event_id
    FROM deliveries p
    WHERE p.endpoint = f.endpoint AND p.key = f.key AND p.status <> 'delivered' AND (p.ev_tx,
        p.event_id) < (f.ev_tx, f.event_id)
  )
)
UPDATE deliveries d
SET status = CASE WHEN d.mode = 'at_most_once' THEN 'in_doubt' WHEN d.attempt - d.budget_from >=
    ep.max_attempts THEN 'dead' ELSE 'pending' END, lease_until = NULL, next_at = now(),
    last_error = 'lease expired: the sender stopped before it recorded an outcome'
FROM endpoints ep
WHERE ep.name = d.endpoint AND d.status = 'sending' AND d.lease_until < now()
RETURNING d.endpoint, d.event_id, d.status;

-- name: ev_resolve
UPDATE deliveries
SET status = CASE WHEN $3 = 1 THEN 'delivered' ELSE 'pending' END,
    resolution = CASE WHEN $3 = 1 THEN 'delivered' ELSE 'resend' END, budget_from = attempt,
    next_at = now(), delivered_at = CASE WHEN $3 = 1 THEN now() END
WHERE endpoint = $1 AND event_id = $2 AND status = 'in_doubt'
RETURNING status;

-- name: ev_redeliver
UPDATE deliveries
SET status = 'pending', resolution = 'redeliver', budget_from = attempt, next_at = now()
WHERE endpoint = $1 AND event_id IN (SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb))
    AND status = 'dead'
RETURNING event_id;

-- name: ev_delivery_get
SELECT d.endpoint, e.event_id, e.tx, e.type, e.key, to_char(e.occurred_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), coalesce(CASE e.type WHEN 'order.placed' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id ||
      ',"total_cents":' || xo.total_cents || ',"lines":[' || coalesce((
    SELECT string_agg('{"line_no":' || xl.line_no || ',"sku_id":' || xl.sku_id || ',"quantity":' ||
        xl.quantity || ',"unit_price_cents":' || xl.unit_price_cents || '}',
        ',' ORDER BY xl.line_no) FROM order_lines xl WHERE xl.order_id = xo.order_id
  ), '') || ']}' FROM orders xo WHERE xo.order_id = e.ref
) WHEN 'order.cancelled' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id || '}' FROM
      orders xo WHERE xo.order_id = e.ref
) WHEN 'production_order.created' THEN (
  SELECT '{"site_code":' || oo_js(xp.site_code) || ',"order_no":' || oo_js(xp.order_no) ||
      ',"lot_no":' || oo_js(xp.lot_no) || ',"quantity":' || xp.quantity || ',"document_scope":' ||
      oo_js(xp.document_scope) || ',"document_number":' || oo_js(xp.document_number) || ',"run_id":'
      || coalesce(xi.run_id::text, 'null') || ',"item_id":' || xp.item_id || '}' FROM
      production_orders xp LEFT JOIN schedule_items xi ON xi.item_id = xp.item_id WHERE xp.item_id =
      e.ref
) WHEN 'document.issued' THEN (
  SELECT '{"scope":' || oo_js(xd.scope) || ',"value":' || xd.value || ',"number":' || oo_js(xd.number)
      || ',"title":' || oo_js(xd.title) || '}' FROM documents xd WHERE xd.scope = e.ref_scope AND
      xd.value = e.ref
) WHEN 'run.finished' THEN (
  SELECT '{"run_id":' || xr.run_id || ',"kind":' || oo_js(xr.kind) || ',"status":' || oo_js(xr.status)
      || ',"error":' || oo_js(xr.error) || ',"created_at":' || oo_utc(xr.created_at) || '}' FROM
      schedule_runs xr WHERE xr.run_id = e.ref
) END, 'null'), d.status, d.mode, d.attempt, d.budget_from, d.owner,
    to_char(d.lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(d.next_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.last_error,
    d.last_status, d.resolution, to_char(d.created_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(d.sent_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(d.delivered_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), (
  SELECT p.event_id
  FROM deliveries p
  WHERE p.endpoint = d.endpoint AND p.key = d.key AND p.status <> 'delivered' AND (p.ev_tx,
      p.event_id) < (d.ev_tx, d.event_id)
  ORDER BY p.ev_tx, p.event_id
  LIMIT 1
)
FROM deliveries d
JOIN events e ON e.event_id = d.event_id
WHERE d.endpoint = $1 AND d.event_id = $2;

-- name: ev_delivery_list
SELECT d.endpoint, e.event_id, e.tx, e.type, e.key, to_char(e.occurred_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), coalesce(CASE e.type WHEN 'order.placed' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id ||
      ',"total_cents":' || xo.total_cents || ',"lines":[' || coalesce((
    SELECT string_agg('{"line_no":' || xl.line_no || ',"sku_id":' || xl.sku_id || ',"quantity":' ||
        xl.quantity || ',"unit_price_cents":' || xl.unit_price_cents || '}',
        ',' ORDER BY xl.line_no) FROM order_lines xl WHERE xl.order_id = xo.order_id
  ), '') || ']}' FROM orders xo WHERE xo.order_id = e.ref
) WHEN 'order.cancelled' THEN (
  SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) ||
      ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id || '}' FROM
      orders xo WHERE xo.order_id = e.ref
) WHEN 'production_order.created' THEN (
  SELECT '{"site_code":' || oo_js(xp.site_code) || ',"order_no":' || oo_js(xp.order_no) ||
      ',"lot_no":' || oo_js(xp.lot_no) || ',"quantity":' || xp.quantity || ',"document_scope":' ||
      oo_js(xp.document_scope) || ',"document_number":' || oo_js(xp.document_number) || ',"run_id":'
      || coalesce(xi.run_id::text, 'null') || ',"item_id":' || xp.item_id || '}' FROM
      production_orders xp LEFT JOIN schedule_items xi ON xi.item_id = xp.item_id WHERE xp.item_id =
      e.ref
) WHEN 'document.issued' THEN (
  SELECT '{"scope":' || oo_js(xd.scope) || ',"value":' || xd.value || ',"number":' || oo_js(xd.number)
      || ',"title":' || oo_js(xd.title) || '}' FROM documents xd WHERE xd.scope = e.ref_scope AND
      xd.value = e.ref
) WHEN 'run.finished' THEN (
  SELECT '{"run_id":' || xr.run_id || ',"kind":' || oo_js(xr.kind) || ',"status":' || oo_js(xr.status)
      || ',"error":' || oo_js(xr.error) || ',"created_at":' || oo_utc(xr.created_at) || '}' FROM
      schedule_runs xr WHERE xr.run_id = e.ref
) END, 'null'), d.status, d.mode, d.attempt, d.budget_from, d.owner,
    to_char(d.lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(d.next_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.last_error,
    d.last_status, d.resolution, to_char(d.created_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(d.sent_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(d.delivered_at AT TIME ZONE 'UTC',
    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), (
  SELECT p.event_id
  FROM deliveries p
  WHERE p.endpoint = d.endpoint AND p.key = d.key AND p.status <> 'delivered' AND (p.ev_tx,
      p.event_id) < (d.ev_tx, d.event_id)
  ORDER BY p.ev_tx, p.event_id
  LIMIT 1
)
FROM deliveries d
JOIN events e ON e.event_id = d.event_id
WHERE d.endpoint = $1 AND ($2::text IS NULL OR d.status = $2::text OR ($2::text = 'pending' AND
    d.status = 'sending')) AND d.event_id > $3
ORDER BY d.event_id
LIMIT $4;

-- name: ev_rebase_clock
SELECT max(tx) + 1 - pg_current_xact_id()::text::bigint
FROM events
HAVING max(tx) >= pg_current_xact_id()::text::bigint + oo_event_shift();

-- name: ev_set_shift
CREATE OR REPLACE FUNCTION oo_event_shift() RETURNS bigint LANGUAGE sql IMMUTABLE AS
    $$ SELECT {shift}::bigint $$;
