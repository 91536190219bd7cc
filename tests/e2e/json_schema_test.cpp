// The tests' JSON Schema validator (json_schema.hpp), which http_openapi_test.cpp holds the
// server's answers to: each keyword accepts what it should and rejects what it should, so that
// an answer passing it means something.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/json_schema.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

// The root the schemas below refer into.
const json& schema_root() {
  static const json root = json::parse(R"({
    "components": {"schemas": {
      "Line": {"type": "object", "properties": {"sku_id": {"type": "integer", "minimum": 1},
               "quantity": {"type": "integer", "minimum": 1, "maximum": 1000000}},
               "required": ["sku_id", "quantity"], "additionalProperties": false},
      "Tree": {"type": "object", "properties": {"children": {"type": "array",
               "items": {"$ref": "#/components/schemas/Tree"}}}, "additionalProperties": false},
      "Loop": {"$ref": "#/components/schemas/Loop"},
      "a~b/c": {"const": 1}
    }}})");
  return root;
}

bool valid(const std::string& value, const std::string& schema) {
  return SchemaValidator(schema_root()).validate(json::parse(value), json::parse(schema)).empty();
}

TEST(JsonSchema, TypesTellIntegersFromNumbers) {
  EXPECT_TRUE(valid("1", R"({"type": "integer"})"));
  EXPECT_TRUE(valid("-9223372036854775808", R"({"type": "integer"})"));
  EXPECT_TRUE(valid("18446744073709551615", R"({"type": "integer"})"));
  EXPECT_FALSE(valid("1.0", R"({"type": "integer"})"));
  EXPECT_FALSE(valid("1.5", R"({"type": "integer"})"));
  EXPECT_FALSE(valid(R"("1")", R"({"type": "integer"})"));
  EXPECT_TRUE(valid("1.5", R"({"type": "number"})"));
  EXPECT_TRUE(valid("1", R"({"type": "number"})"));
  EXPECT_FALSE(valid("true", R"({"type": "number"})"));
  EXPECT_TRUE(valid("true", R"({"type": "boolean"})"));
  EXPECT_FALSE(valid("0", R"({"type": "boolean"})"));
  EXPECT_TRUE(valid("null", R"({"type": "null"})"));
  EXPECT_FALSE(valid("{}", R"({"type": "array"})"));
  EXPECT_FALSE(valid("[]", R"({"type": "object"})"));
  EXPECT_FALSE(valid("null", R"({"type": "string"})"));
}

TEST(JsonSchema, ATypeListMakesAValueNullable) {
  const std::string nullable = R"({"type": ["integer", "null"], "minimum": 1})";
  EXPECT_TRUE(valid("null", nullable));
  EXPECT_TRUE(valid("3", nullable));
  EXPECT_FALSE(valid("0", nullable));
  EXPECT_FALSE(valid(R"("3")", nullable));
}

TEST(JsonSchema, EnumAndConst) {
  EXPECT_TRUE(valid(R"("placed")", R"({"enum": ["placed", "cancelled"]})"));
  EXPECT_FALSE(valid(R"("shipped")", R"({"enum": ["placed", "cancelled"]})"));
  EXPECT_TRUE(valid("409", R"({"const": 409})"));
  EXPECT_FALSE(valid("410", R"({"const": 409})"));
  EXPECT_FALSE(valid(R"("409")", R"({"const": 409})"));
}

TEST(JsonSchema, ObjectsCheckTheirMembers) {
  const std::string line = R"({"$ref": "#/components/schemas/Line"})";
  EXPECT_TRUE(valid(R"({"sku_id": 1, "quantity": 2})", line));
  EXPECT_FALSE(valid(R"({"sku_id": 1})", line));                              // required
  EXPECT_FALSE(valid(R"({"sku_id": 1, "quantity": 2, "note": "x"})", line));  // additional
  EXPECT_FALSE(valid(R"({"sku_id": 0, "quantity": 2})", line));               // a member's minimum
  EXPECT_FALSE(valid(R"({"sku_id": 1, "quantity": 1000001})", line));         // a member's maximum
  EXPECT_TRUE(valid(R"({"a": 1, "b": 2})", R"({"additionalProperties": {"type": "integer"}})"));
  EXPECT_FALSE(valid(R"({"a": 1, "b": "2"})", R"({"additionalProperties": {"type": "integer"}})"));
  EXPECT_TRUE(valid("{}", R"({"maxProperties": 0})"));
  EXPECT_FALSE(valid(R"({"a": 1})", R"({"maxProperties": 0})"));
  EXPECT_FALSE(valid("{}", R"({"minProperties": 1})"));
}

TEST(JsonSchema, ArraysCheckEveryItem) {
  const std::string lines = R"({"type": "array", "minItems": 1, "maxItems": 2,
                                "items": {"$ref": "#/components/schemas/Line"}})";
  EXPECT_TRUE(valid(R"([{"sku_id": 1, "quantity": 1}])", lines));
  EXPECT_FALSE(valid("[]", lines));
  EXPECT_FALSE(valid(R"([{"sku_id": 1, "quantity": 1}, {"sku_id": 2, "quantity": 1},
                         {"sku_id": 3, "quantity": 1}])",
                     lines));
  const auto errors = SchemaValidator(schema_root())
                          .validate(json::parse(R"([{"sku_id": 1, "quantity": 1}, {"sku_id": 2}])"),
                                    json::parse(lines));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "/1: missing member \"quantity\"");
}

