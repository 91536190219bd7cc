-- SQLite: expiring idempotency receipts.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: rc_expire_order
DELETE
FROM order_receipts
WHERE (customer_id, idempotency_key) IN (
  SELECT customer_id, idempotency_key
  FROM order_receipts
  WHERE created_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (?1 / 1000.0) || ' seconds')
  ORDER BY created_at
  LIMIT ?2
)
RETURNING 1;

-- name: rc_expire_document
DELETE
FROM document_receipts
WHERE (scope, idempotency_key) IN (
  SELECT scope, idempotency_key
  FROM document_receipts
  WHERE created_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (?1 / 1000.0) || ' seconds')
  ORDER BY created_at
  LIMIT ?2
)
RETURNING 1;

-- name: rc_expire_request
DELETE
FROM request_receipts
WHERE (route, scope, idempotency_key) IN (
  SELECT route, scope, idempotency_key
  FROM request_receipts
  WHERE created_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (?1 / 1000.0) || ' seconds')
  ORDER BY created_at
  LIMIT ?2
)
RETURNING 1;

-- name: rc_claim_request
INSERT INTO request_receipts (route, scope, idempotency_key, request)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT DO NOTHING
RETURNING 1;

-- name: rc_find_request
SELECT request, answer, run_id
FROM request_receipts
WHERE route = ?1 AND scope = ?2 AND idempotency_key = ?3;

-- name: rc_answer_request
UPDATE request_receipts
SET answer = ?4, run_id = ?5
WHERE route = ?1 AND scope = ?2 AND idempotency_key = ?3
RETURNING 1;
