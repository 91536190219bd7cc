#include "store/listing_store.hpp"
#include "store/postgres/sql_text.hpp"

namespace onceorder::store::postgres {

// An item's events with the item's run and lot, and the production order's number for the
// `produced` one (production_orders is unique on item_id): the ListingSql::item_events columns.
#define OO_PG_EVENT_COLUMNS \
  "SELECT e.event_id, e.item_id, i.run_id, i.lot_no, e.kind, e.status, e.attempt, " \
  "e.owner, "   \
  OO_PG_UTC("e.lease_until") ", e.detail, " OO_PG_UTC("e.at") ", p.document_number FROM "      \
  "schedule_items i JOIN schedule_item_events e ON e.item_id = i.item_id LEFT JOIN "            \
  "production_orders p ON p.item_id = e.item_id AND e.kind = 'produced'"

const ListingSql& listing_sql() {
  static const ListingSql sql{
      .list_orders =
          {"ls_list_orders",
           "SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents, " OO_PG_UTC(
               "created_at") ", principal FROM orders WHERE ($1::text IS NULL OR status = $1) AND "
                             "($2::bigint IS NULL OR warehouse_id = $2) AND order_id < $3 ORDER BY "
                             "order_id DESC LIMIT $4"},
      .list_customer_orders =
          {"ls_list_customer_orders",
           "SELECT order_id, order_no, status, customer_id, warehouse_id, "
           "total_cents, " OO_PG_UTC(
               "created_at") ", principal FROM orders WHERE customer_id = $1 "
                             "AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR "
                             "warehouse_id = $3) AND order_id < $4 ORDER BY order_id DESC "
                             "LIMIT $5"},
      .order_receipts = {"ls_order_receipts",
                         "SELECT idempotency_key, warehouse_id, normalized, normalization, "
                         "coalesce(outcome, ''), " OO_PG_UTC(
                             "created_at") " FROM order_receipts WHERE "
                                           "customer_id = $1 AND order_id = $2 ORDER BY "
                                           "created_at, idempotency_key"},
      .list_skus = {"ls_list_skus",
                    "SELECT s.sku_id, s.available, s.reserved, s.price_cents FROM stock s WHERE "
                    "s.warehouse_id = $1 AND s.sku_id > $2 ORDER BY s.sku_id LIMIT $3"},
      .list_warehouses =
          {"ls_list_warehouses",
           "WITH RECURSIVE w (id, n) AS (SELECT (SELECT min(warehouse_id) FROM stock WHERE "
           "warehouse_id > $1::bigint), 1 UNION ALL SELECT (SELECT min(s.warehouse_id) FROM stock "
           "s WHERE s.warehouse_id > w.id), w.n + 1 FROM w WHERE w.id IS NOT NULL AND w.n < "
           "$2::bigint) SELECT w.id, count(*), sum(s.available)::bigint, sum(s.reserved)::bigint "
           "FROM w JOIN stock s ON s.warehouse_id = w.id GROUP BY w.id ORDER BY w.id"},
      // One statement, so that the page and the last position read come from one snapshot
      // and one horizon.
      .follow_orders =
          {"ls_follow_orders",
           "WITH h AS MATERIALIZED (SELECT oo_event_horizon() AS x), s AS MATERIALIZED (SELECT "
           "e.tx, e.event_id, e.ref FROM events e, h WHERE (e.tx, e.event_id) > ($1::bigint, "
           "$2::bigint) AND e.tx < h.x AND e.type = 'order.placed' ORDER BY e.tx, e.event_id "
           "LIMIT $7), m AS (SELECT s.tx, s.event_id, o.order_id, o.order_no, o.status, "
           "o.customer_id, o.warehouse_id, o.total_cents, o.created_at, o.principal FROM s JOIN "
           "orders o ON "
           "o.order_id = s.ref WHERE ($3::text IS NULL OR o.status = $3) AND ($4::bigint IS NULL "
           "OR o.customer_id = $4) AND ($5::bigint IS NULL OR o.warehouse_id = $5) ORDER BY "
           "s.tx, s.event_id LIMIT $6) SELECT 'o', m.tx, m.event_id, m.order_id, m.order_no, "
           "m.status, m.customer_id, m.warehouse_id, m.total_cents, " OO_PG_UTC(
               "m.created_at") ", m.principal FROM m UNION ALL (SELECT 'p', s.tx, s.event_id, 0, "
                               "'', '', 0, 0, 0, '', NULL FROM s ORDER BY s.tx DESC, s.event_id "
                               "DESC LIMIT 1)"},
      .list_scopes = {"ls_list_scopes", OO_LIST_SCOPES_SQL("$1", "$2")},
      .list_claims = {"ls_list_claims",
                      "SELECT i.item_id, i.run_id, r.kind, i.site_code, i.order_no, i.lot_no, "
                      "i.attempt, coalesce(i.owner, ''), coalesce(" OO_PG_UTC(
                          "i.lease_until") ", ''), CASE WHEN i.lease_until IS NULL OR "
                                           "i.lease_until < now() THEN 1 ELSE 0 END FROM "
                                           "schedule_items i JOIN schedule_runs r ON r.run_id = "
                                           "i.run_id WHERE i.status = 'processing' AND "
                                           "(i.lease_until IS NULL OR i.lease_until < now() + "
                                           "$1::bigint * interval '1 millisecond') AND i.item_id "
                                           "> $2 ORDER BY i.item_id LIMIT $3"},
      .item_events = {"ls_item_events", OO_PG_EVENT_COLUMNS " WHERE e.item_id = $1 ORDER BY "
                                                            "e.event_id LIMIT $2"},
      .order_head = {"ls_order_head",
                     "SELECT order_no, customer_id, warehouse_id, status, " OO_PG_UTC(
                         "created_at") ", " OO_PG_UTC("cancelled_at") " FROM orders WHERE "
                                                                      "order_id = $1"},
      .order_sources = {"ls_order_sources",
                        "SELECT lot_no, quantity, " OO_PG_UTC("created_at") ", " OO_PG_UTC(
                            "cancelled_at") " FROM source_orders WHERE site_code = $1::text AND "
                                            "order_no = $2::text ORDER BY length(lot_no), lot_no"},
      .order_events = {"ls_order_events",
                       OO_PG_EVENT_COLUMNS " WHERE i.site_code = $1::text AND i.order_no = "
                                           "$2::text ORDER BY e.event_id LIMIT $3"},
  };
  return sql;
}

}  // namespace onceorder::store::postgres
