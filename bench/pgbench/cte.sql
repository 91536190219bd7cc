-- Baseline (b): the same work as one statement, one round trip: the statement
-- num_insert_issued of src/store/postgres/numbering_sql.cpp with $1 = 'bench-' || :s and
-- $2 = 'bench'. The only textual difference: pgbench would read the ':' inside the
-- to_char format as variables, so the format is written E'...\x3A...' (the same constant).
-- Variables: -D scopes=N (scope 'bench-1' .. 'bench-N').
\set s random(1, :scopes)
WITH c AS ( INSERT INTO doc_scopes AS s (scope, last_value) VALUES ('bench-' || :s, 1)
 ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1
 WHERE s.last_value < s.max_value
 RETURNING s.scope, s.last_value, s.width, s.radix)
INSERT INTO documents AS d (scope, value, number, origin, scheme, title, principal)
SELECT scope, last_value, oo_format_number(last_value, radix, width),
 'issued', 'r' || radix || 'w' || width, 'bench', 'bench' FROM c
RETURNING d.scope, d.value, d.number, d.origin, d.scheme, d.title,
 to_char(d.created_at AT TIME ZONE 'UTC', E'YYYY-MM-DD"T"HH24\x3AMI\x3ASS.MS"Z"');
