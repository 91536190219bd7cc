// Stock (API.md "Stock"): a SKU's row in a warehouse, its price and its adjustments.
#include "http/json_input.hpp"
#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

json sku_json(const Sku& s) {
  return {{"warehouse_id", s.warehouse_id},
          {"sku_id", s.sku_id},
          {"available", s.available},
          {"reserved", s.reserved},
          {"price_cents", s.price_cents}};
}

struct SkuPath {
  std::int64_t warehouse_id = 0;
  std::int64_t sku_id = 0;
};

// The path's ids, with their errors added to `fields`.
SkuPath sku_path(const RouteMatch& m, FieldReader& fields) {
  std::vector<FieldError> errors;
  const auto ids = path_ids(m.ids, {"warehouse_id", "sku_id"}, errors);
  for (auto& e : errors) fields.add_error(std::move(e.field), std::move(e.message));
  return {ids[0], ids[1]};
}

}  // namespace

Response put_sku(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  const SkuPath path = sku_path(m, fields);
  // The service's own bounds, checked here too so that a type error and a range error are
  // reported in the same answer.
  const auto price = fields.integer("price_cents", 0, kStockBound, /*required=*/true);
  const auto available = fields.integer("available", 0, kStockBound);
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto put = s.stock.put_sku(path.warehouse_id, path.sku_id, *price, available, deadline);
  if (!put.ok()) return problem_response(put.status());
  return json_response(put->created ? bhttp::status::created : bhttp::status::ok,
                       sku_json(put->sku));
}

Response get_sku(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  const auto checked = path_ids(m.ids, {"warehouse_id", "sku_id"});
  if (!checked.ok()) return problem_response(checked.status());
  const std::vector<std::int64_t>& ids = *checked;
  auto sku = s.stock.get_sku(ids[0], ids[1], deadline);
  if (!sku.ok()) return problem_response(sku.status());
  return json_response(bhttp::status::ok, sku_json(*sku));
}

Response post_adjustment(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());
  FieldReader fields(*body);
  // The key is validated with the body so that one answer lists every problem.
  std::vector<FieldError> key_errors;
  auto key = idempotency_key(req, key_errors);
  for (auto& e : key_errors) fields.add_error(std::move(e.field), std::move(e.message));
  const SkuPath path = sku_path(m, fields);
  const auto delta = fields.integer("delta", -kStockBound, kStockBound, /*required=*/true);
  if (delta && *delta == 0) fields.add_error("delta", "must not be 0");
  const auto reason = fields.string("reason", /*required=*/true);
  if (reason && (reason->empty() || reason->size() > 200)) {
    fields.add_error("reason", "must be 1–200 characters");
  }
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto adjusted = s.stock.adjust(
      AdjustRequest{path.warehouse_id, path.sku_id, *delta, *reason, std::move(key)}, deadline);
  if (!adjusted.ok()) return problem_response(adjusted.status());
  Response res = json_response(bhttp::status::created, sku_json(adjusted->sku));
  if (adjusted->replayed) res.set("Idempotent-Replayed", "true");
  return res;
}

}  // namespace onceorder::http
