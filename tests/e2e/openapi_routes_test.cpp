// docs/openapi.json against the router: the same operations both ways, the same security,
// and a document whose references all resolve. The comparison itself is shown to catch a
// doctored document and a route the document lacks.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <iterator>
#include <set>

#include "e2e/openapi_spec.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

bool has_message(const std::vector<std::string>& messages, const std::string& text) {
  for (const std::string& m : messages) {
    if (m == text) return true;
  }
  return false;
}

// Calls `visit` on every object member named `key` anywhere in `node`.
void each_member(const json& node, const std::string& key,
                 const std::function<void(const json&)>& visit) {
  if (node.is_object()) {
    for (const auto& [name, value] : node.items()) {
      if (name == key) visit(value);
      each_member(value, key, visit);
    }
  } else if (node.is_array()) {
    for (const json& v : node) each_member(v, key, visit);
  }
}

TEST(OpenApiRoutes, TheDocumentDescribesEveryRouteAndNoOther) {
  const json doc = embedded_openapi();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.value("openapi", ""), "3.1.0");
  const auto mismatches = openapi_route_mismatches(doc, http::routes());
  EXPECT_TRUE(mismatches.empty()) << json(mismatches).dump(1);
}

TEST(OpenApiRoutes, TheBinaryServesTheCheckedInDocument) {
  std::ifstream in(std::string(ONCEORDER_SOURCE_DIR) + "/docs/openapi.json", std::ios::binary);
  ASSERT_TRUE(in.is_open());
  const std::string checked_in{std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>()};
  const http::EmbeddedFile* file = http::find_embedded_file("/openapi.json");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->content, checked_in) << "rebuild: the embedded copy is stale";
  EXPECT_EQ(file->content_type, "application/json");
}

TEST(OpenApiRoutes, TheComparisonCatchesADoctoredDocument) {
  const json good = embedded_openapi();
  ASSERT_TRUE(good.is_object());
  const auto routes = http::routes();

  json doc = good;
  doc["paths"].erase("/v1/orders");
  EXPECT_TRUE(has_message(openapi_route_mismatches(doc, routes),
                          "POST /v1/orders is served but not in the document"));

  doc = good;
  doc["paths"]["/v1/scopes/{scope}"].erase("put");
  EXPECT_TRUE(has_message(openapi_route_mismatches(doc, routes),
                          "PUT /v1/scopes/{scope} is served but not in the document"));

  doc = good;
  doc["paths"]["/healthz"]["delete"] = doc["paths"]["/healthz"]["get"];
  EXPECT_TRUE(has_message(openapi_route_mismatches(doc, routes),
                          "delete /healthz is in the document but no route serves it"));

  doc = good;
  doc["paths"]["/v1/orders/{order_id}/refund"] = doc["paths"]["/v1/orders/{order_id}/cancel"];
  EXPECT_TRUE(has_message(openapi_route_mismatches(doc, routes),
                          "post /v1/orders/{order_id}/refund is in the document but no route "
                          "serves it"));

  doc = good;
  doc["paths"]["/v1/invariants"]["get"]["x-onceorder-roles"] = {"admin"};
  EXPECT_TRUE(has_message(
      openapi_route_mismatches(doc, routes),
      R"(GET /v1/invariants admits ["admin","operator"] but the document says ["admin"])"));

  doc = good;
  doc["paths"]["/v1/invariants"]["get"]["security"] = json::array();
  EXPECT_TRUE(has_message(openapi_route_mismatches(doc, routes),
                          "GET /v1/invariants needs a bearer token but the document says []"));

  doc = good;
  doc["paths"]["/metrics"]["get"].erase("security");  // the document-wide bearer applies
  EXPECT_TRUE(has_message(openapi_route_mismatches(doc, routes),
                          "GET /metrics is open but the document asks for a token"));
}

TEST(OpenApiRoutes, TheComparisonCatchesARouteTheDocumentLacks) {
  const json doc = embedded_openapi();
  std::vector<http::Route> routes(http::routes().begin(), http::routes().end());
  static constexpr std::array kPost{http::bhttp::verb::post};
  routes.push_back(
      http::Route{http::RouteId::reap, "/v1/maintenance/vacuum", kPost, http::Access::staff});
  const auto mismatches = openapi_route_mismatches(doc, routes);
  EXPECT_EQ(mismatches, std::vector<std::string>{
                            "POST /v1/maintenance/vacuum is served but not in the document"});
}

TEST(OpenApiRoutes, TheDocumentIsComplete) {
  const json doc = embedded_openapi();
  ASSERT_TRUE(doc.is_object());
  const SchemaValidator validator(doc);

  each_member(doc, "$ref", [&](const json& ref) {
    EXPECT_NE(validator.resolve(ref.get<std::string>()), nullptr) << ref;
  });
  // Every keyword a schema uses is one the validator applies: nothing declared goes unchecked.
  for (const auto& [name, schema] : doc["components"]["schemas"].items()) {
    EXPECT_EQ(SchemaValidator::unsupported_keywords(schema), std::vector<std::string>{}) << name;
  }
  each_member(doc["paths"], "schema", [&](const json& schema) {
    EXPECT_EQ(SchemaValidator::unsupported_keywords(schema), std::vector<std::string>{}) << schema;
  });
  for (const char* part : {"responses", "parameters"}) {
    each_member(doc["components"][part], "schema", [&](const json& schema) {
      EXPECT_EQ(SchemaValidator::unsupported_keywords(schema), std::vector<std::string>{})
          << schema;
    });
  }

  std::set<std::string> operation_ids;
  for (const auto& [path, item] : doc["paths"].items()) {
    std::set<std::string> in_template;
    for (size_t open = path.find('{'); open != std::string::npos; open = path.find('{', open + 1)) {
      in_template.insert(path.substr(open + 1, path.find('}', open) - open - 1));
    }
    for (const std::string_view method : kOpenApiMethods) {
      if (!item.contains(method)) continue;
      const json& op = item[std::string(method)];
      const std::string label = std::string(method) + " " + path;
      EXPECT_TRUE(operation_ids.insert(op.value("operationId", "")).second) << label;
      std::set<std::string> declared;
      for (const json* list : {&item, &op}) {
        for (const json& p : list->value("parameters", json::array())) {
          const json* param =
              p.contains("$ref") ? validator.resolve(p["$ref"].get<std::string>()) : &p;
          ASSERT_NE(param, nullptr) << label;
          if (param->value("in", "") == "path") {
            EXPECT_TRUE(param->value("required", false)) << label;
            declared.insert(param->value("name", ""));
          }
        }
      }
      EXPECT_EQ(declared, in_template) << label;
      const json& responses = op["responses"];
      EXPECT_TRUE(responses.contains("500")) << label;
      if (op.value("security", json::array()) != json::array()) {
        for (const char* status : {"401", "403", "503"}) {
          EXPECT_TRUE(responses.contains(status)) << label << " " << status;
        }
      }
      if (op.contains("requestBody")) {
        EXPECT_TRUE(responses.contains("413")) << label;
      }
    }
  }
}

}  // namespace
}  // namespace onceorder::testing
