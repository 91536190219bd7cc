#include "store/events_store.hpp"

#include <fmt/format.h>

#include "onceorder/core/text.hpp"

namespace onceorder::store {
namespace {

std::string_view sv(const std::string& s) { return s; }

std::optional<std::string> opt_text(const Row& r, size_t i) {
  if (r.is_null(i)) return std::nullopt;
  return r.text(i);
}

// An event row (EventsSql) starting at column `at`: event_id, tx, type, key, occurred_at, data.
constexpr size_t kEventColumns = 6;
Event decode_event(const Row& r, size_t at) {
  return Event{r.i64(at),      r.i64(at + 1),  r.text(at + 2),
               r.text(at + 3), r.text(at + 4), r.text(at + 5)};
}

ConsumerRow decode_consumer(const Row& r) {
  return ConsumerRow{r.text(0), FeedPosition{r.i64(1), r.i64(2)}, r.text(3)};
}

// name, url, types, delivery, max_attempts, backoff_seconds, after_tx, after_id, created_at,
// updated_at.
Endpoint decode_endpoint(const Row& r) {
  Endpoint e;
  e.spec.name = r.text(0);
  e.spec.url = r.text(1);
  auto types = parse_event_types(r.text(2));
  if (types.ok()) e.spec.types = std::move(types).value();
  e.spec.mode = parse_delivery_mode(r.text(3)).value_or(DeliveryMode::at_least_once);
  e.spec.max_attempts = static_cast<int>(r.i64(4));
  e.spec.backoff_seconds = static_cast<int>(r.i64(5));
  e.after = FeedPosition{r.i64(6), r.i64(7)};
  e.created_at = r.text(8);
  e.updated_at = r.text(9);
  return e;
}

// endpoint, url, secret, delivery, max_attempts, backoff_seconds, attempt, budget_from, event.
DeliveryClaim decode_claim(const Row& r, const std::string& owner) {
  DeliveryClaim c;
  c.endpoint = r.text(0);
  c.url = r.text(1);
  c.secret = r.text(2);
  c.mode = parse_delivery_mode(r.text(3)).value_or(DeliveryMode::at_least_once);
  c.max_attempts = static_cast<int>(r.i64(4));
  c.backoff_seconds = static_cast<int>(r.i64(5));
  c.attempt = static_cast<int>(r.i64(6));
  c.budget_from = static_cast<int>(r.i64(7));
  c.owner = owner;
  c.event = decode_event(r, 8);
  return c;
}

// endpoint, event row, status, mode, attempt, budget_from, owner, lease_until, next_at,
// last_error, last_status, resolution, created_at, sent_at, delivered_at, blocked_by.
Delivery decode_delivery(const Row& r) {
  Delivery d;
  d.endpoint = r.text(0);
  d.event = decode_event(r, 1);
  size_t i = 1 + kEventColumns;
  d.status = parse_delivery_status(r.text(i)).value_or(DeliveryStatus::pending);
  if (!r.is_null(i + 1)) d.mode = parse_delivery_mode(r.text(i + 1));
  d.attempt = static_cast<int>(r.i64(i + 2));
  d.budget_from = static_cast<int>(r.i64(i + 3));
  d.owner = opt_text(r, i + 4);
  d.lease_until = opt_text(r, i + 5);
  d.next_at = opt_text(r, i + 6);
  d.last_error = opt_text(r, i + 7);
  if (!r.is_null(i + 8)) d.last_status = static_cast<int>(r.i64(i + 8));
  d.resolution = opt_text(r, i + 9);
  d.created_at = r.text(i + 10);
  d.sent_at = opt_text(r, i + 11);
  d.delivered_at = opt_text(r, i + 12);
  if (!r.is_null(i + 13)) d.blocked_by = r.i64(i + 13);
  return d;
}

std::string outcomes_json(std::span<const DeliveryOutcome> outcomes) {
  std::string out = "[";
  for (const DeliveryOutcome& o : outcomes) {
    if (out.size() > 1) out += ',';
    out += "{\"endpoint\":";
    append_json_string(out, o.endpoint);
    out += fmt::format(",\"event_id\":{},\"owner\":", o.event_id);
    append_json_string(out, o.owner);
    out += fmt::format(",\"attempt\":{},\"status\":\"{}\",\"retry_ms\":{},\"error\":", o.attempt,
                       to_string(o.status), o.retry_after_ms);
    if (o.error) {
      append_json_string(out, o.error->substr(0, 500));
    } else {
      out += "null";
    }
    out += ",\"http_status\":";
    out += o.http_status ? std::to_string(*o.http_status) : "null";
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace

EventsStore::EventsStore(const Dialect& dialect) : sql_(dialect.events) {}

Status EventsStore::prime(Connection& c) {
  return c.query(sql_.prime, {}, Then::with_next).status();
}

Result<FeedPage> EventsStore::feed(Connection& c, FeedPosition after,
                                   const std::vector<std::string>& types, int limit) {
  OO_RETURN_IF_ERROR(prime(c));
  const std::string csv = join_event_types(types);
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.feed, {after.tx, after.event_id, sv(csv), std::int64_t{limit}}));
  FeedPage page;
  page.events.reserve(rows.size());
  FeedPosition newest = after;
  for (const Row& r : rows) {
    Event e = decode_event(r, 1);
    if (r.text(0) == "h") {
      newest = std::max(newest, e.position());
    } else {
      page.events.push_back(std::move(e));
    }
  }
  if (static_cast<int>(page.events.size()) >= limit) {
    page.next_after = page.events.back().position();
    return page;
  }
  // Not a full page: every visible event after `after` was read (in the snapshot the head was
  // read in), so the next read may start at the newest one: filtered-out events are not read
  // again.
  page.next_after = page.events.empty() ? newest : std::max(newest, page.events.back().position());
  return page;
}

Result<FeedPosition> EventsStore::head(Connection& c) {
  OO_RETURN_IF_ERROR(prime(c));
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.head, {}));
  if (rows.empty()) return FeedPosition{};
  return FeedPosition{rows.front().i64(0), rows.front().i64(1)};
}

