#include "http/problem.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace onceorder::http {
namespace {

TEST(Problem, StatusForEveryCode) {
  EXPECT_EQ(http_status(Code::invalid_request), bhttp::status::bad_request);
  EXPECT_EQ(http_status(Code::invalid_json), bhttp::status::bad_request);
  EXPECT_EQ(http_status(Code::missing_idempotency_key), bhttp::status::bad_request);
  EXPECT_EQ(http_status(Code::unauthorized), bhttp::status::unauthorized);
  EXPECT_EQ(http_status(Code::forbidden), bhttp::status::forbidden);
  EXPECT_EQ(http_status(Code::not_found), bhttp::status::not_found);
  EXPECT_EQ(http_status(Code::method_not_allowed), bhttp::status::method_not_allowed);
  EXPECT_EQ(http_status(Code::payload_too_large), bhttp::status::payload_too_large);
  EXPECT_EQ(http_status(Code::idempotency_key_reused), bhttp::status::unprocessable_entity);
  for (Code c :
       {Code::scope_exhausted, Code::scope_conflict, Code::request_in_progress, Code::conflict}) {
    EXPECT_EQ(http_status(c), bhttp::status::conflict) << code_name(c);
  }
  EXPECT_EQ(http_status(Code::busy), bhttp::status::service_unavailable);
  EXPECT_EQ(http_status(Code::unavailable), bhttp::status::service_unavailable);
  for (Code c : {Code::internal, Code::deadlock, Code::lock_timeout, Code::serialization_failure,
                 Code::retry_transaction, Code::rolled_back, Code::unique_violation,
                 Code::check_violation, Code::reference_violation}) {
    EXPECT_EQ(http_status(c), bhttp::status::internal_server_error) << code_name(c);
  }
}

TEST(Problem, BodyCarriesCodeAndFieldErrors) {
  const auto body = problem_json(Status(Code::invalid_request, "invalid request",
                                        {{"title", "is required"}, {"width", "too big"}}));
  EXPECT_EQ(body["status"], 400);
  EXPECT_EQ(body["code"], "invalid_request");
  EXPECT_EQ(body["detail"], "invalid request");
  EXPECT_FALSE(body["type"].get<std::string>().empty());
  EXPECT_FALSE(body["title"].get<std::string>().empty());
  ASSERT_EQ(body["errors"].size(), 2u);
  EXPECT_EQ(body["errors"][1]["field"], "width");
  EXPECT_EQ(body["errors"][1]["message"], "too big");
  EXPECT_FALSE(problem_json(Status(Code::not_found, "x")).contains("errors"));
}

// Every code a client can be answered with has a title of its own; only server-side failures
// are titled as one (an out_of_stock once said "Internal server error").
TEST(Problem, EveryClientCodeHasItsOwnTitle) {
  const auto title_of = [](Code c) {
    return problem_json(Status(c, "x"))["title"].get<std::string>();
  };
  const std::string server_title = title_of(Code::internal);
  std::set<std::string> seen;
  for (int i = static_cast<int>(Code::invalid_request); i <= static_cast<int>(Code::unavailable);
       ++i) {
    const Code c = static_cast<Code>(i);
    const std::string title = title_of(c);
    EXPECT_NE(title, server_title) << code_name(c);
    EXPECT_TRUE(seen.insert(title).second) << code_name(c) << " shares its title: " << title;
  }
}

TEST(Problem, InternalErrorsDoNotLeak) {
  const auto body =
      problem_json(Status(Code::unique_violation, "duplicate key in documents_pkey"), "ref-1");
  EXPECT_EQ(body["status"], 500);
  EXPECT_EQ(body["code"], "internal");
  EXPECT_EQ(body["detail"].get<std::string>().find("documents_pkey"), std::string::npos);
  EXPECT_NE(body["detail"].get<std::string>().find("ref-1"), std::string::npos);
}

TEST(Problem, UnavailableAndBusyDoNotLeakTheDatabasesText) {
  const std::string libpq =
      "cannot connect to PostgreSQL: connection to server at \"10.1.2.3\", port 5433 failed";
  for (Code c : {Code::unavailable, Code::busy}) {
    const auto body = problem_json(Status(c, libpq), "ref-2");
    EXPECT_EQ(body["status"], 503);
    EXPECT_EQ(body["code"], code_name(c));
    const auto detail = body["detail"].get<std::string>();
    EXPECT_EQ(detail.find("10.1.2.3"), std::string::npos) << detail;
    EXPECT_EQ(detail.find("5433"), std::string::npos) << detail;
    EXPECT_EQ(detail.find("PostgreSQL"), std::string::npos) << detail;
    EXPECT_NE(detail.find("ref-2"), std::string::npos) << detail;
  }
}

TEST(Problem, BusyHasRetryAfter) {
  const Response res = problem_response(Status(Code::busy, "busy"));
  EXPECT_EQ(res.result(), bhttp::status::service_unavailable);
  EXPECT_EQ(res[bhttp::field::retry_after], "1");
  EXPECT_EQ(res[bhttp::field::content_type], "application/problem+json");
}

}  // namespace
}  // namespace onceorder::http
