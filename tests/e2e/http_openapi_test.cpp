// docs/openapi.json kept true, in two parts (the JSON Schema validator they use, json_schema.hpp,
// has its own tests in json_schema_test.cpp):
// - the document against the router: the same operations both ways, the same security, every
//   reference resolvable, every keyword one the validator applies; the comparison is shown to
//   catch a doctored document and a route the document lacks;
// - GET /openapi.json and the server held to it, on every engine: each operation is called for
//   its successes and its own error answers, and every real answer (status, media type, body,
//   the API's headers) is checked against what the document declares for that path, method
//   and status; every accepted request against its request schema.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "e2e/http_fixture.hpp"
#include "e2e/json_schema.hpp"
#include "e2e/openapi_spec.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// ---- The document against the router.

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
      R"(GET /v1/invariants admits ["admin","operator","viewer"] but the document says ["admin"])"));

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
  routes.push_back(
      http::Route{http::bhttp::verb::post, "/v1/maintenance/vacuum", nullptr, http::Access::staff});
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

// ---- Real answers.

std::string_view openapi_method(Method m) {
  switch (m) {
    case Method::get:
      return "get";
    case Method::post:
      return "post";
    case Method::put:
      return "put";
    case Method::delete_:
      return "delete";
    default:
      return "?";
  }
}

class OpenApiHttpTest : public HttpTest {
 protected:
  void SetUp() override {
    HttpTest::SetUp();
    if (HasFatalFailure()) return;
    const HttpResponse r = client().get("/openapi.json");
    ASSERT_EQ(r.status, 200) << r.body;
    const json doc = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << r.body.substr(0, 200);
    spec_ = std::make_unique<OpenApiSpec>(doc);
    record(Method::get, "/openapi.json", "", {}, r);
  }

  // One exchange, checked against the document and counted for coverage.
  HttpResponse call(Method m, const std::string& target, const std::string& body = {},
                    const Headers& headers = {}) {
    HttpResponse r = client().request(m, target, body, headers);
    record(m, target, body, headers, r);
    return r;
  }
  HttpResponse get(const std::string& target, const Headers& headers = {}) {
    return call(Method::get, target, {}, headers);
  }
  HttpResponse post(const std::string& target, const std::string& body,
                    const Headers& headers = {}) {
    return call(Method::post, target, body, headers);
  }
  HttpResponse put(const std::string& target, const std::string& body,
                   const Headers& headers = {}) {
    return call(Method::put, target, body, headers);
  }
  HttpResponse del(const std::string& target) { return call(Method::delete_, target); }

  void record(Method m, const std::string& target, const std::string& body, const Headers& headers,
              const HttpResponse& r) {
    std::string operation;
    for (const std::string& e :
         spec_->check(openapi_method(m), target, body, headers, r, &operation)) {
      ADD_FAILURE() << e << "\n  body: " << r.body.substr(0, 400);
    }
    if (!operation.empty()) seen_[operation].insert(std::to_string(r.status));
    if (const char* out = std::getenv("ONCEORDER_OPENAPI_EXAMPLES_OUT"); out && !operation.empty())
      write_example(out, operation, body, r);
  }

  // One exchange as a JSON line for scripts/openapi-examples, which makes the document's
  // examples from real answers.
  static void write_example(const char* path, const std::string& operation, const std::string& body,
                            const HttpResponse& r) {
    std::ofstream out(path, std::ios::app);
    out << json{{"operation", operation},
                {"status", std::to_string(r.status)},
                {"request", body},
                {"media", r.header("content-type")},
                {"response", r.body}}
               .dump(-1, ' ', false, json::error_handler_t::replace)
        << '\n';
  }

  // The outbox's paths, exercised by a test of their own.
  static bool outbox_path(const std::string& path) {
    return path.starts_with("/v1/events") || path.starts_with("/v1/consumers") ||
           path.starts_with("/v1/endpoints");
  }

  // Statuses each operation declares with an answer of its own (not a shared component such
  // as 401 or 413) and below 500, which the test did not see, except the `exempt` ones; of the
  // outbox's paths or of the others.
  std::vector<std::string> unexercised(const std::set<std::string>& exempt,
                                       bool outbox = false) const {
    std::vector<std::string> out;
    for (const auto& [path, item] : spec_->doc()["paths"].items()) {
      if (outbox_path(path) != outbox) continue;
      for (const std::string_view method : kOpenApiMethods) {
        if (!item.contains(method)) continue;
        const std::string operation = std::string(method) + " " + path;
        const auto seen = seen_.find(operation);
        for (const auto& [status, response] : item[std::string(method)]["responses"].items()) {
          if (response.contains("$ref") || std::stoi(status) >= 500) continue;
          const std::string entry = operation + " " + status;
          if (exempt.contains(entry)) continue;
          if (seen == seen_.end() || !seen->second.contains(status)) out.push_back(entry);
        }
      }
    }
    return out;
  }

  std::unique_ptr<OpenApiSpec> spec_;
  std::map<std::string, std::set<std::string>> seen_;  // operation → statuses answered
};

