#include "http/auth_throttle.hpp"

#include <algorithm>
#include <functional>
#include <iterator>

namespace onceorder::http {

std::optional<std::chrono::seconds> AuthThrottle::refused(const std::string& address,
                                                          Clock::time_point now) {
  std::lock_guard lock(mu_);
  const auto it = by_address_.find(address);
  if (it == by_address_.end() || it->second.refused_until <= now) return std::nullopt;
  const auto left = std::chrono::ceil<std::chrono::seconds>(it->second.refused_until - now);
  return std::max(left, std::chrono::seconds(1));
}

bool AuthThrottle::record_failure(const std::string& address, std::size_t token_hash,
                                  Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (by_address_.size() >= kAuthThrottleAddresses && !by_address_.contains(address)) {
    forget_some(now);
  }
  Failures& f = by_address_[address];
  if (f.count == 0 || now - f.window_start >= window_) {
    f.window_start = now;
    f.count = 0;
    f.seen.clear();
  }
  if (std::find(f.seen.begin(), f.seen.end(), token_hash) != f.seen.end()) return false;
  f.seen.push_back(token_hash);
  ++f.count;
  if (f.count < limit_ || f.refused_until > now) return false;
  f.refused_until = now + window_;
  f.count = 0;  // a new window of failures starts once the refusal ends
  f.seen.clear();
  return true;
}

// Drops the addresses that are neither refused nor inside a window; if all are, the oldest
// windows among those not refused, so that a flood of addresses cannot lift a refusal.
void AuthThrottle::forget_some(Clock::time_point now) {
  std::erase_if(by_address_, [&](const auto& entry) {
    const Failures& f = entry.second;
    return f.refused_until <= now && (f.count == 0 || now - f.window_start >= window_);
  });
  for (auto it = by_address_.begin();
       by_address_.size() >= kAuthThrottleAddresses && it != by_address_.end();) {
    it = it->second.refused_until <= now ? by_address_.erase(it) : std::next(it);
  }
}

}  // namespace onceorder::http
