#include "onceorder/core/status.hpp"

#include <gtest/gtest.h>

namespace onceorder {
namespace {

TEST(Status, RetryableCodesAreTheTransientOnes) {
  EXPECT_TRUE(is_retryable(Code::deadlock));
  EXPECT_TRUE(is_retryable(Code::lock_timeout));
  EXPECT_TRUE(is_retryable(Code::serialization_failure));
  EXPECT_TRUE(is_retryable(Code::retry_transaction));
  // A lock timeout is never an answer like "out of stock": but a unique violation or a
  // busy pool is not retried blindly either.
  EXPECT_FALSE(is_retryable(Code::unique_violation));
  EXPECT_FALSE(is_retryable(Code::busy));
  EXPECT_FALSE(is_retryable(Code::scope_exhausted));
}

TEST(Status, CodeNamesAreSnakeCase) {
  EXPECT_EQ(code_name(Code::scope_exhausted), "scope_exhausted");
  EXPECT_EQ(code_name(Code::idempotency_key_reused), "idempotency_key_reused");
  Status st(Code::invalid_request, "bad", {{"title", "must not be empty"}});
  EXPECT_EQ(st.to_string(), "invalid_request: bad; title: must not be empty");
}

TEST(Result, CarriesValueOrStatus) {
  Result<int> ok = 3;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  Result<int> bad = Status(Code::not_found, "x");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::not_found);
}

}  // namespace
}  // namespace onceorder