Headers openapi_key(const std::string& k) { return {{"Idempotency-Key", k}}; }

std::string openapi_cart(std::int64_t customer, std::int64_t sku, std::int64_t quantity) {
  return json{{"customer_id", customer},
              {"warehouse_id", 1},
              {"lines", {{{"sku_id", sku}, {"quantity", quantity}}}}}
      .dump();
}

TEST_P(OpenApiHttpTest, EveryOperationAnswersAsTheDocumentSays) {
  // Embedded files, with their ETags.
  for (const std::string path : {"/openapi.json", "/", "/app.js", "/style.css"}) {
    const auto first = get(path);
    ASSERT_EQ(first.status, 200) << path;
    const std::string etag = first.header("etag");
    ASSERT_FALSE(etag.empty()) << path;
    const auto again = get(path, {{"If-None-Match", etag}});
    EXPECT_EQ(again.status, 304) << path;
    EXPECT_TRUE(again.body.empty()) << path;
    EXPECT_EQ(get(path, {{"If-None-Match", "\"other\""}}).status, 200) << path;
    EXPECT_EQ(get(path, {{"If-None-Match", "\"other\", W/" + etag}}).status, 304) << path;
  }
  EXPECT_EQ(get("/missing.js").status, 404);

  // Operations.
  EXPECT_EQ(get("/healthz").status, 200);
  HttpResponse ready;
  for (int i = 0; i < 60 && ready.status != 200; ++i) {
    if (i > 0) std::this_thread::sleep_for(50ms);
    ready = get("/readyz");
  }
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(get("/metrics").status, 200);

  // Document numbers.
  EXPECT_EQ(put("/v1/scopes/S", R"({"width": 4})").status, 201);
  EXPECT_EQ(put("/v1/scopes/S", R"({"width": 4, "radix": 10, "max": 9999})").status, 200);
  EXPECT_EQ(put("/v1/scopes/S", R"({"width": 99})").status, 400);
  EXPECT_EQ(put("/v1/scopes/S", R"({"width": )").status, 400);
  EXPECT_EQ(get("/v1/scopes/S").status, 200);
  EXPECT_EQ(get("/v1/scopes/S?x=1").status, 400);
  EXPECT_EQ(get("/v1/scopes/Never").status, 404);
  EXPECT_EQ(post("/v1/scopes/S/documents", R"({"title": "a"})", openapi_key("d1")).status, 201);
  const auto replayed = post("/v1/scopes/S/documents", R"({"title": "a"})", openapi_key("d1"));
  EXPECT_EQ(replayed.status, 201);
  EXPECT_EQ(replayed.header("idempotent-replayed"), "true");
  EXPECT_EQ(post("/v1/scopes/S/documents", R"({"title": "b"})", openapi_key("d1")).status, 422);
  EXPECT_EQ(post("/v1/scopes/S/documents", R"({"title": "b"})").status, 201);
  EXPECT_EQ(post("/v1/scopes/S/documents", "{}").status, 400);
  const auto page = get("/v1/scopes/S/documents?limit=1");
  EXPECT_EQ(page.status, 200);
  EXPECT_TRUE(page.json()["next_after"].is_number_integer()) << page.body;
  EXPECT_EQ(get("/v1/scopes/S/documents?after=1&limit=100").status, 200);
  EXPECT_EQ(get("/v1/scopes/S/documents?limit=0").status, 400);
  EXPECT_EQ(get("/v1/scopes/Never/documents").status, 404);
  EXPECT_EQ(get("/v1/scopes/S/documents/1").status, 200);
  EXPECT_EQ(get("/v1/scopes/S/documents/999").status, 404);
  EXPECT_EQ(get("/v1/scopes/S/documents/zero").status, 400);
  EXPECT_EQ(put("/v1/scopes/Small", R"({"width": 1, "max": 1})").status, 201);
  EXPECT_EQ(post("/v1/scopes/Small/documents", R"({"title": "one"})").status, 201);
  EXPECT_EQ(post("/v1/scopes/Small/documents", R"({"title": "two"})").status, 409);
  EXPECT_EQ(put("/v1/scopes/S", R"({"max": 1})").status, 409);  // 2 is used

  // Stock.
  EXPECT_EQ(put("/v1/warehouses/1/skus/101", R"({"price_cents": 1200, "available": 5})").status,
            201);
  EXPECT_EQ(put("/v1/warehouses/1/skus/101", R"({"price_cents": 1300})").status, 200);
  EXPECT_EQ(put("/v1/warehouses/1/skus/101", R"({"price_cents": 1, "available": 1})").status, 409);
  EXPECT_EQ(put("/v1/warehouses/1/skus/101", R"({"price_cents": -1})").status, 400);
  EXPECT_EQ(put("/v1/warehouses/1/skus/102", R"({"price_cents": 500, "available": 1})").status,
            201);
  EXPECT_EQ(get("/v1/warehouses/1/skus/101").status, 200);
  EXPECT_EQ(get("/v1/warehouses/1/skus/999").status, 404);
  EXPECT_EQ(get("/v1/warehouses/01/skus/101").status, 400);
  const std::string adjustments = "/v1/warehouses/1/skus/101/adjustments";
  EXPECT_EQ(post(adjustments, R"({"delta": 2, "reason": "found"})").status, 201);
  EXPECT_EQ(post(adjustments, R"({"delta": -100, "reason": "lost"})").status, 409);
  EXPECT_EQ(post(adjustments, R"({"delta": 0, "reason": "none"})").status, 400);
  EXPECT_EQ(post(adjustments, R"({"delta": 1, "reason": "x"})", openapi_key("a1")).status, 201);
  EXPECT_EQ(post(adjustments, R"({"delta": 1, "reason": "x"})", openapi_key("a1"))
                .header("idempotent-replayed"),
            "true");
  EXPECT_EQ(post(adjustments, R"({"delta": 2, "reason": "x"})", openapi_key("a1")).status, 422);
  EXPECT_EQ(post(adjustments, R"({"delta": 1, "reason": "x"})", openapi_key("a key")).status, 400);
  EXPECT_EQ(post("/v1/warehouses/1/skus/999/adjustments", R"({"delta": 1, "reason": "x"})").status,
            404);

  // Orders.
  const auto placed = post("/v1/orders", openapi_cart(7, 101, 2), openapi_key("o1"));
  ASSERT_EQ(placed.status, 201) << placed.body;
  const std::string order_id = placed.json()["order_id"];
  EXPECT_EQ(
      post("/v1/orders", openapi_cart(7, 101, 2), openapi_key("o1")).header("idempotent-replayed"),
      "true");
  EXPECT_EQ(post("/v1/orders", openapi_cart(7, 101, 3), openapi_key("o1")).status, 422);
  EXPECT_EQ(post("/v1/orders", openapi_cart(7, 101, 1)).status, 400);
  EXPECT_EQ(post("/v1/orders", openapi_cart(7, 555, 1), openapi_key("o2")).status, 422);
  EXPECT_EQ(post("/v1/orders", openapi_cart(7, 102, 5), openapi_key("o3")).status, 409);
  const auto stored = post("/v1/orders", openapi_cart(7, 102, 5), openapi_key("o3"));
  EXPECT_EQ(stored.status, 409);
  EXPECT_EQ(stored.header("idempotent-replayed"), "true");
  EXPECT_EQ(post("/v1/orders", R"({"customer_id": 7})", openapi_key("o4")).status, 400);
  EXPECT_EQ(get("/v1/orders/" + order_id).status, 200);
  EXPECT_EQ(get("/v1/orders/999").status, 404);
  EXPECT_EQ(get("/v1/orders/abc").status, 400);
  EXPECT_EQ(post("/v1/orders/" + order_id + "/cancel", R"({"x": 1})").status, 400);
  EXPECT_EQ(post("/v1/orders/" + order_id + "/cancel", "").status, 200);
  EXPECT_EQ(post("/v1/orders/" + order_id + "/cancel", "{}").status, 200);
  EXPECT_EQ(post("/v1/orders/999/cancel", "").status, 404);

  // Scheduling: source orders, a run that produces an order's line, then its cancel refused.
  const std::string lot = R"({"site_code": "S1", "order_no": "A", "lot_no": "1")";
  EXPECT_EQ(post("/v1/source-orders", R"({"orders": [)" + lot + R"(, "quantity": 3}]})").status,
            200);
  EXPECT_EQ(post("/v1/source-orders", R"({"orders": [)" + lot + R"(, "quantity": 4}]})").status,
            409);
  EXPECT_EQ(post("/v1/source-orders", R"({"orders": []})").status, 400);
  const std::string lot_b = R"({"orders": [{"site_code": "S2", "order_no": "C", "lot_no": "1", )"
                            R"("quantity": 2}]})";
  EXPECT_EQ(post("/v1/source-orders", lot_b, openapi_key("s")).status, 200);
  EXPECT_EQ(post("/v1/source-orders", lot_b, openapi_key("s")).header("idempotent-replayed"),
            "true");
  EXPECT_EQ(
      post("/v1/source-orders", R"({"orders": [)" + lot + R"(, "quantity": 3}]})", openapi_key("s"))
          .status,
      422);
  const auto produced = post("/v1/orders", openapi_cart(8, 101, 1), openapi_key("o5"));
  ASSERT_EQ(produced.status, 201) << produced.body;
  const std::string produced_id = produced.json()["order_id"];
  const auto all = post("/v1/schedule/runs", "");
  ASSERT_EQ(all.status, 201) << all.body;
  EXPECT_EQ(all.json()["status"], "done") << all.body;
  EXPECT_EQ(post("/v1/orders/" + produced_id + "/cancel", "").status, 409);
  const auto manual =
      post("/v1/schedule/runs", R"({"orders": [)" + lot + R"(}, {"site_code": "S1", "order_no": "B",
                               "lot_no": "1"}]})");
  ASSERT_EQ(manual.status, 201) << manual.body;
  EXPECT_EQ(manual.json()["skipped"].size(), 2u) << manual.body;  // done already; unknown
  EXPECT_EQ(post("/v1/schedule/runs?wait=false", "{}").status, 201);
  EXPECT_EQ(post("/v1/schedule/runs?wait=maybe", "").status, 400);
  EXPECT_EQ(post("/v1/schedule/runs", "", openapi_key("r")).status, 201);
  EXPECT_EQ(post("/v1/schedule/runs", "", openapi_key("r")).header("idempotent-replayed"), "true");
  EXPECT_EQ(post("/v1/schedule/runs", R"({"orders": [)" + lot + "}]}", openapi_key("r")).status,
            422);
  EXPECT_EQ(post("/v1/schedule/runs", "", openapi_key("a key")).status, 400);
  const std::int64_t run_id = all.json()["run_id"];
  EXPECT_EQ(get("/v1/schedule/runs").status, 200);
  EXPECT_EQ(get("/v1/schedule/runs?status=done&limit=5").status, 200);
  EXPECT_EQ(get("/v1/schedule/runs?status=bogus").status, 400);
  EXPECT_EQ(get(fmt::format("/v1/schedule/runs/{}", run_id)).status, 200);
  EXPECT_EQ(get("/v1/schedule/runs/999999").status, 404);
  EXPECT_EQ(get("/v1/schedule/runs/0").status, 400);
  const auto items = get("/v1/schedule/items?limit=1");
  EXPECT_EQ(items.status, 200);
  EXPECT_TRUE(items.json()["next_after"].is_number_integer()) << items.body;
  EXPECT_EQ(get(fmt::format("/v1/schedule/items?run_id={}&status=success&site_code=S1&"
                            "order_no=A&lot_no=1&after=0",
                            run_id))
                .status,
            200);
  EXPECT_EQ(get("/v1/schedule/items?status=bogus").status, 400);
  const auto production = get("/v1/production-orders?site_code=S1");
  EXPECT_EQ(production.status, 200);
  EXPECT_EQ(production.json()["production_orders"].size(), 1u) << production.body;
  EXPECT_EQ(get("/v1/production-orders?after=0&limit=1").status, 200);
  EXPECT_EQ(get("/v1/production-orders?limit=0").status, 400);
  EXPECT_EQ(post("/v1/maintenance/reap", "").status, 200);
  EXPECT_EQ(post("/v1/maintenance/reap", "{}").status, 200);
  EXPECT_EQ(post("/v1/maintenance/reap", R"({"x": 1})").status, 400);
  // Console actions: an order that used up its attempts (each attempt's claim failed with its
  // run), listed, re-queued; a run stopped.
  ASSERT_EQ(
      post("/v1/source-orders",
           R"({"orders": [{"site_code": "X", "order_no": "E", "lot_no": "1", "quantity": 1}]})")
          .status,
      200);
  for (int attempt = 0; attempt < scheduler().options().max_attempts; ++attempt) {
    auto made = scheduler().create_run(RunKind::manual, std::vector<OrderKey>{{"X", "E", "1"}},
                                       store::Clock::now() + 5s);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    ASSERT_EQ(scheduler().claim(made->run.run_id, 1)->size(), 1u);
    ASSERT_TRUE(scheduler().fail_run(made->run.run_id, "jammed").ok());
  }
  const auto exhausted = get("/v1/schedule/exhausted?limit=1");
  EXPECT_EQ(exhausted.status, 200);
  EXPECT_EQ(exhausted.json()["next_after"], "X E 1") << exhausted.body;
  EXPECT_EQ(get("/v1/schedule/exhausted?site_code=X&after=X%20E%201").status, 200);
  EXPECT_EQ(get("/v1/schedule/exhausted?after=nokey").status, 400);
  const std::string requeue_e =
      R"({"orders": [{"site_code": "X", "order_no": "E", "lot_no": "1"}])";
  const auto dry = post("/v1/schedule/requeue", requeue_e + R"(, "dry_run": true})");
  EXPECT_EQ(dry.status, 200);
  EXPECT_EQ(dry.json()["requeued"].size(), 1u) << dry.body;
  EXPECT_EQ(post("/v1/schedule/requeue", requeue_e + "}", openapi_key("q")).status, 200);
  const auto requeue_replay = post("/v1/schedule/requeue", requeue_e + "}", openapi_key("q"));
  EXPECT_EQ(requeue_replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(post("/v1/schedule/requeue",
                 R"({"orders": [{"site_code": "X", "order_no": "F", )"
                 R"("lot_no": "1"}]})",
                 openapi_key("q"))
                .status,
            422);
  EXPECT_EQ(post("/v1/schedule/requeue", R"({"orders": []})").status, 400);
  EXPECT_EQ(post("/v1/schedule/requeue", R"({"orders": )").status, 400);
  const auto live = scheduler().create_run(RunKind::manual, std::vector<OrderKey>{{"X", "E", "1"}},
                                           store::Clock::now() + 5s);
  ASSERT_TRUE(live.ok()) << live.status().to_string();
  const std::string stop = fmt::format("/v1/schedule/runs/{}/stop", live->run.run_id);
  EXPECT_EQ(post(stop, "").status, 202);
  EXPECT_EQ(post(stop, R"({"x": 1})").status, 400);
  EXPECT_EQ(post("/v1/schedule/runs/999999/stop", "").status, 404);
  EXPECT_EQ(post("/v1/schedule/runs/0/stop", "").status, 400);
  EXPECT_EQ(post(fmt::format("/v1/schedule/runs/{}/stop", run_id), "").status, 409);
  ASSERT_FALSE(scheduler().process_run(live->run.run_id).ok());  // stopped before a claim
  EXPECT_EQ(get("/v1/invariants").status, 200);
  EXPECT_EQ(get("/v1/invariants?x=1").status, 400);
  // The console's lists.
  EXPECT_EQ(get("/v1/orders").status, 200);
  const auto orders =
      get("/v1/orders?customer_id=7&warehouse_id=1&status=cancelled&after=0&limit=1");
  EXPECT_EQ(orders.status, 200);
  EXPECT_TRUE(orders.json()["next_after"].is_string()) << orders.body;
  EXPECT_EQ(get("/v1/orders?status=open").status, 400);
  EXPECT_EQ(get("/v1/orders?limit=0").status, 400);
  const auto receipts = get("/v1/orders/" + order_id + "/receipts");
  EXPECT_EQ(receipts.status, 200);
  EXPECT_EQ(receipts.json()["receipts"].size(), 1u) << receipts.body;
  EXPECT_EQ(get("/v1/orders/999/receipts").status, 404);
  EXPECT_EQ(get("/v1/orders/abc/receipts").status, 400);
  const auto skus = get("/v1/warehouses/1/skus?limit=1");
  EXPECT_EQ(skus.status, 200);
  EXPECT_TRUE(skus.json()["next_after"].is_number_integer()) << skus.body;
  EXPECT_EQ(get("/v1/warehouses/1/skus?after=101").status, 200);
  EXPECT_EQ(get("/v1/warehouses/0/skus").status, 400);
  EXPECT_EQ(get("/v1/warehouses?limit=1").json()["next_after"], 1);
  EXPECT_EQ(get("/v1/warehouses?after=x").status, 400);
  EXPECT_TRUE(get("/v1/orders?order=asc&after=0").json()["next_after"].is_string());
  EXPECT_EQ(get("/v1/orders?order=asc&after=17").status, 400);
  const auto scopes = get("/v1/scopes?limit=1");
  EXPECT_EQ(scopes.status, 200);
  EXPECT_TRUE(scopes.json()["next_after"].is_string()) << scopes.body;
  EXPECT_EQ(get("/v1/scopes?after=S").status, 200);
  EXPECT_EQ(get("/v1/scopes?after=%00").status, 400);
  EXPECT_EQ(get("/v1/schedule/claims?within=1h&after=0&limit=10").status, 200);
  EXPECT_EQ(get("/v1/schedule/claims?within=-1s").status, 400);
  // The audit trail and the activity charts.
  const auto trail = get("/v1/actions?limit=1");
  EXPECT_EQ(trail.status, 200);
  EXPECT_TRUE(trail.json()["next_after"].is_number_integer()) << trail.body;
  EXPECT_EQ(get("/v1/actions?principal=local&action=scope.configure&after=1000&limit=10").status,
            200);
  EXPECT_EQ(get("/v1/actions?limit=0").status, 400);
  EXPECT_EQ(get("/v1/stats/activity?minutes=5").status, 200);
  EXPECT_EQ(get("/v1/stats/activity").status, 200);
  EXPECT_EQ(get("/v1/stats/activity?minutes=1441").status, 400);
  // Timelines.
  const std::int64_t item_id = items.json()["items"][0]["item_id"];
  const auto item_timeline = get(fmt::format("/v1/schedule/items/{}/timeline", item_id));
  EXPECT_EQ(item_timeline.status, 200);
  EXPECT_FALSE(item_timeline.json()["events"].empty()) << item_timeline.body;
  EXPECT_EQ(get("/v1/schedule/items/999999/timeline").status, 404);
  EXPECT_EQ(get("/v1/schedule/items/abc/timeline").status, 400);
  const auto order_timeline = get("/v1/orders/" + produced_id + "/timeline");
  EXPECT_EQ(order_timeline.status, 200);
  EXPECT_FALSE(order_timeline.json()["entries"].empty()) << order_timeline.body;
  EXPECT_EQ(get("/v1/orders/999/timeline").status, 404);
  EXPECT_EQ(get("/v1/orders/abc/timeline").status, 400);
  // Refused by the server before any handler, as the shared answer says.
  EXPECT_EQ(post("/v1/source-orders", std::string(1024 * 1024 + 1, ' ')).status, 413);

  // With tokens: who may do what.
  ServerOptions options;
  options.tokens_file = write_tokens("a admin\no operator\nc customer:7\nv viewer\n");
  start_server(options);
  EXPECT_EQ(get("/v1/scopes/S").status, 401);
  EXPECT_EQ(get("/v1/scopes/S", bearer("wrong")).status, 401);
  EXPECT_EQ(get("/v1/scopes/S", bearer("c")).status, 403);
  EXPECT_EQ(get("/v1/scopes/S", bearer("o")).status, 200);
  // A viewer reads what an operator reads and changes nothing.
  EXPECT_EQ(get("/v1/scopes/S", bearer("v")).status, 200);
  EXPECT_EQ(get("/v1/schedule/items", bearer("v")).status, 200);
  EXPECT_EQ(get("/v1/orders", bearer("v")).status, 200);
  EXPECT_EQ(post("/v1/scopes/S/documents", R"({"title": "t"})", bearer("v")).status, 403);
  EXPECT_EQ(post("/v1/maintenance/reap", "", bearer("v")).status, 403);
  EXPECT_EQ(get("/v1/schedule/exhausted", bearer("v")).status, 200);
  EXPECT_EQ(post("/v1/schedule/requeue", requeue_e + "}", bearer("v")).status, 403);
  EXPECT_EQ(post("/v1/schedule/runs/1/stop", "", bearer("v")).status, 403);
  EXPECT_EQ(post("/v1/schedule/requeue", requeue_e + "}", bearer("o")).status, 200);
  EXPECT_EQ(get("/v1/orders/" + order_id, bearer("v")).status, 403);
  EXPECT_EQ(get("/v1/orders/" + order_id, bearer("o")).status, 403);
  EXPECT_EQ(post("/v1/orders/" + order_id + "/cancel", "", bearer("o")).status, 403);
  EXPECT_EQ(get("/v1/orders/" + produced_id, bearer("c")).status, 404);  // customer 8's
  EXPECT_EQ(get("/v1/orders/" + order_id, bearer("c")).status, 200);
  Headers other = openapi_key("o6");
  other.push_back(bearer("c").front());
  EXPECT_EQ(post("/v1/orders", openapi_cart(8, 101, 1), other).status, 403);
  const auto own = get("/v1/orders", bearer("c"));
  EXPECT_EQ(own.status, 200);
  EXPECT_EQ(own.json()["orders"].size(), 1u) << own.body;  // customer 8's is not listed
  EXPECT_EQ(get("/v1/orders?customer_id=8", bearer("c")).status, 403);
  EXPECT_EQ(get("/v1/orders", bearer("o")).status, 200);
  EXPECT_EQ(get("/v1/orders/" + produced_id + "/receipts", bearer("c")).status, 404);
  EXPECT_EQ(get("/v1/scopes", bearer("c")).status, 403);
  EXPECT_EQ(get("/v1/actions", bearer("v")).status, 200);
  EXPECT_EQ(get("/v1/actions", bearer("c")).status, 403);
  EXPECT_EQ(get("/v1/actions").status, 401);
  EXPECT_EQ(get("/v1/stats/activity", bearer("v")).status, 200);
  EXPECT_EQ(get("/v1/stats/activity", bearer("c")).status, 403);
  EXPECT_EQ(get("/v1/stats/activity").status, 401);
  EXPECT_EQ(get("/v1/orders/" + produced_id + "/timeline", bearer("c")).status, 404);
  EXPECT_EQ(get("/v1/orders/" + order_id + "/timeline", bearer("c")).status, 200);
  EXPECT_EQ(get("/v1/orders/" + order_id + "/timeline", bearer("v")).status, 200);
  EXPECT_EQ(get(fmt::format("/v1/schedule/items/{}/timeline", item_id), bearer("v")).status, 200);
  EXPECT_EQ(get(fmt::format("/v1/schedule/items/{}/timeline", item_id), bearer("c")).status, 403);
  EXPECT_EQ(get("/healthz", bearer("wrong")).status, 200);

  // Each operation's own answers were all seen, but the one that needs a server stopping
  // while the run is being created,
  // and a re-queue's request_in_progress (another request holding its key past the deadline).
  EXPECT_EQ(unexercised({"post /v1/schedule/runs 409", "post /v1/schedule/requeue 409"}),
            std::vector<std::string>{});
}