TEST(JsonSchema, StringsCountCodePointsAndMatchPatterns) {
  EXPECT_TRUE(valid(R"("é")", R"({"maxLength": 1})"));  // two bytes, one character
  EXPECT_FALSE(valid(R"("éé")", R"({"maxLength": 1})"));
  EXPECT_FALSE(valid(R"("")", R"({"minLength": 1})"));
  EXPECT_TRUE(valid(R"("42")", R"({"pattern": "^[1-9][0-9]*$"})"));
  EXPECT_FALSE(valid(R"("042")", R"({"pattern": "^[1-9][0-9]*$"})"));
  EXPECT_TRUE(valid(R"("xx42")", R"({"pattern": "[0-9]"})"));  // unanchored
  // Length and pattern apply to strings only.
  EXPECT_TRUE(valid("12345", R"({"maxLength": 1, "pattern": "^a$"})"));
}

TEST(JsonSchema, BoundsAreExactAcrossThe64BitRange) {
  const std::string id = R"({"type": "integer", "minimum": 1, "maximum": 9223372036854775807})";
  EXPECT_TRUE(valid("9223372036854775807", id));
  EXPECT_FALSE(valid("9223372036854775808", id));
  EXPECT_FALSE(valid("-1", id));
  EXPECT_TRUE(valid("-1000000000000", R"({"minimum": -1000000000000})"));
  EXPECT_FALSE(valid("-1000000000001", R"({"minimum": -1000000000000})"));
  EXPECT_FALSE(valid("5", R"({"exclusiveMaximum": 5})"));
  EXPECT_TRUE(valid("4.5", R"({"exclusiveMaximum": 5})"));
  EXPECT_FALSE(valid("0", R"({"exclusiveMinimum": 0})"));
}

TEST(JsonSchema, Combinations) {
  const std::string one_of =
      R"({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]})";
  EXPECT_TRUE(valid("-1", one_of));       // the integer branch only
  EXPECT_TRUE(valid("0.5", one_of));      // the number branch only
  EXPECT_FALSE(valid("1", one_of));       // both
  EXPECT_FALSE(valid(R"("1")", one_of));  // neither
  const std::string any_of =
      R"({"anyOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]})";
  EXPECT_TRUE(valid("1", any_of));
  EXPECT_FALSE(valid("-0.5", any_of));
  const std::string all_of = R"({"allOf": [{"type": "integer"}, {"minimum": 10}]})";
  EXPECT_TRUE(valid("10", all_of));
  EXPECT_FALSE(valid("9", all_of));
  EXPECT_FALSE(valid("10.5", all_of));
  EXPECT_TRUE(valid("1", R"({"not": {"const": 0}})"));
  EXPECT_FALSE(valid("0", R"({"not": {"const": 0}})"));
  EXPECT_FALSE(valid("1", R"(false)"));
  EXPECT_TRUE(valid("1", R"(true)"));
}

TEST(JsonSchema, ReferencesResolveRecursivelyAndBrokenOnesAreReported) {
  const std::string tree = R"({"$ref": "#/components/schemas/Tree"})";
  EXPECT_TRUE(valid(R"({"children": [{"children": []}, {}]})", tree));
  EXPECT_FALSE(valid(R"({"children": [{"children": [{"leaf": 1}]}]})", tree));
  EXPECT_TRUE(valid("1", R"({"$ref": "#/components/schemas/a~0b~1c"})"));
  EXPECT_FALSE(valid("2", R"({"$ref": "#/components/schemas/a~0b~1c"})"));

  const SchemaValidator v(schema_root());
  const auto missing = v.validate(json(1), json::parse(R"({"$ref": "#/components/schemas/Nope"})"));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("unresolvable $ref"), std::string::npos) << missing[0];
  const auto loop = v.validate(json(1), json::parse(R"({"$ref": "#/components/schemas/Loop"})"));
  ASSERT_FALSE(loop.empty());
  EXPECT_NE(loop[0].find("too deep"), std::string::npos) << loop[0];
}

TEST(JsonSchema, UnknownKeywordsAreReportedNotSkipped) {
  EXPECT_FALSE(valid("1", R"({"multipleOf": 2})"));
  EXPECT_TRUE(valid("1", R"({"description": "d", "format": "int64", "title": "t"})"));
  EXPECT_EQ(SchemaValidator::unsupported_keywords(json::parse(
                R"({"type": "object", "properties": {"a": {"items": {"uniqueItems": true}}},
                    "allOf": [{"dependentRequired": {}}], "format": "x"})")),
            (std::vector<std::string>{"dependentRequired", "uniqueItems"}));
}

}  // namespace
}  // namespace onceorder::testing
