// docs/openapi.json shows what every request and answer looks like: each operation's request
// body and each of its answers (its own, and the shared ones it refers to) carries an example
// for every media type but the binary ones (the favicons), and each example validates against
// its schema with the tests' validator (json_schema.hpp). scripts/openapi-examples makes the
// missing ones from real exchanges of OpenApiHttpTest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "e2e/json_schema.hpp"
#include "e2e/openapi_spec.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

bool binary_media(const std::string& media) {
  return media == "image/png" || media == "image/x-icon";
}

// Every problem with the examples of one request body or answer (`where` names it).
std::vector<std::string> example_problems(const SchemaValidator& validator, const json& part,
                                          const std::string& where) {
  std::vector<std::string> out;
  // Copies: items() of a temporary would outlive it.
  const json contents = part.value("content", json::object());
  for (const auto& [media, content] : contents.items()) {
    if (binary_media(media)) continue;
    std::vector<json> examples;
    if (content.contains("example")) examples.push_back(content["example"]);
    const json named = content.value("examples", json::object());
    for (const auto& [_, e] : named.items()) examples.push_back(e.value("value", json()));
    if (examples.empty()) out.push_back(where + " " + media + ": no example");
    if (!content.contains("schema")) continue;
    for (const json& e : examples) {
      for (const std::string& error : validator.validate(e, content["schema"]))
        out.push_back(where + " " + media + ": the example breaks its schema: " + error);
    }
  }
  return out;
}

// Every problem of `doc`'s examples.
std::vector<std::string> all_example_problems(const json& doc) {
  const SchemaValidator validator(doc);
  std::vector<std::string> out;
  auto add = [&](const std::vector<std::string>& more) {
    out.insert(out.end(), more.begin(), more.end());
  };
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const std::string_view method : kOpenApiMethods) {
      if (!item.contains(method)) continue;
      const json& op = item[std::string(method)];
      const std::string label = std::string(method) + " " + path;
      if (op.contains("requestBody")) add(example_problems(validator, op["requestBody"], label));
      for (const auto& [status, response] : op["responses"].items()) {
        if (!response.contains("$ref"))
          add(example_problems(validator, response, label + " " + status));
      }
    }
  }
  for (const auto& [name, response] : doc["components"]["responses"].items())
    add(example_problems(validator, response, "components/responses/" + name));
  return out;
}

TEST(OpenApiExamples, EveryRequestAndAnswerHasAnExampleThatFitsItsSchema) {
  const json doc = embedded_openapi();
  ASSERT_TRUE(doc.is_object());
  const auto problems = all_example_problems(doc);
  EXPECT_TRUE(problems.empty()) << json(problems).dump(1);
}

// The check finds an example missing and one that breaks its schema.
TEST(OpenApiExamples, TheCheckCatchesAMissingAndAWrongExample) {
  json doc = embedded_openapi();
  ASSERT_TRUE(doc.is_object());
  json& ok = doc["paths"]["/v1/orders/{order_id}"]["get"]["responses"]["200"]["content"]
                ["application/json"];
  ok.erase("example");
  json& body = doc["paths"]["/v1/orders"]["post"]["requestBody"]["content"]["application/json"];
  body["example"] = {{"customer_id", "seven"}};
  const auto problems = all_example_problems(doc);
  // The wrong example breaks three rules (two members missing, one of the wrong type).
  ASSERT_EQ(problems.size(), 4u) << json(problems).dump(1);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(problems[i].rfind("post /v1/orders application/json: the example breaks", 0), 0u)
        << problems[i];
  }
  EXPECT_NE(problems[2].find("/customer_id"), std::string::npos) << problems[2];
  EXPECT_EQ(problems[3], "get /v1/orders/{order_id} 200 application/json: no example");
}

}  // namespace
}  // namespace onceorder::testing
