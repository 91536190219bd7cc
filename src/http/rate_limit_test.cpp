#include "http/rate_limit.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiter, OffByDefault) {
  RateLimiter off;
  const auto now = RateLimiter::Clock::now();
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(off.take("a", now));
  EXPECT_FALSE(off.exhausted("a", now));
}

TEST(RateLimiter, BurstThenRefusedUntilRefilled) {
  RateLimiter limiter({/*per_second=*/2, /*burst=*/3});
  const auto t0 = RateLimiter::Clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.take("alice", t0)) << i;
  // Empty, but a request's worth comes back within the inline margin: not answered inline.
  EXPECT_FALSE(limiter.exhausted("alice", t0));
  const auto wait = limiter.take("alice", t0);
  ASSERT_TRUE(wait);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(*wait), milliseconds(500));
  // Another principal has a bucket of its own.
  EXPECT_FALSE(limiter.exhausted("bob", t0));
  EXPECT_FALSE(limiter.take("bob", t0));
  // Half a second later one request's worth has come back, and only one.
  EXPECT_FALSE(limiter.take("alice", t0 + milliseconds(500)));
  EXPECT_TRUE(limiter.take("alice", t0 + milliseconds(500)));
  // Refills stop at the burst.
  const auto later = t0 + std::chrono::seconds(60);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.take("alice", later)) << i;
  EXPECT_TRUE(limiter.take("alice", later));
}

// A bucket said to be exhausted refuses the take that follows it, however the time moved on
// within the margin: such a request is answered on the I/O thread and must never be admitted.
TEST(RateLimiter, ExhaustedMeansTheNextTakeIsRefused) {
  RateLimiter limiter({/*per_second=*/0.5, /*burst=*/1});
  const auto t0 = RateLimiter::Clock::now();
  EXPECT_FALSE(limiter.take("a", t0));
  ASSERT_TRUE(limiter.exhausted("a", t0));
  EXPECT_TRUE(limiter.take("a", t0 + RateLimiter::kInlineMargin - std::chrono::milliseconds(1)));
  // Well after that (the refused take kept its half), the bucket holds one again.
  EXPECT_FALSE(limiter.exhausted("a", t0 + std::chrono::seconds(3)));
  EXPECT_FALSE(limiter.take("a", t0 + std::chrono::seconds(3)));
}

TEST(RateLimiter, BurstDefaultsToOneSecondsWorth) {
  RateLimiter limiter({/*per_second=*/5, /*burst=*/0});
  const auto t0 = RateLimiter::Clock::now();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(limiter.take("a", t0)) << i;
  EXPECT_TRUE(limiter.take("a", t0));
  RateLimiter slow({/*per_second=*/0.1, /*burst=*/0});  // at least one request
  EXPECT_FALSE(slow.take("a", t0));
  EXPECT_TRUE(slow.take("a", t0));
}

TEST(RateLimiter, ParseRate) {
  EXPECT_EQ(parse_rate("20"), 20.0);
  EXPECT_EQ(parse_rate("20/s"), 20.0);
  EXPECT_EQ(parse_rate("0.5/s"), 0.5);
  for (const char* bad : {"", "0", "-1", "20/m", "x", "20 ", "/s", "inf", "nan"}) {
    EXPECT_FALSE(parse_rate(bad)) << bad;
  }
}

}  // namespace
}  // namespace onceorder::http
