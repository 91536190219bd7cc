#include "http/request_input.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace onceorder::http {
namespace {

constexpr auto kMax = std::numeric_limits<std::int64_t>::max();

TEST(ParseId, OnlyCanonicalPositiveDecimals) {
  EXPECT_EQ(parse_id("1"), 1);
  EXPECT_EQ(parse_id("9223372036854775807"), kMax);
  for (std::string_view bad : {"", "0", "01", "00", "-1", "+1", "1.0", "1e3", " 1", "1 ", "0x10",
                               "9223372036854775808", "99999999999999999999"}) {
    EXPECT_EQ(parse_id(bad), std::nullopt) << bad;
  }
}

TEST(ParseInt, BoundsAndDigits) {
  EXPECT_EQ(parse_int("0", 0, 10), 0);
  EXPECT_EQ(parse_int("010", 0, 10), 10);
  EXPECT_EQ(parse_int("11", 0, 10), std::nullopt);
  EXPECT_EQ(parse_int("-1", -5, 10), std::nullopt);
  EXPECT_EQ(parse_int("", 0, 10), std::nullopt);
}

TEST(PathIds, NamesEveryBadId) {
  std::vector<FieldError> errors;
  EXPECT_EQ(path_ids({"1", "2"}, {"a", "b"}, errors), (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(errors.empty());
  path_ids({"0", "x"}, {"a", "b"}, errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "a");
  EXPECT_EQ(errors[1].field, "b");
}

TEST(QueryReader, ReadsKnownAndReportsUnknown) {
  auto q = QueryReader::parse("/x?limit=5&status=done&wait=false&n=7&extra=1");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->limit(), 5);
  EXPECT_EQ(q->string("status", 16), "done");
  EXPECT_EQ(q->string("absent", 16), std::nullopt);
  EXPECT_FALSE(q->boolean("wait", true));
  EXPECT_EQ(q->integer("n", 1, 10), 7);
  Status st = q->finish();
  ASSERT_EQ(st.code(), Code::invalid_request);
  ASSERT_EQ(st.fields().size(), 1u);
  EXPECT_EQ(st.fields()[0].field, "extra");
}

TEST(QueryReader, BadValuesAreFieldErrors) {
  auto q = QueryReader::parse("/x?limit=0&wait=yes&s=&n=1.5");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->limit(), 100);
  EXPECT_TRUE(q->boolean("wait", true));
  EXPECT_EQ(q->string("s", 4), std::nullopt);
  EXPECT_EQ(q->integer("n", 0, 10), std::nullopt);
  const Status st = q->finish();
  std::vector<std::string> fields;
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"limit", "wait", "s", "n"}));

  auto defaults = QueryReader::parse("/x");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->limit(), 100);
  EXPECT_TRUE(defaults->finish().ok());
  EXPECT_FALSE(QueryReader::parse("/x?a=%zz").ok());
}

TEST(IdempotencyKey, AbsentValidOrFieldError) {
  Request req;
  std::vector<FieldError> errors;
  EXPECT_EQ(idempotency_key(req, errors), std::nullopt);
  EXPECT_TRUE(errors.empty());
  req.set("Idempotency-Key", "abc-1");
  EXPECT_EQ(idempotency_key(req, errors), "abc-1");
  EXPECT_TRUE(errors.empty());
  req.set("Idempotency-Key", "a b");
  EXPECT_EQ(idempotency_key(req, errors), std::nullopt);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "Idempotency-Key");
  req.insert("Idempotency-Key", "second");
  errors.clear();
  EXPECT_EQ(idempotency_key(req, errors), std::nullopt);
  EXPECT_EQ(errors.size(), 1u);
}

TEST(EmptyBody, NothingOrAnEmptyObject) {
  Request req;
  EXPECT_TRUE(empty_body(req).ok());
  req.body() = "{}";
  EXPECT_TRUE(empty_body(req).ok());
  req.body() = R"({"a": 1})";
  EXPECT_EQ(empty_body(req).code(), Code::invalid_request);
  req.body() = "[]";
  EXPECT_EQ(empty_body(req).code(), Code::invalid_request);
  req.body() = "{";
  EXPECT_EQ(empty_body(req).code(), Code::invalid_json);
}

// Issue 8: `%FF` was a 500 on PostgreSQL and `%00` cut a filter short. Every parameter is
// checked once, where the query is read: the value's field is named, nothing else read.
TEST(QueryReader, ParametersAreTextWithoutControlCharacters) {
  auto q = QueryReader::parse("/x?a=%FF&b=N%00x&c=%C3%28&d=%0A&ok=%C3%A9&n=5");
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  for (const char* name : {"a", "b", "c"}) EXPECT_EQ(q->string(name, 64), std::nullopt) << name;
  EXPECT_EQ(q->integer("d", 0, 10), std::nullopt);
  EXPECT_EQ(q->string("ok", 64), "\u00e9");
  EXPECT_EQ(q->integer("n", 0, 10), 5);
  Status st = q->finish();
  std::vector<std::string> fields;
  for (const auto& f : st.fields()) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"a", "b", "c", "d"}));
  // A name that is not text cannot be named back in an answer: the query is refused.
  EXPECT_EQ(QueryReader::parse("/x?%FF=1").status().code(), Code::invalid_request);
  EXPECT_EQ(QueryReader::parse("/x?a%00=1").status().code(), Code::invalid_request);
}

}  // namespace
}  // namespace onceorder::http
