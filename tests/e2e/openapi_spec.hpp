// docs/openapi.json as the tests hold the server to it: the comparison of its operations with
// the router's route table (both ways, security included), and the check of one real
// exchange (request and answer) against what the document declares for its path, method and
// status. Thread-compatible.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/http_client.hpp"
#include "e2e/json_schema.hpp"
#include "http/embedded_files.hpp"
#include "http/routes.hpp"

namespace onceorder::testing {

inline constexpr std::string_view kOpenApiMethods[] = {"get",     "put",  "post",  "delete",
                                                       "options", "head", "patch", "trace"};

// The document as the binary serves it (null when it is missing or not JSON).
inline nlohmann::json embedded_openapi() {
  const http::EmbeddedFile* file = http::find_embedded_file("/openapi.json");
  if (!file) return nlohmann::json();
  return nlohmann::json::parse(file->content, nullptr, false);
}

// The roles the server admits to a route of `access` (http::admits), in the order operations
// list them in `x-onceorder-roles`.
inline std::vector<std::string> openapi_roles(http::Access access, bool reading) {
  std::vector<std::string> out;
  for (const auto& [role, name] :
       {std::pair{http::Role::admin, "admin"}, std::pair{http::Role::operator_, "operator"},
        std::pair{http::Role::customer, "customer"}, std::pair{http::Role::viewer, "viewer"}}) {
    if (http::admits(role, access, reading)) out.emplace_back(name);
  }
  return out;
}

// Every difference between the document's operations and `routes`, one sentence each: a
// route or method the document lacks, an operation no route serves, and security that does
// not match the route's Access (open: `security: []` and no roles; otherwise the bearer
// scheme and exactly the roles the Access admits). Empty when they agree.
inline std::vector<std::string> openapi_route_mismatches(const nlohmann::json& doc,
                                                         std::span<const http::Route> routes) {
  std::vector<std::string> out;
  const nlohmann::json paths = doc.value("paths", nlohmann::json::object());
  std::set<std::string> served;
  for (const http::Route& r : routes) {
    const std::string pattern(r.pattern);
    const auto method = r.method;
    std::string name(http::bhttp::to_string(method));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    served.insert(name + " " + pattern);
    const std::string label = std::string(http::bhttp::to_string(method)) + " " + pattern;
    if (!paths.contains(pattern) || !paths[pattern].contains(name)) {
      out.push_back(label + " is served but not in the document");
      continue;
    }
    const nlohmann::json& op = paths[pattern][name];
    const nlohmann::json security = op.value("security", doc.value("security", nlohmann::json()));
    const nlohmann::json roles = op.value("x-onceorder-roles", nlohmann::json::array());
    const http::Access access = r.access;
    if (access == http::Access::open) {
      if (security != nlohmann::json::array() || !roles.empty()) {
        out.push_back(label + " is open but the document asks for a token");
      }
    } else {
      if (security != nlohmann::json::parse(R"([{"bearer": []}])")) {
        out.push_back(label + " needs a bearer token but the document says " + security.dump());
      }
      const bool reading = method == http::bhttp::verb::get;
      if (roles != nlohmann::json(openapi_roles(access, reading))) {
        out.push_back(label + " admits " + nlohmann::json(openapi_roles(access, reading)).dump() +
                      " but the document says " + roles.dump());
      }
    }
  }
  for (const auto& [path, item] : paths.items()) {
    for (const std::string_view m : kOpenApiMethods) {
      if (item.contains(m) && !served.contains(std::string(m) + " " + path)) {
        out.push_back(std::string(m) + " " + path + " is in the document but no route serves it");
      }
    }
  }
  return out;
}

// The document, and what it says about one exchange.
class OpenApiSpec {
 public:
  using json = nlohmann::json;

  explicit OpenApiSpec(json doc) : doc_(std::move(doc)), validator_(doc_) {}
  OpenApiSpec(const OpenApiSpec&) = delete;
  OpenApiSpec& operator=(const OpenApiSpec&) = delete;

  const json& doc() const { return doc_; }
  const SchemaValidator& validator() const { return validator_; }

