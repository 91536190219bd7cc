#include "http/json_input.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace onceorder::http {
namespace {

TEST(ParseObject, AcceptsOnlyOneObject) {
  EXPECT_TRUE(parse_object(R"({"a": 1})").ok());
  EXPECT_TRUE(parse_object(R"(  {}  )").ok());
  EXPECT_EQ(parse_object("").status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object("{").status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object(R"({"a": 1} x)").status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object("{\"a\": \"\xc3\"}").status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object("[]").status().code(), Code::invalid_request);
  EXPECT_EQ(parse_object("1").status().code(), Code::invalid_request);
  EXPECT_EQ(parse_object("null").status().code(), Code::invalid_request);
}

// Found by fuzz/json_body_fuzz: the JSON lexer stopped at a NUL byte, so whatever followed
// it (garbage, invalid UTF-8, a second object) was accepted unread.
TEST(ParseObject, RejectsNulBytes) {
  using namespace std::string_literals;
  EXPECT_EQ(parse_object("{}\0"s).status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object("{}\0garbage \xff"s).status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object("{\"a\":1}\0{\"a\":2}"s).status().code(), Code::invalid_json);
  EXPECT_EQ(parse_object("{\"a\":\"x\0y\"}"s).status().code(), Code::invalid_json);
  EXPECT_TRUE(parse_object(R"({"a":"x\u0000y"})").ok());  // escaped: FieldReader refuses it
}

TEST(ParseObject, RejectsRepeatedMembers) {
  auto r = parse_object(R"({"a": 1, "b": {"a": 2}, "a": 3})");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.status().fields().size(), 1u);
  EXPECT_EQ(r.status().fields()[0].field, "a");
  EXPECT_TRUE(parse_object(R"({"a": {"a": {"a": 1}}})").ok());
}

TEST(ParseObject, RejectsDeepNesting) {
  std::string deep = "{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_EQ(parse_object(deep).status().code(), Code::invalid_request);
  std::string huge(200000, '[');
  EXPECT_FALSE(parse_object(huge).ok());
}

TEST(FieldReader, IntegersAreExact) {
  auto body = parse_object(
      R"({"i": 4, "f": 4.0, "e": 1e3, "s": "4", "b": true, "n": null, "neg": -5,
          "big": 9223372036854775807, "huge": 9223372036854775808})");
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(r.integer("i", 1, 10), 4);
  EXPECT_EQ(r.integer("f", 1, 10), std::nullopt);
  EXPECT_EQ(r.integer("e", 1, 10000), std::nullopt);
  EXPECT_EQ(r.integer("s", 1, 10), std::nullopt);
  EXPECT_EQ(r.integer("b", 0, 10), std::nullopt);
  EXPECT_EQ(r.integer("n", 0, 10), std::nullopt);
  EXPECT_EQ(r.integer("neg", 0, 10), std::nullopt);
  EXPECT_EQ(r.integer("big", 1, kMax), kMax);
  EXPECT_EQ(r.integer("huge", 1, kMax), std::nullopt);
  EXPECT_EQ(r.integer("absent", 1, 10), std::nullopt);
  Status st = r.finish();
  ASSERT_EQ(st.code(), Code::invalid_request);
  std::vector<std::string> fields;
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"f", "e", "s", "b", "n", "neg", "huge"}));
}

TEST(FieldReader, RequiredStringsAndUnknownMembers) {
  auto body = parse_object(R"({"title": 1, "extra": "x"})");
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  EXPECT_EQ(r.string("title", true), std::nullopt);
  EXPECT_EQ(r.string("name", true), std::nullopt);
  Status st = r.finish();
  ASSERT_EQ(st.fields().size(), 3u);
  EXPECT_EQ(st.fields()[0].field, "title");
  EXPECT_EQ(st.fields()[1].field, "name");
  EXPECT_EQ(st.fields()[1].message, "is required");
  EXPECT_EQ(st.fields()[2].field, "extra");

  auto ok_body = parse_object(R"({"title": "x"})");
  FieldReader ok(*ok_body);
  EXPECT_EQ(ok.string("title", true), "x");
  EXPECT_TRUE(ok.finish().ok());
}

TEST(FieldReader, BooleansAreTrueOrFalseOnly) {
  auto body = parse_object(R"({"yes": true, "no": false, "one": 1, "text": "true"})");
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  EXPECT_TRUE(r.boolean("yes", false));
  EXPECT_FALSE(r.boolean("no", true));
  EXPECT_TRUE(r.boolean("absent", true));
  EXPECT_FALSE(r.boolean("one", false));
  EXPECT_FALSE(r.boolean("text", false));
  Status st = r.finish();
  ASSERT_EQ(st.fields().size(), 2u);
  EXPECT_EQ(st.fields()[0].field, "one");
  EXPECT_EQ(st.fields()[0].message, "must be true or false");
  EXPECT_EQ(st.fields()[1].field, "text");
}

