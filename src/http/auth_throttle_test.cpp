#include "http/auth_throttle.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

using std::chrono::seconds;

TEST(AuthThrottle, RefusesAnAddressAfterTheLimitForTheWindow) {
  AuthThrottle throttle(3, seconds(60));
  const auto t0 = AuthThrottle::Clock::now();
  EXPECT_FALSE(throttle.record_failure("10.0.0.1", 1, t0));
  EXPECT_FALSE(throttle.record_failure("10.0.0.1", 2, t0 + seconds(1)));
  EXPECT_FALSE(throttle.refused("10.0.0.1", t0 + seconds(1)).has_value());
  EXPECT_TRUE(throttle.record_failure("10.0.0.1", 3, t0 + seconds(2)));
  EXPECT_EQ(throttle.refused("10.0.0.1", t0 + seconds(2)), seconds(60));
  EXPECT_EQ(throttle.refused("10.0.0.1", t0 + std::chrono::milliseconds(61500)), seconds(1));
  EXPECT_FALSE(throttle.refused("10.0.0.2", t0 + seconds(2)).has_value());  // per address
  EXPECT_FALSE(throttle.refused("10.0.0.1", t0 + seconds(62)).has_value());
  // A new window starts afresh.
  EXPECT_FALSE(throttle.record_failure("10.0.0.1", 4, t0 + seconds(63)));
  EXPECT_FALSE(throttle.refused("10.0.0.1", t0 + seconds(63)).has_value());
}

TEST(AuthThrottle, FailuresOutsideTheWindowDoNotAddUp) {
  AuthThrottle throttle(2, seconds(10));
  const auto t0 = AuthThrottle::Clock::now();
  EXPECT_FALSE(throttle.record_failure("a", 1, t0));
  EXPECT_FALSE(throttle.record_failure("a", 2, t0 + seconds(10)));  // a new window
  EXPECT_TRUE(throttle.record_failure("a", 3, t0 + seconds(11)));
}

// The same wrong token again is no new guess (a console with a stale token sends it on every
// request it makes at once).
TEST(AuthThrottle, OnlyDifferentTokensCount) {
  AuthThrottle throttle(2, seconds(10));
  const auto t0 = AuthThrottle::Clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(throttle.record_failure("a", 7, t0));
  EXPECT_FALSE(throttle.refused("a", t0).has_value());
  EXPECT_TRUE(throttle.record_failure("a", 8, t0));
}

// A flood of addresses cannot push a refused one out of memory.
TEST(AuthThrottle, ARefusalOutlivesAFloodOfAddresses) {
  AuthThrottle throttle(1, seconds(60));
  const auto t0 = AuthThrottle::Clock::now();
  ASSERT_TRUE(throttle.record_failure("guesser", 1, t0));
  for (std::size_t i = 0; i < kAuthThrottleAddresses + 10; ++i) {
    throttle.record_failure("flood-" + std::to_string(i), 1, t0 - seconds(120));
  }
  throttle.record_failure("one-more", 1, t0 + seconds(1));
  EXPECT_TRUE(throttle.refused("guesser", t0 + seconds(1)).has_value());
}

}  // namespace
}  // namespace onceorder::http