// The checker itself: answers that break the document are caught.
TEST(OpenApiChecker, AnswersThatBreakTheDocumentAreCaught) {
  const json doc = embedded_openapi();
  ASSERT_TRUE(doc.is_object());
  const OpenApiSpec spec(doc);
  HttpResponse r;
  r.status = 200;
  r.headers["content-type"] = "application/json";
  r.body = R"({"status": "ok"})";
  EXPECT_TRUE(spec.check("get", "/healthz", "", {}, r).empty());

  r.body = R"({"status": "ok", "uptime": 1})";
  EXPECT_FALSE(spec.check("get", "/healthz", "", {}, r).empty());  // an undeclared member
  r.body = R"({"status": "ok"})";
  r.status = 201;
  EXPECT_FALSE(spec.check("get", "/healthz", "", {}, r).empty());  // an undeclared status
  r.status = 200;
  r.headers["content-type"] = "text/plain";
  EXPECT_FALSE(spec.check("get", "/healthz", "", {}, r).empty());  // an undeclared media type
  r.headers["content-type"] = "application/json";
  EXPECT_FALSE(spec.check("get", "/healthz?verbose=1", "", {}, r).empty());  // a query parameter
  EXPECT_FALSE(spec.check("get", "/v1/nowhere/at/all/x", "", {}, r).empty());
  r.headers["idempotent-replayed"] = "true";
  EXPECT_FALSE(spec.check("get", "/healthz", "", {}, r).empty());  // an undeclared header

  HttpResponse problem;
  problem.status = 404;
  problem.headers["content-type"] = "application/problem+json";
  problem.body = json{
      {"type", "urn:onceorder:problem:not_found"},
      {"title", "Not found"},
      {"status", 404},
      {"detail", "order 9 does not exist"},
      {"code",
       "not_found"}}.dump();
  EXPECT_TRUE(spec.check("get", "/v1/orders/9", "", {}, problem).empty());
  json wrong_code = json::parse(problem.body);
  wrong_code["code"] = "busy";  // a code this answer does not give
  problem.body = wrong_code.dump();
  EXPECT_FALSE(spec.check("get", "/v1/orders/9", "", {}, problem).empty());

  // An accepted request that breaks the request schema.
  HttpResponse sku;
  sku.status = 201;
  sku.headers["content-type"] = "application/json";
  sku.body = R"({"warehouse_id": 1, "sku_id": 2, "available": 0, "reserved": 0, "price_cents": 1})";
  EXPECT_TRUE(
      spec.check("put", "/v1/warehouses/1/skus/2", R"({"price_cents": 1})", {}, sku).empty());
  EXPECT_FALSE(spec.check("put", "/v1/warehouses/1/skus/2", R"({"price": 1})", {}, sku).empty());
  // Parameters of an accepted request that break their schemas, or a required one missing.
  EXPECT_FALSE(
      spec.check("put", "/v1/warehouses/01/skus/2", R"({"price_cents": 1})", {}, sku).empty());
  HttpResponse runs;
  runs.status = 200;
  runs.headers["content-type"] = "application/json";
  runs.body = R"({"runs": []})";
  EXPECT_TRUE(spec.check("get", "/v1/schedule/runs?limit=1000", "", {}, runs).empty());
  EXPECT_FALSE(spec.check("get", "/v1/schedule/runs?limit=1001", "", {}, runs).empty());
  EXPECT_FALSE(spec.check("get", "/v1/schedule/runs?limit=ten", "", {}, runs).empty());
  HttpResponse order;
  order.status = 201;
  order.headers["content-type"] = "application/json";
  order.body = R"({"order_id": "42", "order_no": "O-1", "status": "placed", "customer_id": 7,
                   "warehouse_id": 1, "lines": [{"line_no": 1, "sku_id": 2, "quantity": 1,
                   "unit_price_cents": 5}], "total_cents": 5, "created_at": "x",
                   "principal": "alice"})";
  const std::string placed = R"({"customer_id": 7, "warehouse_id": 1,
                                 "lines": [{"sku_id": 2, "quantity": 1}]})";
  EXPECT_TRUE(spec.check("post", "/v1/orders", placed, {{"Idempotency-Key", "k"}}, order).empty());
  EXPECT_FALSE(spec.check("post", "/v1/orders", placed, {}, order).empty());
  EXPECT_FALSE(
      spec.check("post", "/v1/orders", placed, {{"Idempotency-Key", "a key"}}, order).empty());
}

