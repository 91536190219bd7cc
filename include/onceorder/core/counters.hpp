// Outcome counters and duration histograms for the business metrics (/metrics): fixed arrays
// of relaxed atomics, so that counting on a request's path takes no lock and allocates
// nothing. They only ever grow; a snapshot is a plain copy to render.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace onceorder {

// One counter per value of an enum whose last value is `count_` (not an outcome itself).
template <class E>
class OutcomeCounters {
 public:
  static constexpr std::size_t kSize = static_cast<std::size_t>(E::count_);
  void add(E outcome, std::uint64_t n = 1) {
    n_[static_cast<std::size_t>(outcome)].fetch_add(n, std::memory_order_relaxed);
  }
  std::array<std::uint64_t, kSize> snapshot() const {
    std::array<std::uint64_t, kSize> out{};
    for (std::size_t i = 0; i < kSize; ++i) out[i] = n_[i].load(std::memory_order_relaxed);
    return out;
  }

 private:
  std::array<std::atomic<std::uint64_t>, kSize> n_{};
};

// What a DurationHistogram holds at one moment; buckets are not cumulative.
struct DurationSnapshot {
  // Upper bounds in seconds: from a claim batch's milliseconds to a long batch run's hour.
  static constexpr std::array<double, 14> kBounds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                  1,     2.5,  5,     10,   60,  300,  3600};
  std::array<std::uint64_t, kBounds.size() + 1> buckets{};  // the last one: above every bound
  double sum_seconds = 0;
  std::uint64_t count = 0;
};

class DurationHistogram {
 public:
  void observe(std::chrono::steady_clock::duration d) {
    const double s = std::chrono::duration<double>(d).count();
    const auto& bounds = DurationSnapshot::kBounds;
    const auto at = static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), s) -
                                             bounds.begin());
    buckets_[at].fetch_add(1, std::memory_order_relaxed);
    sum_us_.fetch_add(static_cast<std::uint64_t>(std::max(0.0, s) * 1e6),
                      std::memory_order_relaxed);
  }
  DurationSnapshot snapshot() const {
    DurationSnapshot out;
    for (std::size_t i = 0; i < out.buckets.size(); ++i) {
      out.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
      out.count += out.buckets[i];
    }
    out.sum_seconds = static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6;
    return out;
  }

 private:
  std::array<std::atomic<std::uint64_t>, DurationSnapshot::kBounds.size() + 1> buckets_{};
  std::atomic<std::uint64_t> sum_us_{0};  // microseconds: an integer adds without a CAS loop
};

}  // namespace onceorder
