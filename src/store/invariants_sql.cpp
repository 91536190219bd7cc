#include "store/invariants_sql.hpp"

#include "store/postgres/statements.hpp"
#include "store/sqlite/sql_text.hpp"
#include "store/sqlite/statements.hpp"

namespace onceorder::store {
namespace {

// Text both engines read the same way (`||` concatenates on both); only the catalog (I10),
// "now" (I8) and string aggregation (I6, I12) differ.
// WATERMARK: the live index's watermark when it protects new rows only (migrate
// --live-index=new-rows-only), NULL for the full index; read from the index itself, which is
// the one record of its mode. Duplicates all of whose items lie at or below it are the ones
// the operator chose to leave alone: not violations, but counted apart (OO_I1_ACCEPTED_SQL).
#define OO_I1_SQL(WATERMARK)                                                               \
  "SELECT 'key ' || site_code || '/' || order_no || '/' || lot_no || ' has ' || count(*) " \
  "|| ' live items' FROM schedule_items WHERE status NOT IN ('failed', 'aborted') "        \
  "GROUP BY site_code, order_no, lot_no HAVING count(*) > 1 AND max(item_id) > "           \
  "coalesce(" WATERMARK ", -1)"
#define OO_I1_ACCEPTED_SQL(WATERMARK)                                                         \
  "SELECT 'key ' || site_code || '/' || order_no || '/' || lot_no || ' has ' || count(*) || " \
  "' live items, all at or below the new-rows-only watermark ' || " WATERMARK                 \
  " FROM schedule_items WHERE status NOT IN ('failed', 'aborted') GROUP BY site_code, "       \
  "order_no, lot_no HAVING count(*) > 1 AND max(item_id) <= " WATERMARK
#define OO_WATERMARK_POSTGRES                                                        \
  "(SELECT CAST(substring(pg_get_indexdef(to_regclass('schedule_items_live')) FROM " \
  "'item_id > (\\d+)') AS bigint))"
#define OO_WATERMARK_SQLITE                                                                     \
  "(SELECT CASE WHEN instr(sql, 'item_id > ') > 0 THEN CAST(substr(sql, instr(sql, 'item_id > " \
  "') + 10) AS INTEGER) END FROM sqlite_master WHERE type = 'index' AND name = "                \
  "'schedule_items_live')"

#define OO_I2_SQL                                                                              \
  "SELECT 'item ' || i.item_id || ' is ' || i.status || ' but run ' || i.run_id || ' is ' || " \
  "r.status FROM schedule_items i JOIN schedule_runs r ON r.run_id = i.run_id "                \
  "WHERE i.status IN ('wait', 'processing') AND r.status NOT IN ('creating', 'running')"

#define OO_I3_SQL                                                                            \
  "SELECT 'success item ' || i.item_id || ' has no production order' FROM schedule_items i " \
  "WHERE i.status = 'success' AND NOT EXISTS (SELECT 1 FROM production_orders p WHERE "      \
  "p.item_id = i.item_id) AND NOT EXISTS (SELECT 1 FROM schedule_runs r WHERE r.run_id = "   \
  "i.run_id AND r.kind = 'legacy') "                                                         \
  "UNION ALL SELECT 'production order ' || p.site_code || '/' || "                           \
  "p.order_no || '/' || p.lot_no || ' belongs to item ' || p.item_id || ' which is ' || "    \
  "coalesce(i.status, 'missing') FROM production_orders p LEFT JOIN schedule_items i ON "    \
  "i.item_id = p.item_id WHERE i.status IS NULL OR i.status <> 'success' OR "                \
  "i.site_code <> p.site_code OR i.order_no <> p.order_no OR i.lot_no <> p.lot_no"

#define OO_I7_SQL                                                                              \
  "SELECT 'scope ' || d.scope || ': issued value ' || d.value || ' has no value ' || "         \
  "(d.value - 1) || ' before it' FROM documents d WHERE d.origin = 'issued' AND d.value > 1 "  \
  "AND NOT EXISTS (SELECT 1 FROM documents p WHERE p.scope = d.scope AND p.value = d.value - " \
  "1) UNION ALL SELECT 'scope ' || s.scope || ': counter at ' || s.last_value || ' but "       \
  "largest document value is ' || COALESCE((SELECT max(value) FROM documents d WHERE "         \
  "d.scope = s.scope), 0) FROM doc_scopes s WHERE s.last_value <> COALESCE((SELECT "           \
  "max(value) FROM documents d WHERE d.scope = s.scope), 0)"

// A processing item without a lease would never be reaped: as bad as an expired one.
#define OO_I8_SQL(NOW)                                                                    \
  "SELECT 'item ' || item_id || ' is processing with ' || CASE WHEN lease_until IS NULL " \
  "THEN 'no lease' ELSE 'a lease that expired at ' || lease_until END FROM "              \
  "schedule_items WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < " NOW ")"

// A reservation is a line of a placed order: its stock row counts it in `reserved`, and the
// ledger holds one `reservation` entry for it and, once the order is cancelled, one `release`.
#define OO_I4_SQL                                                                               \
  "SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || ': available ' || s.available || "   \
  "' but its ledger sums to ' || coalesce(l.total, 0) FROM stock s LEFT JOIN (SELECT "          \
  "warehouse_id, sku_id, sum(delta) AS total FROM stock_ledger GROUP BY warehouse_id, sku_id) " \
  "l ON l.warehouse_id = s.warehouse_id AND l.sku_id = s.sku_id WHERE s.available <> "          \
  "coalesce(l.total, 0) UNION ALL SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || "     \
  "': reserved ' || s.reserved || ' but its placed orders hold ' || coalesce(r.q, 0) FROM "     \
  "stock s LEFT JOIN (SELECT o.warehouse_id, ol.sku_id, sum(ol.quantity) AS q FROM orders o "   \
  "JOIN order_lines ol ON ol.order_id = o.order_id WHERE o.status = 'placed' GROUP BY "         \
  "o.warehouse_id, ol.sku_id) r ON r.warehouse_id = s.warehouse_id AND r.sku_id = s.sku_id "    \
  "WHERE s.reserved <> coalesce(r.q, 0) UNION ALL SELECT 'stock ' || s.warehouse_id || '/' || " \
  "s.sku_id || ': available + reserved = ' || (s.available + s.reserved) || ' but initial + "   \
  "adjustments = ' || coalesce(a.total, 0) FROM stock s LEFT JOIN (SELECT warehouse_id, "       \
  "sku_id, sum(delta) AS total FROM stock_ledger WHERE kind IN ('initial', 'adjustment') "      \
  "GROUP BY warehouse_id, sku_id) a ON a.warehouse_id = s.warehouse_id AND a.sku_id = "         \
  "s.sku_id WHERE s.available + s.reserved <> coalesce(a.total, 0) UNION ALL SELECT 'stock ' "  \
  "|| warehouse_id || '/' || sku_id || ' is negative' FROM stock WHERE available < 0 OR "       \
  "reserved < 0"

// Per order line, the ledger's reservation and release entries that match it (its warehouse,
// SKU and quantity): one reservation, and one release exactly when the order is cancelled.
// An entry that matches no line is reported on its own.
#define OO_I5_SQL                                                                                \
  "SELECT 'order ' || o.order_id || ' is ' || o.status || ' but line ' || ol.line_no || ' has "  \
  "' || coalesce(e.r, 0) || ' reservation and ' || coalesce(e.f, 0) || ' release entries' FROM " \
  "orders o JOIN order_lines ol ON ol.order_id = o.order_id LEFT JOIN (SELECT g.order_id, "      \
  "g.line_no, g.warehouse_id, g.sku_id, sum(CASE WHEN g.kind = 'reservation' THEN -g.delta "     \
  "ELSE 0 END) AS rq, sum(CASE WHEN g.kind = 'release' THEN g.delta ELSE 0 END) AS fq, "         \
  "sum(CASE WHEN g.kind = 'reservation' THEN 1 ELSE 0 END) AS r, sum(CASE WHEN g.kind = "        \
  "'release' THEN 1 ELSE 0 END) AS f FROM stock_ledger g WHERE g.kind IN ('reservation', "       \
  "'release') GROUP BY g.order_id, g.line_no, g.warehouse_id, g.sku_id) e ON e.order_id = "      \
  "ol.order_id AND e.line_no = ol.line_no AND e.warehouse_id = o.warehouse_id AND e.sku_id = "   \
  "ol.sku_id WHERE coalesce(e.r, 0) <> 1 OR e.rq <> ol.quantity OR coalesce(e.f, 0) <> CASE "    \
  "o.status WHEN 'placed' THEN 0 ELSE 1 END OR (e.f = 1 AND e.fq <> ol.quantity) UNION ALL "     \
  "SELECT 'ledger entry ' || g.entry_id || ' (' || g.kind || ') is for no line of an order: "    \
  "order ' || coalesce(g.order_id, 0) || ' line ' || coalesce(g.line_no, 0) || ', stock ' || "   \
  "g.warehouse_id || '/' || g.sku_id FROM stock_ledger g WHERE g.kind IN ('reservation', "       \
  "'release') AND NOT EXISTS (SELECT 1 FROM orders o JOIN order_lines ol ON ol.order_id = "      \
  "o.order_id WHERE ol.order_id = g.order_id AND ol.line_no = g.line_no AND o.warehouse_id = "   \
  "g.warehouse_id AND ol.sku_id = g.sku_id)"

// LINES: the order's lines as a receipt stores them ("101x3,202x1"), per engine.
#define OO_I6_SQL(LINES)                                                                     \
  "SELECT 'receipt ' || r.customer_id || '/' || r.idempotency_key || ' is placed but its "   \
  "order differs from the request' FROM order_receipts r JOIN orders o ON o.order_id = "     \
  "r.order_id WHERE r.outcome = 'placed' AND (o.warehouse_id <> r.warehouse_id OR "          \
  "o.customer_id <> r.customer_id OR r.normalized <> " LINES                                 \
  ") UNION ALL SELECT 'receipt ' "                                                           \
  "|| customer_id || '/' || idempotency_key || ' is ' || coalesce(outcome, 'undecided') || " \
  "' with order ' || coalesce(order_id, 0) FROM order_receipts WHERE outcome IS NULL OR "    \
  "(outcome = 'placed' AND order_id IS NULL) OR (outcome = 'out_of_stock' AND order_id IS "  \
  "NOT NULL)"

// The rule of warehouse_site() and source_order_key() (include/onceorder/order_types.hpp),
// spelled once for the invariants that check it: order O's source orders S have site
// 'W' || O's warehouse and O's number; line L's is the one whose lot is L's number.
#define OO_ORDER_SOURCES(O, S) \
  S ".site_code = 'W' || " O ".warehouse_id AND " S ".order_no = " O ".order_no"
#define OO_LINE_LOT(L, S) S ".lot_no = CAST(" L ".line_no AS TEXT)"
#define OO_LINE_SOURCE(O, L, S) OO_ORDER_SOURCES(O, S) " AND " OO_LINE_LOT(L, S)
#define OO_KEY(T) T ".site_code || '/' || " T ".order_no || '/' || " T ".lot_no"

// Cancel is all or nothing: a cancelled source order is never produced nor live, and an
// order's source orders are cancelled exactly when the order is.
#define OO_I9_SQL \
  "SELECT 'cancelled source order ' || " OO_KEY("s") " || ' has a production order' FROM "     \
  "source_orders s WHERE s.cancelled_at IS NOT NULL AND EXISTS (SELECT 1 FROM "                \
  "production_orders p WHERE p.site_code = s.site_code AND p.order_no = s.order_no AND "       \
  "p.lot_no = s.lot_no) UNION ALL SELECT 'cancelled source order ' || " OO_KEY("s")            \
  " || ' has item ' || i.item_id || ' in ' || i.status FROM source_orders s JOIN "             \
  "schedule_items i ON i.site_code = s.site_code AND i.order_no = s.order_no AND i.lot_no = "  \
  "s.lot_no WHERE s.cancelled_at IS NOT NULL AND i.status IN ('success', 'wait', "             \
  "'processing') UNION ALL SELECT 'order ' || o.order_id || ' is ' || o.status || ' but its "  \
  "source order ' || " OO_KEY("s") " || CASE WHEN s.cancelled_at IS NULL THEN ' is not "       \
  "cancelled' ELSE ' is cancelled' END FROM orders o JOIN order_lines ol ON ol.order_id = "    \
  "o.order_id JOIN source_orders s ON " OO_LINE_SOURCE("o", "ol", "s")                         \
  " WHERE (o.status = 'cancelled') <> (s.cancelled_at IS NOT NULL)"

// One source order per order line, with the line's quantity, and none beyond the lines.
#define OO_I11_SQL \
  "SELECT 'order ' || o.order_id || ' line ' || ol.line_no || ' has no source order W' || "    \
  "o.warehouse_id || '/' || o.order_no || '/' || ol.line_no || ' for ' || ol.quantity FROM "    \
  "orders o JOIN order_lines ol ON ol.order_id = o.order_id WHERE NOT EXISTS (SELECT 1 FROM "    \
  "source_orders s WHERE " OO_LINE_SOURCE("o", "ol", "s") " AND s.quantity = ol.quantity) "     \
  "UNION ALL SELECT 'source order ' || " OO_KEY("s") " || ' is not a line of order ' || "       \
  "o.order_id FROM orders o JOIN source_orders s ON " OO_ORDER_SOURCES("o", "s")                \
  " WHERE NOT EXISTS (SELECT 1 FROM order_lines ol WHERE ol.order_id = o.order_id AND "         \
  OO_LINE_LOT("ol", "s") ")"

// DIGITS: the 13 Crockford base-32 digits of o.order_id (order_number in id_generator.cpp).
#define OO_I12_SQL(DIGITS)                                                                 \
  "SELECT 'order ' || o.order_id || ' has number ' || o.order_no || ', not O-' || " DIGITS \
  " FROM orders o WHERE o.order_no <> 'O-' || " DIGITS
#define OO_CROCKFORD_DIGIT(I)                                                    \
  "substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', CAST((o.order_id >> (5 * (12 - " I \
  "))) & "                                                                       \
  "31 AS INTEGER) + 1, 1)"

#define OO_I13_SQL \
  "SELECT 'production order ' || " OO_KEY("p") " || ' is for ' || p.quantity || ' but its "    \
  "source order is for ' || coalesce(CAST(s.quantity AS TEXT), 'nothing (missing)') FROM "     \
  "production_orders p LEFT JOIN source_orders s ON s.site_code = p.site_code AND s.order_no " \
  "= p.order_no AND s.lot_no = p.lot_no WHERE s.quantity IS NULL OR s.quantity <> p.quantity"

#define OO_I14_SQL \
  "SELECT 'production order ' || " OO_KEY("p") " || ' has document ' || p.document_scope || "   \
  "'/' || p.document_value || ' numbered ' || p.document_number || CASE WHEN d.number IS NULL " \
  "THEN ', which does not exist' WHEN d.number <> p.document_number THEN ', which is "          \
  "numbered ' || d.number ELSE ', not one of scope PO-' || p.site_code END FROM "               \
  "production_orders p LEFT JOIN documents d ON d.scope = p.document_scope AND d.value = "      \
  "p.document_value WHERE p.document_scope <> 'PO-' || p.site_code OR d.number IS NULL OR "     \
  "d.number <> p.document_number UNION ALL SELECT 'document ' || document_scope || '/' || "     \
  "document_value || ' belongs to ' || count(*) || ' production orders' FROM "                  \
  "production_orders GROUP BY document_scope, document_value HAVING count(*) > 1"

#define OO_I15_SQL                                                                               \
  "SELECT 'document receipt ' || r.scope || '/' || r.idempotency_key || ' for title \"' || "     \
  "r.title || '\" points at value ' || r.value || CASE WHEN d.title IS NULL THEN ', which does " \
  "not exist' ELSE ' titled \"' || d.title || '\"' END FROM document_receipts r LEFT JOIN "      \
  "documents d ON d.scope = r.scope AND d.value = r.value WHERE d.title IS NULL OR d.title <> "  \
  "r.title"

// A receipt without its answer is a key committed apart from its effect; a run receipt
// without a manual run replays a run the request never made.
#define OO_I16_SQL                                                                              \
  "SELECT r.route || ' receipt ' || r.idempotency_key || CASE WHEN r.scope = '' THEN '' ELSE "  \
  "' of ' || r.scope END || CASE WHEN r.answer IS NULL THEN ' has no answer' WHEN r.run_id IS " \
  "NULL THEN ' points at no run' ELSE ' points at run ' || r.run_id || ', which is not a "      \
  "manual run' END FROM request_receipts r LEFT JOIN schedule_runs s ON s.run_id = r.run_id "   \
  "WHERE r.answer IS NULL OR (r.route = 'schedule_run' AND (s.kind IS NULL OR s.kind <> "       \
  "'manual'))"

// An item's history agrees with its state: its last event (schedule_item_events, migration 19)
// records the status and attempt the item has now. A statement that changed an item without
// its event (a trigger dropped or bypassed, an event deleted) leaves the last event behind.
// Items from before migration 19 got an `imported` event from it, so none is exempt.
#define OO_I17_SQL                                                                                \
  "SELECT 'item ' || i.item_id || ' is ' || i.status || ' (attempt ' || i.attempt || ') but its " \
  "last event is ' || coalesce(e.kind || ' (' || e.status || ', attempt ' || e.attempt || ')', "  \
  "'missing') FROM schedule_items i LEFT JOIN schedule_item_events e ON e.event_id = (SELECT "    \
  "max(x.event_id) FROM schedule_item_events x WHERE x.item_id = i.item_id) WHERE e.event_id IS " \
  "NULL OR e.status <> i.status OR e.attempt <> i.attempt"

// I18–I22: every fact has exactly one event of its type (the outbox, migration 22), and every
// event its fact. FACTS yields the fact keys as the events spell them (docs/EVENTS.md); the
// same text on both engines. UNIQUE (type, key) already refuses a second event (I10 checks it
// is there), so a count above one means that constraint was lost.
// One full join, not NOT EXISTS: a sublink under OR or in a CASE runs once per row over the
// whole other side, which took past the 30 s statement timeout at 200,000 documents.
#define OO_EVENT_FACT_SQL(TYPE, WHAT, FACTS)                                                     \
  "WITH f(k) AS (" FACTS "), e(k, n) AS (SELECT key, count(*) FROM events WHERE type = '" TYPE   \
  "' GROUP BY key) SELECT CASE WHEN e.k IS NULL THEN '" WHAT " ' || f.k || ' has no " TYPE       \
  " event' WHEN f.k IS NULL THEN '" TYPE " event for ' || e.k || ' has no " WHAT "' ELSE '" TYPE \
  " event for ' || e.k || ' is written ' || e.n || ' times' END FROM f FULL "                    \
  "JOIN e ON e.k = f.k WHERE e.k IS NULL OR f.k IS NULL OR e.n > 1"
#define OO_I18_SQL \
  OO_EVENT_FACT_SQL("order.placed", "order", "SELECT CAST(order_id AS TEXT) FROM orders")
#define OO_I19_SQL                                        \
  OO_EVENT_FACT_SQL("order.cancelled", "cancelled order", \
                    "SELECT CAST(order_id AS TEXT) FROM orders WHERE status = 'cancelled'")
#define OO_I20_SQL                                                  \
  OO_EVENT_FACT_SQL("production_order.created", "production order", \
                    "SELECT site_code || '/' || order_no || '/' || lot_no FROM production_orders")
#define OO_I21_SQL                                        \
  OO_EVENT_FACT_SQL("document.issued", "issued document", \
                    "SELECT scope || '/' || number FROM documents WHERE origin = 'issued'")
#define OO_I22_SQL                                                                             \
  OO_EVENT_FACT_SQL("run.finished", "finished run",                                            \
                    "SELECT CAST(run_id AS TEXT) FROM schedule_runs WHERE status IN ('done', " \
                    "'error') AND kind <> 'legacy'")

// I23: an endpoint gets a key's events in feed order. A delivery is claimed only while every
// earlier delivery of its (endpoint, key) is delivered, so the delivered ones of a key are
// always a prefix of its deliveries in feed order (ev_tx, event_id).
#define OO_I23_SQL                                                                               \
  "SELECT 'endpoint ' || d.endpoint || ': event ' || d.event_id || ' (' || d.key || ') was "     \
  "delivered while the earlier event ' || p.event_id || ' of its key is ' || p.status FROM "     \
  "deliveries d JOIN deliveries p ON p.endpoint = d.endpoint AND p.key = d.key AND p.status <> " \
  "'delivered' AND (p.ev_tx < d.ev_tx OR (p.ev_tx = d.ev_tx AND p.event_id < d.event_id)) "      \
  "WHERE d.status = 'delivered'"

// I10: the objects the design relies on, each from the schema version that creates it (a
// database not yet migrated that far is /readyz's finding, not a violation).
#define OO_SCHEMA_VERSION "(SELECT coalesce(max(version), 0) FROM schema_migrations)"
#define OO_LIVE_INDEX_TEXT                                                                    \
  "'schedule_items: unique index schedule_items_live (site_code, order_no, lot_no) WHERE "    \
  "status NOT IN (''failed'', ''aborted'') [AND item_id > watermark] is missing, invalid or " \
  "differs'"

// PostgreSQL: constraints by definition (and name where the design names them), validated
// (not NOT VALID) and with a valid index; the live index with its exact columns and predicate.
#define OO_I10_POSTGRES                                                                           \
  "WITH e(since, tbl, name, def) AS (VALUES "                                                     \
  "(4, 'orders', NULL, 'UNIQUE (order_no)'), "                                                    \
  "(2, 'production_orders', NULL, 'PRIMARY KEY (site_code, order_no, lot_no)'), "                 \
  "(2, 'production_orders', NULL, 'UNIQUE (item_id)'), "                                          \
  "(1, 'documents', NULL, 'PRIMARY KEY (scope, value)'), "                                        \
  "(1, 'doc_scopes', NULL, 'CHECK (((last_value >= 0) AND (last_value <= max_value)))'), "        \
  "(4, 'stock', NULL, 'CHECK ((available >= 0))'), "                                              \
  "(4, 'order_receipts', NULL, 'PRIMARY KEY (customer_id, idempotency_key)'), "                   \
  "(1, 'document_receipts', NULL, 'PRIMARY KEY (scope, idempotency_key)'), "                      \
  "(10, 'request_receipts', NULL, 'PRIMARY KEY (route, scope, idempotency_key)'), "               \
  "(12, 'leader_leases', NULL, 'PRIMARY KEY (name)'), "                                           \
  "(21, 'stock', NULL, 'CHECK ((reserved >= 0))'), "                                              \
  "(22, 'events', NULL, 'UNIQUE (type, key)'), "                                                  \
  "(5, 'production_orders', 'production_orders_live_source', 'FOREIGN KEY (site_code, "           \
  "order_no, lot_no, source_live) REFERENCES source_orders(site_code, order_no, lot_no, live)%'"  \
  "), (5, 'source_orders', 'source_orders_live_key', 'UNIQUE %'), "                               \
  "(5, 'production_orders', 'production_orders_source_live_check', 'CHECK %')) "                  \
  "SELECT e.tbl || ': constraint ' || coalesce(e.name, e.def) || ' is missing or not "            \
  "validated' FROM e WHERE e.since <= " OO_SCHEMA_VERSION                                         \
  " AND NOT EXISTS (SELECT 1 FROM "                                                               \
  "pg_constraint c WHERE c.conrelid = to_regclass(e.tbl) AND (e.name IS NULL OR c.conname = "     \
  "e.name) AND pg_get_constraintdef(c.oid) LIKE e.def AND c.convalidated AND (c.conindid = 0 "    \
  "OR EXISTS (SELECT 1 FROM pg_index x WHERE x.indexrelid = c.conindid AND x.indisvalid AND "     \
  "x.indisready))) UNION ALL SELECT " OO_LIVE_INDEX_TEXT " WHERE 3 <= " OO_SCHEMA_VERSION         \
  " AND NOT EXISTS (SELECT 1 FROM pg_index x WHERE x.indexrelid = "                               \
  "to_regclass('schedule_items_live') AND x.indrelid = to_regclass('schedule_items') AND "        \
  "x.indisunique AND x.indisvalid AND x.indisready AND (pg_get_indexdef(x.indexrelid) LIKE '% "   \
  "USING btree (site_code, order_no, lot_no) WHERE (status <> ALL "                               \
  "(ARRAY[''failed''::text, ''aborted''::text]))' OR pg_get_indexdef(x.indexrelid) LIKE '% "      \
  "USING btree (site_code, order_no, lot_no) WHERE ((status <> ALL (ARRAY[''failed''::text, "     \
  "''aborted''::text])) AND (item_id > %))')) UNION ALL SELECT 'function "                        \
  "oo_assert(boolean, text) is missing' WHERE 5 <= " OO_SCHEMA_VERSION                            \
  " AND to_regprocedure('oo_assert(boolean, text)') IS NULL UNION ALL SELECT "                    \
  "'schedule_items: trigger ' || t.name || ' is missing or disabled' FROM (VALUES "               \
  "('schedule_items_event_insert'), ('schedule_items_event_update')) AS t(name) WHERE 13 "        \
  "<= " OO_SCHEMA_VERSION                                                                         \
  " AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = "                                \
  "to_regclass('schedule_items') AND g.tgname = t.name AND g.tgenabled <> 'D') UNION ALL SELECT " \
  "t.tbl || ': trigger ' || t.name || ' is missing or disabled' FROM (VALUES ('orders', "         \
  "'events_order_placed'), ('orders', 'events_order_cancelled'), ('production_orders', "          \
  "'events_production_order'), ('documents', 'events_document_issued'), ('schedule_runs', "       \
  "'events_run_finished')) AS t(tbl, name) WHERE 22 <= " OO_SCHEMA_VERSION                        \
  " AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = to_regclass(t.tbl) AND "         \
  "g.tgname = t.name AND g.tgenabled <> 'D') UNION ALL SELECT "                                   \
  "'index ' || "                                                                                  \
  "c.relname || ' is INVALID (a concurrent build is running or failed): `onceorder legacy "       \
  "dedup` if duplicates blocked it, then `onceorder migrate` drops and rebuilds it' FROM "        \
  "pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE c.relnamespace = "                    \
  "to_regnamespace(current_schema()) AND NOT (x.indisvalid AND x.indisready)"

// SQLite: unique and primary-key indexes by their columns, CHECKs in the table's text,
// triggers by name and table, the live index by its text.
#define OO_I10_SQLITE                                                                            \
  "WITH u(since, tbl, origin, cols) AS (VALUES "                                                 \
  "(4, 'orders', 'u', 'order_no'), "                                                             \
  "(2, 'production_orders', 'pk', 'site_code, order_no, lot_no'), "                              \
  "(2, 'production_orders', 'u', 'item_id'), "                                                   \
  "(1, 'documents', 'pk', 'scope, value'), "                                                     \
  "(4, 'order_receipts', 'pk', 'customer_id, idempotency_key'), "                                \
  "(1, 'document_receipts', 'pk', 'scope, idempotency_key'), "                                   \
  "(10, 'request_receipts', 'pk', 'route, scope, idempotency_key'), "                            \
  "(12, 'leader_leases', 'pk', 'name'), "                                                        \
  "(22, 'events', 'u', 'type, key')), "                                                          \
  "c(since, tbl, def) AS (VALUES "                                                               \
  "(1, 'doc_scopes', 'CHECK (last_value >= 0 AND last_value <= max_value)'), "                   \
  "(4, 'stock', 'CHECK (available >= 0)'), "                                                     \
  "(21, 'stock', 'CHECK (reserved >= 0)')), "                                                    \
  "t(since, tbl, name) AS (VALUES "                                                              \
  "(5, 'production_orders', 'production_orders_live_source'), "                                  \
  "(5, 'source_orders', 'source_orders_cancel_unproduced'), "                                    \
  "(13, 'schedule_items', 'schedule_items_event_insert'), "                                      \
  "(13, 'schedule_items', 'schedule_items_event_update'), "                                      \
  "(22, 'orders', 'events_order_placed'), (22, 'orders', 'events_order_cancelled'), "            \
  "(22, 'production_orders', 'events_production_order'), "                                       \
  "(22, 'documents', 'events_document_issued'), (22, 'schedule_runs', 'events_run_finished')) "  \
  "SELECT u.tbl || ': ' || CASE u.origin WHEN 'pk' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END || "     \
  "' (' || u.cols || ') is missing' FROM u WHERE u.since <= " OO_SCHEMA_VERSION                  \
  " AND NOT EXISTS (SELECT 1 FROM pragma_index_list(u.tbl) l WHERE l.\"unique\" = 1 AND "        \
  "l.origin = u.origin AND l.partial = 0 AND (SELECT group_concat(name, ', ') FROM (SELECT "     \
  "name FROM pragma_index_info(l.name) ORDER BY seqno)) = u.cols) UNION ALL SELECT c.tbl || "    \
  "': ' || c.def || ' is missing' FROM c WHERE c.since <= " OO_SCHEMA_VERSION                    \
  " AND NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'table' AND m.name = c.tbl "    \
  "AND instr(m.sql, c.def) > 0) UNION ALL SELECT t.tbl || ': trigger ' || t.name || ' is "       \
  "missing' FROM t WHERE t.since <= " OO_SCHEMA_VERSION                                          \
  " AND NOT EXISTS (SELECT 1 FROM "                                                              \
  "sqlite_master m WHERE m.type = 'trigger' AND m.name = t.name AND m.tbl_name = t.tbl) UNION "  \
  "ALL SELECT " OO_LIVE_INDEX_TEXT " WHERE 3 <= " OO_SCHEMA_VERSION                              \
  " AND NOT EXISTS (SELECT 1 "                                                                   \
  "FROM sqlite_master m WHERE m.type = 'index' AND m.name = 'schedule_items_live' AND "          \
  "m.tbl_name = 'schedule_items' AND (m.sql LIKE 'CREATE UNIQUE INDEX schedule_items_live ON "   \
  "schedule_items (site_code, order_no, lot_no)%WHERE status NOT IN (''failed'', ''aborted'')' " \
  "OR m.sql LIKE 'CREATE UNIQUE INDEX schedule_items_live ON schedule_items (site_code, "        \
  "order_no, lot_no)%WHERE status NOT IN (''failed'', ''aborted'') AND item_id > %'))"

constexpr std::string_view kI1 = "at most one live (non-failed, non-aborted) item per business key";
constexpr std::string_view kI2 = "every wait/processing item belongs to a run in creating/running";
// A legacy `success` was produced by the old system: it has no production order here.
constexpr std::string_view kI3 =
    "success items (except imported legacy ones) and production orders match one to one";
constexpr std::string_view kI4 =
    "stock conservation per SKU: available = the sum of its ledger; reserved = its placed "
    "orders' lines; available + reserved = its initial and adjustment entries; neither negative";
constexpr std::string_view kI5 =
    "a placed order has exactly one reservation entry per line and no release; a cancelled one "
    "has one release per line; no reservation or release entry without its line";
constexpr std::string_view kI6 =
    "a placed receipt points at an order with the same normalized lines; an out_of_stock "
    "receipt has no order";
constexpr std::string_view kI7 =
    "per document scope, values issued by OnceOrder are contiguous (no gaps, no duplicates)";
constexpr std::string_view kI8 =
    "no processing item without a lease or whose lease expired (after the reaper ran)";
constexpr std::string_view kI9 =
    "a cancelled source order has no production order and no success/wait/processing item; an "
    "order and its source orders are cancelled together";
constexpr std::string_view kI10 =
    "every constraint, index, trigger and function the design relies on exists and is valid";
constexpr std::string_view kI11 =
    "every order line has exactly one source order (site W<warehouse>, the order's number, lot = "
    "line number) with the line's quantity";
constexpr std::string_view kI12 = "an order's number is derived from its id (unique as the id is)";
constexpr std::string_view kI13 = "a production order is for its source order's quantity";
constexpr std::string_view kI14 =
    "each production order has its own document in its site's scope PO-<site>, with that "
    "document's number";
constexpr std::string_view kI15 =
    "a document receipt points at a document with the receipt's title (a replay returns the "
    "original)";
constexpr std::string_view kI16 =
    "a source-order, run or adjustment receipt holds its answer; a run receipt points at a "
    "manual run";
constexpr std::string_view kI17 =
    "an item's last event records its current status and attempt (every change has its event)";

constexpr std::string_view kI18 =
    "every order has exactly one order.placed event, and each such event its order";
constexpr std::string_view kI19 =
    "every cancelled order has exactly one order.cancelled event, and each such event a cancelled "
    "order";
constexpr std::string_view kI20 =
    "every production order has exactly one production_order.created event, and each such event "
    "its production order";
constexpr std::string_view kI21 =
    "every document OnceOrder issued has exactly one document.issued event, and each such event "
    "its document";
constexpr std::string_view kI22 =
    "every finished (done or error) run but a legacy one has exactly one run.finished event, and "
    "each such event such a run";
constexpr std::string_view kI23 =
    "per endpoint, a key's events are delivered in feed order: none is delivered while an "
    "earlier one of its key is not";

#define OO_WATERMARK_ENGINE OO_WATERMARK_SQLITE
constexpr InvariantSql kSqlite[] = {
    {"I1",
     kI1,
     {"inv_i1", OO_I1_SQL(OO_WATERMARK_ENGINE)},
     Statement{"inv_i1_accepted", OO_I1_ACCEPTED_SQL(OO_WATERMARK_ENGINE)}},
    {"I2", kI2, {"inv_i2", OO_I2_SQL}},
    {"I3", kI3, {"inv_i3", OO_I3_SQL}},
    {"I4", kI4, {"inv_i4", OO_I4_SQL}},
    {"I5", kI5, {"inv_i5", OO_I5_SQL}},
    {"I6",
     kI6,
     {"inv_i6", OO_I6_SQL("(SELECT group_concat(sku_id || 'x' || quantity, ',') FROM (SELECT "
                          "sku_id, quantity FROM order_lines WHERE order_id = r.order_id "
                          "ORDER BY sku_id))")}},
    {"I7", kI7, {"inv_i7", OO_I7_SQL}},
    {"I8", kI8, {"inv_i8", OO_I8_SQL(OO_SQLITE_NOW)}},
    {"I9", kI9, {"inv_i9", OO_I9_SQL}},
    {"I10", kI10, {"inv_i10", OO_I10_SQLITE}},
    {"I11", kI11, {"inv_i11", OO_I11_SQL}},
    {"I12",
     kI12,
     {"inv_i12", OO_I12_SQL("(SELECT group_concat(d, '') FROM (SELECT " OO_CROCKFORD_DIGIT(
                     "g.i") " AS d FROM (WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i "
                            "+ 1 FROM n WHERE i < 12) SELECT i FROM n) g ORDER BY g.i))")}},
    {"I13", kI13, {"inv_i13", OO_I13_SQL}},
    {"I14", kI14, {"inv_i14", OO_I14_SQL}},
    {"I15", kI15, {"inv_i15", OO_I15_SQL}},
    {"I16", kI16, {"inv_i16", OO_I16_SQL}},
    {"I17", kI17, {"inv_i17", OO_I17_SQL}},
    {"I18", kI18, {"inv_i18", OO_I18_SQL}},
    {"I19", kI19, {"inv_i19", OO_I19_SQL}},
    {"I20", kI20, {"inv_i20", OO_I20_SQL}},
    {"I21", kI21, {"inv_i21", OO_I21_SQL}},
    {"I22", kI22, {"inv_i22", OO_I22_SQL}},
    {"I23", kI23, {"inv_i23", OO_I23_SQL}},
};

#undef OO_WATERMARK_ENGINE
#define OO_WATERMARK_ENGINE OO_WATERMARK_POSTGRES
constexpr InvariantSql kPostgres[] = {
    {"I1",
     kI1,
     {"inv_i1", OO_I1_SQL(OO_WATERMARK_ENGINE)},
     Statement{"inv_i1_accepted", OO_I1_ACCEPTED_SQL(OO_WATERMARK_ENGINE)}},
    {"I2", kI2, {"inv_i2", OO_I2_SQL}},
    {"I3", kI3, {"inv_i3", OO_I3_SQL}},
    {"I4", kI4, {"inv_i4", OO_I4_SQL}},
    {"I5", kI5, {"inv_i5", OO_I5_SQL}},
    {"I6",
     kI6,
     {"inv_i6", OO_I6_SQL("(SELECT string_agg(sku_id || 'x' || quantity, ',' ORDER BY sku_id) "
                          "FROM order_lines WHERE order_id = r.order_id)")}},
    {"I7", kI7, {"inv_i7", OO_I7_SQL}},
    {"I8", kI8, {"inv_i8", OO_I8_SQL("now()")}},
    {"I9", kI9, {"inv_i9", OO_I9_SQL}},
    {"I10", kI10, {"inv_i10", OO_I10_POSTGRES}},
    {"I11", kI11, {"inv_i11", OO_I11_SQL}},
    {"I12",
     kI12,
     {"inv_i12", OO_I12_SQL("(SELECT string_agg(" OO_CROCKFORD_DIGIT(
                     "g.i") ", '' ORDER BY g.i) FROM generate_series(0, 12) AS g(i))")}},
    {"I13", kI13, {"inv_i13", OO_I13_SQL}},
    {"I14", kI14, {"inv_i14", OO_I14_SQL}},
    {"I15", kI15, {"inv_i15", OO_I15_SQL}},
    {"I16", kI16, {"inv_i16", OO_I16_SQL}},
    {"I17", kI17, {"inv_i17", OO_I17_SQL}},
    {"I18", kI18, {"inv_i18", OO_I18_SQL}},
    {"I19", kI19, {"inv_i19", OO_I19_SQL}},
    {"I20", kI20, {"inv_i20", OO_I20_SQL}},
    {"I21", kI21, {"inv_i21", OO_I21_SQL}},
    {"I22", kI22, {"inv_i22", OO_I22_SQL}},
    {"I23", kI23, {"inv_i23", OO_I23_SQL}},
};

}  // namespace

std::span<const InvariantSql> sqlite::invariant_sql() { return kSqlite; }
std::span<const InvariantSql> postgres::invariant_sql() { return kPostgres; }

}  // namespace onceorder::store
