-- PostgreSQL: document numbering: counters, documents and their receipts.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it, or for the engine's own steps in its operations (numbering_ops.cpp).

-- name: num_find_receipt
SELECT r.title, d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header,
    (
  SELECT '[' || string_agg(l.data, ',' ORDER BY l.line_no) || ']'
  FROM document_lines l
  WHERE l.scope = d.scope AND l.value = d.value
)
FROM document_receipts r
JOIN documents d ON d.scope = r.scope AND d.value = r.value
WHERE r.scope = $1 AND r.idempotency_key = $2;

-- One statement, one round trip.
-- name: num_insert_issued
WITH c AS (
  INSERT INTO doc_scopes AS s (scope, width, radix, max_value, last_value)
  VALUES ($1, DEFAULT, DEFAULT, DEFAULT, 1)
  ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1
  WHERE s.last_value < s.max_value
  RETURNING s.scope, s.last_value, s.width, s.radix
),
d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT scope, last_value, CASE WHEN radix = 10 THEN lpad((last_value)::text, greatest(width,
      length((last_value)::text)), '0') ELSE oo_format_number(last_value, radix, width) END,
      'issued', 'r' || radix || 'w' || width, $2, $3, $4
  FROM c
  RETURNING *
),
dl AS (
  INSERT INTO document_lines (scope, value, line_no, data)
  SELECT d.scope, d.value, t.n, t.x::text
  FROM d
  CROSS JOIN json_array_elements($5::json) WITH ORDINALITY AS t(x, n)
)
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header
FROM d;

-- name: num_insert_receipt
INSERT INTO document_receipts (scope, idempotency_key, title, value) VALUES ($1, $2, $3, $4);

-- name: num_lock_scope
SELECT width, radix, max_value, last_value FROM doc_scopes WHERE scope = $1 FOR UPDATE;

-- name: num_read_scope
SELECT width, radix, max_value, last_value FROM doc_scopes WHERE scope = $1;

-- Applied only where the scope's issued numbers keep one look: its width and radix stay
-- while it has issued documents, and max stays at or above the counter. The condition is
-- the update's own WHERE, on the counter row the statement locks (the caller locked it
-- first, so this statement's snapshot sees every document committed under it); where the
-- row was missing when the caller looked ($5 = 0) an insert that meets a row created
-- meanwhile changes nothing. No row: refused.
-- name: num_upsert_format
INSERT INTO doc_scopes AS s (scope, width, radix, max_value)
VALUES ($1, $2, $3, $4)
ON CONFLICT (scope) DO UPDATE SET width = excluded.width, radix = excluded.radix,
    max_value = excluded.max_value
WHERE $5 = 1 AND s.last_value <= excluded.max_value AND ((s.width = excluded.width AND s.radix =
    excluded.radix) OR NOT EXISTS (
  SELECT 1 FROM documents d WHERE d.scope = s.scope AND d.origin = 'issued'
))
RETURNING scope;

-- name: num_ensure_scope
INSERT INTO doc_scopes (scope, width, radix, max_value)
VALUES ($1, $2, $3, $4)
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
WHERE s.scope = $1;

-- name: num_list_documents
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header,
    (
  SELECT '[' || string_agg(l.data, ',' ORDER BY l.line_no) || ']'
  FROM document_lines l
  WHERE l.scope = d.scope AND l.value = d.value
)
FROM documents d
WHERE d.scope = $1 AND d.value > $2
ORDER BY d.value
LIMIT $3;

-- name: num_get_document
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header,
    (
  SELECT '[' || string_agg(l.data, ',' ORDER BY l.line_no) || ']'
  FROM document_lines l
  WHERE l.scope = d.scope AND l.value = d.value
)
FROM documents d
WHERE d.scope = $1 AND d.value = $2;

-- name: num_existing_values
SELECT value
FROM documents
WHERE scope = $1 AND value = ANY (string_to_array($2, ',')::bigint[])
ORDER BY value;

-- name: num_insert_legacy
INSERT INTO documents (scope, value, number, origin, scheme, title, principal)
VALUES ($1, $2, $3, 'legacy', $4, $5, $6);

