-- SQLite: the event feed, its consumers, endpoints and deliveries.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: ev_feed
SELECT *
FROM (
  SELECT 'e', e.event_id, e.tx, e.type, e.key, e.occurred_at, e.data
  FROM event_feed e
  WHERE (e.tx, e.event_id) > (?1, ?2) AND (?3 = '' OR instr(',' || ?3 || ',',
      ',' || e.type || ',') > 0)
  ORDER BY e.tx, e.event_id
  LIMIT ?4
)
UNION ALL
SELECT *
FROM (
  SELECT 'h', e.event_id, e.tx, '', '', '', ''
  FROM events e
  ORDER BY e.tx DESC, e.event_id DESC
  LIMIT 1
);

-- name: ev_prime
SELECT 1;

-- name: ev_head
SELECT e.tx, e.event_id FROM events e ORDER BY e.tx DESC, e.event_id DESC LIMIT 1;

-- name: ev_lag
SELECT count(*), ((julianday('now') - julianday(min(x.occurred_at))) * 86400.0)
FROM (
  SELECT e.occurred_at
  FROM events e
  WHERE (e.tx, e.event_id) > (?1, ?2)
  ORDER BY e.tx, e.event_id
  LIMIT ?3
) x;

-- name: ev_held
SELECT NULL;

-- name: ev_consumer_get
SELECT name, after_tx, after_id, updated_at FROM event_consumers WHERE name = ?1;

-- name: ev_consumer_list
SELECT name, after_tx, after_id, updated_at FROM event_consumers ORDER BY name;

-- name: ev_consumer_put
INSERT INTO event_consumers (name, after_tx, after_id)
VALUES (?1, ?2, ?3)
ON CONFLICT (name) DO UPDATE SET after_tx = excluded.after_tx, after_id = excluded.after_id,
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
RETURNING name, after_tx, after_id, updated_at;

-- name: ev_consumer_delete
DELETE FROM event_consumers WHERE name = ?1 RETURNING name;

-- name: ev_endpoint_get
SELECT name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id, created_at,
    updated_at
FROM endpoints
WHERE name = ?1;

-- name: ev_endpoint_target
SELECT url, secret FROM endpoints WHERE name = ?1;

-- name: ev_endpoint_list
SELECT name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id, created_at,
    updated_at
FROM endpoints
ORDER BY name;

-- name: ev_endpoint_count
SELECT count(*) FROM endpoints;

-- name: ev_endpoint_put
INSERT INTO endpoints (name, url, types, secret, delivery, max_attempts, backoff_seconds, after_tx,
    after_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
ON CONFLICT (name) DO UPDATE SET url = excluded.url, types = excluded.types,
    secret = excluded.secret, delivery = excluded.delivery, max_attempts = excluded.max_attempts,
    backoff_seconds = excluded.backoff_seconds, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
RETURNING name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id, created_at,
    updated_at;

-- name: ev_endpoint_delete
DELETE FROM endpoints WHERE name = ?1 RETURNING name;

-- name: ev_endpoint_lock
SELECT types, after_tx, after_id FROM endpoints WHERE name = ?1;

-- name: ev_endpoint_advance
UPDATE endpoints SET after_tx = ?2, after_id = ?3 WHERE name = ?1;

-- name: ev_insert_deliveries
INSERT INTO deliveries (endpoint, event_id, ev_tx, key, status)
SELECT ?1, json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]'), json_extract(r.value,
    '$[2]'), 'pending'
FROM json_each(?2) r
WHERE true
ON CONFLICT DO NOTHING
RETURNING event_id;

-- name: ev_delivery_counts
SELECT d.endpoint, d.status, count(*), CASE WHEN d.status IN ('pending',
    'sending') THEN ((julianday('now') - julianday(min(e.occurred_at))) * 86400.0) END
FROM deliveries d
JOIN events e ON e.event_id = d.event_id
WHERE d.status <> 'delivered'
GROUP BY d.endpoint, d.status
ORDER BY d.endpoint, d.status;

-- name: ev_claim
UPDATE deliveries
SET status = 'sending', attempt = attempt + 1, owner = ?1, lease_until = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now', '+' || (?3 / 1000.0) || ' seconds'), mode = (
  SELECT ep.delivery
  FROM endpoints ep
  WHERE ep.name = deliveries.endpoint
), sent_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE (endpoint, event_id) IN (
  SELECT d.endpoint, d.event_id
  FROM deliveries d
  WHERE d.status = 'pending' AND d.next_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AND NOT EXISTS (
    SELECT p.event_id
    FROM deliveries p
    WHERE p.endpoint = d.endpoint AND p.key = d.key AND p.status <> 'delivered' AND (p.ev_tx,
        p.event_id) < (d.ev_tx, d.event_id)
  )
  ORDER BY d.next_at, d.ev_tx, d.event_id
  LIMIT ?2
)
RETURNING endpoint, (SELECT ep.url FROM endpoints ep WHERE ep.name = deliveries.endpoint), (
  SELECT ep.secret
  FROM endpoints ep
  WHERE ep.name = deliveries.endpoint
), mode, (
  SELECT ep.max_attempts
  FROM endpoints ep
  WHERE ep.name = deliveries.endpoint
), (
  SELECT ep.backoff_seconds
  FROM endpoints ep
  WHERE ep.name = deliveries.endpoint
), attempt, budget_from, event_id, ev_tx, (
  SELECT e.type
  FROM event_feed e
  WHERE e.event_id = deliveries.event_id
), key, (
  SELECT e.occurred_at
  FROM event_feed e
  WHERE e.event_id = deliveries.event_id
), (
  SELECT e.data
  FROM event_feed e
  WHERE e.event_id = deliveries.event_id
);

