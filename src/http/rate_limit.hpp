// Per-principal request rate limits (serve --rate-limit, --rate-burst): a token bucket per
// principal name, refilled at `rate` requests a second up to `burst`. Off unless configured.
// Names come from the tokens file (or are "local"), so the buckets are as many as its
// principals: a client cannot mint buckets by inventing names.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace onceorder::http {

struct RateLimit {
  double per_second = 0;  // 0: no limit
  double burst = 0;       // 0: one second's worth of requests (at least one)
};

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RateLimiter(RateLimit limit = {});

  bool enabled() const { return per_second_ > 0; }
  // Takes one request from `principal`'s bucket at `now`. nullopt: admitted; else how long
  // until the bucket holds a request again (what Retry-After says, rounded up to seconds).
  std::optional<Clock::duration> take(std::string_view principal, Clock::time_point now);
  // True when `principal`'s bucket will still be empty kInlineMargin after `now`, taking
  // nothing: the server answers such a request on its I/O thread, without a worker, and its
  // take() a moment later must refuse it too (an admitted request must never run there).
  bool exhausted(std::string_view principal, Clock::time_point now) const;
  static constexpr auto kInlineMargin = std::chrono::seconds(1);

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point at;
  };
  double level(const Bucket& b, Clock::time_point now) const;

  const double per_second_;
  const double burst_;
  mutable std::mutex mu_;
  std::map<std::string, Bucket, std::less<>> buckets_;  // guarded by mu_
};

// Parses --rate-limit's value: "RATE" or "RATE/s", requests a second (a positive number).
std::optional<double> parse_rate(std::string_view text);

}  // namespace onceorder::http
