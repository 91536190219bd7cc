#include "store/events_store.hpp"
#include "store/sqlite/sql_text.hpp"

namespace onceorder::store::sqlite {

// One writer at a time: event_id order is commit order, every committed event is visible, and
// tx is always 0 (migration 22). The statements keep PostgreSQL's shapes.
#define OO_SQ_EVENT_COLUMNS(E) \
  E ".event_id, " E ".tx, " E ".type, " E ".key, " E ".occurred_at, " E ".data"
#define OO_SQ_CONSUMER_COLUMNS "name, after_tx, after_id, updated_at"
#define OO_SQ_ENDPOINT_COLUMNS                                                                  \
  "name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id, created_at, " \
  "updated_at"
#define OO_SQ_EARLIER_OPEN(D)                                                            \
  "SELECT p.event_id FROM deliveries p WHERE p.endpoint = " D ".endpoint AND p.key = " D \
  ".key AND p.status <> 'delivered' AND (p.ev_tx, p.event_id) < (" D ".ev_tx, " D ".event_id)"
#define OO_SQ_AGE(T) "((julianday('now') - julianday(" T ")) * 86400.0)"
#define OO_SQ_DELIVERY_COLUMNS \
  "d.endpoint, " OO_SQ_EVENT_COLUMNS("e") ", d.status, d.mode, d.attempt, d.budget_from, "     \
  "d.owner, d.lease_until, d.next_at, d.last_error, d.last_status, d.resolution, d.created_at, " \
  "d.sent_at, d.delivered_at, (" OO_SQ_EARLIER_OPEN("d") " ORDER BY p.ev_tx, p.event_id LIMIT 1)"
// RETURNING sees only the updated table: the endpoint's and the event's columns are read by
// subqueries of the claimed row.
#define OO_SQ_EP(COL) "(SELECT " COL " FROM endpoints ep WHERE ep.name = deliveries.endpoint)"
#define OO_SQ_EV(COL) "(SELECT " COL " FROM event_feed e WHERE e.event_id = deliveries.event_id)"

const EventsSql& events_sql() {
  static const EventsSql sql{
      .feed =
          {"ev_feed",
           "SELECT * FROM (SELECT 'e', " OO_SQ_EVENT_COLUMNS(
               "e") " FROM event_feed e WHERE "
                    "(e.tx, e.event_id) > (?1, ?2) AND (?3 = '' OR instr(',' || ?3 || ',', ',' || "
                    "e.type || ',') > 0) ORDER BY e.tx, e.event_id LIMIT ?4) UNION ALL SELECT * "
                    "FROM "
                    "(SELECT 'h', e.event_id, e.tx, '', '', '', '' FROM events e ORDER BY e.tx "
                    "DESC, "
                    "e.event_id DESC LIMIT 1)"},
      .prime = {"ev_prime", "SELECT 1"},
      .head = {"ev_head",
               "SELECT e.tx, e.event_id FROM events e ORDER BY e.tx DESC, e.event_id DESC LIMIT 1"},
      .lag = {"ev_lag", "SELECT count(*), " OO_SQ_AGE(
                            "min(x.occurred_at)") " FROM (SELECT e.occurred_at "
                                                  "FROM events e WHERE (e.tx, e.event_id) > "
                                                  "(?1, ?2) ORDER BY e.tx, e.event_id "
                                                  "LIMIT ?3) x"},
      .held = {"ev_held", "SELECT NULL"},
      .consumer_get = {"ev_consumer_get",
                       "SELECT " OO_SQ_CONSUMER_COLUMNS " FROM event_consumers WHERE name = ?1"},
      .consumer_list = {"ev_consumer_list",
                        "SELECT " OO_SQ_CONSUMER_COLUMNS " FROM event_consumers ORDER BY name"},
      .consumer_put = {"ev_consumer_put",
                       "INSERT INTO event_consumers (name, after_tx, after_id) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (name) DO UPDATE SET after_tx = excluded.after_tx, after_id = "
                       "excluded.after_id, updated_at = " OO_SQLITE_NOW
                       " RETURNING " OO_SQ_CONSUMER_COLUMNS},
      .consumer_delete = {"ev_consumer_delete",
                          "DELETE FROM event_consumers WHERE name = ?1 RETURNING name"},
      .endpoint_get = {"ev_endpoint_get",
                       "SELECT " OO_SQ_ENDPOINT_COLUMNS " FROM endpoints WHERE name = ?1"},
      .endpoint_target = {"ev_endpoint_target",
                          "SELECT url, secret FROM endpoints WHERE name = ?1"},
      .endpoint_list = {"ev_endpoint_list",
                        "SELECT " OO_SQ_ENDPOINT_COLUMNS " FROM endpoints ORDER BY name"},
      .endpoint_count = {"ev_endpoint_count", "SELECT count(*) FROM endpoints"},
      .endpoint_put = {"ev_endpoint_put",
                       "INSERT INTO endpoints (name, url, types, secret, delivery, max_attempts, "
                       "backoff_seconds, after_tx, after_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                       "?8, ?9) ON CONFLICT (name) DO UPDATE SET url = excluded.url, types = "
                       "excluded.types, secret = excluded.secret, delivery = excluded.delivery, "
                       "max_attempts = excluded.max_attempts, backoff_seconds = "
                       "excluded.backoff_seconds, updated_at = " OO_SQLITE_NOW
                       " RETURNING " OO_SQ_ENDPOINT_COLUMNS},
      .endpoint_delete = {"ev_endpoint_delete",
                          "DELETE FROM endpoints WHERE name = ?1 RETURNING name"},
      .endpoint_lock = {"ev_endpoint_lock",
                        "SELECT types, after_tx, after_id FROM endpoints WHERE name = ?1"},
      .endpoint_advance = {"ev_endpoint_advance",
                           "UPDATE endpoints SET after_tx = ?2, after_id = ?3 WHERE name = ?1"},
      .insert_deliveries = {"ev_insert_deliveries",
                            "INSERT INTO deliveries (endpoint, event_id, ev_tx, key, status) "
                            "SELECT ?1, json_extract(r.value, '$[0]'), json_extract(r.value, "
                            "'$[1]'), json_extract(r.value, '$[2]'), 'pending' FROM json_each(?2) "
                            "r WHERE true ON CONFLICT DO NOTHING RETURNING event_id"},
      .delivery_counts = {"ev_delivery_counts",
                          "SELECT d.endpoint, d.status, count(*), CASE WHEN d.status IN "
                          "('pending', 'sending') THEN " OO_SQ_AGE(
                              "min(e.occurred_at)") " END FROM deliveries d JOIN events e ON "
                                                    "e.event_id = d.event_id WHERE d.status <> "
                                                    "'delivered' GROUP BY d.endpoint, d.status "
                                                    "ORDER BY d.endpoint, d.status"},
      .claim =
          {"ev_claim",
           "UPDATE deliveries SET status = 'sending', attempt = attempt + 1, owner = ?1, "
           "lease_until = " OO_SQLITE_TIME(
               "'now', '+' || (?3 / 1000.0) || ' seconds'") ", mode = " OO_SQ_EP("ep."
                                                                                 "deliver"
                                                                                 "y") ", "
                                                                                      "sen"
                                                                                      "t_"
                                                                                      "at "
                                                                                      "="
                                                                                      " " OO_SQLITE_NOW
                                                                                      " WH"
                                                                                      "ERE"
                                                                                      " ("
                                                                                      "end"
                                                                                      "poi"
                                                                                      "nt,"
                                                                                      " ev"
                                                                                      "ent"
                                                                                      "_id"
                                                                                      ") "
                                                                                      "IN "
                                                                                      "(SE"
                                                                                      "LEC"
                                                                                      "T "
                                                                                      "d."
                                                                                      "end"
                                                                                      "poi"
                                                                                      "nt,"
                                                                                      " d."
                                                                                      "eve"
                                                                                      "nt_"
                                                                                      "id "
                                                                                      "FRO"
                                                                                      "M "
                                                                                      "del"
                                                                                      "ive"
                                                                                      "rie"
                                                                                      "s "
                                                                                      "d "
                                                                                      "WHE"
                                                                                      "RE "
                                                                                      "d."
                                                                                      "sta"
                                                                                      "tus"
                                                                                      " = "
                                                                                      "'pe"
                                                                                      "ndi"
                                                                                      "ng'"
                                                                                      " AN"
                                                                                      "D "
                                                                                      "d."
                                                                                      "nex"
                                                                                      "t_"
                                                                                      "at "
                                                                                      "<="
                                                                                      " " OO_SQLITE_NOW
                                                                                      " AN"
                                                                                      "D "
                                                                                      "NOT"
                                                                                      " EX"
                                                                                      "IST"
                                                                                      "S "
                                                                                      "(" OO_SQ_EARLIER_OPEN(
                                                                                          "d") ") "
                                                                                               "ORD"
                                                                                               "ER "
                                                                                               "BY "
                                                                                               "d."
                                                                                               "nex"
                                                                                               "t_"
                                                                                               "at,"
                                                                                               " d."
                                                                                               "ev_"
                                                                                               "tx,"
                                                                                               " d."
                                                                                               "eve"
                                                                                               "nt_"
                                                                                               "id "
                                                                                               "LIM"
                                                                                               "IT "
                                                                                               "?2)"
                                                                                               " RE"
                                                                                               "TUR"
                                                                                               "NIN"
                                                                                               "G "
                                                                                               "end"
                                                                                               "poi"
                                                                                               "nt,"
                                                                                               " " OO_SQ_EP("ep.url") ", " OO_SQ_EP(
                                                                                                   "ep.secret") ", "
                                                                                                                "mode, " OO_SQ_EP("ep.max_attempts") ", " OO_SQ_EP(
                                                                                                                    "ep.backoff_seconds") ", attempt, budget_from, event_id, "
                                                                                                                                          "ev_tx, " OO_SQ_EV("e.type") ", key, " OO_SQ_EV(
                                                                                                                                              "e.occurred_at") ", " OO_SQ_EV("e.data")},
      .settle =
          {"ev_settle",
           "UPDATE deliveries SET status = o.status, lease_until = NULL, next_at = CASE "
           "WHEN o.status = 'pending' THEN " OO_SQLITE_TIME(
               "'now', '+' || (o.retry_ms / 1000.0) || ' seconds'") " ELSE next_at END, "
                                                                    "last_error = o.error, "
                                                                    "last_status = "
                                                                    "o.http_status, "
                                                                    "delivered_at = CASE "
                                                                    "WHEN o.status = "
                                                                    "'delivered' "
                                                                    "THEN " OO_SQLITE_NOW
                                                                    " ELSE delivered_at END "
                                                                    "FROM (SELECT "
                                                                    "json_extract(value, "
                                                                    "'$.endpoint') AS "
                                                                    "endpoint, "
                                                                    "json_extract(value, "
                                                                    "'$.event_id') AS "
                                                                    "event_id, "
                                                                    "json_extract(value, "
                                                                    "'$.owner') AS owner, "
                                                                    "json_extract(value, "
                                                                    "'$.attempt') AS attempt, "
                                                                    "json_extract(value, "
                                                                    "'$.status') AS status, "
                                                                    "json_extract(value, "
                                                                    "'$.retry_ms') AS "
                                                                    "retry_ms, "
                                                                    "json_extract(value, "
                                                                    "'$.error') AS error, "
                                                                    "json_extract(value, "
                                                                    "'$.http_status') AS "
                                                                    "http_status FROM "
                                                                    "json_each(?1)) AS o WHERE "
                                                                    "deliveries.endpoint = "
                                                                    "o.endpoint AND "
                                                                    "deliveries.event_id = "
                                                                    "o.event_id AND "
                                                                    "deliveries.owner = "
                                                                    "o.owner AND "
                                                                    "deliveries.attempt = "
                                                                    "o.attempt AND "
                                                                    "deliveries.status = "
                                                                    "'sending' RETURNING "
                                                                    "endpoint, event_id"},
      .reap = {"ev_reap",
               "UPDATE deliveries SET status = CASE WHEN mode = 'at_most_once' THEN 'in_doubt' "
               "WHEN attempt - budget_from >= " OO_SQ_EP(
                   "ep.max_attempts") " THEN 'dead' ELSE 'pending' END, lease_until = NULL, "
                                      "next_at = " OO_SQLITE_NOW
                                      ", last_error = 'lease expired: the sender stopped "
                                      "before it recorded an "
                                      "outcome' WHERE status = 'sending' AND lease_until "
                                      "< " OO_SQLITE_NOW " RETURNING endpoint, event_id, status"},
      .resolve = {"ev_resolve",
                  "UPDATE deliveries SET status = CASE WHEN ?3 = 1 THEN 'delivered' ELSE "
                  "'pending' END, resolution = CASE WHEN ?3 = 1 THEN 'delivered' ELSE 'resend' "
                  "END, budget_from = attempt, next_at = " OO_SQLITE_NOW
                  ", delivered_at = CASE WHEN ?3 = 1 THEN " OO_SQLITE_NOW
                  " END WHERE endpoint = ?1 AND event_id = ?2 AND status = 'in_doubt' "
                  "RETURNING status"},
      .redeliver = {"ev_redeliver",
                    "UPDATE deliveries SET status = 'pending', resolution = 'redeliver', "
                    "budget_from = attempt, next_at = " OO_SQLITE_NOW
                    " WHERE endpoint = ?1 AND event_id IN (SELECT value FROM json_each(?2)) AND "
                    "status = 'dead' RETURNING event_id"},
      .delivery_get = {"ev_delivery_get",
                       "SELECT " OO_SQ_DELIVERY_COLUMNS " FROM deliveries d JOIN event_feed e ON "
                       "e.event_id = d.event_id WHERE d.endpoint = ?1 AND d.event_id = ?2"},
      .delivery_list = {"ev_delivery_list",
                        "SELECT " OO_SQ_DELIVERY_COLUMNS " FROM deliveries d JOIN event_feed e ON "
                        "e.event_id = d.event_id WHERE d.endpoint = ?1 AND (?2 IS NULL OR "
                        "d.status = ?2 OR (?2 = 'pending' AND d.status = 'sending')) AND "
                        "d.event_id > ?3 ORDER BY d.event_id LIMIT ?4"},
      .rebase_clock = {"ev_rebase_clock", "SELECT 0 WHERE 0"},
      .set_shift = "SELECT 1",
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