-- name: ev_settle
UPDATE deliveries
SET status = o.status, lease_until = NULL, next_at = CASE WHEN o.status = 'pending' THEN strftime('%Y-%m-%dT%H:%M:%fZ',
    'now', '+' || (o.retry_ms / 1000.0) || ' seconds') ELSE next_at END, last_error = o.error,
    last_status = o.http_status, delivered_at = CASE WHEN o.status = 'delivered' THEN strftime('%Y-%m-%dT%H:%M:%fZ',
    'now') ELSE delivered_at END
FROM (
  SELECT json_extract(value, '$.endpoint') AS endpoint, json_extract(value,
      '$.event_id') AS event_id, json_extract(value, '$.owner') AS owner, json_extract(value,
      '$.attempt') AS attempt, json_extract(value, '$.status') AS status, json_extract(value,
      '$.retry_ms') AS retry_ms, json_extract(value, '$.error') AS error, json_extract(value,
      '$.http_status') AS http_status
  FROM json_each(?1)
) AS o
WHERE deliveries.endpoint = o.endpoint AND deliveries.event_id = o.event_id AND deliveries.owner =
    o.owner AND deliveries.attempt = o.attempt AND deliveries.status = 'sending'
RETURNING endpoint, event_id;

-- name: ev_reap
UPDATE deliveries
SET status = CASE WHEN mode = 'at_most_once' THEN 'in_doubt' WHEN attempt - budget_from >= (
  SELECT ep.max_attempts
  FROM endpoints ep
  WHERE ep.name = deliveries.endpoint
) THEN 'dead' ELSE 'pending' END, lease_until = NULL, next_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
    last_error = 'lease expired: the sender stopped before it recorded an outcome'
WHERE status = 'sending' AND lease_until < strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
RETURNING endpoint, event_id, status;

-- name: ev_resolve
UPDATE deliveries
SET status = CASE WHEN ?3 = 1 THEN 'delivered' ELSE 'pending' END,
    resolution = CASE WHEN ?3 = 1 THEN 'delivered' ELSE 'resend' END, budget_from = attempt,
    next_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), delivered_at = CASE WHEN ?3 = 1 THEN strftime('%Y-%m-%dT%H:%M:%fZ',
    'now') END
WHERE endpoint = ?1 AND event_id = ?2 AND status = 'in_doubt'
RETURNING status;

-- name: ev_redeliver
UPDATE deliveries
SET status = 'pending', resolution = 'redeliver', budget_from = attempt, next_at = strftime('%Y-%m-%dT%H:%M:%fZ',
    'now')
WHERE endpoint = ?1 AND event_id IN (SELECT value FROM json_each(?2)) AND status = 'dead'
RETURNING event_id;

-- name: ev_delivery_get
SELECT d.endpoint, e.event_id, e.tx, e.type, e.key, e.occurred_at, e.data, d.status, d.mode,
    d.attempt, d.budget_from, d.owner, d.lease_until, d.next_at, d.last_error, d.last_status,
    d.resolution, d.created_at, d.sent_at, d.delivered_at, (
  SELECT p.event_id
  FROM deliveries p
  WHERE p.endpoint = d.endpoint AND p.key = d.key AND p.status <> 'delivered' AND (p.ev_tx,
      p.event_id) < (d.ev_tx, d.event_id)
  ORDER BY p.ev_tx, p.event_id
  LIMIT 1
)
FROM deliveries d
JOIN event_feed e ON e.event_id = d.event_id
WHERE d.endpoint = ?1 AND d.event_id = ?2;

-- name: ev_delivery_list
SELECT d.endpoint, e.event_id, e.tx, e.type, e.key, e.occurred_at, e.data, d.status, d.mode,
    d.attempt, d.budget_from, d.owner, d.lease_until, d.next_at, d.last_error, d.last_status,
    d.resolution, d.created_at, d.sent_at, d.delivered_at, (
  SELECT p.event_id
  FROM deliveries p
  WHERE p.endpoint = d.endpoint AND p.key = d.key AND p.status <> 'delivered' AND (p.ev_tx,
      p.event_id) < (d.ev_tx, d.event_id)
  ORDER BY p.ev_tx, p.event_id
  LIMIT 1
)
FROM deliveries d
JOIN event_feed e ON e.event_id = d.event_id
WHERE d.endpoint = ?1 AND (?2 IS NULL OR d.status = ?2 OR (?2 = 'pending' AND d.status = 'sending'))
    AND d.event_id > ?3
ORDER BY d.event_id
LIMIT ?4;

-- name: ev_rebase_clock
SELECT 0 WHERE 0;

-- name: ev_set_shift
SELECT 1;
