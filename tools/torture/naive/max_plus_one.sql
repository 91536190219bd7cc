-- The torture harness's broken variant onceorder-naive-max-plus-one (tools/torture/CMakeLists.txt):
-- PostgreSQL statements that replace the product's of the same name (store/sql_catalog.hpp).
-- Never in the product.
--
-- Seed 003's naive numbering (docs/RELIABILITY.md): MAX+1 read and written with no lock and
-- no counter row, for a lone number taken out of the combining lane (num_insert_issued) and in
-- it (num_insert_if_free, the same statement: it never skips a counter, having none), so that
-- the checker sees it. Combined batches keep the product's num_claim_scopes.

-- name: num_insert_issued
WITH d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT $1, m.v, lpad(m.v::text, 4, '0'), 'issued', 'r10w4', $2, $3, $4
  FROM (
    SELECT coalesce(max(value), 0) + 1 AS v
    FROM documents
    WHERE scope = $1
  ) m
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

-- name: num_insert_if_free
WITH d AS (
  INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header)
  SELECT $1, m.v, lpad(m.v::text, 4, '0'), 'issued', 'r10w4', $2, $3, $4
  FROM (
    SELECT coalesce(max(value), 0) + 1 AS v
    FROM documents
    WHERE scope = $1
  ) m
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