// Issue 8: a NUL cut strings short on PostgreSQL. Every string read is UTF-8 text without
// control characters (JSON escapes can spell them even in a valid UTF-8 body).
TEST(FieldReader, StringsAreTextWithoutControlCharacters) {
  auto body = parse_object(R"({"a": "x\u0000y", "b": "\u0001", "c": "tab\there", "d": "\u007f",
                               "ok": "caf\u00e9 \ud83d\ude00"})");
  ASSERT_TRUE(body.ok()) << body.status().to_string();
  FieldReader r(*body);
  for (const char* name : {"a", "b", "c", "d"}) EXPECT_EQ(r.string(name), std::nullopt) << name;
  EXPECT_EQ(r.string("ok"), "caf\u00e9 \U0001F600");
  Status st = r.finish();
  std::vector<std::string> fields;
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(FieldReader, ArraysOfObjectsNameTheirElements) {
  auto body = parse_object(
      R"({"lines": [{"sku_id": 1, "quantity": 2}, 5, {"sku_id": "x", "qty": 1}], "n": 5})");
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  std::vector<std::int64_t> skus;
  EXPECT_TRUE(r.objects("lines", true, [&](FieldReader& line, size_t) {
    skus.push_back(line.integer("sku_id", 1, 10, true).value_or(0));
    line.integer("quantity", 1, 10, true);
  }));
  EXPECT_EQ(skus, (std::vector<std::int64_t>{1, 0}));
  EXPECT_FALSE(r.objects("absent", true, [](FieldReader&, size_t) {}));
  EXPECT_FALSE(r.objects("n", false, [](FieldReader&, size_t) {}));
  EXPECT_TRUE(r.has_error("lines[2].sku_id"));
  r.add_new_errors({{"lines[2].sku_id", "again"}, {"lines", "too many"}});
  const Status st = r.finish();
  std::vector<std::string> fields;
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"lines[1]", "lines[2].sku_id", "lines[2].quantity",
                                              "lines[2].qty", "absent", "n", "lines"}));
}

TEST(FieldReader, ErrorsAreCapped) {
  std::string many = "{\"lines\": [";
  for (int i = 0; i < 500; ++i) many += i == 0 ? "1" : ",1";
  many += "]}";
  auto body = parse_object(many);
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  r.objects("lines", true, [](FieldReader&, size_t) {});
  Status st = r.finish();
  EXPECT_EQ(st.fields().size(), FieldReader::kMaxFieldErrors);
  EXPECT_NE(st.message().find("450 more"), std::string::npos) << st.message();
}

// Arrays of strings (an endpoint's types) and of ids (a redeliver's event_ids): each element
// checked, each bad one named by its index, the array's own bounds named by the member.
TEST(FieldReader, ArraysCheckEachElement) {
  auto body = parse_object(
      R"({"t": ["a", "b"], "bad": ["a", 1, "x\u0001"], "many": ["a", "b", "c"], "one": "a",
          "ids": [1, 2], "zero": [], "mixed": [1, 0, 2.0, "3"], "long": [1, 2, 3]})");
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  EXPECT_EQ(r.strings("t", 2), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.strings("bad", 5), std::nullopt);
  EXPECT_EQ(r.strings("many", 2), std::nullopt);
  EXPECT_EQ(r.strings("one", 2), std::nullopt);
  EXPECT_EQ(r.strings("absent", 2), std::nullopt);
  EXPECT_EQ(r.strings("required", 2, true), std::nullopt);
  EXPECT_EQ(r.integers("ids", 1, 10, 5), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(r.integers("zero", 1, 10, 5), std::nullopt);
  EXPECT_EQ(r.integers("mixed", 1, 10, 5), std::nullopt);
  EXPECT_EQ(r.integers("long", 1, 10, 2), std::nullopt);
  EXPECT_EQ(r.integers("gone", 1, 10, 2, true), std::nullopt);
  std::vector<std::string> fields;
  const Status st = r.finish();
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"bad[1]", "bad[2]", "many", "one", "required", "zero",
                                              "mixed[1]", "mixed[2]", "mixed[3]", "long", "gone"}));
}

TEST(FieldReader, ARequiredBooleanMustBeSent) {
  auto body = parse_object(R"({"yes": true, "no": 0})");
  ASSERT_TRUE(body.ok());
  FieldReader r(*body);
  EXPECT_TRUE(r.boolean("yes", false, true));
  EXPECT_FALSE(r.boolean("no", false, true));
  EXPECT_TRUE(r.boolean("absent", true));  // optional: the fallback, no error
  EXPECT_FALSE(r.boolean("missing", false, true));
  std::vector<std::string> fields;
  const Status st = r.finish();
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"no", "missing"}));
}

}  // namespace
}  // namespace onceorder::http
