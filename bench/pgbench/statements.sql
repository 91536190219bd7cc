-- Baseline (a): statement by statement, four round trips. Lock and bump the scope's
-- counter, insert the document with the value it returned, commit.
-- Variables: -D scopes=N (scope 'bench-1' .. 'bench-N').
\set s random(1, :scopes)
BEGIN;
UPDATE doc_scopes SET last_value = last_value + 1
 WHERE scope = 'bench-' || :s AND last_value < max_value
 RETURNING last_value, width, radix \gset
INSERT INTO documents (scope, value, number, origin, scheme, title, principal)
 VALUES ('bench-' || :s, :last_value, oo_format_number(:last_value, :radix, :width),
         'issued', 'r' || :radix || 'w' || :width, 'bench', 'bench');
COMMIT;
