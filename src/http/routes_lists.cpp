// The operator console's lists (API.md additions, "Lists"): orders, an order's receipts, a
// warehouse's stock and the document scopes with their gap audit. Each pages by the key it is
// ordered by: `after` is the last key of the previous page, `next_after` is null on the last
// page. A customer token sees its own orders only: naming another customer is 403 (as placing
// for one is), another customer's order is 404 (as reading it is).
#include <fmt/format.h>

#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"
#include "onceorder/core/duration.hpp"
#include "onceorder/core/event_types.hpp"
#include "onceorder/core/number_format.hpp"
#include "onceorder/service/listings.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

// The furthest a stuck-claims look ahead may reach: leases are seconds to minutes long.
constexpr std::chrono::milliseconds kMaxWithin{24LL * 3600 * 1000};

// A page's cursor: the last key when the page is full, else null (the last page).
template <typename Key>
json page_cursor(size_t count, int limit, const Key& last) {
  return count == static_cast<size_t>(limit) && count > 0 ? json(last) : json(nullptr);
}

// "101x3,202x1" (Cart::text) as the lines it stands for; a text in another shape (an older
// normalization) is given as it is stored, under "normalized" only.
json cart_lines(std::string_view text) {
  json lines = json::array();
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    const size_t x = part.find('x');
    const auto sku =
        x == std::string_view::npos ? std::nullopt : parse_int(part.substr(0, x), 1, kMaxId);
    const auto qty =
        x == std::string_view::npos ? std::nullopt : parse_int(part.substr(x + 1), 1, kMaxId);
    if (!sku || !qty) return nullptr;
    lines.push_back({{"sku_id", *sku}, {"quantity", *qty}});
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return lines;
}

// The longest `order` value read ("desc"), and the longest feed cursor a follower sends back.
constexpr size_t kMaxOrderText = 4;
constexpr size_t kMaxFollowCursorText = 64;

json orders_json(const std::vector<OrderSummary>& orders) {
  json out = json::array();
  for (const OrderSummary& o : orders) {
    out.push_back({{"order_id", std::to_string(o.order_id)},
                   {"order_no", o.order_no},
                   {"status", o.status},
                   {"customer_id", o.customer_id},
                   {"warehouse_id", o.warehouse_id},
                   {"total_cents", o.total_cents},
                   {"created_at", o.created_at},
                   {"principal", principal_json(o.principal)}});
  }
  return out;
}

// GET /v1/orders?order=asc: a follower's page in feed order. `next_after` is where the read
// stopped (a feed cursor), also on a page that is not full; null when it found nothing new.
Response follow_orders_response(Services& s, const OrderFilter& filter, FeedPosition after,
                                Deadline deadline) {
  auto page = onceorder::follow_orders(s.db, filter, after, deadline);
  if (!page.ok()) return problem_response(page.status());
  return json_response(
      bhttp::status::ok,
      {{"orders", orders_json(page->orders)},
       {"next_after", page->next_after ? json(cursor_text(*page->next_after)) : json(nullptr)}});
}

json null_if_empty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

// One item event as both timelines show it. `owner` names a worker process (host and pid):
// staff see it, a customer reading its own order does not.
json event_json(const ItemEvent& e, bool show_owner = true) {
  return {{"event_id", e.event_id},
          {"at", e.at},
          {"kind", e.kind},
          {"item_id", e.item_id},
          {"run_id", e.run_id},
          {"lot_no", e.lot_no},
          {"status", e.status},
          {"attempt", e.attempt},
          {"owner", show_owner ? null_if_empty(e.owner) : json(nullptr)},
          {"lease_until", null_if_empty(e.lease_until)},
          {"document_number", null_if_empty(e.document_number)},
          {"error", null_if_empty(e.detail)}};
}

}  // namespace

