#include "store/postgres/pg_connection.hpp"

#include <gtest/gtest.h>

namespace onceorder::store::postgres {
namespace {

TEST(PgClassify, SqlstatesMapToCodes) {
  EXPECT_EQ(classify_sqlstate("40P01"), Code::deadlock);
  EXPECT_EQ(classify_sqlstate("55P03"), Code::lock_timeout);
  EXPECT_EQ(classify_sqlstate("40001"), Code::serialization_failure);
  EXPECT_EQ(classify_sqlstate("23505"), Code::unique_violation);
  EXPECT_EQ(classify_sqlstate("23514"), Code::check_violation);
  EXPECT_EQ(classify_sqlstate("23503"), Code::reference_violation);
  EXPECT_EQ(classify_sqlstate("08006"), Code::unavailable);
  EXPECT_EQ(classify_sqlstate("42P01"), Code::internal);
}

// The two guards' codes (migrations 5 and 28): a broken invariant is internal, a batch decided
// ahead on rows that moved is decided again.
TEST(PgClassify, GuardSqlstates) {
  EXPECT_EQ(classify_sqlstate("OO001"), Code::internal);
  EXPECT_EQ(classify_sqlstate("OO002"), Code::retry_transaction);
}

}  // namespace
}  // namespace onceorder::store::postgres
