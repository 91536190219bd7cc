#include "http/rate_limit.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace onceorder::http {

RateLimiter::RateLimiter(RateLimit limit)
    : per_second_(std::max(0.0, limit.per_second)),
      burst_(limit.burst > 0 ? limit.burst : std::max(1.0, per_second_)) {}

double RateLimiter::level(const Bucket& b, Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - b.at).count();
  return std::min(burst_, b.tokens + std::max(0.0, elapsed) * per_second_);
}

std::optional<RateLimiter::Clock::duration> RateLimiter::take(std::string_view principal,
                                                              Clock::time_point now) {
  if (!enabled()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = buckets_.find(principal);
  if (it == buckets_.end()) {
    it = buckets_.emplace(std::string(principal), Bucket{burst_, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = level(b, now);
  b.at = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return std::nullopt;
  }
  const double wait = (1 - b.tokens) / per_second_;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
}

bool RateLimiter::exhausted(std::string_view principal, Clock::time_point now) const {
  if (!enabled()) return false;
  std::lock_guard lock(mu_);
  const auto it = buckets_.find(principal);
  return it != buckets_.end() && level(it->second, now + kInlineMargin) < 1;
}

std::optional<double> parse_rate(std::string_view text) {
  if (text.ends_with("/s")) text.remove_suffix(2);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace onceorder::http
