#include "onceorder/core/status.hpp"

namespace onceorder {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::ok:
      return "ok";
    case Code::invalid_request:
      return "invalid_request";
    case Code::invalid_json:
      return "invalid_json";
    case Code::missing_idempotency_key:
      return "missing_idempotency_key";
    case Code::idempotency_key_reused:
      return "idempotency_key_reused";
    case Code::unauthorized:
      return "unauthorized";
    case Code::forbidden:
      return "forbidden";
    case Code::not_found:
      return "not_found";
    case Code::method_not_allowed:
      return "method_not_allowed";
    case Code::payload_too_large:
      return "payload_too_large";
    case Code::rate_limited:
      return "rate_limited";
    case Code::scope_exhausted:
      return "scope_exhausted";
    case Code::scope_conflict:
      return "scope_conflict";
    case Code::request_in_progress:
      return "request_in_progress";
    case Code::source_order_conflict:
      return "source_order_conflict";
    case Code::unknown_sku:
      return "unknown_sku";
    case Code::out_of_stock:
      return "out_of_stock";
    case Code::in_production:
      return "in_production";
    case Code::use_adjustment:
      return "use_adjustment";
    case Code::insufficient_stock:
      return "insufficient_stock";
    case Code::conflict:
      return "conflict";
    case Code::too_many_requests:
      return "too_many_requests";
    case Code::busy:
      return "busy";
    case Code::unavailable:
      return "unavailable";
    case Code::internal:
      return "internal";
    case Code::deadlock:
      return "deadlock";
    case Code::lock_timeout:
      return "lock_timeout";
    case Code::serialization_failure:
      return "serialization_failure";
    case Code::retry_transaction:
      return "retry_transaction";
    case Code::rolled_back:
      return "rolled_back";
    case Code::unique_violation:
      return "unique_violation";
    case Code::check_violation:
      return "check_violation";
    case Code::reference_violation:
      return "reference_violation";
  }
  return "internal";
}

bool is_retryable(Code code) {
  switch (code) {
    case Code::deadlock:
    case Code::lock_timeout:
    case Code::serialization_failure:
    case Code::retry_transaction:
      return true;
    default:
      return false;
  }
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  std::string out(code_name(code_));
  out += ": ";
  out += message_;
  for (const auto& f : fields_) out += "; " + f.field + ": " + f.message;
  return out;
}

}  // namespace onceorder
