#include "store/listing_store.hpp"
#include "store/postgres/sql_text.hpp"

namespace onceorder::store::postgres {

// The gap audit counts per scope what invariant I7 (store/invariants_sql.cpp, OO_I7_SQL)
// reports: issued values whose predecessor has no document, and a counter that is not the
// largest value. `missing` counts every hole below the counter, legacy ones included.
const ListingSql& listing_sql() {
  static const ListingSql sql{
      .list_orders =
          {"ls_list_orders",
           "SELECT order_id, order_no, status, customer_id, warehouse_id, total_cents, " OO_PG_UTC(
               "created_at") " FROM orders WHERE ($1::text IS NULL OR status = $1) AND "
                             "($2::bigint IS NULL OR warehouse_id = $2) AND order_id < $3 ORDER BY "
                             "order_id DESC LIMIT $4"},
      .list_customer_orders =
          {"ls_list_customer_orders",
           "SELECT order_id, order_no, status, customer_id, warehouse_id, "
           "total_cents, " OO_PG_UTC(
               "created_at") " FROM orders WHERE customer_id = $1 "
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
                    "SELECT s.sku_id, s.available, coalesce((SELECT sum(r.quantity) FROM "
                    "reservations r WHERE r.warehouse_id = s.warehouse_id AND r.sku_id = "
                    "s.sku_id AND r.status = 'active'), 0), s.price_cents FROM stock s WHERE "
                    "s.warehouse_id = $1 AND s.sku_id > $2 ORDER BY s.sku_id LIMIT $3"},
      .list_scopes = {"ls_list_scopes",
                      "SELECT s.scope, s.width, s.radix, s.max_value, s.last_value, (SELECT "
                      "count(*) FROM documents d WHERE d.scope = s.scope AND d.origin = "
                      "'issued'), (SELECT count(*) FROM documents d WHERE d.scope = s.scope AND "
                      "d.origin = 'legacy'), (SELECT count(*) FROM documents d WHERE d.scope = "
                      "s.scope AND d.origin = 'issued' AND d.value > 1 AND NOT EXISTS (SELECT 1 "
                      "FROM documents p WHERE p.scope = d.scope AND p.value = d.value - 1)) + "
                      "CASE WHEN s.last_value <> coalesce((SELECT max(d.value) FROM documents d "
                      "WHERE d.scope = s.scope), 0) THEN 1 ELSE 0 END, s.last_value - (SELECT "
                      "count(*) FROM documents d WHERE d.scope = s.scope AND d.value <= "
                      "s.last_value) FROM doc_scopes s WHERE s.scope > $1 ORDER BY s.scope "
                      "LIMIT $2"},
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
  };
  return sql;
}

}  // namespace onceorder::store::postgres
