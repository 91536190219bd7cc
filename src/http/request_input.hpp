// What handlers read from a request besides its JSON body: ids in the path, query
// parameters and the Idempotency-Key header. Like FieldReader, the readers collect every
// problem as a field error so that one answer lists them all. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/message.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder::http {

// A decimal integer in [min, max], digits only ("+1", "1.0", "" are not).
std::optional<std::int64_t> parse_int(std::string_view text, std::int64_t min, std::int64_t max);

// An id in a path (API.md: 1..2^63-1, exact): canonical decimal digits only — no sign,
// no leading zero, no spaces — so that one id has exactly one spelling.
std::optional<std::int64_t> parse_id(std::string_view text);

// The ids of a route's path (RouteMatch::ids), named `names` in the same order; each bad
// one is a field error under its name.
std::vector<std::int64_t> path_ids(const std::vector<std::string>& ids,
                                   std::initializer_list<std::string_view> names,
                                   std::vector<FieldError>& errors);
// The same for a handler with nothing else to check first: the ids, or invalid_request
// ("invalid path") with those field errors.
Result<std::vector<std::int64_t>> path_ids(const std::vector<std::string>& ids,
                                           std::initializer_list<std::string_view> names);

// Reads query parameters by name; finish() reports the ones nobody asked for.
class QueryReader {
 public:
  // invalid_request when the query string itself is malformed (see parse_query) or a
  // name is not text; a value that is not UTF-8 text without control characters is a
  // field error under its name, and the parameter reads as absent.
  static Result<QueryReader> parse(std::string_view target);

  std::optional<std::string> string(const std::string& name, size_t max_size);
  std::optional<std::int64_t> integer(const std::string& name, std::int64_t min, std::int64_t max);
  // `limit` from 1 to kMaxListLimit, kDefaultListLimit when absent.
  int limit();
  // `name` as true|false; `fallback` when absent.
  bool boolean(const std::string& name, bool fallback);

  void add_error(std::string field, std::string message);
  Status finish();

 private:
  const std::string* find(const std::string& name);

  std::vector<std::pair<std::string, std::string>> params_;
  std::vector<std::string> known_;
  std::vector<FieldError> errors_;
};

// The Idempotency-Key header: nullopt when absent; a field error when sent twice or not
// 1–255 printable ASCII characters.
std::optional<std::string> idempotency_key(const Request& req, std::vector<FieldError>& errors);

// An empty body, or one JSON object with no members: the POSTs that take no input.
Status empty_body(const Request& req);

}  // namespace onceorder::http
