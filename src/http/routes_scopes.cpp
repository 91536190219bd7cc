#include <fmt/format.h>

#include <limits>

#include "http/document_body.hpp"
#include "http/json_input.hpp"
#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"
#include "onceorder/core/text.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

Status bad_scope() {
  return Status(
      Code::invalid_request, "invalid scope",
      {FieldError{"scope", fmt::format("must be 1–{} characters of A-Z, a-z, 0-9, '.', '_' or '-'",
                                       kMaxScopeName)}});
}

json scope_json(const ScopeInfo& s) {
  return {{"scope", s.scope},       {"width", s.format.width},    {"radix", s.format.radix},
          {"max", s.format.max},    {"last_value", s.last_value}, {"issued", s.issued},
          {"imported", s.imported}, {"remaining", s.remaining()}};
}

json listed_json(const Document& d) {
  json out = document_json(d);
  out["origin"] = d.origin;
  out["scheme"] = d.scheme;
  return out;
}

}  // namespace

Status no_query_parameters(std::string_view target) {
  auto params = parse_query(split_target(target).second);
  if (!params.ok()) return params.status();
  if (params->empty()) return Status::Ok();
  std::vector<FieldError> errors;
  for (const auto& [name, _] : *params) {
    // A name that is not text is never echoed back (API.md: 400 without a field).
    if (text_problem(name)) {
      return Status(Code::invalid_request,
                    "a query parameter name is not UTF-8 text without control characters");
    }
    errors.push_back({name, "is not a known parameter"});
  }
  return Status(Code::invalid_request, "this route takes no query parameters", std::move(errors));
}

Response put_scope(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (!is_valid_scope_name(m.scope)) return problem_response(bad_scope());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());

  FieldReader fields(*body);
  const ScopeFormat defaults;
  ScopeFormat format;
  format.width = static_cast<int>(fields.integer("width", 1, 18).value_or(defaults.width));
  format.radix = static_cast<int>(fields.integer("radix", 2, 36).value_or(defaults.radix));
  format.max =
      fields.integer("max", 1, std::numeric_limits<std::int64_t>::max()).value_or(defaults.max);
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto configured = s.numbering.configure(m.scope, format, deadline);
  if (!configured.ok()) return problem_response(configured.status());
  return json_response(configured->created ? bhttp::status::created : bhttp::status::ok,
                       scope_json(configured->info));
}

Response get_scope(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (!is_valid_scope_name(m.scope)) return problem_response(bad_scope());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto info = s.numbering.scope(m.scope, deadline);
  if (!info.ok()) return problem_response(info.status());
  return json_response(bhttp::status::ok, scope_json(*info));
}

Response get_document(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (!is_valid_scope_name(m.scope)) return problem_response(bad_scope());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  auto ids = path_ids(m.ids, {"value"});
  if (!ids.ok()) return problem_response(ids.status());
  auto doc = s.numbering.get(m.scope, (*ids)[0], deadline);
  if (!doc.ok()) return problem_response(doc.status());
  return json_response(bhttp::status::ok, listed_json(*doc));
}

Response post_document(Services& s, const Principal& who, const RouteMatch& m, const Request& req,
                       Deadline deadline) {
  if (!is_valid_scope_name(m.scope)) return problem_response(bad_scope());
  if (Status st = no_query_parameters(sv(req.target())); !st.ok()) return problem_response(st);
  if (req.body().size() > kMaxDocumentBodyBytes) {
    return problem_response(Status(
        Code::payload_too_large,
        fmt::format("a document's request body is at most {} bytes", kMaxDocumentBodyBytes)));
  }
  auto body = parse_object(req.body());
  if (!body.ok()) return problem_response(body.status());

  FieldReader fields(*body);
  IssueRequest issue;
  issue.scope = m.scope;
  issue.principal = who.name;
  auto title = fields.string("title", /*required=*/true);
  if (title) issue.title = std::move(*title);
  read_document_body(fields, issue);
  // The key is validated with the body so that one answer lists every problem.
  std::vector<FieldError> key_errors;
  issue.idempotency_key = idempotency_key(req, key_errors);
  for (auto& e : key_errors) fields.add_error(std::move(e.field), std::move(e.message));
  if (Status st = fields.finish(); !st.ok()) return problem_response(st);

  auto issued = s.numbering.issue(issue, deadline);
  if (!issued.ok()) {
    const Code code = issued.status().code();
    s.metrics.documents().add(code == Code::scope_exhausted ? DocumentOutcome::exhausted
                              : code == Code::busy          ? DocumentOutcome::busy
                                                            : DocumentOutcome::refused);
    return problem_response(issued.status());
  }
  s.metrics.documents().add(issued->replayed ? DocumentOutcome::replayed : DocumentOutcome::issued);
  Response res = json_response(bhttp::status::created, document_json(issued->document));
  if (issued->replayed) res.set("Idempotent-Replayed", "true");
  return res;
}

Response list_documents(Services& s, const RouteMatch& m, const Request& req, Deadline deadline) {
  if (!is_valid_scope_name(m.scope)) return problem_response(bad_scope());
  auto params = parse_query(split_target(sv(req.target())).second);
  if (!params.ok()) return problem_response(params.status());

  std::int64_t after = 0;
  int limit = kDefaultListLimit;
  std::vector<FieldError> errors;
  for (const auto& [name, value] : *params) {
    if (name == "after") {
      auto v = parse_int(value, 0, std::numeric_limits<std::int64_t>::max());
      if (v)
        after = *v;
      else
        errors.push_back({"after", "must be an integer ≥ 0"});
    } else if (name == "limit") {
      auto v = parse_int(value, 1, kMaxListLimit);
      if (v)
        limit = static_cast<int>(*v);
      else
        errors.push_back({"limit", fmt::format("must be an integer from 1 to {}", kMaxListLimit)});
    } else {
      errors.push_back({name, "is not a known parameter (after, limit)"});
    }
  }
  if (!errors.empty()) {
    return problem_response(Status(Code::invalid_request, "invalid query", std::move(errors)));
  }

  auto page = s.numbering.list(m.scope, after, limit, deadline);
  if (!page.ok()) return problem_response(page.status());
  json docs = json::array();
  for (const Document& d : page->documents) docs.push_back(listed_json(d));
  return json_response(bhttp::status::ok, {{"documents", std::move(docs)},
                                           {"next_after", page->next_after ? json(*page->next_after)
                                                                           : json(nullptr)}});
}

}  // namespace onceorder::http
