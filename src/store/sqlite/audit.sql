-- SQLite: the audit trail and its per-minute counts.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: au_record
INSERT INTO operator_actions (principal, role, action, target, status, summary, outcome)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
RETURNING action_id;

-- name: au_finish
UPDATE operator_actions
SET status = ?2, target = ?3, summary = ?4
WHERE action_id = ?1
RETURNING action_id;

-- name: au_list
SELECT action_id, at, principal, role, action, target, status, summary, outcome
FROM operator_actions
WHERE (?1 IS NULL OR principal = ?1) AND (?2 IS NULL OR action = ?2) AND action_id < ?3
ORDER BY action_id DESC
LIMIT ?4;

-- name: au_orders_per_minute
SELECT substr(created_at, 1, 16), count(*) FROM orders WHERE created_at >= ?1  GROUP BY 1 ORDER BY 1;

-- name: au_items_per_minute
SELECT substr(created_at, 1, 16), count(*)
FROM production_orders
WHERE created_at >= ?1
GROUP BY 1
ORDER BY 1;

-- name: au_numbers_per_minute
SELECT substr(created_at, 1, 16), count(*)
FROM documents
WHERE created_at >= ?1 AND origin = 'issued'
GROUP BY 1
ORDER BY 1;
