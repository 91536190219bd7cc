#include "onceorder/core/duration.hpp"

#include <gtest/gtest.h>

namespace onceorder {
namespace {

TEST(Duration, Parses) {
  using std::chrono::milliseconds;
  EXPECT_EQ(*parse_duration("4h"), milliseconds(4 * 3600000));
  EXPECT_EQ(*parse_duration("60s"), milliseconds(60000));
  EXPECT_EQ(*parse_duration("5m"), milliseconds(300000));
  EXPECT_EQ(*parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(*parse_duration("1h30m"), milliseconds(5400000));
  EXPECT_EQ(*parse_duration("30d"), milliseconds(30LL * 86400000));
  for (const char* bad : {"", "5", "m", "-5s", "5w", "0s", "1.5h", "5 s", "d"})
    EXPECT_FALSE(parse_duration(bad).ok()) << bad;
}

}  // namespace
}  // namespace onceorder
