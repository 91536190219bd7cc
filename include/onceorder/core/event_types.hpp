// The outbox's plain values (docs/EVENTS.md): events as the feed and deliveries send them,
// feed positions (the cursor), endpoints and their deliveries. Part of core, below store and
// service, like order_types.hpp. The limits every layer checks against are in limits.hpp.
//
// Thread-safety: plain values.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder {

// The event types, in the order docs/EVENTS.md lists them. A type not here is refused.
inline constexpr std::array<std::string_view, 5> kEventTypes = {"order.placed", "order.cancelled",
                                                                "production_order.created",
                                                                "document.issued", "run.finished"};
bool is_event_type(std::string_view type);

// A place in the feed: after the event (tx, event_id). The feed's order is (tx, event_id):
// `tx` is the writing transaction's id on PostgreSQL (0 on SQLite, where event_id order is
// commit order). {0, 0} is before every event.
struct FeedPosition {
  std::int64_t tx = 0;
  std::int64_t event_id = 0;
  friend bool operator==(const FeedPosition&, const FeedPosition&) = default;
  friend auto operator<=>(const FeedPosition&, const FeedPosition&) = default;
};

// The cursor's text, "<tx>:<event_id>" ("0:0" for the start). Clients treat it as opaque.
std::string cursor_text(const FeedPosition& p);
// Parses a cursor: "<tx>:<event_id>" with canonical decimal numbers, or "0" for the start.
// invalid_request otherwise.
Result<FeedPosition> parse_cursor(std::string_view text);

struct Event {
  std::int64_t id = 0;
  std::int64_t tx = 0;
  std::string type;
  std::string key;
  std::string occurred_at;
  std::string data;  // compact JSON text, as the database stored it
  FeedPosition position() const { return {tx, id}; }
};

// {"id","type","key","occurred_at","data"}: the bytes the feed lists and a delivery POSTs.
// The same event always gives the same bytes.
std::string event_json(const Event& e);

struct FeedPage {
  std::vector<Event> events;
  // Where the next read starts: the last event's position when the page is full, else the
  // newest position the read could see (so that a filtered read does not scan again).
  FeedPosition next_after;
};

// A comma-separated list of event types: each must be a known type; empty means every type.
// Sorted and without duplicates. invalid_request naming the unknown type otherwise.
Result<std::vector<std::string>> parse_event_types(std::string_view csv);
std::string join_event_types(const std::vector<std::string>& types);

struct Consumer {
  std::string name;
  FeedPosition after;
  std::string updated_at;
  // How far behind the feed's head: events after `after` (counted up to kLagCountCap) and the
  // age of the oldest of them in seconds (0 when none).
  std::int64_t lag_events = 0;
  double lag_seconds = 0;
  static constexpr std::int64_t kLagCountCap = 100000;
};

enum class DeliveryMode { at_least_once, at_most_once };
std::string_view to_string(DeliveryMode m);
std::optional<DeliveryMode> parse_delivery_mode(std::string_view s);

enum class DeliveryStatus { pending, sending, delivered, dead, in_doubt };
std::string_view to_string(DeliveryStatus s);
std::optional<DeliveryStatus> parse_delivery_status(std::string_view s);

struct EndpointSpec {
  std::string name;
  std::string url;
  std::vector<std::string> types;  // empty: every type
  std::string secret;
  DeliveryMode mode = DeliveryMode::at_least_once;
  int max_attempts = 10;
  int backoff_seconds = 10;
  // Where a new endpoint starts in the feed; nullopt: at the feed's head (events from now on).
  // Ignored for an endpoint that exists (its position is kept).
  std::optional<FeedPosition> after;
};

struct DeliveryCounts {
  std::int64_t pending = 0, sending = 0, delivered = 0, dead = 0, in_doubt = 0;
  // Age in seconds of the oldest event not yet delivered (pending or sending), 0 when none.
  double lag_seconds = 0;
};

struct Endpoint {
  EndpointSpec spec;  // `secret` is empty when read back: it is never answered
  FeedPosition after;
  std::string created_at;
  std::string updated_at;
  DeliveryCounts counts;
};

// One delivery as listed (GET /v1/endpoints/{name}/deliveries).
struct Delivery {
  std::string endpoint;
  Event event;
  DeliveryStatus status = DeliveryStatus::pending;
  std::optional<DeliveryMode> mode;  // the endpoint's mode when it was last claimed
  int attempt = 0;
  int budget_from = 0;  // attempts made before the last redeliver or resend
  std::optional<std::string> owner;
  std::optional<std::string> lease_until;
  std::optional<std::string> next_at;  // none while parked behind an earlier one of its key
  std::optional<std::string> last_error;
  std::optional<int> last_status;
  std::optional<std::string> resolution;  // "delivered", "resend" or "redeliver"
  std::string created_at;
  std::optional<std::string> sent_at;
  std::optional<std::string> delivered_at;
  // The earlier undelivered event of the same key this one waits for, if any.
  std::optional<std::int64_t> blocked_by;
};

// A delivery claimed for sending: the fencing token is (owner, attempt).
struct DeliveryClaim {
  std::string endpoint;
  std::string url;
  std::string secret;
  DeliveryMode mode = DeliveryMode::at_least_once;
  int max_attempts = 0;
  int backoff_seconds = 0;
  int attempt = 0;
  int budget_from = 0;
  std::string owner;
  Event event;
  // Attempts left after this one before the delivery is dead.
  int attempts_left() const { return max_attempts - (attempt - budget_from); }
};

// What a send came to, as the sender saw it.
enum class SendResult {
  delivered,  // a 2xx answer arrived
  refused,    // surely nothing was written: no connection, or a non-2xx answer arrived
  unknown,    // the request may have been received: broken after writing began, a timeout
};
std::string_view to_string(SendResult r);

// A settled delivery, recorded only under its claim's fence.
struct DeliveryOutcome {
  std::string endpoint;
  std::int64_t event_id = 0;
  std::string owner;
  int attempt = 0;
  DeliveryStatus status = DeliveryStatus::delivered;  // delivered, pending, dead or in_doubt
  std::int64_t retry_after_ms = 0;                    // pending: when to send again
  std::optional<std::string> error;
  std::optional<int> http_status;
};

// The rule that turns a send into the delivery's next state, by mode (docs/EVENTS.md,
// "What a crash or a timeout leaves"): at_least_once retries whatever went wrong;
// at_most_once retries only what surely wrote nothing, and leaves the rest in_doubt for an
// operator. A retry past max_attempts is dead. `jitter` in [0, 1) spreads retries.
DeliveryOutcome decide_outcome(const DeliveryClaim& claim, SendResult result,
                               std::optional<int> http_status, std::string error, double jitter);
// The backoff before retry number `failures` (1 = after the first failed attempt):
// backoff_seconds * 2^(failures-1), times 0.5..1.5 by `jitter`, at most an hour.
std::chrono::milliseconds retry_delay(int backoff_seconds, int failures, double jitter);

}  // namespace onceorder