Result<std::pair<std::int64_t, double>> EventsStore::lag(Connection& c, FeedPosition after) {
  OO_RETURN_IF_ERROR(prime(c));
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.lag, {after.tx, after.event_id,
                                                    std::int64_t{Consumer::kLagCountCap}}));
  if (rows.empty()) return std::pair<std::int64_t, double>{0, 0.0};
  const Row& r = rows.front();
  const double age = r.is_null(1) ? 0.0 : std::stod(r.text(1));
  return std::pair<std::int64_t, double>{r.i64(0), age};
}

Result<double> EventsStore::held_seconds(Connection& c) {
  OO_RETURN_IF_ERROR(prime(c));
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.held, {}));
  if (rows.empty() || rows.front().is_null(0)) return 0.0;
  return std::stod(rows.front().text(0));
}

Result<std::optional<ConsumerRow>> EventsStore::consumer(Connection& c, const std::string& name) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.consumer_get, {sv(name)}));
  if (rows.empty()) return std::optional<ConsumerRow>{};
  return std::optional<ConsumerRow>{decode_consumer(rows.front())};
}

Result<std::vector<ConsumerRow>> EventsStore::consumers(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.consumer_list, {}));
  std::vector<ConsumerRow> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(decode_consumer(r));
  return out;
}

Result<ConsumerRow> EventsStore::put_consumer(Connection& c, const std::string& name,
                                              FeedPosition after) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.consumer_put, {sv(name), after.tx, after.event_id}));
  if (rows.empty()) return Status(Code::internal, "the consumer was not written");
  return decode_consumer(rows.front());
}

Result<bool> EventsStore::delete_consumer(Connection& c, const std::string& name) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.consumer_delete, {sv(name)}));
  return !rows.empty();
}

Result<std::optional<Endpoint>> EventsStore::endpoint(Connection& c, const std::string& name) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.endpoint_get, {sv(name)}));
  if (rows.empty()) return std::optional<Endpoint>{};
  return std::optional<Endpoint>{decode_endpoint(rows.front())};
}

Result<std::optional<std::pair<std::string, std::string>>> EventsStore::endpoint_target(
    Connection& c, const std::string& name) {
  using Target = std::pair<std::string, std::string>;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.endpoint_target, {sv(name)}));
  if (rows.empty()) return std::optional<Target>{};
  return std::optional<Target>{Target{rows.front().text(0), rows.front().text(1)}};
}

Result<std::vector<Endpoint>> EventsStore::endpoints(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.endpoint_list, {}));
  std::vector<Endpoint> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(decode_endpoint(r));
  return out;
}

Result<std::int64_t> EventsStore::endpoint_count(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.endpoint_count, {}));
  return rows.empty() ? 0 : rows.front().i64(0);
}

Result<Endpoint> EventsStore::put_endpoint(Connection& c, const EndpointSpec& s,
                                           FeedPosition after) {
  const std::string types = join_event_types(s.types);
  OO_ASSIGN_OR_RETURN(
      auto rows,
      c.query(sql_.endpoint_put, {sv(s.name), sv(s.url), sv(types), sv(s.secret), to_string(s.mode),
                                  std::int64_t{s.max_attempts}, std::int64_t{s.backoff_seconds},
                                  after.tx, after.event_id}));
  if (rows.empty()) return Status(Code::internal, "the endpoint was not written");
  return decode_endpoint(rows.front());
}

Result<bool> EventsStore::delete_endpoint(Connection& c, const std::string& name) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.endpoint_delete, {sv(name)}));
  return !rows.empty();
}

