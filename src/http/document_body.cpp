#include "http/document_body.hpp"

#include <fmt/format.h>

#include <string>

#include "http/routes.hpp"
#include "onceorder/core/text.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

// The usual string check on every key and string of `v`, and the depth bound; the first
// problem under `path` is reported (one is enough to fix, and a hostile body cannot make
// the answer long).
bool check_body_value(const json& v, const std::string& path, int depth, FieldReader& fields) {
  if (depth > kMaxDocumentBodyDepth) {
    fields.add_error(path, fmt::format("nests deeper than {} levels", kMaxDocumentBodyDepth));
    return false;
  }
  if (v.is_string()) {
    if (auto problem = text_problem(v.get_ref<const std::string&>())) {
      fields.add_error(path, std::move(*problem));
      return false;
    }
  } else if (v.is_object()) {
    for (const auto& [key, member] : v.items()) {
      const std::string at = path + "." + key;
      if (auto problem = text_problem(key)) {  // named by its object: the name is the problem
        fields.add_error(path, "a member's name " + *problem);
        return false;
      }
      if (!check_body_value(member, at, depth + 1, fields)) return false;
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!check_body_value(v[i], fmt::format("{}[{}]", path, i), depth + 1, fields)) return false;
  }
  return true;
}

}  // namespace

void read_document_body(FieldReader& fields, IssueRequest& issue) {
  if (const json* header = fields.value("header")) {
    if (!header->is_object())
      fields.add_error("header", "must be an object");
    else if (check_body_value(*header, "header", 1, fields))
      issue.header = header->dump();
  }
  const json* lines = fields.value("lines");
  if (lines == nullptr) return;
  if (!lines->is_array()) {
    fields.add_error("lines", "must be an array of objects");
    return;
  }
  if (lines->size() > kMaxDocumentLines) {
    fields.add_error("lines",
                     fmt::format("has {} lines; at most {}", lines->size(), kMaxDocumentLines));
    return;
  }
  bool ok = true;
  for (std::size_t i = 0; i < lines->size() && ok; ++i) {
    const std::string at = fmt::format("lines[{}]", i);
    if (!(*lines)[i].is_object()) {
      fields.add_error(at, "must be an object");
      ok = false;
    } else {
      ok = check_body_value((*lines)[i], at, 1, fields);
    }
  }
  if (ok && !lines->empty()) issue.lines = lines->dump();
}

json document_json(const Document& d) {
  return {{"scope", d.scope},
          {"number", d.number},
          {"value", d.value},
          {"title", d.title},
          {"created_at", d.created_at},
          {"principal", principal_json(d.principal)},
          {"header", d.header.empty() ? json(nullptr) : json::parse(d.header)},
          {"lines", d.lines.empty() ? json::array() : json::parse(d.lines)}};
}

}  // namespace onceorder::http