-- name: num_raise_last
UPDATE doc_scopes SET last_value = greatest(last_value, $2) WHERE scope = $1;

-- The keys as an array (= ANY): an IN over the JSON elements, estimated at 100 rows,
-- made PostgreSQL read all of the scope's receipts for a scope of a few thousand.
-- name: num_find_receipts
SELECT r.idempotency_key, r.title, d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header,
    (
  SELECT '[' || string_agg(l.data, ',' ORDER BY l.line_no) || ']'
  FROM document_lines l
  WHERE l.scope = d.scope AND l.value = d.value
)
FROM document_receipts r
JOIN documents d ON d.scope = r.scope AND d.value = r.value
WHERE r.scope = $1 AND r.idempotency_key = ANY (ARRAY(SELECT jsonb_array_elements_text($2::jsonb)));

-- One statement for the whole batch: the counter (locked by the caller), the documents
-- and their receipts. The receipts' foreign key is checked at the end of the statement,
-- when the documents are in.
-- name: num_insert_many
WITH c AS (
  UPDATE doc_scopes
  SET last_value = $3
  WHERE scope = $1
  RETURNING scope, width, radix
),
d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT c.scope, $2::bigint + t.i, CASE WHEN c.radix = 10 THEN lpad(($2::bigint + t.i)::text,
      greatest(c.width, length(($2::bigint + t.i)::text)),
      '0') ELSE oo_format_number($2::bigint + t.i, c.radix, c.width) END, 'issued',
      'r' || c.radix || 'w' || c.width, t.e->>0, t.e->>1, t.e->>2
  FROM c
  CROSS JOIN jsonb_array_elements($4::jsonb) WITH ORDINALITY AS t (e, i)
  RETURNING *
),
dl AS (
  INSERT INTO document_lines (scope, value, line_no, data)
  SELECT c.scope, $2::bigint + t.i, x.n, x.j::text
  FROM c
  CROSS JOIN jsonb_array_elements($4::jsonb) WITH ORDINALITY AS t (e, i)
  CROSS JOIN json_array_elements((t.e->>3)::json) WITH ORDINALITY AS x (j, n)
),
r AS (
  INSERT INTO document_receipts (scope, idempotency_key, title, value)
  SELECT $1, e->>0, e->>1, (e->>2)::bigint
  FROM jsonb_array_elements($5::jsonb) AS e
)
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header
FROM d
ORDER BY d.value;

-- The combining lane's lone number (NumberingOps::allocate_if_free): the counter is taken
-- only if no other transaction holds it (FOR NO KEY UPDATE is the lock the UPDATE takes, and
-- does not conflict with the key-share locks of foreign-key checks); otherwise no row, and
-- nothing was written.
-- name: num_insert_if_free
WITH l AS (
  SELECT scope
  FROM doc_scopes
  WHERE scope = $1 AND last_value < max_value FOR NO KEY
  UPDATE SKIP LOCKED
),
c AS (
  UPDATE doc_scopes s
  SET last_value = s.last_value + 1
  FROM l
  WHERE s.scope = l.scope
  RETURNING s.scope, s.last_value, s.width, s.radix
),
d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT scope, last_value, CASE WHEN radix = 10 THEN lpad((last_value)::text, greatest(width,
      length((last_value)::text)), '0') ELSE oo_format_number(last_value, radix, width) END,
      'issued', 'r' || radix || 'w' || width, $2, $3, $4
  FROM c
  RETURNING *
),
dl AS (
  INSERT INTO document_lines (scope, value, line_no, data)
  SELECT d.scope, d.value, t.n, t.x::text
  FROM d
  CROSS JOIN json_array_elements($5::json) WITH ORDINALITY AS t(x, n)
)
SELECT d.scope, d.value, d.number, d.origin, d.scheme, d.title,
    to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal, d.header
FROM d;

