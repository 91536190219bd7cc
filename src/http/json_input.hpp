// Strict reading of JSON request bodies (API.md "Conventions"): the body is one JSON
// object, no member appears twice, every member is known, and integers are exact JSON
// integers (4.0, 1e3, "4" and true are not integers). Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/status.hpp"

namespace onceorder::http {

// Parses `body` as a single JSON object. invalid_json for malformed JSON (or invalid
// UTF-8); invalid_request when it is valid JSON but not an object, or repeats a member.
Result<nlohmann::json> parse_object(std::string_view body);

// Reads the members of one object, collecting every problem so that a client learns all
// of them from one answer (at most kMaxFieldErrors, so that a hostile body cannot turn
// into a huge answer).
class FieldReader {
 public:
  static constexpr size_t kMaxFieldErrors = onceorder::kMaxFieldErrors;

  // `prefix` names the object in field errors: "lines[2]." gives "lines[2].quantity".
  explicit FieldReader(const nlohmann::json& object, std::string prefix = {})
      : object_(object), prefix_(std::move(prefix)) {}

  // An integer in [min, max]; nullopt when absent (an error too when `required`) or bad.
  std::optional<std::int64_t> integer(const std::string& name, std::int64_t min, std::int64_t max,
                                      bool required = false);
  // A string; nullopt when absent (an error too when `required`) or not a string.
  std::optional<std::string> string(const std::string& name, bool required = false);
  // A boolean; `fallback` when absent (an error too when `required`) or not a boolean (an
  // error then).
  bool boolean(const std::string& name, bool fallback, bool required = false);
  // An array of at most `max_items` strings, each checked as string() checks one (errors name
  // "name[index]"); nullopt when absent (an error too when `required`) or bad.
  std::optional<std::vector<std::string>> strings(const std::string& name, size_t max_items,
                                                  bool required = false);
  // An array of 1 to `max_items` integers, each in [min, max]; nullopt when absent (an error
  // too when `required`) or bad.
  std::optional<std::vector<std::int64_t>> integers(const std::string& name, std::int64_t min,
                                                    std::int64_t max, size_t max_items,
                                                    bool required = false);
  // An array of objects: calls `read(element, index)` with a reader for each element whose
  // errors are named "name[index].member"; an element that is not an object is an error.
  // False when the member is absent (an error too when `required`) or not an array.
  bool objects(const std::string& name, bool required,
               const std::function<void(FieldReader&, size_t)>& read);

  // Any JSON value, for a caller that checks it itself; nullptr when absent.
  const nlohmann::json* value(const std::string& name) { return member(name, false); }

  // `field` is relative to this reader's object.
  void add_error(std::string field, std::string message);
  // Adds errors already named in full, except for fields that have one already (a
  // service's checks repeating what the types said).
  void add_new_errors(const std::vector<FieldError>& errors);
  // True when `field` (relative) already has an error.
  bool has_error(const std::string& field) const;
  const std::vector<FieldError>& errors() const { return errors_; }

  // Reports members nobody asked for, then returns every error as one invalid_request
  // (ok when there were none).
  Status finish();

 private:
  const nlohmann::json* member(const std::string& name, bool required);
  void report_unknown();
  void push(FieldError error);

  const nlohmann::json& object_;
  std::string prefix_;
  std::set<std::string, std::less<>> known_;
  std::vector<FieldError> errors_;
  size_t dropped_ = 0;  // errors past kMaxFieldErrors
};

}  // namespace onceorder::http
