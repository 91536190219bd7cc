-- SQLite: document numbering: counters, documents and their receipts.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it, or for the engine's own steps in its operations (numbering_ops.cpp).

-- name: num_find_receipt
SELECT r.title, d.scope, d.value, d.number, d.origin, d.scheme, d.title, d.created_at, d.principal,
    d.header, (
  SELECT '[' || group_concat(l.data, ',') || ']'
  FROM (
    SELECT data
    FROM document_lines
    WHERE scope = d.scope AND value = d.value
    ORDER BY line_no
  ) l
)
FROM document_receipts r
JOIN documents d ON d.scope = r.scope AND d.value = r.value
WHERE r.scope = ?1 AND r.idempotency_key = ?2;

-- SQLite has no DML in CTEs: the counter moves first (under the write lock that
-- BEGIN IMMEDIATE took), then the document takes the value it moved to.
-- name: num_bump_counter
INSERT INTO doc_scopes AS s (scope, last_value)
VALUES (?1, 1)
ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1
WHERE s.last_value < s.max_value
RETURNING last_value;

-- name: num_insert_issued
INSERT INTO documents AS d (scope, value, number, origin, scheme, title, principal, header)
SELECT scope, last_value, oo_format_number(last_value, radix, width), 'issued',
    'r' || radix || 'w' || width, ?2, ?3, ?4
FROM doc_scopes
WHERE scope = ?1
RETURNING scope, value, number, origin, scheme, title, created_at, principal, header;

-- json_each's value of an object is its text as sent (canonical, minified).
-- name: num_insert_lines
INSERT INTO document_lines (scope, value, line_no, data)
SELECT ?1, ?2, key + 1, value
FROM json_each(?3);

-- name: num_insert_receipt
INSERT INTO document_receipts (scope, idempotency_key, title, value) VALUES (?1, ?2, ?3, ?4);

-- The lane holds the database's one write lock: reading the counter is locking it.
-- name: num_lock_scope
SELECT width, radix, max_value, last_value FROM doc_scopes WHERE scope = ?1;

-- name: num_read_scope
SELECT width, radix, max_value, last_value FROM doc_scopes WHERE scope = ?1;

-- Applied only where the scope's issued numbers keep one look: its width and radix stay
-- while it has issued documents, and max stays at or above the counter. The condition is
-- the update's own WHERE, on the counter row the statement locks (the caller locked it
-- first, so this statement's snapshot sees every document committed under it); where the
-- row was missing when the caller looked (?5 = 0) an insert that meets a row created
-- meanwhile changes nothing. No row: refused.
-- name: num_upsert_format
INSERT INTO doc_scopes AS s (scope, width, radix, max_value)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (scope) DO UPDATE SET width = excluded.width, radix = excluded.radix,
    max_value = excluded.max_value
WHERE ?5 = 1 AND s.last_value <= excluded.max_value AND ((s.width = excluded.width AND s.radix =
    excluded.radix) OR NOT EXISTS (
  SELECT 1 FROM documents d WHERE d.scope = s.scope AND d.origin = 'issued'
))
RETURNING scope;

-- name: num_ensure_scope
INSERT INTO doc_scopes (scope, width, radix, max_value)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT DO NOTHING;

-- name: num_scope_info
SELECT s.scope, s.width, s.radix, s.max_value, s.last_value, (
  SELECT count(*)
  FROM documents d
  WHERE d.scope = s.scope AND d.origin = 'issued'
), (
  SELECT count(*)
  FROM documents d
  WHERE d.scope = s.scope AND d.origin = 'legacy'
)
FROM doc_scopes s
WHERE s.scope = ?1;

-- name: num_list_documents
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title, d.created_at, d.principal, d.header,
    (
  SELECT '[' || group_concat(l.data, ',') || ']'
  FROM (
    SELECT data
    FROM document_lines
    WHERE scope = d.scope AND value = d.value
    ORDER BY line_no
  ) l
)
FROM documents d
WHERE d.scope = ?1 AND d.value > ?2
ORDER BY d.value
LIMIT ?3;

-- name: num_get_document
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title, d.created_at, d.principal, d.header,
    (
  SELECT '[' || group_concat(l.data, ',') || ']'
  FROM (
    SELECT data
    FROM document_lines
    WHERE scope = d.scope AND value = d.value
    ORDER BY line_no
  ) l
)
FROM documents d
WHERE d.scope = ?1 AND d.value = ?2;

-- name: num_existing_values
SELECT value
FROM documents
WHERE scope = ?1 AND value IN (SELECT value FROM json_each('[' || ?2 || ']'))
ORDER BY value;

-- name: num_insert_legacy
INSERT INTO documents (scope, value, number, origin, scheme, title, principal)
VALUES (?1, ?2, ?3, 'legacy', ?4, ?5, ?6);

-- name: num_raise_last
UPDATE doc_scopes SET last_value = max(last_value, ?2) WHERE scope = ?1;

-- name: num_find_receipts
SELECT r.idempotency_key, r.title, d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    d.created_at, d.principal, d.header, (
  SELECT '[' || group_concat(l.data, ',') || ']'
  FROM (
    SELECT data
    FROM document_lines
    WHERE scope = d.scope AND value = d.value
    ORDER BY line_no
  ) l
)
FROM document_receipts r
JOIN documents d ON d.scope = r.scope AND d.value = r.value
WHERE r.scope = ?1 AND r.idempotency_key IN (SELECT value FROM json_each(?2));

-- A batch under the write lock BEGIN IMMEDIATE took: the counter, then every document
-- in one statement (json_each's key is the document's index), then every receipt.
-- Its parameters are (scope, last, documents JSON array of [title, principal, header,
-- lines]).
-- name: num_insert_many
INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
SELECT s.scope, ?2 + t.key + 1, oo_format_number(?2 + t.key + 1, s.radix, s.width), 'issued',
    'r' || s.radix || 'w' || s.width, json_extract(t.value, '$[0]'), json_extract(t.value, '$[1]'),
    json_extract(t.value, '$[2]')
FROM doc_scopes s, json_each(?3) t
WHERE s.scope = ?1
RETURNING scope, value, number, origin, scheme, title, created_at, principal, header;

-- name: num_insert_many_lines
INSERT INTO document_lines (scope, value, line_no, data)
SELECT ?1, ?2 + t.key + 1, l.key + 1, l.value
FROM json_each(?3) t, json_each(json_extract(t.value, '$[3]')) l;

-- name: num_set_counter
UPDATE doc_scopes SET last_value = ?2 WHERE scope = ?1;

-- name: num_insert_receipts
INSERT INTO document_receipts (scope, idempotency_key, title, value)
SELECT ?1, json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), json_extract(e.value,
    '$[2]')
FROM json_each(?2) AS e;