-- A batch's claims in one statement (NumberingOps::claim_if_free), so that its one round
-- trip also carries the COMMIT. `l`: the counters with room, locked unless held
-- elsewhere (a lock that waited on a committed update returns the newest row); `g`: how
-- many numbers each scope gets; `c` moves exactly the counters `l` found, from the
-- value found, and `ok` raises (before the pipelined COMMIT) if one had moved since. The
-- full counters are read, not locked: a row lock would give the transaction an xid and
-- its commit a WAL flush, for requests that write nothing. The receipts' foreign key is
-- checked at the end of the statement, when the documents are in. Scopes also as an
-- array (= ANY): joined to the JSON alone (estimated at 100 rows) the counters were
-- found by a scan of every scope.
-- name: num_claim_scopes
WITH w AS (
  SELECT e->>0 AS scope, (e->>1)::bigint AS n
  FROM jsonb_array_elements($1::jsonb) AS e
),
l AS (
  SELECT scope, width, radix, max_value, last_value
  FROM doc_scopes
  WHERE scope = ANY (ARRAY(SELECT scope FROM w)) AND last_value < max_value
  ORDER BY scope FOR NO KEY
  UPDATE SKIP LOCKED
),
g AS (
  SELECT l.scope, l.width, l.radix, l.last_value, least(w.n, l.max_value - l.last_value) AS granted
  FROM l
  JOIN w ON w.scope = l.scope
),
c AS (
  UPDATE doc_scopes s
  SET last_value = g.last_value + g.granted
  FROM g
  WHERE s.scope = g.scope AND s.last_value = g.last_value AND s.scope = ANY (ARRAY(SELECT scope FROM
      w))
  RETURNING s.scope
),
v AS (
  SELECT e->>0 AS scope, (e->>1)::bigint AS ordinal, e->>2 AS title, e->>3 AS principal,
      e->>4 AS header, e->>5 AS lines
  FROM jsonb_array_elements($2::jsonb) AS e
),
dl AS (
  INSERT INTO document_lines (scope, value, line_no, data)
  SELECT g.scope, g.last_value + v.ordinal, x.n, x.j::text
  FROM v
  JOIN g ON g.scope = v.scope
  CROSS JOIN json_array_elements(v.lines::json) WITH ORDINALITY AS x (j, n)
  WHERE v.ordinal <= g.granted
),
d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT g.scope, g.last_value + v.ordinal, CASE WHEN g.radix = 10 THEN lpad((g.last_value +
      v.ordinal)::text, greatest(g.width, length((g.last_value + v.ordinal)::text)),
      '0') ELSE oo_format_number(g.last_value + v.ordinal, g.radix, g.width) END, 'issued',
      'r' || g.radix || 'w' || g.width, v.title, v.principal, v.header
  FROM v
  JOIN g ON g.scope = v.scope
  WHERE v.ordinal <= g.granted
  RETURNING *
),
r AS (
  INSERT INTO document_receipts (scope, idempotency_key, title, value)
  SELECT k.scope, k.key, k.title, g.last_value + k.ordinal
  FROM (
    SELECT e->>0 AS scope, e->>1 AS key, e->>2 AS title, (e->>3)::bigint AS ordinal
    FROM jsonb_array_elements($3::jsonb) AS e
  ) k
  JOIN g ON g.scope = k.scope
  WHERE k.ordinal <= g.granted
),
ok AS (
  SELECT oo_assert((SELECT count(*) FROM c) = (SELECT count(*) FROM g),
      'a locked counter moved before its batch wrote it') AS ok
)
SELECT x.*
FROM ok
LEFT JOIN (
  SELECT 1 AS kind, d.scope, d.value, d.number, d.origin, d.scheme, d.title,
      to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), d.principal,
      d.header, NULL::integer AS width, NULL::integer AS radix, NULL::bigint AS max_value,
      NULL::bigint AS last_value
  FROM d
  UNION ALL
  SELECT 2, scope, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, width, radix, max_value,
      last_value
  FROM l
  UNION ALL
  SELECT 2, scope, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, width, radix, max_value,
      last_value
  FROM doc_scopes
  WHERE scope = ANY (ARRAY(SELECT scope FROM w)) AND last_value >= max_value
) x ON ok.ok;