Result<int> EventsStore::dispatch(Connection& c, const std::string& name, int limit) {
  OO_ASSIGN_OR_RETURN(auto locked, c.query(sql_.endpoint_lock, {sv(name)}));
  if (locked.empty()) return 0;  // gone, or another transaction is dispatching it
  OO_ASSIGN_OR_RETURN(auto types, parse_event_types(locked.front().text(0)));
  const FeedPosition from{locked.front().i64(1), locked.front().i64(2)};
  OO_ASSIGN_OR_RETURN(auto page, feed(c, from, {}, limit));
  std::string rows = "[";
  for (const Event& e : page.events) {
    if (!types.empty() && !std::binary_search(types.begin(), types.end(), e.type)) continue;
    if (rows.size() > 1) rows += ',';
    rows += fmt::format("[{},{},", e.id, e.tx);
    append_json_string(rows, e.key);
    rows += ']';
  }
  rows += ']';
  if (rows.size() > 2) {
    OO_RETURN_IF_ERROR(c.query(sql_.insert_deliveries, {sv(name), sv(rows)}).status());
  }
  // Events the endpoint does not take move its position too (the page may end on one).
  const FeedPosition to = page.next_after;
  if (to != from) {
    OO_RETURN_IF_ERROR(c.query(sql_.endpoint_advance, {sv(name), to.tx, to.event_id}).status());
  }
  return static_cast<int>(page.events.size());
}

Result<std::vector<std::pair<std::string, DeliveryCounts>>> EventsStore::delivery_counts(
    Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.delivery_counts, {}));
  std::vector<std::pair<std::string, DeliveryCounts>> out;
  for (const Row& r : rows) {
    if (out.empty() || out.back().first != r.text(0)) out.emplace_back(r.text(0), DeliveryCounts{});
    DeliveryCounts& n = out.back().second;
    const auto status = parse_delivery_status(r.text(1));
    const std::int64_t count = r.i64(2);
    if (status == DeliveryStatus::pending) n.pending = count;
    if (status == DeliveryStatus::sending) n.sending = count;
    if (status == DeliveryStatus::dead) n.dead = count;
    if (status == DeliveryStatus::in_doubt) n.in_doubt = count;
    if (!r.is_null(3)) n.lag_seconds = std::max(n.lag_seconds, std::stod(r.text(3)));
  }
  return out;
}

Result<std::vector<DeliveryClaim>> EventsStore::claim(Connection& c, const std::string& owner,
                                                      int limit, std::int64_t lease_ms) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.claim, {sv(owner), std::int64_t{limit}, lease_ms}));
  std::vector<DeliveryClaim> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(decode_claim(r, owner));
  return out;
}

Result<std::vector<std::pair<std::string, std::int64_t>>> EventsStore::settle(
    Connection& c, std::span<const DeliveryOutcome> outcomes) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  if (outcomes.empty()) return out;
  const std::string json = outcomes_json(outcomes);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.settle, {sv(json)}));
  out.reserve(rows.size());
  for (const Row& r : rows) out.emplace_back(r.text(0), r.i64(1));
  return out;
}

Result<std::vector<EventsStore::Reaped>> EventsStore::reap(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.reap, {}));
  std::vector<Reaped> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back(Reaped{r.text(0), r.i64(1),
                         parse_delivery_status(r.text(2)).value_or(DeliveryStatus::pending)});
  }
  return out;
}

Result<std::optional<DeliveryStatus>> EventsStore::resolve(Connection& c,
                                                           const std::string& endpoint,
                                                           std::int64_t event_id, bool delivered) {
  OO_ASSIGN_OR_RETURN(
      auto rows, c.query(sql_.resolve, {sv(endpoint), event_id, std::int64_t{delivered ? 1 : 0}}));
  if (rows.empty()) return std::optional<DeliveryStatus>{};
  return parse_delivery_status(rows.front().text(0));
}

Result<std::vector<std::int64_t>> EventsStore::redeliver(Connection& c, const std::string& endpoint,
                                                         std::span<const std::int64_t> ids) {
  const std::string json = fmt::format("[{}]", fmt::join(ids, ","));
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.redeliver, {sv(endpoint), sv(json)}));
  return first_column_i64(rows);
}

Result<bool> EventsStore::rebase_clock(Connection& c) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.rebase_clock, {}));
  if (rows.empty()) return false;
  std::string script(sql_.set_shift.sql);
  const std::string shift = std::to_string(rows.front().i64(0));
  script.replace(script.find("{shift}"), 7, shift);
  OO_RETURN_IF_ERROR(c.exec_script(script));
  return true;
}

Result<std::optional<Delivery>> EventsStore::delivery(Connection& c, const std::string& endpoint,
                                                      std::int64_t event_id) {
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.delivery_get, {sv(endpoint), event_id}));
  if (rows.empty()) return std::optional<Delivery>{};
  return std::optional<Delivery>{decode_delivery(rows.front())};
}

Result<std::vector<Delivery>> EventsStore::deliveries(Connection& c, const std::string& endpoint,
                                                      std::optional<DeliveryStatus> status,
                                                      std::int64_t after_event_id, int limit) {
  const Param st = status ? Param(to_string(*status)) : Param(nullptr);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.delivery_list,
                                         {sv(endpoint), st, after_event_id, std::int64_t{limit}}));
  std::vector<Delivery> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(decode_delivery(r));
  return out;
}

}  // namespace onceorder::store