  // The path template a concrete path falls under ("/v1/orders/42" → "/v1/orders/{order_id}"),
  // the one with the most literal segments when several do; "" when none.
  std::string path_template(std::string_view path) const {
    const auto segments = split(path);
    std::string best;
    int best_literals = -1;
    for (const auto& [tmpl, _] : doc_.at("paths").items()) {
      const auto parts = split(tmpl);
      if (parts.size() != segments.size()) continue;
      int literals = 0;
      bool match = true;
      for (size_t i = 0; i < parts.size() && match; ++i) {
        const bool param = parts[i].size() > 2 && parts[i].front() == '{' && parts[i].back() == '}';
        if (param) {
          match = !segments[i].empty();
        } else {
          match = parts[i] == segments[i];
          ++literals;
        }
      }
      if (match && literals > best_literals) {
        best = tmpl;
        best_literals = literals;
      }
    }
    return best;
  }

  // Every way one exchange departs from the document, one sentence each; empty when it
  // conforms. Checked: the operation exists; the status is declared; the media type is one
  // the answer declares (none for a bodiless answer) and the body validates against its
  // schema; the API's own headers, when sent, are declared and match their schemas. For a
  // 2xx answer the request too: every path, query and header parameter it sent is declared
  // and its value matches the parameter's schema (read as an integer where that is one), every
  // required one was sent, and the body matches the request body's schema (or is absent where
  // the document allows that).
  std::vector<std::string> check(std::string_view method, const std::string& target,
                                 const std::string& request_body, const Headers& request_headers,
                                 const HttpResponse& r, std::string* operation = nullptr) const {
    std::vector<std::string> out;
    const auto [path, query] = http::split_target(target);
    const std::string tmpl = path_template(path);
    const std::string label = std::string(method) + " " + target + " → " + std::to_string(r.status);
    if (tmpl.empty()) return {label + ": no path of the document matches"};
    const json& item = doc_.at("paths").at(tmpl);
    if (!item.contains(method)) return {label + ": " + tmpl + " has no " + std::string(method)};
    const json& op = item.at(method);
    if (operation) *operation = std::string(method) + " " + tmpl;

    const json* declared = nullptr;
    const std::string status = std::to_string(r.status);
    if (op.at("responses").contains(status)) declared = &op.at("responses").at(status);
    if (!declared) return {label + ": status not declared for " + std::string(method) + " " + tmpl};
    declared = deref(*declared);
    if (!declared) return {label + ": unresolvable response $ref"};

    check_body(label, *declared, r, out);
    check_headers(label, *declared, r, out);
    if (r.status >= 200 && r.status < 300) {
      check_parameters(label, tmpl, item, op, path, query, request_headers, out);
      check_request_body(label, op, request_body, out);
    }
    return out;
  }

 private:
  static std::vector<std::string> split(std::string_view path) {
    std::vector<std::string> out;
    if (path.starts_with('/')) path.remove_prefix(1);
    for (;;) {
      const size_t slash = path.find('/');
      out.emplace_back(path.substr(0, slash));
      if (slash == std::string_view::npos) break;
      path.remove_prefix(slash + 1);
    }
    return out;
  }

  static std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  }

  // `node`, or what its $ref names.
  const json* deref(const json& node) const {
    if (!node.contains("$ref")) return &node;
    return validator_.resolve(node.at("$ref").get<std::string>());
  }

  void validate(const std::string& label, const std::string& what, const json& value,
                const json& schema, std::vector<std::string>& out) const {
    for (const std::string& e : validator_.validate(value, schema)) {
      out.push_back(label + ": " + what + e);
    }
  }

  void check_body(const std::string& label, const json& declared, const HttpResponse& r,
                  std::vector<std::string>& out) const {
    const std::string type = r.header("content-type");
    const std::string media = lower(type.substr(0, type.find(';')));
    if (!declared.contains("content")) {
      if (!r.body.empty()) out.push_back(label + ": a body where the document declares none");
      return;
    }
    const json& content = declared.at("content");
    if (!content.contains(media)) {
      out.push_back(label + ": content type '" + type + "' is not declared (" + content.dump() +
                    ")");
      return;
    }
    const json schema = content.at(media).value("schema", json::object());
    const bool is_json = media == "application/json" || media.ends_with("+json");
    if (!is_json) {
      validate(label, "body ", json(r.body), schema, out);
      return;
    }
    const json body = json::parse(r.body, nullptr, false);
    if (body.is_discarded()) {
      out.push_back(label + ": the body is not JSON: " + r.body.substr(0, 200));
      return;
    }
    validate(label, "body ", body, schema, out);
  }

