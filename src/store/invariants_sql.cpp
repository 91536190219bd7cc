#include "store/invariants_sql.hpp"

namespace onceorder {
namespace {

// Text both engines read the same way (`||` concatenates on both); only "is the index
// there" and "now" differ.
#define OO_I1_DUPLICATES                                                                   \
  "SELECT 'key ' || site_code || '/' || order_no || '/' || lot_no || ' has ' || count(*) " \
  "|| ' live items' FROM schedule_items WHERE status NOT IN ('failed', 'aborted') "        \
  "GROUP BY site_code, order_no, lot_no HAVING count(*) > 1"

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

#define OO_I8_SQL(NOW)                                                              \
  "SELECT 'item ' || item_id || ' is processing with a lease that expired at ' || " \
  "lease_until FROM schedule_items WHERE status = 'processing' AND lease_until < " NOW

#define OO_I4_SQL                                                                               \
  "SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || ': available ' || s.available || "   \
  "' but its ledger sums to ' || coalesce(l.total, 0) FROM stock s LEFT JOIN (SELECT "          \
  "warehouse_id, sku_id, sum(delta) AS total FROM stock_ledger GROUP BY warehouse_id, sku_id) " \
  "l ON l.warehouse_id = s.warehouse_id AND l.sku_id = s.sku_id WHERE s.available <> "          \
  "coalesce(l.total, 0) UNION ALL SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || "     \
  "': available + active reservations = ' || (s.available + coalesce(r.q, 0)) || ' but "        \
  "initial + adjustments = ' || coalesce(a.total, 0) FROM stock s LEFT JOIN (SELECT "           \
  "warehouse_id, sku_id, sum(quantity) AS q FROM reservations WHERE status = 'active' GROUP "   \
  "BY warehouse_id, sku_id) r ON r.warehouse_id = s.warehouse_id AND r.sku_id = s.sku_id LEFT " \
  "JOIN (SELECT warehouse_id, sku_id, sum(delta) AS total FROM stock_ledger WHERE kind IN "     \
  "('initial', 'adjustment') GROUP BY warehouse_id, sku_id) a ON a.warehouse_id = "             \
  "s.warehouse_id AND a.sku_id = s.sku_id WHERE s.available + coalesce(r.q, 0) <> "             \
  "coalesce(a.total, 0) UNION ALL SELECT 'stock ' || warehouse_id || '/' || sku_id || ' is "    \
  "negative' FROM stock WHERE available < 0"

#define OO_I5_SQL                                                                                \
  "SELECT 'order ' || o.order_id || ' is placed but line ' || ol.line_no || ' has no matching "  \
  "active reservation' FROM orders o JOIN order_lines ol ON ol.order_id = o.order_id WHERE "     \
  "o.status = 'placed' AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.order_id = "         \
  "ol.order_id AND r.line_no = ol.line_no AND r.status = 'active' AND r.sku_id = ol.sku_id "     \
  "AND r.quantity = ol.quantity AND r.warehouse_id = o.warehouse_id) UNION ALL SELECT 'order ' " \
  "|| o.order_id || ' is cancelled but still holds active reservations' FROM orders o WHERE "    \
  "o.status = 'cancelled' AND EXISTS (SELECT 1 FROM reservations r WHERE r.order_id = "          \
  "o.order_id AND r.status = 'active') UNION ALL SELECT 'reservation ' || r.order_id || '/' || " \
  "r.line_no || ' has no order line' FROM reservations r WHERE NOT EXISTS (SELECT 1 FROM "       \
  "order_lines ol WHERE ol.order_id = r.order_id AND ol.line_no = r.line_no)"

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

constexpr std::string_view kI1 =
    "at most one live (non-failed, non-aborted) item per business key, and the live-item "
    "index exists and is valid";
constexpr std::string_view kI2 = "every wait/processing item belongs to a run in creating/running";
// A legacy `success` was produced by the old system: it has no production order here.
constexpr std::string_view kI3 =
    "success items (except imported legacy ones) and production orders match one to one";
constexpr std::string_view kI4 =
    "stock conservation per SKU: available = the sum of its ledger; available + active "
    "reservations = its initial and adjustment entries; available >= 0";
constexpr std::string_view kI5 =
    "a placed order has exactly one active reservation per line; a cancelled one has none";
constexpr std::string_view kI6 =
    "a placed receipt points at an order with the same normalized lines; an out_of_stock "
    "receipt has no order";
constexpr std::string_view kI7 =
    "per document scope, values issued by OnceOrder are contiguous (no gaps, no duplicates)";
constexpr std::string_view kI8 = "no processing item whose lease expired (after the reaper ran)";

constexpr InvariantSql kSqlite[] = {
    {"I1",
     kI1,
     {"inv_i1",
      "SELECT 'the live-item index schedule_items_live is missing' WHERE NOT EXISTS (SELECT 1 "
      "FROM sqlite_master WHERE type = 'index' AND name = 'schedule_items_live') "
      "UNION ALL " OO_I1_DUPLICATES}},
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
    {"I8", kI8, {"inv_i8", OO_I8_SQL("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')")}},
};

constexpr InvariantSql kPostgres[] = {
    {"I1",
     kI1,
     {"inv_i1",
      "SELECT 'the live-item index schedule_items_live is missing or invalid' WHERE NOT EXISTS "
      "(SELECT 1 FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE c.relname = "
      "'schedule_items_live' AND x.indisunique AND x.indisvalid) UNION ALL " OO_I1_DUPLICATES}},
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
};

}  // namespace

std::span<const InvariantSql> invariant_sql(Engine engine) {
  return engine == Engine::sqlite ? std::span<const InvariantSql>(kSqlite)
                                  : std::span<const InvariantSql>(kPostgres);
}

}  // namespace onceorder
