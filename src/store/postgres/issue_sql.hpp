// The gapless issue of one document as PostgreSQL text, spelled once for numbering's
// `num_insert_issued` and scheduling's `sch_produce_standard`.
#pragma once

// Two CTEs: `c` creates the scope on first use (`new_scope`: its scope, width, radix and
// max, DEFAULT for the table's) or increments its counter under the row lock, none of it
// when the scope is past max; `d` inserts the document with the value `c` returned and
// yields every documents column. No row from `d` when the scope is exhausted.
#define OO_PG_ISSUE_DOCUMENT(new_scope, title)                                             \
  "c AS (INSERT INTO doc_scopes AS s (scope, width, radix, max_value, last_value) VALUES " \
  "(" new_scope                                                                            \
  ", 1) ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1 WHERE "            \
  "s.last_value < s.max_value RETURNING s.scope, s.last_value, s.width, s.radix), d AS "   \
  "(INSERT INTO documents (scope, value, number, origin, scheme, title) SELECT scope, "    \
  "last_value, oo_format_number(last_value, radix, width), 'issued', 'r' || radix || 'w' " \
  "|| width, " title " FROM c RETURNING *)"
