#include "http/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "onceorder/core/text.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

}  // namespace

Result<json> parse_object(std::string_view body) {
  if (body.empty()) {
    return Status(Code::invalid_json, "the body is empty; expected a JSON object");
  }
  // nlohmann's lexer takes a NUL byte for the end of the input, so "{}\0<anything>" would
  // read as "{}". No JSON text holds a raw NUL (inside strings it must be escaped).
  if (body.find('\0') != std::string_view::npos) {
    return Status(Code::invalid_json, "the body is not valid JSON (UTF-8)");
  }
  // One set of member names per open object, to find repeated members (the parser would
  // silently keep the last one).
  std::vector<std::set<std::string>> open;
  std::string repeated;
  bool too_deep = false;
  auto watch = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) too_deep = true;
        if (event == json::parse_event_t::object_start) open.emplace_back();
        return !too_deep;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        return true;
      case json::parse_event_t::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second &&
            repeated.empty()) {
          repeated = parsed.get<std::string>();
        }
        return true;
      default:
        return true;
    }
  };
  json value = json::parse(body.begin(), body.end(), watch, /*allow_exceptions=*/false);
  if (value.is_discarded() && !too_deep) {
    return Status(Code::invalid_json, "the body is not valid JSON (UTF-8)");
  }
  if (too_deep) {
    return Status(Code::invalid_request,
                  fmt::format("the body nests deeper than {} levels", kMaxJsonDepth));
  }
  if (!value.is_object()) {
    return Status(Code::invalid_request,
                  fmt::format("the body must be a JSON object, not {}", value.type_name()));
  }
  if (!repeated.empty()) {
    return Status(Code::invalid_request, "a member appears more than once",
                  {FieldError{repeated, "appears more than once"}});
  }
  return value;
}

const json* FieldReader::member(const std::string& name, bool required) {
  known_.insert(name);
  const auto it = object_.find(name);
  if (it == object_.end()) {
    if (required) add_error(name, "is required");
    return nullptr;
  }
  return &*it;
}

namespace {

// `v` as an exact integer in [min, max], or nullopt.
std::optional<std::int64_t> exact_integer(const json& v, std::int64_t min, std::int64_t max) {
  std::optional<std::int64_t> out;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      out = static_cast<std::int64_t>(u);
    }
  } else if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  }
  if (!out || *out < min || *out > max) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::int64_t> FieldReader::integer(const std::string& name, std::int64_t min,
                                                 std::int64_t max, bool required) {
  const json* v = member(name, required);
  if (v == nullptr) return std::nullopt;
  auto out = exact_integer(*v, min, max);
  if (!out) add_error(name, fmt::format("must be an integer from {} to {}", min, max));
  return out;
}

std::optional<std::vector<std::string>> FieldReader::strings(const std::string& name,
                                                             size_t max_items, bool required) {
  const json* v = member(name, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array() || v->size() > max_items) {
    add_error(name, fmt::format("must be an array of at most {} strings", max_items));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool bad = false;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    std::optional<std::string> problem;
    if (!item.is_string()) {
      problem = "must be a string";
    } else {
      problem = text_problem(item.get_ref<const std::string&>());
    }
    if (problem) {
      add_error(fmt::format("{}[{}]", name, i), std::move(*problem));
      bad = true;
    } else {
      out.push_back(item.get<std::string>());
    }
  }
  if (bad) return std::nullopt;
  return out;
}

std::optional<std::vector<std::int64_t>> FieldReader::integers(const std::string& name,
                                                               std::int64_t min, std::int64_t max,
                                                               size_t max_items, bool required) {
  const json* v = member(name, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array() || v->empty() || v->size() > max_items) {
    add_error(name, fmt::format("must be an array of 1 to {} integers", max_items));
    return std::nullopt;
  }
  std::vector<std::int64_t> out;
  bool bad = false;
  for (size_t i = 0; i < v->size(); ++i) {
    if (auto n = exact_integer((*v)[i], min, max)) {
      out.push_back(*n);
    } else {
      add_error(fmt::format("{}[{}]", name, i),
                fmt::format("must be an integer from {} to {}", min, max));
      bad = true;
    }
  }
  if (bad) return std::nullopt;
  return out;
}

bool FieldReader::boolean(const std::string& name, bool fallback, bool required) {
  const json* v = member(name, required);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    add_error(name, "must be true or false");
    return fallback;
  }
  return v->get<bool>();
}

std::optional<std::string> FieldReader::string(const std::string& name, bool required) {
  const json* v = member(name, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    add_error(name, "must be a string");
    return std::nullopt;
  }
  // The one check of every string a body carries: JSON escapes can spell a NUL (which
  // PostgreSQL would cut the text at) or another control character in a valid body.
  if (auto problem = text_problem(v->get_ref<const std::string&>())) {
    add_error(name, std::move(*problem));
    return std::nullopt;
  }
  return v->get<std::string>();
}

bool FieldReader::objects(const std::string& name, bool required,
                          const std::function<void(FieldReader&, size_t)>& read) {
  const json* v = member(name, required);
  if (v == nullptr) return false;
  if (!v->is_array()) {
    add_error(name, "must be an array of objects");
    return false;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string element = fmt::format("{}[{}]", name, i);
    if (!(*v)[i].is_object()) {
      add_error(element, "must be an object");
      continue;
    }
    FieldReader nested((*v)[i], prefix_ + element + ".");
    read(nested, i);
    nested.report_unknown();
    for (FieldError& e : nested.errors_) push(std::move(e));
    dropped_ += nested.dropped_;
  }
  return true;
}

void FieldReader::add_error(std::string field, std::string message) {
  push({prefix_ + field, std::move(message)});
}

void FieldReader::add_new_errors(const std::vector<FieldError>& errors) {
  for (const FieldError& e : errors) {
    const bool named = std::any_of(errors_.begin(), errors_.end(),
                                   [&](const FieldError& seen) { return seen.field == e.field; });
    if (!named) push(e);
  }
}

bool FieldReader::has_error(const std::string& field) const {
  const std::string full = prefix_ + field;
  return std::any_of(errors_.begin(), errors_.end(),
                     [&](const FieldError& e) { return e.field == full; });
}

void FieldReader::push(FieldError error) {
  if (errors_.size() < kMaxFieldErrors)
    errors_.push_back(std::move(error));
  else
    ++dropped_;
}

void FieldReader::report_unknown() {
  for (const auto& [name, _] : object_.items()) {
    if (!known_.contains(name)) add_error(name, "is not a known field");
  }
}

Status FieldReader::finish() {
  report_unknown();
  if (errors_.empty()) return Status::Ok();
  if (dropped_ > 0) {
    return Status(Code::invalid_request,
                  fmt::format("invalid request ({} more problems are not listed)", dropped_),
                  errors_);
  }
  return Status(Code::invalid_request, "invalid request", errors_);
}

}  // namespace onceorder::http
