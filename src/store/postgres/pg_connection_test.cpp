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

}  // namespace
}  // namespace onceorder::store::postgres
