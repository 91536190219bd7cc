// Request counters and latency histograms for /metrics, labelled by route pattern (never
// the raw path, so the series stay few), plus the Prometheus text-format writer.
// Thread-safety: HttpMetrics is safe to use from many threads at once.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "onceorder/core/combiner.hpp"
#include "onceorder/core/counters.hpp"

namespace onceorder {
struct DeliveryMetrics;
}  // namespace onceorder

namespace onceorder::http {

struct OutboxGauges;

// How a request for a document number ended (the numbering service has one caller, the
// documents route, which counts it).
enum class DocumentOutcome { issued, replayed, exhausted, busy, refused, count_ };
inline constexpr std::array<const char*, 5> kDocumentOutcomeNames{"issued", "replayed", "exhausted",
                                                                  "busy", "refused"};

// One UTC minute of this process' answers (GET /v1/stats/activity).
struct MinuteCounts {
  std::uint64_t requests = 0;
  std::uint64_t busy = 0;
};

class HttpMetrics {
 public:
  // Counts an answer (also in the current minute of the activity ring).
  void record(std::string_view route, std::string_view method, int status, double seconds);
  // Counts a `503 busy` answer (with Retry-After), in the total and the current minute.
  void count_busy();
  // The last `minutes` (at most kActivityMinutes) UTC minutes up to the one holding `now`,
  // oldest first; minutes nothing was answered in (or before the process started) are zeros.
  std::vector<MinuteCounts> per_minute(int minutes,
                                       std::chrono::system_clock::time_point now) const;
  static constexpr int kActivityMinutes = 1440;

  // Requests accepted by the server and not yet answered (queued or running).
  std::atomic<int>& in_flight() { return in_flight_; }
  // Open client connections, the cap on them, and connections closed to make room.
  std::atomic<int>& connections() { return connections_; }
  std::atomic<int>& max_connections() { return max_connections_; }
  std::atomic<std::uint64_t>& connections_shed() { return connections_shed_; }
  // Answers `503 busy` (with Retry-After), whoever gave them: the busy rate's numerator.
  std::atomic<std::uint64_t>& busy() { return busy_; }
  // Audit rows that could not be written (the request's answer stood; the row is in the log).
  std::atomic<std::uint64_t>& audit_failures() { return audit_failures_; }
  // Answers 401 (no or unknown token), and answers 429 to an address refused for them.
  std::atomic<std::uint64_t>& auth_failures() { return auth_failures_; }
  std::atomic<std::uint64_t>& auth_refusals() { return auth_refusals_; }
  // Requests refused 429 by the per-principal rate limit, by the principal's role (one series
  // per role, never per principal: names would multiply the series).
  static constexpr std::array<std::string_view, 5> kRateLimitedRoles{"admin", "operator", "viewer",
                                                                     "customer", "anonymous"};
  void count_rate_limited(std::string_view role);
  OutcomeCounters<DocumentOutcome>& documents() { return documents_; }
  const OutcomeCounters<DocumentOutcome>& documents() const { return documents_; }

  // Appends the HTTP series in Prometheus text format.
  void render(std::string& out) const;

 private:
  static constexpr std::array<double, 12> kBuckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,   0.25,   0.5,   1,    2.5,   5};
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> buckets{};  // not cumulative
    double sum = 0;
    std::uint64_t count = 0;
  };

  std::atomic<int> in_flight_{0};
  std::atomic<int> connections_{0};
  std::atomic<int> max_connections_{0};
  std::atomic<std::uint64_t> connections_shed_{0};
  std::atomic<std::uint64_t> busy_{0};
  std::atomic<std::uint64_t> audit_failures_{0};
  std::atomic<std::uint64_t> auth_failures_{0};
  std::atomic<std::uint64_t> auth_refusals_{0};
  std::array<std::atomic<std::uint64_t>, kRateLimitedRoles.size()> rate_limited_{};
  OutcomeCounters<DocumentOutcome> documents_;
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t, std::less<>>
      requests_;                                             // guarded
  std::map<std::string, Histogram, std::less<>> durations_;  // guarded
  // A ring of the last day's minutes: slot minute % kActivityMinutes holds that minute's
  // counts when `minute` says it is that one (else it is older and reads as zeros). Updated
  // under mu_, where record() already is: one clock read and two additions per answer.
  struct MinuteSlot {
    std::int64_t minute = -1;  // minutes since the epoch, UTC
    MinuteCounts counts;
  };
  MinuteSlot& slot_for(std::int64_t minute);            // under mu_
  std::array<MinuteSlot, kActivityMinutes> minutes_{};  // guarded
};

// Prometheus text-format helpers.
std::string prom_label(std::string_view value);  // escaped and quoted
void prom_header(std::string& out, std::string_view name, std::string_view type,
                 std::string_view help);
// A combiner's batch sizes as a histogram `name` (buckets le 1, 2, 4, … 256).
void prom_batch_sizes(std::string& out, std::string_view name, std::string_view help,
                      const CombinerStats& stats);
// A histogram `name` of durations in seconds.
void prom_durations(std::string& out, std::string_view name, std::string_view help,
                    const DurationSnapshot& d);
// A histogram family `name` with one series per label set (`labels`: `a="x",b="y"`).
struct LabelledDurations {
  std::string labels;
  DurationSnapshot durations;
};
void prom_labelled_durations(std::string& out, std::string_view name, std::string_view help,
                             std::span<const LabelledDurations> series);
// A counter `name` with one series per outcome: `name{outcome="…"} n`, every outcome
// present from the start (a series that appears late hides its first increase from rate()).
template <std::size_t N>
void prom_outcomes(std::string& out, std::string_view name, std::string_view help,
                   const std::array<const char*, N>& names,
                   const std::array<std::uint64_t, N>& values);
// A counter or gauge without labels.
void prom_value(std::string& out, std::string_view name, std::string_view type,
                std::string_view help, std::uint64_t value);
// The delivery workers' counters (docs/OPERATIONS.md, "Events and delivery"):
// onceorder_deliveries_total{outcome}, onceorder_delivery_latency_seconds and
// onceorder_delivery_errors_total.
void prom_deliveries(std::string& out, const DeliveryMetrics& d);
// The outbox's gauges as the monitor last read them, per endpoint and per consumer (a deleted
// one has no series), and the feed's held-back age, and the capacity gauges read with them
// (exhausted orders, the fullest scopes, PostgreSQL's synchronous standbys); nothing before the
// first read.
void prom_outbox_gauges(std::string& out, const OutboxGauges& g);

template <std::size_t N>
void prom_outcomes(std::string& out, std::string_view name, std::string_view help,
                   const std::array<const char*, N>& names,
                   const std::array<std::uint64_t, N>& values) {
  prom_header(out, name, "counter", help);
  for (std::size_t i = 0; i < N; ++i) {
    out.append(name).append("{outcome=\"").append(names[i]).append("\"} ");
    out.append(std::to_string(values[i])).append("\n");
  }
}

}  // namespace onceorder::http
