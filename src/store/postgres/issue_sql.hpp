// The gapless issue of one document as PostgreSQL text, spelled once for numbering's
// `num_insert_issued` and scheduling's `sch_produce_standard`.
#pragma once

// A document number as PostgreSQL text: decimal inline, other radixes through the schema's
// oo_format_number (a PL/pgSQL call costs the server more than the rest of a decimal issue's
// formatting; docs/BENCHMARKS.md, "The cheap path").
#define OO_PG_FORMAT_NUMBER(v, radix, width)                                         \
  "CASE WHEN " radix " = 10 THEN lpad((" v ")::text, greatest(" width ", length((" v \
  ")::text)), '0') ELSE oo_format_number(" v ", " radix ", " width ") END"

// Two CTEs: `c` creates the scope on first use (`new_scope`: its scope, width, radix and
// max, DEFAULT for the table's) or increments its counter under the row lock, none of it
// when the scope is past max; `d` inserts the document (its `title`, `principal` and
// `header`) with the value `c` returned and yields every documents column. No row from `d`
// when the scope is exhausted.
#define OO_PG_ISSUE_DOCUMENT(new_scope, title, principal, header) \
  "c AS (INSERT INTO doc_scopes AS s (scope, width, radix, max_value, last_value) VALUES " \
  "(" new_scope                                                                            \
  ", 1) ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1 WHERE "            \
  "s.last_value < s.max_value RETURNING s.scope, s.last_value, s.width, s.radix), d AS "   \
  "(INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header) " \
  "SELECT scope, last_value, " OO_PG_FORMAT_NUMBER("last_value", "radix", "width") ", "     \
  "'issued', 'r' || radix || 'w' || width, " title ", " principal ", " header " FROM c "     \
  "RETURNING *)"

// A CTE after `d`: its document's lines, one row each from the JSON array text `lines` (NULL:
// none). json (not jsonb) elements keep their text as sent: the canonical form a replay
// compares.
#define OO_PG_INSERT_LINES(lines)                                                 \
  "dl AS (INSERT INTO document_lines (scope, value, line_no, data) SELECT "       \
  "d.scope, d.value, t.n, t.x::text FROM d CROSS JOIN json_array_elements(" lines \
  "::json) WITH ORDINALITY AS t(x, n))"
