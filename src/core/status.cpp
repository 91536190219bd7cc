#include "onceorder/core/status.hpp"

namespace onceorder {

std::string_view code_name(Code code) {
// The wire name is the enumerator's own name, spelled once.
#define OO_CODE_NAME(name) \
  case Code::name:         \
    return #name;
  switch (code) {
    OO_CODE_NAME(ok)
    OO_CODE_NAME(invalid_request)
    OO_CODE_NAME(invalid_json)
    OO_CODE_NAME(missing_idempotency_key)
    OO_CODE_NAME(idempotency_key_reused)
    OO_CODE_NAME(unauthorized)
    OO_CODE_NAME(forbidden)
    OO_CODE_NAME(not_found)
    OO_CODE_NAME(method_not_allowed)
    OO_CODE_NAME(payload_too_large)
    OO_CODE_NAME(rate_limited)
    OO_CODE_NAME(scope_exhausted)
    OO_CODE_NAME(scope_conflict)
    OO_CODE_NAME(request_in_progress)
    OO_CODE_NAME(source_order_conflict)
    OO_CODE_NAME(unknown_sku)
    OO_CODE_NAME(out_of_stock)
    OO_CODE_NAME(in_production)
    OO_CODE_NAME(use_adjustment)
    OO_CODE_NAME(insufficient_stock)
    OO_CODE_NAME(conflict)
    OO_CODE_NAME(too_many_requests)
    OO_CODE_NAME(busy)
    OO_CODE_NAME(unavailable)
    OO_CODE_NAME(internal)
    OO_CODE_NAME(deadlock)
    OO_CODE_NAME(lock_timeout)
    OO_CODE_NAME(serialization_failure)
    OO_CODE_NAME(retry_transaction)
    OO_CODE_NAME(rolled_back)
    OO_CODE_NAME(unique_violation)
    OO_CODE_NAME(check_violation)
    OO_CODE_NAME(reference_violation)
  }
#undef OO_CODE_NAME
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
