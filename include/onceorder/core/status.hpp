// Errors as values. Every fallible OnceOrder call returns a Status or a Result<T>;
// exceptions never cross a component boundary. A Code is the machine-readable `code`
// of API.md (snake_case on the wire); retryable codes tell the transaction helper that
// the whole transaction may be run again. Values are immutable and thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace onceorder {

enum class Code {
  ok,
  // Client errors (API.md codes).
  invalid_request,
  invalid_json,
  missing_idempotency_key,
  idempotency_key_reused,
  unauthorized,
  forbidden,
  not_found,
  method_not_allowed,
  payload_too_large,
  rate_limited,  // the principal's request rate is over its limit (serve --rate-limit)
  scope_exhausted,
  scope_conflict,
  request_in_progress,
  source_order_conflict,
  unknown_sku,
  out_of_stock,
  in_production,
  use_adjustment,
  insufficient_stock,
  conflict,
  too_many_requests,  // too many bad tokens from one address: retry after a while
  // Server side.
  busy,         // no connection or lock within the deadline; nothing was written
  unavailable,  // database unreachable or not migrated
  internal,
  // Transient database outcomes: the whole transaction is re-run by the helper.
  deadlock,
  lock_timeout,
  serialization_failure,
  retry_transaction,  // a service asks for a re-run (e.g. lost an idempotency race)
  // Control: a transaction body chose to roll back and return (store::transact neither
  // commits nor retries it). The caller reads why from its own state; never an answer.
  rolled_back,
  // Permanent database outcomes a service may want to map.
  unique_violation,
  check_violation,
  reference_violation,  // a foreign key or a guard trigger refused the change
};

// The wire name of a code ("scope_exhausted").
std::string_view code_name(Code code);
// True for the codes the transaction helper retries.
bool is_retryable(Code code);

struct FieldError {
  std::string field;  // JSON path, e.g. "lines[2].quantity"
  std::string message;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Status(Code code, std::string message, std::vector<FieldError> fields)
      : code_(code), message_(std::move(message)), fields_(std::move(fields)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::ok; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<FieldError>& fields() const { return fields_; }
  std::string to_string() const;

 private:
  Code code_ = Code::ok;
  std::string message_;
  std::vector<FieldError> fields_;
};

// Either a value or a non-ok Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace onceorder

// Propagate a failed Status / Result from the enclosing function.
#define OO_RETURN_IF_ERROR(expr)             \
  do {                                       \
    auto oo_status_ = (expr);                \
    if (!oo_status_.ok()) return oo_status_; \
  } while (0)

#define OO_CONCAT_INNER_(a, b) a##b
#define OO_CONCAT_(a, b) OO_CONCAT_INNER_(a, b)
// `OO_ASSIGN_OR_RETURN(auto x, f());` binds the value or returns the error.
#define OO_ASSIGN_OR_RETURN(decl, expr) \
  OO_ASSIGN_OR_RETURN_IMPL_(OO_CONCAT_(oo_result_, __LINE__), decl, expr)
#define OO_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  decl = std::move(tmp).value()
