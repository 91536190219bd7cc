// The outbox's routes (API.md "Events, consumers and endpoints", docs/EVENTS.md): the feed
// with its long poll, named consumers, endpoints and their deliveries. Each handler reads its
// input, calls one Outbox method and writes the answer; the Outbox checks names, cursors and
// endpoint settings (its field errors are the answer's).
#include <fmt/format.h>

#include <limits>

#include "http/json_input.hpp"
#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

// "<tx>:<event_id>" is two numbers of at most 19 digits.
constexpr size_t kMaxCursorText = 64;
// Every known type once, separated by commas, fits.
constexpr size_t kMaxTypesText = 256;
// An endpoint's `types`: more than every known type is a mistake.
constexpr size_t kMaxEndpointTypes = 32;

// The {name} of a consumer or endpoint route, checked as the Outbox checks it.
Result<std::string> outbox_name(const RouteMatch& m) {
  OO_RETURN_IF_ERROR(check_feed_name("name", m.ids.front()));
  return m.ids.front();
}

// A cursor the client sent in `field`; its problem becomes the field's error.
std::optional<FeedPosition> read_cursor(const std::optional<std::string>& text,
                                        const std::function<void(std::string)>& error) {
  if (!text) return std::nullopt;
  auto cursor = parse_cursor(*text);
  if (!cursor.ok()) {
    error(cursor.status().message());
    return std::nullopt;
  }
  return *cursor;
}

Response no_content() {
  Response res{bhttp::status::no_content, 11};
  res.prepare_payload();
  return res;
}

json consumer_json(const Consumer& c) {
  return {{"name", c.name},
          {"after", cursor_text(c.after)},
          {"updated_at", c.updated_at},
          {"lag_events", c.lag_events},
          {"lag_seconds", c.lag_seconds}};
}

// Never the secret: the Outbox does not read it back, and it is not written here either.
json endpoint_json(const Endpoint& e) {
  const DeliveryCounts& n = e.counts;
  return {{"name", e.spec.name},
          {"url", e.spec.url},
          {"types", e.spec.types},
          {"delivery", to_string(e.spec.mode)},
          {"max_attempts", e.spec.max_attempts},
          {"backoff_seconds", e.spec.backoff_seconds},
          {"after", cursor_text(e.after)},
          {"created_at", e.created_at},
          {"updated_at", e.updated_at},
          {"deliveries",
           {{"pending", n.pending},
            {"sending", n.sending},
            {"dead", n.dead},
            {"in_doubt", n.in_doubt},
            {"lag_seconds", n.lag_seconds}}}};
}

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// A delivery as listed. Its `event` is event_json's text, the bytes every send of it carries,
// spliced in rather than parsed and written again.
std::string delivery_text(const Delivery& d) {
  const json fields = {{"event_id", d.event.id},
                       {"type", d.event.type},
                       {"key", d.event.key},
                       {"status", to_string(d.status)},
                       {"mode", d.mode ? json(to_string(*d.mode)) : json(nullptr)},
                       {"attempt", d.attempt},
                       {"next_at", or_null(d.next_at)},
                       {"last_error", or_null(d.last_error)},
                       {"last_status", or_null(d.last_status)},
                       {"resolution", or_null(d.resolution)},
                       {"created_at", d.created_at},
                       {"sent_at", or_null(d.sent_at)},
                       {"delivered_at", or_null(d.delivered_at)},
                       {"blocked_by", or_null(d.blocked_by)}};
  std::string out = fields.dump(-1, ' ', false, json::error_handler_t::replace);
  out.pop_back();  // the closing brace: the event comes last
  out += ",\"event\":";
  out += event_json(d.event);
  out += '}';
  return out;
}

Response json_text_response(bhttp::status status, std::string body) {
  return text_response(status, "application/json", std::move(body));
}

}  // namespace

Response get_events(Services& s, const Request& req, Deadline deadline, FeedWait* wait) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  const auto after_text = query->string("after", kMaxCursorText);
  const auto limit = query->integer("limit", 1, EventLimits::kFeedPage);
  const auto types_text = query->string("types", kMaxTypesText);
  const auto wait_seconds = query->integer("wait", 0, EventLimits::kMaxWaitSeconds);
  const auto after =
      read_cursor(after_text, [&](std::string e) { query->add_error("after", std::move(e)); });
  std::vector<std::string> types;
  if (types_text) {
    auto parsed = parse_event_types(*types_text);
    if (parsed.ok())
      types = std::move(*parsed);
    else
      query->add_error("types", parsed.status().message());
  }
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto page =
      Outbox(s.db).read(after.value_or(FeedPosition{}), types,
                        static_cast<int>(limit.value_or(EventLimits::kFeedDefaultPage)), deadline);
  if (!page.ok()) return problem_response(page.status());
  if (wait != nullptr && page->events.empty() && wait_seconds.value_or(0) > 0) {
    *wait = FeedWait{std::chrono::seconds(*wait_seconds), page->next_after};
  }
  std::string body = "{\"events\":[";
  for (size_t i = 0; i < page->events.size(); ++i) {
    if (i > 0) body += ',';
    body += event_json(page->events[i]);
  }
  body += "],\"next_after\":";
  append_json_string(body, cursor_text(page->next_after));
  body += '}';
  return json_text_response(bhttp::status::ok, std::move(body));
}

