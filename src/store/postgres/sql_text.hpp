// Pieces of PostgreSQL text that many statements share, spelled once.
#pragma once

// A timestamptz column or expression as the API's ISO 8601 UTC text with milliseconds
// ("2026-12-01T10:20:01.123Z"), the format SQLite stores (store/sqlite/sql_text.hpp).
#define OO_PG_UTC(expr) "to_char(" expr " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

// An event's data (docs/EVENTS.md), built from its fact when it is read: the events row E holds
// only the fact's reference (type, ref, ref_scope). An expression, not a function: PostgreSQL
// never inlines a SQL function whose body has subqueries, and a call per event cost three
// times the expression. oo_js and oo_utc (migration 22) are inlined.
#define OO_PG_EVENT_DATA(E)                                                                        \
  "CASE " E                                                                                        \
  ".type WHEN 'order.placed' THEN (SELECT '{\"order_id\":\"' || xo.order_id || "                   \
  "'\",\"order_no\":' || oo_js(xo.order_no) || ',\"customer_id\":' || xo.customer_id || "          \
  "',\"warehouse_id\":' || xo.warehouse_id || ',\"total_cents\":' || xo.total_cents || "           \
  "',\"lines\":[' || coalesce((SELECT string_agg('{\"line_no\":' || xl.line_no || "                \
  "',\"sku_id\":' || xl.sku_id || ',\"quantity\":' || xl.quantity || ',\"unit_price_cents\":' "    \
  "|| xl.unit_price_cents || '}', ',' ORDER BY xl.line_no) FROM order_lines xl WHERE xl.order_id " \
  "= xo.order_id), '') || ']}' FROM orders xo WHERE xo.order_id = " E                              \
  ".ref) "                                                                                         \
  "WHEN 'order.cancelled' THEN (SELECT '{\"order_id\":\"' || xo.order_id || '\",\"order_no\":' "   \
  "|| oo_js(xo.order_no) || ',\"customer_id\":' || xo.customer_id || ',\"warehouse_id\":' || "     \
  "xo.warehouse_id || '}' FROM orders xo WHERE xo.order_id = " E                                   \
  ".ref) "                                                                                         \
  "WHEN 'production_order.created' THEN (SELECT '{\"site_code\":' || oo_js(xp.site_code) || "      \
  "',\"order_no\":' || oo_js(xp.order_no) || ',\"lot_no\":' || oo_js(xp.lot_no) || "               \
  "',\"quantity\":' || xp.quantity || ',\"document_scope\":' || oo_js(xp.document_scope) || "      \
  "',\"document_number\":' || oo_js(xp.document_number) || ',\"run_id\":' || "                     \
  "coalesce(xi.run_id::text, 'null') || ',\"item_id\":' || xp.item_id || '}' FROM "                \
  "production_orders xp LEFT JOIN schedule_items xi ON xi.item_id = xp.item_id WHERE xp.item_id "  \
  "= " E                                                                                           \
  ".ref) "                                                                                         \
  "WHEN 'document.issued' THEN (SELECT '{\"scope\":' || oo_js(xd.scope) || ',\"value\":' || "      \
  "xd.value || ',\"number\":' || oo_js(xd.number) || ',\"title\":' || oo_js(xd.title) || '}' "     \
  "FROM "                                                                                          \
  "documents xd WHERE xd.scope = " E ".ref_scope AND xd.value = " E                                \
  ".ref) "                                                                                         \
  "WHEN 'run.finished' THEN (SELECT '{\"run_id\":' || xr.run_id || ',\"kind\":' || "               \
  "oo_js(xr.kind) || ',\"status\":' || oo_js(xr.status) || ',\"error\":' || oo_js(xr.error) || "   \
  "',\"created_at\":' || oo_utc(xr.created_at) || '}' FROM schedule_runs xr WHERE xr.run_id = " E  \
  ".ref) END"
