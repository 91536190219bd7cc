// RFC 9457 problem+json: how a non-ok Status is written on the wire. The `code` member is
// API.md's snake_case code; field errors become `errors: [{field, message}]`.
// Pure and thread-safe.
#pragma once

#include <string_view>

#include "http/message.hpp"
#include "onceorder/status.hpp"

namespace onceorder::http {

// The HTTP status API.md gives `code`; 500 for anything that is not a client-facing code.
bhttp::status http_status(Code code);

// The problem document for `status` (must not be ok). Server-side failures (500) carry a
// generic detail naming `reference` instead of the internal message, which goes to the log.
nlohmann::json problem_json(const Status& status, std::string_view reference = {});

// The full response: content type application/problem+json, Retry-After on `busy`.
Response problem_response(const Status& status);

}  // namespace onceorder::http