  // The headers the API defines; a generic one (Content-Length, Server) is not the
  // document's business.
  void check_headers(const std::string& label, const json& declared, const HttpResponse& r,
                     std::vector<std::string>& out) const {
    static const std::vector<std::string> kApiHeaders = {"idempotent-replayed", "etag",
                                                         "retry-after", "www-authenticate",
                                                         "content-security-policy"};
    std::map<std::string, const json*> headers;
    if (declared.contains("headers")) {
      for (const auto& [name, h] : declared.at("headers").items()) headers[lower(name)] = &h;
    }
    for (const std::string& name : kApiHeaders) {
      if (!r.has_header(name)) continue;
      const auto it = headers.find(name);
      if (it == headers.end()) {
        out.push_back(label + ": header " + name + " is sent but not declared");
        continue;
      }
      const json* h = deref(*it->second);
      if (h && h->contains("schema")) {
        validate(label, "header " + name + " ", json(r.header(name)), h->at("schema"), out);
      }
    }
  }

  // A query value as its schema sees it: for an integer parameter digits (with a sign) are an
  // integer, anything else stays text (and fails the schema).
  static json parameter_value(const std::string& text, const json* param) {
    const json type =
        param && param->contains("schema") ? param->at("schema").value("type", json()) : json();
    const size_t start = text.starts_with('-') ? 1 : 0;
    if (type == "integer" && text.size() > start &&
        text.find_first_not_of("0123456789", start) == std::string::npos) {
      try {
        return json(std::stoll(text));
      } catch (const std::exception&) {
      }
    }
    return json(text);
  }

  void check_parameters(const std::string& label, const std::string& tmpl, const json& item,
                        const json& op, std::string_view path, std::string_view query,
                        const Headers& request_headers, std::vector<std::string>& out) const {
    // (in, name) → the parameter; header names compare in lower case. An operation's own
    // parameter overrides the path item's of the same name.
    std::map<std::pair<std::string, std::string>, const json*> declared;
    for (const json* list : {&item, &op}) {
      if (!list->contains("parameters")) continue;
      for (const json& p : list->at("parameters")) {
        const json* param = deref(p);
        if (!param) continue;
        const std::string in = param->value("in", "");
        const std::string name = param->value("name", "");
        declared[{in, in == "header" ? lower(name) : name}] = param;
      }
    }
    std::set<std::pair<std::string, std::string>> sent;
    auto check_value = [&](const std::string& in, const std::string& name, const json& value) {
      sent.insert({in, name});
      const auto it = declared.find({in, name});
      if (it == declared.end()) {
        if (in != "header")
          out.push_back(label + ": " + in + " parameter " + name + " is not declared");
        return;
      }
      if (it->second->contains("schema")) {
        validate(label, in + " parameter " + name + " ", value, it->second->at("schema"), out);
      }
    };
    const auto parts = split(tmpl);
    const auto segments = split(path);
    for (size_t i = 0; i < parts.size() && i < segments.size(); ++i) {
      if (parts[i].size() > 2 && parts[i].front() == '{') {
        check_value("path", parts[i].substr(1, parts[i].size() - 2), json(segments[i]));
      }
    }
    auto params = http::parse_query(query);
    if (!params.ok()) {
      out.push_back(label + ": the query does not parse");
    } else {
      for (const auto& [name, value] : *params) {
        const auto it = declared.find({"query", name});
        check_value("query", name,
                    parameter_value(value, it == declared.end() ? nullptr : it->second));
      }
    }
    for (const auto& [name, value] : request_headers) {
      if (declared.contains({"header", lower(name)}))
        check_value("header", lower(name), json(value));
    }
    for (const auto& [key, param] : declared) {
      if (param->value("required", false) && !sent.contains(key)) {
        out.push_back(label + ": required " + key.first + " parameter " + key.second + " not sent");
      }
    }
  }

  void check_request_body(const std::string& label, const json& op, const std::string& body,
                          std::vector<std::string>& out) const {
    if (!op.contains("requestBody")) {
      if (!body.empty()) out.push_back(label + ": a request body where the document takes none");
      return;
    }
    const json& rb = op.at("requestBody");
    if (body.empty()) {
      if (rb.value("required", false)) out.push_back(label + ": the request body is required");
      return;
    }
    const json value = json::parse(body, nullptr, false);
    if (value.is_discarded()) {
      out.push_back(label + ": the request body is not JSON");
      return;
    }
    validate(label, "request body ", value, rb.at("content").at("application/json").at("schema"),
             out);
  }

  json doc_;
  SchemaValidator validator_;
};

}  // namespace onceorder::testing
