// The JSON request readers (src/http/json_input.*): arbitrary bytes as a request body, read
// the way the routes read them — parse_object, then FieldReader as POST /v1/orders,
// POST /v1/source-orders, POST /v1/schedule/runs, POST /v1/scopes/{scope}/documents,
// PUT /v1/scopes/{scope}, PUT /v1/consumers/{name}, PUT /v1/endpoints/{name} and
// POST /v1/endpoints/{name}/resolve and /redeliver do (each mirrors its handler up to the
// service call; the endpoint's settings are the service's to check, which needs a database
// here). Also empty_body (the POSTs and DELETEs without input), with a Beast request.
//
// Properties: an accepted body is valid UTF-8 and an object that reads back the same from
// its own serialization; what a reader returns is within the bounds it was asked for and
// passes the string check; a body every reader accepts holds what the service checks
// again (normalize_cart, validate_order_key, validate_issue_request); errors are bounded.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "http/json_input.hpp"
#include "http/request_input.hpp"
#include "onceorder/core/cart.hpp"
#include "onceorder/core/event_types.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"

using namespace onceorder;
using namespace onceorder::http;
using json = nlohmann::json;

namespace {

void check_errors(const Status& st) {
  if (st.ok()) return;
  FUZZ_CHECK(st.code() == Code::invalid_request);
  FUZZ_CHECK(!st.fields().empty() && st.fields().size() <= FieldReader::kMaxFieldErrors);
  // (A field may be "": an unknown member named "" is reported under its name.)
  for (const auto& f : st.fields()) FUZZ_CHECK(!f.message.empty());
}

std::optional<std::int64_t> integer(FieldReader& r, const std::string& name, std::int64_t min,
                                    std::int64_t max, bool required) {
  auto v = r.integer(name, min, max, required);
  if (v) FUZZ_CHECK(*v >= min && *v <= max);
  if (!v && required) FUZZ_CHECK(r.has_error(name));
  return v;
}

std::optional<std::string> string(FieldReader& r, const std::string& name, bool required) {
  auto v = r.string(name, required);
  if (v) FUZZ_CHECK(!text_problem(*v));
  if (!v && required) FUZZ_CHECK(r.has_error(name));
  return v;
}

// routes_orders.cpp post_order.
void order_request(const json& body) {
  FieldReader fields(body);
  const auto customer = integer(fields, "customer_id", 1, kMaxId, true);
  const auto warehouse = integer(fields, "warehouse_id", 1, kMaxId, true);
  std::vector<CartLine> lines;
  const bool given = fields.objects("lines", true, [&](FieldReader& line, size_t) {
    CartLine l;
    l.sku_id = integer(line, "sku_id", 1, kMaxId, true).value_or(0);
    l.quantity = integer(line, "quantity", 1, kMaxLineQuantity, true).value_or(0);
    lines.push_back(l);
  });
  if (given && lines.size() == body.at("lines").size()) {
    fields.add_new_errors(normalize_cart(warehouse.value_or(0), lines).status().fields());
  }
  const Status st = fields.finish();
  check_errors(st);
  if (!st.ok()) return;
  FUZZ_CHECK(customer && warehouse && given);
  FUZZ_CHECK(body.size() == 3 && lines.size() == body.at("lines").size());
  const auto cart = normalize_cart(*warehouse, lines);
  FUZZ_CHECK(cart.ok());
}

// routes_scheduling.cpp read_key + check_key.
OrderKey read_key(FieldReader& f, size_t index) {
  OrderKey k;
  k.site_code = string(f, "site_code", true).value_or("");
  k.order_no = string(f, "order_no", true).value_or("");
  k.lot_no = string(f, "lot_no", true).value_or("");
  f.add_new_errors(validate_order_key(k, "orders[" + std::to_string(index) + "].").fields());
  return k;
}

// routes_scheduling.cpp post_source_orders and post_run (`orders` optional there).
void orders_request(const json& body, bool run) {
  FieldReader fields(body);
  std::vector<SourceOrder> orders;
  const bool given = fields.objects("orders", !run, [&](FieldReader& f, size_t i) {
    SourceOrder o;
    o.key = read_key(f, i);
    if (!run) o.quantity = integer(f, "quantity", 1, 1'000'000'000, true).value_or(0);
    orders.push_back(std::move(o));
  });
  const Status st = fields.finish();
  check_errors(st);
  if (!st.ok()) return;
  FUZZ_CHECK(given || run);
  for (const auto& o : orders) FUZZ_CHECK(validate_order_key(o.key, "").ok());
  // What the service checks again (count bounds are the service's, not the reader's).
  if (!run && !orders.empty() && orders.size() <= kMaxOrdersPerRequest) {
    FUZZ_CHECK(validate_source_orders(orders).ok());
  }
}

// routes_scopes.cpp post_document (the key comes from a header, not the body).
void document_request(const json& body) {
  FieldReader fields(body);
  const auto title = string(fields, "title", true);
  const Status st = fields.finish();
  check_errors(st);
  if (!st.ok()) return;
  FUZZ_CHECK(title && body.size() == 1);
  // The service's check adds only the length rule to the reader's text check.
  const auto len = utf8_length(*title);
  FUZZ_CHECK(len.has_value());
  FUZZ_CHECK(validate_issue_request({"S-1", *title, std::nullopt}).ok() ==
             (*len >= 1 && *len <= 200));
}

// routes_scopes.cpp put_scope.
void scope_request(const json& body) {
  FieldReader fields(body);
  ScopeFormat format;
  format.width = static_cast<int>(integer(fields, "width", 1, 18, false).value_or(format.width));
  format.radix = static_cast<int>(integer(fields, "radix", 2, 36, false).value_or(format.radix));
  format.max = integer(fields, "max", 1, kMaxId, false).value_or(format.max);
  const Status st = fields.finish();
  check_errors(st);
  if (st.ok()) FUZZ_CHECK(body.size() <= 3);
}

// routes_events.cpp read_cursor: a cursor member's text, parsed; its problem is the field's.
std::optional<FeedPosition> cursor(FieldReader& r, const std::string& name, bool required) {
  const auto text = string(r, name, required);
  if (!text) return std::nullopt;
  auto parsed = parse_cursor(*text);
  if (!parsed.ok()) {
    r.add_error(name, parsed.status().message());
    return std::nullopt;
  }
  // A cursor reads back as the text it came from ("0" is the start's other spelling).
  FUZZ_CHECK(cursor_text(*parsed) == *text || (*text == "0" && *parsed == FeedPosition{}));
  return *parsed;
}

// routes_events.cpp put_consumer.
void consumer_request(const json& body) {
  FieldReader fields(body);
  const auto after = cursor(fields, "after", true);
  const Status st = fields.finish();
  check_errors(st);
  if (st.ok()) FUZZ_CHECK(after && body.size() == 1);
}

// routes_events.cpp put_endpoint, up to check_endpoint_spec.
void endpoint_request(const json& body) {
  FieldReader fields(body);
  constexpr std::int64_t kIntMin = std::numeric_limits<int>::min();
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  EndpointSpec spec;
  spec.url = string(fields, "url", true).value_or("");
  spec.secret = string(fields, "secret", true).value_or("");
  const auto types = fields.strings("types", 32);
  if (types) {
    FUZZ_CHECK(types->size() <= 32);
    for (const std::string& t : *types) FUZZ_CHECK(!text_problem(t));
  }
  if (auto mode = string(fields, "delivery", false)) {
    if (!parse_delivery_mode(*mode)) fields.add_error("delivery", "unknown");
  }
  integer(fields, "max_attempts", kIntMin, kIntMax, false);
  integer(fields, "backoff_seconds", kIntMin, kIntMax, false);
  cursor(fields, "after", false);
  const Status st = fields.finish();
  check_errors(st);
  if (st.ok()) FUZZ_CHECK(body.contains("url") && body.contains("secret") && body.size() <= 7);
}

// routes_events.cpp post_resolve and post_redeliver.
void delivery_requests(const json& body) {
  FieldReader resolve(body);
  const auto event_id = integer(resolve, "event_id", 1, kMaxId, true);
  resolve.boolean("delivered", false, true);
  const Status resolved = resolve.finish();
  check_errors(resolved);
  if (resolved.ok()) FUZZ_CHECK(event_id && body.at("delivered").is_boolean() && body.size() == 2);
  if (!body.contains("delivered")) FUZZ_CHECK(!resolved.ok());

  FieldReader redeliver(body);
  const auto ids = redeliver.integers("event_ids", 1, kMaxId, EventLimits::kMaxRedeliver, true);
  if (ids) {
    FUZZ_CHECK(!ids->empty() && ids->size() <= static_cast<size_t>(EventLimits::kMaxRedeliver));
    for (std::int64_t id : *ids) FUZZ_CHECK(id >= 1);
  }
  const Status st = redeliver.finish();
  check_errors(st);
  if (st.ok()) FUZZ_CHECK(ids && body.size() == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  Request req{bhttp::verb::post, "/v1/maintenance/reap", 11};
  req.body() = std::string(text);
  const Status empty = empty_body(req);
  if (text.empty()) FUZZ_CHECK(empty.ok());

  const auto body = parse_object(text);
  if (!body.ok()) {
    FUZZ_CHECK(body.status().code() == Code::invalid_json ||
               body.status().code() == Code::invalid_request);
    if (!text.empty()) FUZZ_CHECK(!empty.ok());
    return 0;
  }
  // Accepted: an object, from valid UTF-8 (nlohmann checks strings; any other byte outside
  // ASCII is a syntax error), and its own serialization reads back the same.
  FUZZ_CHECK(body->is_object());
  FUZZ_CHECK(utf8_length(text).has_value());
  const std::string dumped = body->dump();
  const auto again = parse_object(dumped);
  FUZZ_CHECK(again.ok() && *again == *body);
  FUZZ_CHECK(empty.ok() == body->empty());

  order_request(*body);
  orders_request(*body, /*run=*/false);
  orders_request(*body, /*run=*/true);
  document_request(*body);
  scope_request(*body);
  consumer_request(*body);
  endpoint_request(*body);
  delivery_requests(*body);
  return 0;
}