Response list_consumers(Services& s, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto consumers = Outbox(s.db).consumers(deadline);
  if (!consumers.ok()) return problem_response(consumers.status());
  json out = json::array();
  for (const Consumer& c : *consumers) out.push_back(consumer_json(c));
  return json_response(bhttp::status::ok, {{"consumers", std::move(out)}});
}

Response get_consumer(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto consumer = Outbox(s.db).consumer(*name, deadline);
  if (!consumer.ok()) return problem_response(consumer.status());
  return json_response(bhttp::status::ok, consumer_json(*consumer));
}

Response put_consumer(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  const auto after = read_cursor(fields.string("after", /*required=*/true),
                                 [&](std::string e) { fields.add_error("after", std::move(e)); });
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto put = Outbox(s.db).put_consumer(*name, *after, deadline);
  if (!put.ok()) return problem_response(put.status());
  return json_response(put->created ? bhttp::status::created : bhttp::status::ok,
                       consumer_json(put->consumer));
}

Response delete_consumer(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  if (Status st = empty_body(req); !st.ok()) return problem_response(st);
  if (Status st = Outbox(s.db).delete_consumer(*name, deadline); !st.ok()) {
    return problem_response(st);
  }
  return no_content();
}

Response list_endpoints(Services& s, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto endpoints = Outbox(s.db).endpoints(deadline);
  if (!endpoints.ok()) return problem_response(endpoints.status());
  json out = json::array();
  for (const Endpoint& e : *endpoints) out.push_back(endpoint_json(e));
  return json_response(bhttp::status::ok, {{"endpoints", std::move(out)}});
}

Response get_endpoint(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto endpoint = Outbox(s.db).endpoint(*name, deadline);
  if (!endpoint.ok()) return problem_response(endpoint.status());
  return json_response(bhttp::status::ok, endpoint_json(*endpoint));
}

Response put_endpoint(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());

  FieldReader fields(*body);
  constexpr std::int64_t kIntMin = std::numeric_limits<int>::min();
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  EndpointSpec spec;
  spec.name = *name;
  spec.url = fields.string("url", /*required=*/true).value_or("");
  spec.secret = fields.string("secret", /*required=*/true).value_or("");
  spec.types = fields.strings("types", kMaxEndpointTypes).value_or(std::vector<std::string>{});
  if (auto mode = fields.string("delivery")) {
    if (auto parsed = parse_delivery_mode(*mode))
      spec.mode = *parsed;
    else
      fields.add_error("delivery", "must be at_least_once or at_most_once");
  }
  // The ranges are the Outbox's to check (check_endpoint_spec); here only that they are ints.
  spec.max_attempts =
      static_cast<int>(fields.integer("max_attempts", kIntMin, kIntMax).value_or(10));
  spec.backoff_seconds =
      static_cast<int>(fields.integer("backoff_seconds", kIntMin, kIntMax).value_or(10));
  spec.after = read_cursor(fields.string("after"),
                           [&](std::string e) { fields.add_error("after", std::move(e)); });
  // One answer lists every problem: the Outbox's rules beside the body's.
  if (Status st = check_endpoint_spec(spec); !st.ok()) fields.add_new_errors(st.fields());
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto put = Outbox(s.db).put_endpoint(spec, deadline);
  if (!put.ok()) return problem_response(put.status());
  return json_response(put->created ? bhttp::status::created : bhttp::status::ok,
                       endpoint_json(put->endpoint));
}

Response delete_endpoint(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  if (Status st = empty_body(req); !st.ok()) return problem_response(st);
  if (Status st = Outbox(s.db).delete_endpoint(*name, deadline); !st.ok()) {
    return problem_response(st);
  }
  return no_content();
}

Response list_deliveries(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  std::optional<DeliveryStatus> status;
  if (auto text = query->string("status", 16)) {
    status = parse_delivery_status(*text);
    if (!status) {
      query->add_error("status", "must be pending, sending, delivered, dead or in_doubt");
    }
  }
  const std::int64_t after = query->integer("after", 0, kMaxId).value_or(0);
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto deliveries = Outbox(s.db).deliveries(*name, status, after, limit, deadline);
  if (!deliveries.ok()) return problem_response(deliveries.status());
  std::string body = "{\"deliveries\":[";
  for (size_t i = 0; i < deliveries->size(); ++i) {
    if (i > 0) body += ',';
    body += delivery_text((*deliveries)[i]);
  }
  const bool full = !deliveries->empty() && deliveries->size() == static_cast<size_t>(limit);
  body += "],\"next_after\":";
  body += full ? std::to_string(deliveries->back().event.id) : "null";
  body += '}';
  return json_text_response(bhttp::status::ok, std::move(body));
}

Response post_resolve(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  const auto event_id = fields.integer("event_id", 1, kMaxId, /*required=*/true);
  const bool delivered = fields.boolean("delivered", false, /*required=*/true);
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto resolved = Outbox(s.db).resolve(*name, *event_id, delivered, deadline);
  if (!resolved.ok()) return problem_response(resolved.status());
  return json_text_response(bhttp::status::ok, delivery_text(*resolved));
}

Response post_redeliver(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto name = outbox_name(m);
  if (!name.ok()) return problem_response(name.status());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  const auto ids = fields.integers("event_ids", 1, kMaxId, EventLimits::kMaxRedeliver,
                                   /*required=*/true);
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto done = Outbox(s.db).redeliver(*name, *ids, deadline);
  if (!done.ok()) return problem_response(done.status());
  return json_response(bhttp::status::ok, {{"redelivered", *done}});
}

}  // namespace onceorder::http
