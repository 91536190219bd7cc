#include "http/request_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "http/json_input.hpp"
#include "http/router.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::http {
namespace {

constexpr boost::beast::string_view kIdempotencyKey = "Idempotency-Key";

}  // namespace

std::optional<std::int64_t> parse_int(std::string_view text, std::int64_t min, std::int64_t max) {
  if (text.empty()) return std::nullopt;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const int d = c - '0';
    if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_id(std::string_view text) {
  if (text.starts_with('0')) return std::nullopt;
  return parse_int(text, 1, std::numeric_limits<std::int64_t>::max());
}

std::vector<std::int64_t> path_ids(const std::vector<std::string>& ids,
                                   std::initializer_list<std::string_view> names,
                                   std::vector<FieldError>& errors) {
  std::vector<std::int64_t> out;
  size_t i = 0;
  for (std::string_view name : names) {
    const auto id = i < ids.size() ? parse_id(ids[i]) : std::nullopt;
    if (!id) {
      errors.push_back({std::string(name),
                        "must be an integer from 1 to 9223372036854775807 (decimal digits, no "
                        "sign, no leading zero)"});
    }
    out.push_back(id.value_or(0));
    ++i;
  }
  return out;
}

Result<std::vector<std::int64_t>> path_ids(const std::vector<std::string>& ids,
                                           std::initializer_list<std::string_view> names) {
  std::vector<FieldError> errors;
  auto out = path_ids(ids, names, errors);
  if (!errors.empty()) return Status(Code::invalid_request, "invalid path", std::move(errors));
  return out;
}

Result<QueryReader> QueryReader::parse(std::string_view target) {
  OO_ASSIGN_OR_RETURN(auto params, parse_query(split_target(target).second));
  // Every parameter is checked here, once, whichever way a route reads it: invalid UTF-8
  // was a 500 on PostgreSQL and a %00 cut a filter short there.
  QueryReader reader;
  for (auto& [name, value] : params) {
    if (text_problem(name)) {
      return Status(Code::invalid_request,
                    "a query parameter name is not UTF-8 text without control characters");
    }
    if (auto problem = text_problem(value)) {
      reader.add_error(name, std::move(*problem));  // and it reads as absent
      continue;
    }
    reader.params_.emplace_back(std::move(name), std::move(value));
  }
  return reader;
}

const std::string* QueryReader::find(const std::string& name) {
  known_.push_back(name);
  for (const auto& [n, v] : params_) {
    if (n == name) return &v;
  }
  return nullptr;
}

std::optional<std::string> QueryReader::string(const std::string& name, size_t max_size) {
  const std::string* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (v->empty() || v->size() > max_size) {
    add_error(name, fmt::format("must be 1–{} characters", max_size));
    return std::nullopt;
  }
  return *v;
}

std::optional<std::int64_t> QueryReader::integer(const std::string& name, std::int64_t min,
                                                 std::int64_t max) {
  const std::string* v = find(name);
  if (v == nullptr) return std::nullopt;
  auto parsed = parse_int(*v, min, max);
  if (!parsed) add_error(name, fmt::format("must be an integer from {} to {}", min, max));
  return parsed;
}

int QueryReader::limit() {
  return static_cast<int>(integer("limit", 1, kMaxListLimit).value_or(kDefaultListLimit));
}

bool QueryReader::boolean(const std::string& name, bool fallback) {
  const std::string* v = find(name);
  if (v == nullptr) return fallback;
  if (*v == "true") return true;
  if (*v == "false") return false;
  add_error(name, "must be true or false");
  return fallback;
}

void QueryReader::add_error(std::string field, std::string message) {
  errors_.push_back({std::move(field), std::move(message)});
}

Status QueryReader::finish() {
  for (const auto& [name, _] : params_) {
    if (std::find(known_.begin(), known_.end(), name) == known_.end()) {
      add_error(name, known_.empty()
                          ? std::string("is not a known parameter (this route takes none)")
                          : fmt::format("is not a known parameter ({})", fmt::join(known_, ", ")));
    }
  }
  if (errors_.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid query", errors_);
}

std::optional<std::string> idempotency_key(const Request& req, std::vector<FieldError>& errors) {
  const auto keys = req.count(kIdempotencyKey);
  if (keys == 0) return std::nullopt;
  const std::string field(sv(kIdempotencyKey));
  if (keys > 1) {
    errors.push_back({field, "must be sent at most once"});
    return std::nullopt;
  }
  std::string key(sv(req[kIdempotencyKey]));
  if (!is_valid_idempotency_key(key)) {
    errors.push_back(
        {field, fmt::format("must be 1–{} printable ASCII characters", kMaxIdempotencyKey)});
    return std::nullopt;
  }
  return key;
}

Status empty_body(const Request& req) {
  if (req.body().empty()) return Status::Ok();
  auto body = parse_object(req.body());
  if (!body.ok()) return body.status();
  FieldReader fields(*body);
  return fields.finish();
}

}  // namespace onceorder::http
