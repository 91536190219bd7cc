#include "http/metrics.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

using std::chrono::minutes;
using std::chrono::system_clock;

// The activity ring: answers land in their UTC minute, older minutes and minutes before the
// process started read as zeros, and a slot reused a day later does not show the old counts.
TEST(HttpMetrics, PerMinuteRing) {
  HttpMetrics m;
  m.record("/v1/x", "GET", 200, 0.001);
  m.record("/v1/x", "GET", 503, 0.001);
  m.count_busy();
  auto now = system_clock::now();
  auto last = m.per_minute(3, now);
  ASSERT_EQ(last.size(), 3u);
  // The calls above may straddle a minute boundary: count over the last two minutes.
  EXPECT_EQ(last[1].requests + last[2].requests, 2u);
  EXPECT_EQ(last[1].busy + last[2].busy, 1u);
  EXPECT_EQ(last[0].requests, 0u);
  // A day later the same slots belong to other minutes.
  const auto later = m.per_minute(3, now + minutes(HttpMetrics::kActivityMinutes));
  for (const auto& c : later) EXPECT_EQ(c.requests + c.busy, 0u);
  EXPECT_EQ(m.per_minute(HttpMetrics::kActivityMinutes + 5, now).size(),
            static_cast<size_t>(HttpMetrics::kActivityMinutes));
  EXPECT_EQ(m.busy().load(), 1u);
}

}  // namespace
}  // namespace onceorder::http