Response list_orders(Services& s, const Principal& who, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  const auto order = query->string("order", kMaxOrderText);
  if (order && *order != "asc" && *order != "desc")
    query->add_error("order", "must be asc or desc");
  const bool ascending = order && *order == "asc";
  OrderFilter filter;
  if (auto text = query->string("status", 16)) {
    if (*text == "placed" || *text == "cancelled") {
      filter.status = std::move(*text);
    } else {
      query->add_error("status", "must be placed or cancelled");
    }
  }
  filter.customer_id = query->integer("customer_id", 1, kMaxId);
  filter.warehouse_id = query->integer("warehouse_id", 1, kMaxId);
  // Ascending, `after` is a place in the event feed (the order a follower needs); newest
  // first, an order_id.
  std::optional<FeedPosition> position;
  if (ascending) {
    if (auto text = query->string("after", kMaxFollowCursorText)) {
      auto parsed = parse_cursor(*text);
      if (parsed.ok())
        position = *parsed;
      else
        query->add_error("after", parsed.status().message());
    }
  } else {
    filter.before = query->integer("after", 0, kMaxId).value_or(0);
  }
  filter.limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);
  if (who.is_customer()) {
    if (filter.customer_id && *filter.customer_id != who.customer_id) {
      return problem_response(
          Status(Code::forbidden, "a customer token may only list its own customer_id's orders"));
    }
    filter.customer_id = who.customer_id;
  }
  if (ascending)
    return follow_orders_response(s, filter, position.value_or(FeedPosition{}), deadline);

  auto orders = onceorder::list_orders(s.db, filter, deadline);
  if (!orders.ok()) return problem_response(orders.status());
  // order_id is a string in answers (precision in JavaScript), so the cursor is too.
  const std::string last = orders->empty() ? "" : std::to_string(orders->back().order_id);
  return json_response(bhttp::status::ok,
                       {{"orders", orders_json(*orders)},
                        {"next_after", page_cursor(orders->size(), filter.limit, last)}});
}

Response list_warehouses(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  const std::int64_t after = query->integer("after", 0, kMaxId).value_or(0);
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);
  auto found = onceorder::list_warehouses(s.db, after, limit, deadline);
  if (!found.ok()) return problem_response(found.status());
  json out = json::array();
  for (const WarehouseSummary& w : *found) {
    out.push_back({{"warehouse_id", w.warehouse_id},
                   {"skus", w.skus},
                   {"available", w.available},
                   {"reserved", w.reserved}});
  }
  const std::int64_t last = found->empty() ? 0 : found->back().warehouse_id;
  return json_response(
      bhttp::status::ok,
      {{"warehouses", std::move(out)}, {"next_after", page_cursor(found->size(), limit, last)}});
}

Response list_order_receipts(Services& s, const Principal& who, const RouteMatch& m,
                             const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  const auto checked = path_ids(m.ids, {"order_id"});
  if (!checked.ok()) return problem_response(checked.status());
  const std::vector<std::int64_t>& ids = *checked;
  const auto only = who.is_customer() ? std::optional<std::int64_t>(who.customer_id) : std::nullopt;
  auto receipts = onceorder::list_order_receipts(s.db, ids[0], only, deadline);
  if (!receipts.ok()) return problem_response(receipts.status());
  json out = json::array();
  for (const OrderReceiptView& r : *receipts) {
    out.push_back({{"idempotency_key", r.idempotency_key},
                   {"warehouse_id", r.warehouse_id},
                   {"normalized", r.normalized},
                   {"normalization", r.normalization},
                   {"lines", cart_lines(r.normalized)},
                   {"outcome", r.outcome},
                   {"created_at", r.created_at}});
  }
  return json_response(bhttp::status::ok,
                       {{"order_id", std::to_string(ids[0])}, {"receipts", std::move(out)}});
}

Response list_skus(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  std::vector<FieldError> errors;
  const auto ids = path_ids(m.ids, {"warehouse_id"}, errors);
  for (auto& e : errors) query->add_error(std::move(e.field), std::move(e.message));
  const std::int64_t after = query->integer("after", 0, kMaxId).value_or(0);
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto skus = onceorder::list_skus(s.db, ids[0], after, limit, deadline);
  if (!skus.ok()) return problem_response(skus.status());
  json out = json::array();
  for (const Sku& k : *skus) {
    out.push_back({{"warehouse_id", k.warehouse_id},
                   {"sku_id", k.sku_id},
                   {"available", k.available},
                   {"reserved", k.reserved},
                   {"price_cents", k.price_cents}});
  }
  const std::int64_t last = skus->empty() ? 0 : skus->back().sku_id;
  return json_response(bhttp::status::ok, {{"skus", std::move(out)},
                                           {"next_after", page_cursor(skus->size(), limit, last)}});
}

Response list_scopes(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  std::string after;
  if (auto text = query->string("after", kMaxScopeName)) {
    if (is_valid_scope_name(*text)) {
      after = std::move(*text);
    } else {
      query->add_error(
          "after",
          fmt::format("must be a scope name: 1–{} characters of [A-Za-z0-9._-]", kMaxScopeName));
    }
  }
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto scopes = onceorder::list_scopes(s.db, after, limit, deadline);
  if (!scopes.ok()) return problem_response(scopes.status());
  json out = json::array();
  for (const ScopeAudit& a : *scopes) {
    out.push_back({{"scope", a.info.scope},
                   {"width", a.info.format.width},
                   {"radix", a.info.format.radix},
                   {"max", a.info.format.max},
                   {"last_value", a.info.last_value},
                   {"issued", a.info.issued},
                   {"imported", a.info.imported},
                   {"remaining", a.info.remaining()},
                   {"gaps", a.gaps},
                   {"missing", a.missing}});
  }
  const std::string last = scopes->empty() ? "" : scopes->back().info.scope;
  return json_response(
      bhttp::status::ok,
      {{"scopes", std::move(out)}, {"next_after", page_cursor(scopes->size(), limit, last)}});
}