// The outbox's routes: the feed (a long poll too), consumers, endpoints and deliveries, each
// for its successes and its own errors. Deliveries are made as the delivery worker makes them,
// with an outcome nobody knows (at_most_once: in doubt; one attempt at_least_once: dead).
TEST_P(OpenApiHttpTest, OutboxOperationsAnswerAsTheDocumentSays) {
  ASSERT_EQ(put("/v1/warehouses/1/skus/101", R"({"price_cents": 10, "available": 100})").status,
            201);
  const std::string hook = R"({"url": "http://127.0.0.1:9/", "secret": "0123456789abcdef", )";
  EXPECT_EQ(put("/v1/endpoints/most", hook + R"("delivery": "at_most_once", "types": )"
                                             R"(["order.placed"], "max_attempts": 1})")
                .status,
            201);
  EXPECT_EQ(put("/v1/endpoints/least", hook + R"("max_attempts": 1, "backoff_seconds": 1})").status,
            201);
  EXPECT_EQ(put("/v1/endpoints/least", hook + R"("max_attempts": 1, "after": "0"})").status, 200);
  EXPECT_EQ(put("/v1/endpoints/least", hook + R"("max_attempts": 0})").status, 400);
  ASSERT_EQ(post("/v1/orders", openapi_cart(7, 101, 1), openapi_key("e1")).status, 201);
  EXPECT_EQ(get("/v1/events?wait=1").status, 200);  // an event: answered at once
  const auto page = get("/v1/events?after=0&limit=1&types=order.placed,run.finished&wait=0");
  ASSERT_EQ(page.status, 200);
  const std::int64_t id = page.json()["events"][0]["id"];
  const std::string head = page.json()["next_after"];
  EXPECT_EQ(get("/v1/events?wait=1&after=" + head).json()["events"].size(), 0u);  // waited
  EXPECT_EQ(get("/v1/events?after=x&limit=0").status, 400);

  Outbox outbox(db());
  const auto soon = [] { return store::Clock::now() + 10s; };
  ASSERT_TRUE(outbox.dispatch(500, soon()).ok());
  auto claims = outbox.claim("openapi", 32, 30s, soon());
  ASSERT_TRUE(claims.ok()) << claims.status().to_string();
  std::vector<DeliveryOutcome> outcomes;
  for (const auto& c : *claims) {
    outcomes.push_back(decide_outcome(c, SendResult::unknown, std::nullopt, "broken", 0.5));
  }
  ASSERT_TRUE(outbox.settle(outcomes, soon()).ok());
  EXPECT_EQ(get("/v1/endpoints/most/deliveries").status, 200);
  EXPECT_EQ(get("/v1/endpoints/least/deliveries?status=dead&after=0&limit=1").status, 200);
  EXPECT_EQ(get("/v1/endpoints/least/deliveries?status=lost").status, 400);
  EXPECT_EQ(get("/v1/endpoints/none/deliveries").status, 404);
  const auto resolve = [&](const std::string& name, std::int64_t event, const char* delivered) {
    return post("/v1/endpoints/" + name + "/resolve",
                fmt::format(R"({{"event_id": {}, "delivered": {}}})", event, delivered));
  };
  EXPECT_EQ(resolve("most", id, "tru").status, 400);
  EXPECT_EQ(resolve("most", id + 999, "true").status, 404);
  EXPECT_EQ(resolve("least", id, "true").status, 409);
  EXPECT_EQ(resolve("most", id, "false").status, 200);
  const auto redeliver = [&](const std::string& name, std::int64_t event) {
    return post("/v1/endpoints/" + name + "/redeliver",
                fmt::format(R"({{"event_ids": [{}]}})", event));
  };
  EXPECT_EQ(post("/v1/endpoints/least/redeliver", R"({"event_ids": []})").status, 400);
  EXPECT_EQ(redeliver("least", id + 999).status, 404);
  EXPECT_EQ(redeliver("most", id).status, 409);
  EXPECT_EQ(redeliver("least", id).status, 200);

  EXPECT_EQ(get("/v1/endpoints").status, 200);
  EXPECT_EQ(get("/v1/endpoints?x=1").status, 400);
  EXPECT_EQ(get("/v1/endpoints/most").status, 200);
  EXPECT_EQ(get("/v1/endpoints/b@d").status, 400);
  EXPECT_EQ(get("/v1/endpoints/none").status, 404);
  EXPECT_EQ(del("/v1/endpoints/most").status, 204);
  EXPECT_EQ(del("/v1/endpoints/most").status, 404);
  EXPECT_EQ(del("/v1/endpoints/b@d").status, 400);
  // The 65th endpoint is refused.
  for (int i = 0; i < EventLimits::kMaxEndpoints - 1; ++i) {
    ASSERT_EQ(client().put(fmt::format("/v1/endpoints/e{}", i), hook + R"("types": []})").status,
              201);
  }
  EXPECT_EQ(put("/v1/endpoints/one-too-many", hook + R"("types": []})").status, 409);

  EXPECT_EQ(put("/v1/consumers/erp", R"({"after": "0"})").status, 201);
  EXPECT_EQ(put("/v1/consumers/erp", json{{"after", head}}.dump()).status, 200);
  EXPECT_EQ(put("/v1/consumers/erp", R"({"after": "9:9:9"})").status, 400);
  EXPECT_EQ(get("/v1/consumers").status, 200);
  EXPECT_EQ(get("/v1/consumers?x=1").status, 400);
  EXPECT_EQ(get("/v1/consumers/erp").status, 200);
  EXPECT_EQ(get("/v1/consumers/b@d").status, 400);
  EXPECT_EQ(get("/v1/consumers/none").status, 404);
  // The 65th consumer is refused.
  for (int i = 0; i < EventLimits::kMaxConsumers - 1; ++i) {
    ASSERT_EQ(client().put(fmt::format("/v1/consumers/c{}", i), R"({"after": "0"})").status, 201);
  }
  EXPECT_EQ(put("/v1/consumers/one-too-many", R"({"after": "0"})").status, 409);
  EXPECT_EQ(del("/v1/consumers/erp").status, 204);
  EXPECT_EQ(del("/v1/consumers/erp").status, 404);
  EXPECT_EQ(del("/v1/consumers/b@d").status, 400);

  EXPECT_EQ(unexercised({}, /*outbox=*/true), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Engines, OpenApiHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
