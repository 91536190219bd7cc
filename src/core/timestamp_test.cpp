#include "onceorder/core/timestamp.hpp"

#include <gtest/gtest.h>

namespace onceorder {
namespace {

TEST(Timestamp, NormalizesToUtc) {
  EXPECT_EQ(*normalize_iso8601("2024-03-01T08:30:00Z"), "2024-03-01T08:30:00.000Z");
  EXPECT_EQ(*normalize_iso8601("2024-03-01 08:30"), "2024-03-01T08:30:00.000Z");
  EXPECT_EQ(*normalize_iso8601("2024-03-01T08:30:15.5+08:00"), "2024-03-01T00:30:15.500Z");
  EXPECT_EQ(*normalize_iso8601("2024-03-01T01:00:00+0200"), "2024-02-29T23:00:00.000Z");
  EXPECT_EQ(*normalize_iso8601("2023-12-31T23:30:00-01:00"), "2024-01-01T00:30:00.000Z");
  EXPECT_EQ(*normalize_iso8601("2024-01-01T00:00:00.123456Z"), "2024-01-01T00:00:00.123Z");
}

TEST(Timestamp, RejectsWhatIsNotATimestamp) {
  for (const char* bad :
       {"", "2024-03-01", "yesterday", "2024-13-01T00:00", "2023-02-29T00:00", "2024-03-01T24:00",
        "2024-03-01T08:30:00+25:00", "2024-03-01T08:30Q", "2024/03/01 08:30"}) {
    EXPECT_FALSE(normalize_iso8601(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace onceorder
