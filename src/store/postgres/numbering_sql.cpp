#include "store/numbering_store.hpp"
#include "store/postgres/issue_sql.hpp"
#include "store/postgres/sql_text.hpp"

namespace onceorder::store::postgres {

// A document's columns (NumberingSql's order), and a stored one's with its lines after them.
#define OO_PG_DOC_COLS(d)                                               \
  d ".scope, " d ".value, " d ".number, " d ".origin, " d ".scheme, " d \
    ".title, " OO_PG_UTC(d ".created_at") ", " d ".principal, " d ".header"
#define OO_PG_STORED_DOC_COLS(d)                                             \
  OO_PG_DOC_COLS(d)                                                          \
  ", (SELECT '[' || string_agg(l.data, ',' ORDER BY l.line_no) || ']' FROM " \
  "document_lines l WHERE l.scope = " d ".scope AND l.value = " d ".value)"

#if defined(ONCEORDER_NAIVE_MAX_PLUS_ONE)
// Seed 003's naive design, built only into the torture harness's broken variant
// (tools/torture, docs/RELIABILITY.md): MAX+1 read and written with no lock and no counter
// row. Never in the product binary.
constexpr Statement kInsertIssued{
    "num_insert_issued",
    "WITH d AS (INSERT INTO documents (scope, value, number, origin, scheme, title, principal, "
    "header) SELECT $1, m.v, lpad(m.v::text, 4, '0'), 'issued', 'r10w4', $2, $3, $4 FROM (SELECT "
    "coalesce(max(value), 0) + 1 AS v FROM documents WHERE scope = $1) m RETURNING "
    "*), " OO_PG_INSERT_LINES("$5") " SELECT " OO_PG_DOC_COLS("d") " FROM d"};
// The lane's lone number is the naive one too (allocate), so that the checker sees it.
constexpr Statement kInsertIfFree{};
#else
// One statement, one round trip (store/postgres/issue_sql.hpp).
constexpr Statement kInsertIssued{
    "num_insert_issued",
    "WITH " OO_PG_ISSUE_DOCUMENT(
        "$1, DEFAULT, DEFAULT, DEFAULT", "$2", "$3",
        "$4") ", " OO_PG_INSERT_LINES("$5") " SELECT " OO_PG_DOC_COLS("d") " FROM d"};

// The combining lane's lone number (store/numbering_store.hpp): the counter is taken only if
// no other transaction holds it (FOR NO KEY UPDATE is the lock the UPDATE takes, and does not
// conflict with the key-share locks of foreign-key checks); otherwise no row, and nothing
// was written.
constexpr Statement kInsertIfFree{
    "num_insert_if_free",
    "WITH l AS (SELECT scope FROM doc_scopes WHERE scope = $1 AND last_value < max_value "
    "FOR NO KEY UPDATE SKIP LOCKED), "
    "c AS (UPDATE doc_scopes s SET last_value = s.last_value + 1 FROM l WHERE s.scope = l.scope "
    "RETURNING s.scope, s.last_value, s.width, s.radix), "
    "d AS (INSERT INTO documents (scope, value, number, origin, scheme, title, principal, header) "
    "SELECT scope, last_value, " OO_PG_FORMAT_NUMBER("last_value", "radix", "width") ", "
    "'issued', 'r' || radix || 'w' || width, $2, $3, $4 FROM c RETURNING *), "
    OO_PG_INSERT_LINES("$5") " SELECT " OO_PG_DOC_COLS("d") " FROM d"};
#endif

const NumberingSql& numbering_sql() {
  static const NumberingSql sql{
      .find_receipt = {"num_find_receipt",
                       "SELECT r.title, " OO_PG_STORED_DOC_COLS(
                           "d") " FROM document_receipts r "
                                "JOIN documents d ON d.scope = r.scope AND d.value = r.value "
                                "WHERE r.scope = $1 AND r.idempotency_key = $2"},
      .insert_issued = kInsertIssued,
      .insert_receipt = {"num_insert_receipt",
                         "INSERT INTO document_receipts (scope, idempotency_key, title, value) "
                         "VALUES ($1, $2, $3, $4)"},
      .lock_scope = {"num_lock_scope",
                     "SELECT width, radix, max_value, last_value FROM doc_scopes "
                     "WHERE scope = $1 FOR UPDATE"},
      .read_scope = {"num_read_scope",
                     "SELECT width, radix, max_value, last_value FROM doc_scopes "
                     "WHERE scope = $1"},
      // Applied only where the scope's issued numbers keep one look: its width and radix stay
      // while it has issued documents, and max stays at or above the counter. The condition is
      // the update's own WHERE, on the counter row the statement locks (the caller locked it
      // first, so this statement's snapshot sees every document committed under it); where the
      // row was missing when the caller looked ($5 = 0) an insert that meets a row created
      // meanwhile changes nothing. No row: refused.
      .upsert_format = {"num_upsert_format",
                        "INSERT INTO doc_scopes AS s (scope, width, radix, max_value) "
                        "VALUES ($1, $2, $3, $4) ON CONFLICT (scope) DO UPDATE SET "
                        "width = excluded.width, radix = excluded.radix, "
                        "max_value = excluded.max_value WHERE $5 = 1 AND "
                        "s.last_value <= excluded.max_value AND ((s.width = excluded.width AND "
                        "s.radix = excluded.radix) OR NOT EXISTS (SELECT 1 FROM documents d "
                        "WHERE d.scope = s.scope AND d.origin = 'issued')) RETURNING scope"},
      .ensure_scope = {"num_ensure_scope",
                       "INSERT INTO doc_scopes (scope, width, radix, max_value) "
                       "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING"},
      .scope_info = {"num_scope_info",
                     "SELECT s.scope, s.width, s.radix, s.max_value, s.last_value, "
                     "(SELECT count(*) FROM documents d WHERE d.scope = s.scope "
                     " AND d.origin = 'issued'), "
                     "(SELECT count(*) FROM documents d WHERE d.scope = s.scope "
                     " AND d.origin = 'legacy') "
                     "FROM doc_scopes s WHERE s.scope = $1"},
      .list_documents = {"num_list_documents",
                         "SELECT " OO_PG_STORED_DOC_COLS(
                             "d") " FROM documents d "
                                  "WHERE d.scope = $1 AND d.value > $2 ORDER BY d.value LIMIT $3"},
      .get_document = {"num_get_document",
                       "SELECT " OO_PG_STORED_DOC_COLS("d") " FROM documents d "
                                                            "WHERE d.scope = $1 AND d.value = $2"},
      .existing_values = {"num_existing_values",
                          "SELECT value FROM documents WHERE scope = $1 "
                          "AND value = ANY (string_to_array($2, ',')::bigint[]) ORDER BY value"},
      .insert_legacy = {"num_insert_legacy",
                        "INSERT INTO documents (scope, value, number, origin, scheme, title, "
                        "principal) VALUES ($1, $2, $3, 'legacy', $4, $5, $6)"},
      .raise_last = {"num_raise_last",
                     "UPDATE doc_scopes SET last_value = greatest(last_value, $2) "
                     "WHERE scope = $1"},
      // The keys as an array (= ANY): an IN over the JSON elements, estimated at 100 rows,
      // made PostgreSQL read all of the scope's receipts for a scope of a few thousand
      // (docs/BENCHMARKS.md, "Collision lanes and receipts on their index").
      .find_receipts = {"num_find_receipts",
                        "SELECT r.idempotency_key, r.title, " OO_PG_STORED_DOC_COLS(
                            "d") " FROM document_receipts r "
                                 "JOIN documents d ON d.scope = r.scope AND d.value = r.value "
                                 "WHERE r.scope = $1 AND r.idempotency_key = ANY (ARRAY("
                                 "SELECT jsonb_array_elements_text($2::jsonb)))"},
      // One statement for the whole batch: the counter (locked by the caller), the documents
      // and their receipts. The receipts' foreign key is checked at the end of the statement,
      // when the documents are in.
      .insert_many =
          {"num_insert_many",
           "WITH c AS (UPDATE doc_scopes SET last_value = $3 WHERE scope = $1 "
           "RETURNING scope, width, radix), "
           "d AS (INSERT INTO documents (scope, value, number, origin, scheme, title, principal, "
           "header) SELECT c.scope, $2::bigint + t.i, " OO_PG_FORMAT_NUMBER(
               "$2::bigint + t.i", "c.radix",
               "c.width") ", 'issued', "
                          "'r' || c.radix || 'w' || c.width, t.e->>0, t.e->>1, t.e->>2 FROM c "
                          "CROSS JOIN jsonb_array_elements($4::jsonb) WITH ORDINALITY AS t (e, i) "
                          "RETURNING *), "
                          "dl AS (INSERT INTO document_lines (scope, value, line_no, data) "
                          "SELECT c.scope, $2::bigint + t.i, x.n, x.j::text FROM c CROSS JOIN "
                          "jsonb_array_elements($4::jsonb) WITH ORDINALITY AS t (e, i) CROSS JOIN "
                          "json_array_elements((t.e->>3)::json) WITH ORDINALITY AS x (j, n)), "
                          "r AS (INSERT INTO document_receipts (scope, idempotency_key, title, "
                          "value) "
                          "SELECT $1, e->>0, e->>1, (e->>2)::bigint "
                          "FROM jsonb_array_elements($5::jsonb) AS e) "
                          "SELECT " OO_PG_DOC_COLS("d") " FROM d ORDER BY d.value"},
      .insert_if_free = kInsertIfFree,
      // A batch's claims in one statement (NumberingStore::claim_scopes), so that its one round
      // trip also carries the COMMIT. `l`: the counters with room, locked unless held
      // elsewhere (a lock that waited on a committed update returns the newest row); `g`: how
      // many numbers each scope gets; `c` moves exactly the counters `l` found, from the
      // value found, and `ok` raises (before the pipelined COMMIT) if one had moved since. The
      // full counters are read, not locked: a row lock would give the transaction an xid and
      // its commit a WAL flush, for requests that write nothing. The receipts' foreign key is
      // checked at the end of the statement, when the documents are in. Scopes also as an
      // array (= ANY): joined to the JSON alone (estimated at 100 rows) the counters were
      // found by a scan of every scope.
      .claim_scopes =
          {"num_claim_scopes",
           "WITH w AS (SELECT e->>0 AS scope, (e->>1)::bigint AS n "
           "FROM jsonb_array_elements($1::jsonb) AS e), "
           "l AS (SELECT scope, width, radix, max_value, last_value FROM doc_scopes "
           "WHERE scope = ANY (ARRAY(SELECT scope FROM w)) AND last_value < max_value "
           "ORDER BY scope FOR NO KEY UPDATE SKIP LOCKED), "
           "g AS (SELECT l.scope, l.width, l.radix, l.last_value, "
           "least(w.n, l.max_value - l.last_value) AS granted FROM l JOIN w ON w.scope = l.scope), "
           "c AS (UPDATE doc_scopes s SET last_value = g.last_value + g.granted FROM g "
           "WHERE s.scope = g.scope AND s.last_value = g.last_value "
           "AND s.scope = ANY (ARRAY(SELECT scope FROM w)) RETURNING s.scope), "
           "v AS (SELECT e->>0 AS scope, (e->>1)::bigint AS ordinal, e->>2 AS title, "
           "e->>3 AS principal, e->>4 AS header, e->>5 AS lines "
           "FROM jsonb_array_elements($2::jsonb) AS e), "
           "dl AS (INSERT INTO document_lines (scope, value, line_no, data) "
           "SELECT g.scope, g.last_value + v.ordinal, x.n, x.j::text FROM v JOIN g ON g.scope = "
           "v.scope CROSS JOIN json_array_elements(v.lines::json) WITH ORDINALITY AS x (j, n) "
           "WHERE v.ordinal <= g.granted), "
           "d AS (INSERT INTO documents (scope, value, number, origin, scheme, title, principal, "
           "header) SELECT g.scope, g.last_value + v.ordinal, " OO_PG_FORMAT_NUMBER(
               "g.last_value + v.ordinal", "g.radix",
               "g.width") ", 'issued', "
                          "'r' || g.radix || 'w' || g.width, v.title, v.principal, v.header FROM v "
                          "JOIN g ON g.scope = "
                          "v.scope WHERE v.ordinal <= g.granted RETURNING *), "
                          "r AS (INSERT INTO document_receipts (scope, idempotency_key, title, "
                          "value) SELECT k.scope, k.key, k.title, g.last_value + k.ordinal "
                          "FROM (SELECT e->>0 AS scope, e->>1 AS key, e->>2 AS title, "
                          "(e->>3)::bigint AS ordinal FROM jsonb_array_elements($3::jsonb) AS e) "
                          "k JOIN g ON g.scope = k.scope WHERE k.ordinal <= g.granted), "
                          "ok AS (SELECT oo_assert((SELECT count(*) FROM c) = (SELECT count(*) "
                          "FROM g), 'a locked counter moved before its batch wrote it') AS ok) "
                          "SELECT x.* FROM ok LEFT JOIN ("
                          "SELECT 1 AS kind, " OO_PG_DOC_COLS(
                              "d") ", NULL::integer AS width, NULL::integer AS radix, "
                                   "NULL::bigint AS max_value, NULL::bigint AS last_value FROM d "
                                   "UNION ALL SELECT 2, scope, NULL, NULL, NULL, NULL, NULL, "
                                   "NULL, NULL, NULL, width, radix, max_value, last_value FROM l "
                                   "UNION ALL SELECT 2, scope, NULL, NULL, NULL, NULL, NULL, "
                                   "NULL, NULL, NULL, width, radix, max_value, last_value FROM "
                                   "doc_scopes "
                                   "WHERE scope = ANY (ARRAY(SELECT scope FROM w)) "
                                   "AND last_value >= max_value) x ON ok.ok"},
  };
  return sql;
}

}  // namespace onceorder::store::postgres
