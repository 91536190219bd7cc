#include "store/events_store.hpp"
#include "store/postgres/sql_text.hpp"

namespace onceorder::store::postgres {

// An event row: event_id, tx, type, key, occurred_at, data (events_store.hpp).
#define OO_PG_EVENT_COLUMNS(E) \
  E ".event_id, " E ".tx, " E ".type, " E ".key, " OO_PG_UTC(E ".occurred_at") ", "            \
  "coalesce(" OO_PG_EVENT_DATA(E) ", 'null')"
// The feed's visibility horizon (migration 22): no event of a transaction still running, nor of
// one that began after the oldest one still running, is read.
#define OO_PG_VISIBLE(E) E ".tx < oo_event_horizon()"
#define OO_PG_CONSUMER_COLUMNS "name, after_tx, after_id, " OO_PG_UTC("updated_at")
#define OO_PG_ENDPOINT_COLUMNS                                                                 \
  "name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id, " OO_PG_UTC( \
      "created_at") ", " OO_PG_UTC("updated_at")
// A key's earlier deliveries to the same endpoint that are not delivered yet: while there is
// one, the delivery waits (a cancel never overtakes its order.placed).
#define OO_PG_EARLIER_OPEN(D)                                                            \
  "SELECT p.event_id FROM deliveries p WHERE p.endpoint = " D ".endpoint AND p.key = " D \
  ".key AND p.status <> 'delivered' AND (p.ev_tx, p.event_id) < (" D ".ev_tx, " D ".event_id)"
// Releases the parked deliveries of the (endpoint, key) pairs that KEYS selects.
#define OO_PG_UNPARK(KEYS)                              \
  "UPDATE deliveries f SET next_at = now() FROM (" KEYS \
  ") k WHERE f.endpoint = k.endpoint "                  \
  "AND f.key = k.key AND f.status = 'pending' AND f.next_at = 'infinity'"
#define OO_PG_DELIVERY_COLUMNS \
  "d.endpoint, " OO_PG_EVENT_COLUMNS("e") ", d.status, d.mode, d.attempt, d.budget_from, "    \
  "d.owner, " OO_PG_UTC("d.lease_until") ", " OO_PG_UTC("d.next_at") ", d.last_error, "       \
  "d.last_status, d.resolution, " OO_PG_UTC("d.created_at") ", " OO_PG_UTC("d.sent_at") ", " \
  OO_PG_UTC("d.delivered_at") ", (" OO_PG_EARLIER_OPEN("d") " ORDER BY p.ev_tx, p.event_id "  \
  "LIMIT 1)"

const EventsSql& events_sql() {
  static const EventsSql sql{
      // One statement, so the page and the head come from one snapshot and one horizon: read
      // apart, the head could include events that committed after the page was read.
      .feed = {"ev_feed",
               "WITH h AS MATERIALIZED (SELECT oo_event_horizon() AS x), p AS (SELECT e.* FROM "
               "events e, h WHERE (e.tx, e.event_id) > ($1::bigint, $2::bigint) AND e.tx < h.x "
               "AND ($3::text = '' OR e.type = ANY (string_to_array($3::text, ','))) ORDER BY "
               "e.tx, e.event_id LIMIT $4), t AS (SELECT e.tx, e.event_id FROM events e, h WHERE "
               "e.tx < h.x ORDER BY e.tx DESC, e.event_id DESC LIMIT 1) SELECT "
               "'e', " OO_PG_EVENT_COLUMNS(
                   "p") " FROM p UNION ALL SELECT 'h', t.event_id, t.tx, '', '', "
                        "'', '' FROM t"},
      .prime = {"ev_prime", "SELECT count(*) FROM pg_stat_activity"},
      .head = {"ev_head", "SELECT e.tx, e.event_id FROM events e WHERE " OO_PG_VISIBLE(
                              "e") " ORDER BY e.tx DESC, e.event_id DESC LIMIT 1"},
      .lag = {"ev_lag",
              "SELECT count(*), extract(epoch FROM now() - min(x.occurred_at)) FROM (SELECT "
              "e.occurred_at FROM events e WHERE (e.tx, e.event_id) > ($1::bigint, $2::bigint) "
              "AND " OO_PG_VISIBLE("e") " ORDER BY e.tx, e.event_id LIMIT $3) x"},
      .held = {"ev_held",
               "SELECT extract(epoch FROM now() - min(e.occurred_at)) FROM events e WHERE e.tx "
               ">= oo_event_horizon()"},
      .consumer_get = {"ev_consumer_get",
                       "SELECT " OO_PG_CONSUMER_COLUMNS " FROM event_consumers WHERE name = $1"},
      .consumer_list = {"ev_consumer_list",
                        "SELECT " OO_PG_CONSUMER_COLUMNS " FROM event_consumers ORDER BY name"},
      .consumer_put = {"ev_consumer_put",
                       "INSERT INTO event_consumers (name, after_tx, after_id) VALUES ($1, $2, $3) "
                       "ON CONFLICT (name) DO UPDATE SET after_tx = excluded.after_tx, after_id = "
                       "excluded.after_id, updated_at = now() RETURNING " OO_PG_CONSUMER_COLUMNS},
      .consumer_delete = {"ev_consumer_delete",
                          "DELETE FROM event_consumers WHERE name = $1 RETURNING name"},
      .endpoint_get = {"ev_endpoint_get",
                       "SELECT " OO_PG_ENDPOINT_COLUMNS " FROM endpoints WHERE name = $1"},
      .endpoint_target = {"ev_endpoint_target",
                          "SELECT url, secret FROM endpoints WHERE name = $1"},
      .endpoint_list = {"ev_endpoint_list",
                        "SELECT " OO_PG_ENDPOINT_COLUMNS " FROM endpoints ORDER BY name"},
      .endpoint_count = {"ev_endpoint_count", "SELECT count(*) FROM endpoints"},
      .endpoint_put =
          {"ev_endpoint_put",
           "INSERT INTO endpoints (name, url, types, secret, delivery, max_attempts, "
           "backoff_seconds, after_tx, after_id) VALUES ($1, $2, $3, $4, $5, $6, $7, "
           "$8, $9) ON CONFLICT (name) DO UPDATE SET url = excluded.url, types = "
           "excluded.types, secret = excluded.secret, delivery = excluded.delivery, "
           "max_attempts = excluded.max_attempts, backoff_seconds = "
           "excluded.backoff_seconds, updated_at = now() RETURNING " OO_PG_ENDPOINT_COLUMNS},
      .endpoint_delete = {"ev_endpoint_delete",
                          "DELETE FROM endpoints WHERE name = $1 RETURNING name"},
      .endpoint_lock = {"ev_endpoint_lock",
                        "SELECT types, after_tx, after_id FROM endpoints WHERE name = $1 FOR "
                        "UPDATE SKIP LOCKED"},
      .endpoint_advance = {"ev_endpoint_advance",
                           "UPDATE endpoints SET after_tx = $2, after_id = $3 WHERE name = $1"},
      .insert_deliveries = {"ev_insert_deliveries",
                            "INSERT INTO deliveries (endpoint, event_id, ev_tx, key, status) "
                            "SELECT $1, (r->>0)::bigint, (r->>1)::bigint, r->>2, 'pending' FROM "
                            "jsonb_array_elements($2::jsonb) r ON CONFLICT DO NOTHING RETURNING "
                            "event_id"},
      .delivery_counts = {"ev_delivery_counts",
                          "SELECT d.endpoint, d.status, count(*), CASE WHEN d.status IN "
                          "('pending', 'sending') THEN extract(epoch FROM now() - "
                          "min(e.occurred_at)) END FROM deliveries d JOIN events e ON "
                          "e.event_id = d.event_id WHERE d.status <> 'delivered' GROUP BY "
                          "d.endpoint, d.status ORDER BY d.endpoint, d.status"},
      // The window is read from the front of deliveries_due in its order and stops, whatever the
      // statistics say (an anti-join planned from a table of delivered rows once took seconds
      // per claim). A windowed delivery that waits for an earlier one of its key is parked
      // (next_at 'infinity') rather than claimed, so waiting ones never fill the window.
      .claim =
          {"ev_claim",
           "WITH w AS (SELECT d.endpoint, d.event_id, d.ev_tx, d.key, d.next_at FROM "
           "deliveries d WHERE d.status = 'pending' AND d.next_at <= now() ORDER BY "
           "d.next_at, d.ev_tx, d.event_id LIMIT $2 FOR UPDATE OF d SKIP LOCKED), b AS "
           "(SELECT w.*, EXISTS (" OO_PG_EARLIER_OPEN(
               "w") ") AS waits FROM w), parked AS "
                    "(UPDATE deliveries d SET next_at = 'infinity' FROM b WHERE b.waits AND "
                    "d.endpoint = b.endpoint AND d.event_id = b.event_id) UPDATE deliveries d SET "
                    "status = 'sending', attempt = d.attempt + 1, owner = $1, lease_until = now() "
                    "+ "
                    "$3::float8 * interval '1 millisecond', mode = ep.delivery, sent_at = now() "
                    "FROM "
                    "b, endpoints ep, events e WHERE NOT b.waits AND d.endpoint = b.endpoint AND "
                    "d.event_id = b.event_id AND ep.name = d.endpoint AND e.event_id = d.event_id "
                    "RETURNING d.endpoint, ep.url, ep.secret, ep.delivery, ep.max_attempts, "
                    "ep.backoff_seconds, d.attempt, d.budget_from, " OO_PG_EVENT_COLUMNS("e")},
      // A delivered one releases the parked deliveries of its key; the next claim parks again
      // any that still waits for another.
      .settle =
          {"ev_settle",
           "WITH s AS (UPDATE deliveries d SET status = o.status, lease_until = NULL, "
           "next_at = CASE WHEN o.status = 'pending' THEN now() + o.retry_ms * interval '1 "
           "millisecond' ELSE d.next_at END, last_error = o.error, last_status = "
           "o.http_status, delivered_at = CASE WHEN o.status = 'delivered' THEN now() ELSE "
           "d.delivered_at END FROM jsonb_to_recordset($1::jsonb) AS o(endpoint text, "
           "event_id bigint, owner text, attempt integer, status text, retry_ms bigint, "
           "error text, http_status integer) WHERE d.endpoint = o.endpoint AND d.event_id = "
           "o.event_id AND d.owner = o.owner AND d.attempt = o.attempt AND d.status = "
           "'sending' RETURNING d.endpoint, d.event_id, d.key, d.status), u AS (" OO_PG_UNPARK(
               "SELECT s.endpoint, s.key FROM s WHERE s.status = 'delivered'") ") SELECT "
                                                                               "endpoint, "
                                                                               "event_id "
                                                                               "FROM s"},
      // Also releases a parked delivery that waits for nothing any more (its key's earlier one
      // settled delivered by an operator's word, or by a settle that raced the parking).
      .reap =
          {"ev_reap",
           "WITH u AS (UPDATE deliveries f SET next_at = now() WHERE f.status = 'pending' AND "
           "f.next_at = 'infinity' AND NOT EXISTS (" OO_PG_EARLIER_OPEN(
               "f") ")) "
                    "UPDATE deliveries d SET status = CASE WHEN d.mode = 'at_most_once' THEN "
                    "'in_doubt' WHEN d.attempt - d.budget_from >= ep.max_attempts THEN 'dead' ELSE "
                    "'pending' END, lease_until = NULL, next_at = now(), last_error = 'lease "
                    "expired: "
                    "the sender stopped before it recorded an outcome' FROM endpoints ep WHERE "
                    "ep.name "
                    "= d.endpoint AND d.status = 'sending' AND d.lease_until < now() RETURNING "
                    "d.endpoint, d.event_id, d.status"},
      .resolve = {"ev_resolve",
                  "UPDATE deliveries SET status = CASE WHEN $3 = 1 THEN 'delivered' ELSE "
                  "'pending' END, resolution = CASE WHEN $3 = 1 THEN 'delivered' ELSE 'resend' "
                  "END, budget_from = attempt, next_at = now(), delivered_at = CASE WHEN $3 = 1 "
                  "THEN now() END WHERE endpoint = $1 AND event_id = $2 AND status = 'in_doubt' "
                  "RETURNING status"},
      .redeliver = {"ev_redeliver",
                    "UPDATE deliveries SET status = 'pending', resolution = 'redeliver', "
                    "budget_from = attempt, next_at = now() WHERE endpoint = $1 AND event_id IN "
                    "(SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb)) AND status "
                    "= 'dead' RETURNING event_id"},
      .delivery_get = {"ev_delivery_get",
                       "SELECT " OO_PG_DELIVERY_COLUMNS " FROM deliveries d JOIN events e ON "
                       "e.event_id = d.event_id WHERE d.endpoint = $1 AND d.event_id = $2"},
      .delivery_list = {"ev_delivery_list",
                        "SELECT " OO_PG_DELIVERY_COLUMNS " FROM deliveries d JOIN events e ON "
                        "e.event_id = d.event_id WHERE d.endpoint = $1 AND ($2::text IS NULL OR "
                        "d.status = $2::text OR ($2::text = 'pending' AND d.status = 'sending')) "
                        "AND d.event_id > $3 ORDER BY d.event_id LIMIT $4"},
      .rebase_clock = {"ev_rebase_clock",
                       "SELECT max(tx) + 1 - pg_current_xact_id()::text::bigint FROM events HAVING "
                       "max(tx) >= pg_current_xact_id()::text::bigint + oo_event_shift()"},
      .set_shift =
          "CREATE OR REPLACE FUNCTION oo_event_shift() RETURNS bigint LANGUAGE sql "
          "IMMUTABLE AS $$ SELECT {shift}::bigint $$",
  };
  return sql;
}

}  // namespace onceorder::store::postgres