Response list_claims(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  std::chrono::milliseconds within{0};
  if (auto text = query->string("within", 32)) {
    auto parsed = parse_duration(*text);
    if (parsed.ok() && *parsed <= kMaxWithin) {
      within = *parsed;
    } else {
      query->add_error("within", "must be a duration from 0s to 1d (30s, 5m, 1h30m)");
    }
  }
  const std::int64_t after = query->integer("after", 0, kMaxId).value_or(0);
  const int limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto claims = onceorder::list_claims(s.db, within, after, limit, deadline);
  if (!claims.ok()) return problem_response(claims.status());
  json out = json::array();
  for (const ClaimView& c : *claims) {
    out.push_back({{"item_id", c.item_id},
                   {"run_id", c.run_id},
                   {"run_kind", c.run_kind},
                   {"site_code", c.key.site_code},
                   {"order_no", c.key.order_no},
                   {"lot_no", c.key.lot_no},
                   {"attempt", c.attempt},
                   {"owner", c.owner},
                   {"lease_until", c.lease_until.empty() ? json(nullptr) : json(c.lease_until)},
                   {"expired", c.expired}});
  }
  const std::int64_t last = claims->empty() ? 0 : claims->back().item_id;
  return json_response(
      bhttp::status::ok,
      {{"claims", std::move(out)}, {"next_after", page_cursor(claims->size(), limit, last)}});
}

Response get_item_timeline(Services& s, const RouteMatch& m, const Request& req,
                           Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  const auto checked = path_ids(m.ids, {"item_id"});
  if (!checked.ok()) return problem_response(checked.status());
  const std::vector<std::int64_t>& ids = *checked;
  auto t = onceorder::item_timeline(s.db, ids[0], deadline);
  if (!t.ok()) return problem_response(t.status());
  const ScheduleItem& i = t->item;
  json events = json::array();
  for (const ItemEvent& e : t->events) events.push_back(event_json(e));
  json item = {{"item_id", i.item_id},
               {"run_id", i.run_id},
               {"site_code", i.key.site_code},
               {"order_no", i.key.order_no},
               {"lot_no", i.key.lot_no},
               {"status", to_string(i.status)},
               {"attempt", i.attempt},
               {"owner", null_if_empty(i.owner)},
               {"lease_until", null_if_empty(i.lease_until)},
               {"error", null_if_empty(i.error)},
               {"created_at", i.created_at},
               {"updated_at", i.updated_at}};
  return json_response(
      bhttp::status::ok,
      {{"item", std::move(item)}, {"events", std::move(events)}, {"truncated", t->truncated}});
}

Response get_order_timeline(Services& s, const Principal& who, const RouteMatch& m,
                            const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  const auto checked = path_ids(m.ids, {"order_id"});
  if (!checked.ok()) return problem_response(checked.status());
  const std::vector<std::int64_t>& ids = *checked;
  const auto only = who.is_customer() ? std::optional<std::int64_t>(who.customer_id) : std::nullopt;
  auto t = onceorder::order_timeline(s.db, ids[0], only, deadline);
  if (!t.ok()) return problem_response(t.status());
  json entries = json::array();
  for (const OrderTimelineEntry& e : t->entries) {
    if (e.event) {
      entries.push_back(event_json(*e.event, !who.is_customer()));
    } else if (e.kind == "receipt") {
      entries.push_back({{"at", e.at},
                         {"kind", e.kind},
                         {"idempotency_key", e.idempotency_key},
                         {"outcome", e.outcome}});
    } else if (e.kind == "source_order") {
      entries.push_back(
          {{"at", e.at}, {"kind", e.kind}, {"lot_no", e.lot_no}, {"quantity", e.quantity}});
    } else {
      entries.push_back({{"at", e.at}, {"kind", e.kind}});
    }
  }
  return json_response(bhttp::status::ok, {{"order_id", std::to_string(t->order_id)},
                                           {"order_no", t->order_no},
                                           {"customer_id", t->customer_id},
                                           {"status", t->status},
                                           {"entries", std::move(entries)},
                                           {"truncated", t->truncated}});
}

}  // namespace onceorder::http
