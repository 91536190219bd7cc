// The pure field checks of the numbering and scheduling services (declared in
// numbering.hpp and scheduling.hpp). Kept apart from the services' database code so that
// the HTTP readers and the fuzz targets (fuzz/) can link them without a database.
#include <fmt/format.h>

#include <algorithm>

#include "onceorder/core/number_format.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder {
namespace {

bool printable_no_space(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7F; });
}

}  // namespace

std::optional<std::string> title_problem(std::string_view title) {
  if (auto problem = text_problem(title)) return problem;
  const auto len = utf8_length(title);
  if (*len == 0) return "must not be empty";
  if (*len > kMaxTitle) return "must be at most " + std::to_string(kMaxTitle) + " characters";
  return std::nullopt;
}

bool is_valid_idempotency_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKey) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return c >= 0x21 && c <= 0x7E; });
}

Status validate_issue_request(const IssueRequest& r) {
  std::vector<FieldError> errors;
  if (!is_valid_scope_name(r.scope))
    errors.push_back(
        {"scope",
         fmt::format("must be 1–{} characters of A-Z, a-z, 0-9, '.', '_' or '-'", kMaxScopeName)});
  if (auto p = title_problem(r.title)) errors.push_back({"title", *p});
  if (r.idempotency_key && !is_valid_idempotency_key(*r.idempotency_key))
    errors.push_back({"Idempotency-Key",
                      fmt::format("must be 1–{} printable ASCII characters", kMaxIdempotencyKey)});
  if (r.header.size() + r.lines.size() > kMaxDocumentBodyBytes)
    errors.push_back(
        {"lines", fmt::format("the header and lines are over {} bytes", kMaxDocumentBodyBytes)});
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid request", std::move(errors));
}

Status validate_order_key(const OrderKey& k, const std::string& prefix) {
  std::vector<FieldError> errors;
  // The site code names a document scope ("PO-<site>"), so it follows scope rules.
  if (k.site_code.empty() || k.site_code.size() > kMaxSiteCode || !is_valid_scope_name(k.site_code))
    errors.push_back(
        {prefix + "site_code",
         fmt::format("must be 1–{} characters of A-Z, a-z, 0-9, '.', '_' or '-'", kMaxSiteCode)});
  if (k.order_no.empty() || k.order_no.size() > kMaxOrderNo || !printable_no_space(k.order_no))
    errors.push_back(
        {prefix + "order_no",
         fmt::format("must be 1–{} printable ASCII characters without spaces", kMaxOrderNo)});
  if (k.lot_no.empty() || k.lot_no.size() > kMaxLotNo || !printable_no_space(k.lot_no))
    errors.push_back(
        {prefix + "lot_no",
         fmt::format("must be 1–{} printable ASCII characters without spaces", kMaxLotNo)});
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid request", std::move(errors));
}

FieldError too_many_orders(size_t given) {
  return {"orders",
          fmt::format("at most {} orders per request, got {}", kMaxOrdersPerRequest, given)};
}

Status validate_source_orders(std::span<const SourceOrder> orders) {
  std::vector<FieldError> errors;
  if (orders.empty()) errors.push_back({"orders", "must hold at least one order"});
  if (orders.size() > kMaxOrdersPerRequest) errors.push_back(too_many_orders(orders.size()));
  for (size_t i = 0; i < orders.size() && errors.size() < kMaxFieldErrors; ++i) {
    const auto prefix = fmt::format("orders[{}].", i);
    Status st = validate_order_key(orders[i].key, prefix);
    for (const auto& f : st.fields()) errors.push_back(f);
    if (orders[i].quantity < 1 || orders[i].quantity > kMaxSourceQuantity)
      errors.push_back({prefix + "quantity",
                        fmt::format("must be an integer from 1 to {}", kMaxSourceQuantity)});
  }
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid request", std::move(errors));
}

}  // namespace onceorder
