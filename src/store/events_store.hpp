// SQL for the outbox (docs/EVENTS.md): the feed over `events`, named consumers, endpoints and
// their deliveries. One engine-neutral class over per-engine statements
// (store/<engine>/events.sql); every row is decoded in one place per statement shape here.
// Methods run inside the caller's transaction.
//
// Thread-safety: an EventsStore holds only its statements; share it freely, one call per
// connection at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "onceorder/core/event_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct EventsSql {
  // Event rows are: event_id, tx, type, key, occurred_at (ISO 8601 UTC), data.
  // (after_tx, after_id, types csv ('' = all), limit) → 'e' and an event row, for the page in
  // feed order, then 'h' and the head's event_id and tx (padded to an event row), all from one
  // snapshot. Only events whose transaction ended before the oldest one still running are read
  // (the visibility horizon).
  Statement feed;
  // () → nothing anyone reads: sent (held back, in the next statement's round trip) before each
  // statement that reads the horizon. PostgreSQL caches pg_stat_activity for the rest of the
  // transaction at its first read, so the horizon then places xids by what ran before its own
  // snapshot: an xid it cannot place started after that read and holds back only newer events,
  // never one committed before the read (migration 22, oo_event_horizon). SQLite: nothing.
  Statement prime;
  // () → tx, event_id of the newest event below the horizon; no row when there is none.
  Statement head;
  // (after_tx, after_id, cap) → count of events after the position (at most cap), and the age
  // in seconds of the oldest of them (NULL when none).
  Statement lag;
  // () → the age in seconds of the oldest committed event the horizon still holds back (NULL
  // when none; SQLite never holds one back).
  Statement held;

  // Consumer rows are: name, after_tx, after_id, updated_at.
  Statement consumer_get;     // (name) → consumer row
  Statement consumer_list;    // () → consumer rows by name
  Statement consumer_put;     // (name, after_tx, after_id) → consumer row (inserted or moved)
  Statement consumer_delete;  // (name) → name

  // Endpoint rows are: name, url, types, delivery, max_attempts, backoff_seconds, after_tx,
  // after_id, created_at, updated_at (never the secret).
  Statement endpoint_get;  // (name) → endpoint row
  // (name) → url, secret: for `onceorder endpoint test` only (the API never answers a secret)
  Statement endpoint_target;
  Statement endpoint_list;   // () → endpoint rows by name
  Statement endpoint_count;  // () → count
  // (name, url, types, secret, delivery, max_attempts, backoff_seconds, after_tx, after_id) →
  // endpoint row; an existing endpoint keeps its position and creation time.
  Statement endpoint_put;
  Statement endpoint_delete;  // (name) → name; its deliveries go with it
  // (name) → types, after_tx, after_id; locked (PostgreSQL: SKIP LOCKED, so no row while
  // another transaction dispatches it).
  Statement endpoint_lock;
  Statement endpoint_advance;  // (name, after_tx, after_id)
  // (endpoint, JSON array of [event_id, tx, key]) → event_id of each delivery made
  Statement insert_deliveries;
  // () → endpoint, status, count, oldest occurred_at age in seconds (pending and sending rows;
  // NULL otherwise), for statuses other than delivered
  Statement delivery_counts;

  // Claim rows are: endpoint, url, secret, delivery, max_attempts, backoff_seconds, attempt,
  // budget_from, then an event row.
  // (owner, limit, lease_ms) → claim rows: due pending deliveries none of whose earlier
  // deliveries of the same (endpoint, key) is undelivered, now `sending` under the fence
  // (owner, attempt + 1).
  Statement claim;
  // (JSON array of {endpoint, event_id, owner, attempt, status, retry_ms, error, http_status})
  // → endpoint, event_id of each outcome recorded: only where the fence still holds.
  Statement settle;
  // () → endpoint, event_id, status: sending deliveries whose lease ended, settled as the mode
  // they were claimed under says (pending or dead; in_doubt for at_most_once).
  Statement reap;
  // (endpoint, event_id, delivered 1|0) → status; only an in_doubt delivery.
  Statement resolve;
  // (endpoint, JSON array of event ids) → event_id of each dead delivery made pending again
  Statement redeliver;
  // Delivery rows are: endpoint, then an event row, then status, mode, attempt, budget_from,
  // owner, lease_until, next_at, last_error, last_status, resolution, created_at, sent_at,
  // delivered_at, blocked_by.
  // (endpoint, event_id) → delivery row
  Statement delivery_get;
  // (endpoint, status or NULL ('pending' also lists 'sending'), after event_id, limit) →
  // delivery rows by event_id
  Statement delivery_list;
  // () → the shift new events need, when they would not sort after the stored ones (the
  // database was restored into a new cluster, whose transaction ids start low again); no row
  // when nothing needs doing (always on SQLite, whose tx is always 0).
  Statement rebase_clock;
  // Script that makes "{shift}" the clock's shift (PostgreSQL: oo_event_shift(), a constant
  // every plan folds in, so replacing it invalidates them). Never run on SQLite.
  Statement set_shift;
};

