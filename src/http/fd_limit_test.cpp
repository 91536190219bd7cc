#include "http/fd_limit.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

TEST(FdLimit, CapKeepsHeadroomBelowTheLimit) {
  EXPECT_EQ(connection_cap(1024, 1048576, 100), 1024);
  EXPECT_EQ(connection_cap(1024, 1024, 100), 924);
  EXPECT_EQ(connection_cap(1024, 256, 100), 156);
  EXPECT_EQ(connection_cap(1024, 50, 100), 1);
}

TEST(FdLimit, RaisingNeverLowers) {
  const auto first = raise_open_file_limit();
  EXPECT_GE(raise_open_file_limit(), first);
}

}  // namespace
}  // namespace onceorder::http
