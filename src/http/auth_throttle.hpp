// Refuses clients that keep presenting bad tokens: after `limit` different unknown tokens from
// one client address within `window` (ServerOptions, by default kAuthFailureLimit in
// kAuthFailureWindow), every request of that address to a route that
// needs a token is answered 429 (with Retry-After) until the window has passed, a valid token
// included: were a right guess still admitted, the refusals would not slow guessing at all.
// Open routes (health, metrics, the console's files) are still answered. Only different tokens
// count: guessing needs new ones, while a console that loads without a token, or with a stale
// one, sends the same (or none) on a dozen requests at once and must not lock its operator out.
// Behind a reverse proxy every client has the proxy's address (forwarded headers are not trusted),
// so one guessing client then holds back all: the limit is per address by design. Thread-safe (one
// mutex; the server calls it from its I/O thread).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace onceorder::http {

// Addresses remembered at most; past it, those no longer refused are forgotten first.
inline constexpr std::size_t kAuthThrottleAddresses = 100000;

class AuthThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  AuthThrottle(int limit, std::chrono::seconds window) : limit_(limit), window_(window) {}

  // While `address` is refused: the whole seconds until it is not (at least 1).
  std::optional<std::chrono::seconds> refused(const std::string& address, Clock::time_point now);
  // Counts an unknown token from `address` (`token_hash`: a hash of it, so that the same one
  // presented again is not counted again); true when it starts a refusal.
  bool record_failure(const std::string& address, std::size_t token_hash, Clock::time_point now);

 private:
  struct Failures {
    Clock::time_point window_start;
    int count = 0;
    std::vector<std::size_t> seen;    // the tokens counted in this window (at most the limit)
    Clock::time_point refused_until;  // in the past: not refused
  };
  void forget_some(Clock::time_point now);

  const int limit_;
  const std::chrono::seconds window_;
  std::mutex mu_;
  std::map<std::string, Failures> by_address_;  // guarded by mu_
};

}  // namespace onceorder::http