struct ConsumerRow {
  std::string name;
  FeedPosition after;
  std::string updated_at;
};

class EventsStore {
 public:
  explicit EventsStore(const Dialect& dialect);

  Result<FeedPage> feed(Connection& c, FeedPosition after, const std::vector<std::string>& types,
                        int limit);
  Result<FeedPosition> head(Connection& c);
  // Events after `after`, counted up to Consumer::kLagCountCap, and the oldest one's age.
  Result<std::pair<std::int64_t, double>> lag(Connection& c, FeedPosition after);
  // EventsSql::held, 0 when nothing is held back.
  Result<double> held_seconds(Connection& c);

  Result<std::optional<ConsumerRow>> consumer(Connection& c, const std::string& name);
  Result<std::vector<ConsumerRow>> consumers(Connection& c);
  Result<ConsumerRow> put_consumer(Connection& c, const std::string& name, FeedPosition after);
  Result<bool> delete_consumer(Connection& c, const std::string& name);

  Result<std::optional<Endpoint>> endpoint(Connection& c, const std::string& name);
  // The endpoint's url and secret, or nullopt.
  Result<std::optional<std::pair<std::string, std::string>>> endpoint_target(
      Connection& c, const std::string& name);
  Result<std::vector<Endpoint>> endpoints(Connection& c);
  Result<std::int64_t> endpoint_count(Connection& c);
  Result<Endpoint> put_endpoint(Connection& c, const EndpointSpec& spec, FeedPosition after);
  Result<bool> delete_endpoint(Connection& c, const std::string& name);
  // Makes the deliveries of `name` for the next `limit` feed events after its position and
  // moves its position past them. 0 events and nothing done while another transaction
  // dispatches it. Returns how many feed events it went past.
  Result<int> dispatch(Connection& c, const std::string& name, int limit);
  // Per endpoint, counts of its undelivered deliveries by status and its lag.
  Result<std::vector<std::pair<std::string, DeliveryCounts>>> delivery_counts(Connection& c);

  Result<std::vector<DeliveryClaim>> claim(Connection& c, const std::string& owner, int limit,
                                           std::int64_t lease_ms);
  // The outcomes recorded (their fence held), as (endpoint, event_id).
  Result<std::vector<std::pair<std::string, std::int64_t>>> settle(
      Connection& c, std::span<const DeliveryOutcome> outcomes);
  struct Reaped {
    std::string endpoint;
    std::int64_t event_id = 0;
    DeliveryStatus status = DeliveryStatus::pending;
  };
  Result<std::vector<Reaped>> reap(Connection& c);
  // The new status, or nullopt when no in_doubt delivery (endpoint, event_id) was there.
  Result<std::optional<DeliveryStatus>> resolve(Connection& c, const std::string& endpoint,
                                                std::int64_t event_id, bool delivered);
  Result<std::vector<std::int64_t>> redeliver(Connection& c, const std::string& endpoint,
                                              std::span<const std::int64_t> event_ids);
  Result<std::optional<Delivery>> delivery(Connection& c, const std::string& endpoint,
                                           std::int64_t event_id);
  // Keeps the feed's order past a restore (EventsSql::rebase_clock). True when it raised it.
  Result<bool> rebase_clock(Connection& c);
  Result<std::vector<Delivery>> deliveries(Connection& c, const std::string& endpoint,
                                           std::optional<DeliveryStatus> status,
                                           std::int64_t after_event_id, int limit);

 private:
  Status prime(Connection& c);

  const EventsSql& sql_;
};

}  // namespace onceorder::store
