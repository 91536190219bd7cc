// Orders (API.md "Orders"): placing with a required Idempotency-Key, reading and
// cancelling. A customer token acts only for its own customer: placing for another is
// 403, and another customer's order does not exist for it (404, so that order ids cannot
// be probed).
#include <fmt/format.h>

#include <limits>

#include "http/json_input.hpp"
#include "http/order_json.hpp"
#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

// The stored decision replays byte for byte, so the problem holds nothing per request
// (no reference, no time): only what the shortages say.
Response out_of_stock_response(const std::vector<Shortage>& shortages) {
  json problem = problem_json(
      Status(Code::out_of_stock, "not enough stock for this order; nothing was reserved"));
  json list = json::array();
  for (const Shortage& sh : shortages) {
    list.push_back(
        {{"sku_id", sh.sku_id}, {"requested", sh.requested}, {"available", sh.available}});
  }
  problem["shortages"] = std::move(list);
  Response res = json_response(http_status(Code::out_of_stock), problem);
  res.set(bhttp::field::content_type, "application/problem+json");
  return res;
}

// The order as API.md's answers show it; a replay reproduces it byte for byte.
Response order_response(bhttp::status status, const Order& order) {
  return text_response(status, "application/json", order_json_text(order));
}

Status no_such_order(std::int64_t order_id) {
  return Status(Code::not_found, fmt::format("order {} does not exist", order_id));
}

// The order in the path, or the answer to give instead.
Result<std::int64_t> order_path(const RouteMatch& m) {
  OO_ASSIGN_OR_RETURN(auto ids, path_ids(m.ids, {"order_id"}));
  return ids[0];
}

// The order, if `who` may see it: another customer's order is not found.
Result<Order> visible_order(Services& s, const Principal& who, std::int64_t order_id,
                            Deadline deadline) {
  auto order = s.intake.get_order(order_id, deadline);
  if (order.ok() && who.is_customer() && order->customer_id != who.customer_id) {
    return no_such_order(order_id);
  }
  return order;
}

}  // namespace

Response post_order(Services& s, const Principal& who, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  std::vector<FieldError> key_errors;
  PlaceRequest place;
  place.principal = who.name;
  auto key = idempotency_key(req, key_errors);
  if (!key && key_errors.empty()) {
    return problem_response(
        Status(Code::missing_idempotency_key, "POST /v1/orders needs an Idempotency-Key header"));
  }
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());

  FieldReader fields(*body);
  for (auto& e : key_errors) fields.add_error(std::move(e.field), std::move(e.message));
  place.customer_id = fields.integer("customer_id", 1, kMaxId, /*required=*/true).value_or(0);
  place.warehouse_id = fields.integer("warehouse_id", 1, kMaxId, /*required=*/true).value_or(0);
  const bool lines = fields.objects("lines", /*required=*/true, [&](FieldReader& line, size_t) {
    CartLine l;
    l.sku_id = line.integer("sku_id", 1, kMaxId, /*required=*/true).value_or(0);
    l.quantity = line.integer("quantity", 1, kMaxLineQuantity, /*required=*/true).value_or(0);
    place.lines.push_back(l);
  });
  // The cart's own rules (at least one line, at most 20 SKUs after merging, merged
  // quantities) in the same answer as the types, when every line was an object; the
  // service checks them again.
  if (lines && place.lines.size() == body->at("lines").size()) {
    fields.add_new_errors(normalize_cart(place.warehouse_id, place.lines).status().fields());
  }
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);
  if (who.is_customer() && place.customer_id != who.customer_id) {
    return problem_response(
        Status(Code::forbidden, "a customer token may only place orders for its own customer_id"));
  }
  place.idempotency_key = std::move(*key);

  auto placed = s.intake.place(place, deadline);
  if (!placed.ok()) return problem_response(placed.status());
  Response res = placed->out_of_stock ? out_of_stock_response(placed->shortages)
                                      : order_response(bhttp::status::created, placed->order);
  if (placed->replayed) res.set("Idempotent-Replayed", "true");
  return res;
}

Response get_order(Services& s, const Principal& who, const RouteMatch& m, const Request& req,
                   Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto order_id = order_path(m);
  if (!order_id.ok()) return problem_response(order_id.status());
  auto order = visible_order(s, who, *order_id, deadline);
  if (!order.ok()) return problem_response(order.status());
  return order_response(bhttp::status::ok, *order);
}

Response cancel_order(Services& s, const Principal& who, const RouteMatch& m, const Request& req,
                      Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto order_id = order_path(m);
  if (!order_id.ok()) return problem_response(order_id.status());
  if (Status st = empty_body(req); !st.ok()) return problem_response(st);
  // Ownership first: cancelling is not undone by a 404 afterwards. An order's customer
  // never changes, so reading it in a separate transaction is enough.
  if (who.is_customer()) {
    auto order = visible_order(s, who, *order_id, deadline);
    if (!order.ok()) return problem_response(order.status());
  }
  auto cancelled = s.intake.cancel(*order_id, deadline);
  if (!cancelled.ok()) return problem_response(cancelled.status());
  return order_response(bhttp::status::ok, *cancelled);
}

}  // namespace onceorder::http
