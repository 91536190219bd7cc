// RFC 9457 problem+json: how a non-ok Status is written on the wire. The `code` member is
// API.md's snake_case code; field errors become `errors: [{field, message}]`.
// Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "http/message.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder::http {

// The HTTP status API.md gives `code`; 500 for anything that is not a client-facing code.
bhttp::status http_status(Code code);

// The problem document for `status` (must not be ok). Server-side failures (every 5xx:
// `internal`, `busy`, `unavailable`) carry a generic detail naming `reference` instead of
// their message, which may hold the database's own text (host, port, socket path, SQL)
// and goes to the log only. This is the one place where that is decided.
nlohmann::json problem_json(const Status& status, std::string_view reference = {});

// The full response: content type application/problem+json, Retry-After on `busy`. A
// server-side failure is logged with a new reference, which the answer names.
Response problem_response(const Status& status);
// The same for a failure already logged under `reference`.
Response problem_response(const Status& status, std::string_view reference);

// A new reference correlating an answer with its log line.
std::string problem_reference();

}  // namespace onceorder::http
