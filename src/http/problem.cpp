#include "http/problem.hpp"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <chrono>
#include <string>

namespace onceorder::http {
namespace {

std::string_view title_of(Code code) {
  switch (code) {
    case Code::invalid_request:
      return "The request is invalid";
    case Code::invalid_json:
      return "The body is not valid JSON";
    case Code::missing_idempotency_key:
      return "An Idempotency-Key header is required";
    case Code::idempotency_key_reused:
      return "The Idempotency-Key was used for another request";
    case Code::unauthorized:
      return "Authentication is required";
    case Code::forbidden:
      return "This token may not do that";
    case Code::not_found:
      return "Not found";
    case Code::method_not_allowed:
      return "Method not allowed";
    case Code::payload_too_large:
      return "The body is too large";
    case Code::rate_limited:
      return "Too many requests";
    case Code::scope_exhausted:
      return "The scope has no numbers left";
    case Code::scope_conflict:
      return "The change conflicts with the scope's numbers";
    case Code::request_in_progress:
      return "The same request is still in progress";
    case Code::source_order_conflict:
      return "A source order with this key has another quantity";
    case Code::unknown_sku:
      return "A SKU is not stocked in this warehouse";
    case Code::out_of_stock:
      return "Not enough stock for the order";
    case Code::in_production:
      return "The order is already in production";
    case Code::use_adjustment:
      return "Change available stock with an adjustment";
    case Code::insufficient_stock:
      return "Not enough stock for the adjustment";
    case Code::conflict:
      return "Conflict";
    case Code::too_many_requests:
      return "Too many requests; retry later";
    case Code::busy:
      return "The server is busy; retry";
    case Code::unavailable:
      return "The service is unavailable";
    // Never a client's title: answered as `internal` (problem_json).
    case Code::ok:
    case Code::internal:
    case Code::deadlock:
    case Code::lock_timeout:
    case Code::serialization_failure:
    case Code::retry_transaction:
    case Code::rolled_back:
    case Code::unique_violation:
    case Code::check_violation:
    case Code::reference_violation:
      return "Internal server error";
  }
  return "Internal server error";
}

// What a client is told about a server-side failure: the same words whatever went wrong.
std::string_view generic_detail(Code code) {
  switch (code) {
    case Code::busy:
      return "the server is busy; retry";
    case Code::unavailable:
      return "the service is unavailable (the database is unreachable or not ready, or the "
             "server is stopping); retry later";
    default:
      return "the server failed to handle the request";
  }
}

bool server_side(Code code) { return static_cast<int>(http_status(code)) >= 500; }

}  // namespace

// Correlates an answer with its log line without exposing what went wrong. The clock is
// fine-grained enough to tell two failures apart and needs no shared counter.
std::string problem_reference() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return fmt::format("{:x}", std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

bhttp::status http_status(Code code) {
  switch (code) {
    case Code::invalid_request:
    case Code::invalid_json:
    case Code::missing_idempotency_key:
      return bhttp::status::bad_request;
    case Code::unauthorized:
      return bhttp::status::unauthorized;
    case Code::forbidden:
      return bhttp::status::forbidden;
    case Code::not_found:
      return bhttp::status::not_found;
    case Code::method_not_allowed:
      return bhttp::status::method_not_allowed;
    case Code::payload_too_large:
      return bhttp::status::payload_too_large;
    case Code::rate_limited:
      return bhttp::status::too_many_requests;
    case Code::idempotency_key_reused:
    case Code::unknown_sku:
      return bhttp::status::unprocessable_entity;
    case Code::scope_exhausted:
    case Code::scope_conflict:
    case Code::request_in_progress:
    case Code::source_order_conflict:
    case Code::out_of_stock:
    case Code::in_production:
    case Code::use_adjustment:
    case Code::insufficient_stock:
    case Code::conflict:
      return bhttp::status::conflict;
    case Code::too_many_requests:
      return bhttp::status::too_many_requests;
    case Code::busy:
    case Code::unavailable:
      return bhttp::status::service_unavailable;
    case Code::ok:
    case Code::internal:
    case Code::deadlock:
    case Code::lock_timeout:
    case Code::serialization_failure:
    case Code::retry_transaction:
    case Code::rolled_back:
    case Code::unique_violation:
    case Code::check_violation:
    case Code::reference_violation:
      return bhttp::status::internal_server_error;
  }
  return bhttp::status::internal_server_error;
}

nlohmann::json problem_json(const Status& status, std::string_view reference) {
  const auto http = http_status(status.code());
  const bool server_fault = http == bhttp::status::internal_server_error;
  // Database-level codes (unique_violation, …) are implementation details: the wire only
  // ever says `internal` for them.
  const std::string_view code = server_fault ? "internal" : code_name(status.code());
  nlohmann::json out = {
      {"type", "urn:onceorder:problem:" + std::string(code)},
      {"title", title_of(server_fault ? Code::internal : status.code())},
      {"status", static_cast<int>(http)},
      {"detail", server_side(status.code())
                     ? fmt::format("{} (reference {})", generic_detail(status.code()), reference)
                     : status.message()},
      {"code", code},
  };
  if (!status.fields().empty()) {
    auto& errors = out["errors"] = nlohmann::json::array();
    for (const FieldError& f : status.fields())
      errors.push_back({{"field", f.field}, {"message", f.message}});
  }
  return out;
}

Response problem_response(const Status& status) {
  std::string reference;
  if (server_side(status.code())) {
    reference = problem_reference();
    if (http_status(status.code()) == bhttp::status::internal_server_error) {
      spdlog::error("internal error (reference {}): {}", reference, status.to_string());
    } else {
      spdlog::warn("answered {} (reference {}): {}", code_name(status.code()), reference,
                   status.to_string());
    }
  }
  return problem_response(status, reference);
}

Response problem_response(const Status& status, std::string_view reference) {
  Response res = json_response(http_status(status.code()), problem_json(status, reference));
  res.set(bhttp::field::content_type, "application/problem+json");
  if (status.code() == Code::busy) res.set(bhttp::field::retry_after, "1");
  return res;
}

}  // namespace onceorder::http
