// Strict reading of JSON request bodies (API.md "Conventions"): the body is one JSON
// object, no member appears twice, every member is known, and integers are exact JSON
// integers (4.0, 1e3, "4" and true are not integers). Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "onceorder/status.hpp"

namespace onceorder::http {

// Parses `body` as a single JSON object. invalid_json for malformed JSON (or invalid
// UTF-8); invalid_request when it is valid JSON but not an object, or repeats a member.
Result<nlohmann::json> parse_object(std::string_view body);

// Reads the members of one object, collecting every problem so that a client learns all
// of them from one answer.
class FieldReader {
 public:
  explicit FieldReader(const nlohmann::json& object) : object_(object) {}

  // An integer in [min, max]; nullopt when absent (an error too when `required`) or bad.
  std::optional<std::int64_t> integer(const std::string& name, std::int64_t min, std::int64_t max,
                                      bool required = false);
  // A string; nullopt when absent (an error too when `required`) or not a string.
  std::optional<std::string> string(const std::string& name, bool required = false);

  void add_error(std::string field, std::string message);
  const std::vector<FieldError>& errors() const { return errors_; }

  // Reports members nobody asked for, then returns every error as one invalid_request
  // (ok when there were none).
  Status finish();

 private:
  const nlohmann::json* member(const std::string& name, bool required);

  const nlohmann::json& object_;
  std::set<std::string, std::less<>> known_;
  std::vector<FieldError> errors_;
};

}  // namespace onceorder::http
