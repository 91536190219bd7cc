#include "http/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "http/ops_monitor.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::http {

std::string prom_label(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  out += '"';
  return out;
}

void prom_header(std::string& out, std::string_view name, std::string_view type,
                 std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void prom_batch_sizes(std::string& out, std::string_view name, std::string_view help,
                      const CombinerStats& stats) {
  prom_header(out, name, "histogram", help);
  auto put = std::back_inserter(out);
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < stats.runs.size(); ++i) {
    cumulative += stats.runs[i];
    fmt::format_to(put, "{}_bucket{{le=\"{}\"}} {}\n", name, CombinerStats::kBounds[i], cumulative);
  }
  fmt::format_to(put, "{}_bucket{{le=\"+Inf\"}} {}\n", name, cumulative);
  fmt::format_to(put, "{}_sum {}\n{}_count {}\n", name, stats.requests, name, cumulative);
}

void prom_durations(std::string& out, std::string_view name, std::string_view help,
                    const DurationSnapshot& d) {
  prom_header(out, name, "histogram", help);
  auto put = std::back_inserter(out);
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < DurationSnapshot::kBounds.size(); ++i) {
    cumulative += d.buckets[i];
    fmt::format_to(put, "{}_bucket{{le=\"{}\"}} {}\n", name, DurationSnapshot::kBounds[i],
                   cumulative);
  }
  fmt::format_to(put, "{}_bucket{{le=\"+Inf\"}} {}\n", name, d.count);
  fmt::format_to(put, "{}_sum {}\n{}_count {}\n", name, d.sum_seconds, name, d.count);
}

void prom_labelled_durations(std::string& out, std::string_view name, std::string_view help,
                             std::span<const LabelledDurations> series) {
  prom_header(out, name, "histogram", help);
  auto put = std::back_inserter(out);
  for (const auto& [labels, d] : series) {
    std::uint64_t cumulative = 0;
    for (size_t i = 0; i < DurationSnapshot::kBounds.size(); ++i) {
      cumulative += d.buckets[i];
      fmt::format_to(put, "{}_bucket{{{},le=\"{}\"}} {}\n", name, labels,
                     DurationSnapshot::kBounds[i], cumulative);
    }
    fmt::format_to(put, "{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, d.count);
    fmt::format_to(put, "{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, d.sum_seconds, name,
                   labels, d.count);
  }
}

void prom_value(std::string& out, std::string_view name, std::string_view type,
                std::string_view help, std::uint64_t value) {
  prom_header(out, name, type, help);
  fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
}

namespace {

constexpr std::array<const char*, 7> kDeliveryOutcomeNames{
    "delivered", "retried", "dead", "in_doubt", "fenced_out", "skipped_late", "reaped"};

// One gauge family with a series per name (`label`="name"); no header without a series.
template <typename Rows, typename Value>
void prom_gauge_per_name(std::string& out, std::string_view name, std::string_view help,
                         std::string_view label, const Rows& rows, Value value) {
  if (rows.empty()) return;
  prom_header(out, name, "gauge", help);
  auto put = std::back_inserter(out);
  for (const auto& row : rows) {
    const auto [key, v] = value(row);
    fmt::format_to(put, "{}{{{}={}}} {}\n", name, label, prom_label(key), v);
  }
}

// The capacity alerts' series (OPERATIONS.md, "Alerts"): exhausted orders, the fullest scopes'
// counters against their max, and the synchronous standbys where the role can see them.
void prom_capacity_gauges(std::string& out, const CapacityGauges& g) {
  prom_value(out, "onceorder_orders_exhausted", "gauge",
             fmt::format("Orders that reached --max-attempts failed attempts and are no longer "
                         "picked (GET /v1/schedule/exhausted), counted up to {}.",
                         CapacityGauges::kExhaustedCap),
             static_cast<std::uint64_t>(g.exhausted_orders));
  using Fill = store::ScopeFill;
  prom_gauge_per_name(
      out, "onceorder_scope_last_value",
      fmt::format("The last number issued in each of the {} scopes nearest their max.",
                  CapacityGauges::kFullestScopes),
      "scope", g.fullest_scopes, [](const Fill& f) {
        return std::pair{f.scope, f.last_value};
      });
  prom_gauge_per_name(out, "onceorder_scope_max_value",
                      "The largest number each of those scopes may issue.", "scope",
                      g.fullest_scopes, [](const Fill& f) {
                        return std::pair{f.scope, f.max_value};
                      });
  if (!g.sync_standbys) return;
  prom_value(out, "onceorder_pg_sync_standbys", "gauge",
             "Standbys the PostgreSQL primary streams to synchronously (sync or quorum).",
             static_cast<std::uint64_t>(g.sync_standbys->in_sync));
  prom_value(out, "onceorder_pg_sync_standbys_named", "gauge",
             "1 when the primary's synchronous_standby_names is set.",
             g.sync_standbys->named ? 1 : 0);
}

}  // namespace

void prom_deliveries(std::string& out, const DeliveryMetrics& d) {
  const std::array<std::uint64_t, kDeliveryOutcomeNames.size()> outcomes{
      d.delivered.load(),  d.retried.load(),      d.dead.load(),  d.in_doubt.load(),
      d.fenced_out.load(), d.skipped_late.load(), d.reaped.load()};
  prom_outcomes(out, "onceorder_deliveries_total",
                "Deliveries this process's workers settled, by outcome (retried: to be sent "
                "again; fenced_out: not recorded, the lease had ended; skipped_late: claimed but "
                "not sent, too little lease left; reaped: expired leases the reaper settled, "
                "also counted as dead or in_doubt when they became so).",
                kDeliveryOutcomeNames, outcomes);
  const std::string_view name = "onceorder_delivery_latency_seconds";
  prom_header(out, name, "histogram",
              "Time from an event's occurred_at to its delivery (a 2xx answer), as the worker "
              "saw it.");
  auto put = std::back_inserter(out);
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < DeliveryMetrics::kLagBuckets.size(); ++i) {
    cumulative += d.lag_buckets[i].load();
    fmt::format_to(put, "{}_bucket{{le=\"{}\"}} {}\n", name, DeliveryMetrics::kLagBuckets[i],
                   cumulative);
  }
  cumulative += d.lag_buckets.back().load();
  fmt::format_to(put, "{}_bucket{{le=\"+Inf\"}} {}\n", name, cumulative);
  // The count is the buckets' total: read apart, the two could disagree for a moment.
  fmt::format_to(put, "{}_sum {}\n{}_count {}\n", name,
                 static_cast<double>(d.lag_sum_us.load()) / 1e6, name, cumulative);
  prom_value(out, "onceorder_delivery_errors_total", "counter",
             "Delivery worker passes that failed (a database step: reap, dispatch, claim or "
             "record); the log says which.",
             d.errors.load());
}

void prom_outbox_gauges(std::string& out, const OutboxGauges& g) {
  static_assert(Consumer::kLagCountCap == 100000, "the help text below names the cap");
  if (!g.at) return;
  using Row = std::pair<std::string, DeliveryCounts>;
  prom_gauge_per_name(out, "onceorder_delivery_lag_seconds",
                      "Age of each endpoint's oldest event waiting to be sent (pending or "
                      "sending); 0 when none.",
                      "endpoint", g.endpoints, [](const Row& r) {
                        return std::pair{r.first, r.second.lag_seconds};
                      });
  prom_gauge_per_name(out, "onceorder_deliveries_pending",
                      "Each endpoint's deliveries waiting to be sent or being sent.", "endpoint",
                      g.endpoints, [](const Row& r) {
                        return std::pair{r.first, r.second.pending + r.second.sending};
                      });
  prom_gauge_per_name(out, "onceorder_deliveries_dead",
                      "Each endpoint's dead deliveries: out of attempts, waiting for an "
                      "operator's redeliver; they hold back later events of their key.",
                      "endpoint", g.endpoints, [](const Row& r) {
                        return std::pair{r.first, r.second.dead};
                      });
  prom_gauge_per_name(out, "onceorder_deliveries_in_doubt",
                      "Each endpoint's in_doubt deliveries (at_most_once, outcome unknown): an "
                      "operator must resolve them; they hold back later events of their key.",
                      "endpoint", g.endpoints, [](const Row& r) {
                        return std::pair{r.first, r.second.in_doubt};
                      });
  prom_gauge_per_name(out, "onceorder_consumer_lag_seconds",
                      "Age of the oldest event after each named consumer's position; 0 when "
                      "none.",
                      "consumer", g.consumers, [](const Consumer& c) {
                        return std::pair{c.name, c.lag_seconds};
                      });
  prom_gauge_per_name(out, "onceorder_consumer_lag_events",
                      "Events after each named consumer's position, counted up to 100000.",
                      "consumer", g.consumers, [](const Consumer& c) {
                        return std::pair{c.name, c.lag_events};
                      });
  prom_header(out, "onceorder_feed_horizon_age_seconds", "gauge",
              "Age of the oldest committed event the feed still holds back because an older "
              "transaction is still open somewhere in the cluster; 0 when none.");
  fmt::format_to(std::back_inserter(out), "onceorder_feed_horizon_age_seconds {:.3f}\n",
                 g.held_seconds);
  prom_capacity_gauges(out, g.capacity);
}

namespace {

std::int64_t minute_of(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::minutes>(t.time_since_epoch()).count();
}

}  // namespace

HttpMetrics::MinuteSlot& HttpMetrics::slot_for(std::int64_t minute) {
  MinuteSlot& slot = minutes_[static_cast<size_t>(minute % kActivityMinutes)];
  if (slot.minute != minute) slot = MinuteSlot{minute, {}};
  return slot;
}

void HttpMetrics::count_rate_limited(std::string_view role) {
  const auto it = std::find(kRateLimitedRoles.begin(), kRateLimitedRoles.end(), role);
  if (it != kRateLimitedRoles.end()) rate_limited_[it - kRateLimitedRoles.begin()].fetch_add(1);
}

void HttpMetrics::count_busy() {
  busy_.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t minute = minute_of(std::chrono::system_clock::now());
  std::lock_guard lock(mu_);
  ++slot_for(minute).counts.busy;
}

std::vector<MinuteCounts> HttpMetrics::per_minute(int minutes,
                                                  std::chrono::system_clock::time_point now) const {
  const int n = std::clamp(minutes, 0, kActivityMinutes);
  const std::int64_t last = minute_of(now);
  std::vector<MinuteCounts> out(static_cast<size_t>(n));
  std::lock_guard lock(mu_);
  for (int i = 0; i < n; ++i) {
    const std::int64_t minute = last - (n - 1) + i;
    if (minute < 0) continue;
    const MinuteSlot& slot = minutes_[static_cast<size_t>(minute % kActivityMinutes)];
    if (slot.minute == minute) out[static_cast<size_t>(i)] = slot.counts;
  }
  return out;
}

void HttpMetrics::record(std::string_view route, std::string_view method, int status,
                         double seconds) {
  const std::int64_t minute = minute_of(std::chrono::system_clock::now());
  std::lock_guard lock(mu_);
  ++slot_for(minute).counts.requests;
  // Looked up by views: a known series costs no allocation.
  auto series =
      requests_.find(std::tuple<std::string_view, std::string_view, int>{route, method, status});
  if (series == requests_.end())
    series =
        requests_.emplace(std::tuple{std::string(route), std::string(method), status}, 0).first;
  ++series->second;
  auto it = durations_.find(route);
  if (it == durations_.end()) it = durations_.emplace(std::string(route), Histogram{}).first;
  Histogram& h = it->second;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++h.buckets[i];
      break;
    }
  }
  h.sum += seconds;
  ++h.count;
}

void HttpMetrics::render(std::string& out) const {
  auto put = std::back_inserter(out);
  prom_header(out, "onceorder_http_requests_in_flight", "gauge",
              "Requests accepted and not yet answered.");
  fmt::format_to(put, "onceorder_http_requests_in_flight {}\n", in_flight_.load());
  prom_header(out, "onceorder_http_connections", "gauge", "Open client connections.");
  fmt::format_to(put, "onceorder_http_connections {}\n", connections_.load());
  prom_header(out, "onceorder_http_connections_max", "gauge",
              "Most client connections held open at once (--max-connections, within the "
              "descriptor limit).");
  fmt::format_to(put, "onceorder_http_connections_max {}\n", max_connections_.load());
  prom_header(out, "onceorder_http_connections_shed_total", "counter",
              "Idle or slow connections closed, or new ones refused, at the cap.");
  fmt::format_to(put, "onceorder_http_connections_shed_total {}\n", connections_shed_.load());
  prom_value(out, "onceorder_http_busy_total", "counter",
             "Requests answered 503 busy (retry): the busy rate is its rate over that of "
             "onceorder_http_requests_total.",
             busy_.load());
  prom_value(out, "onceorder_audit_write_failures_total", "counter",
             "Audited requests whose operator_actions row could not be written (logged "
             "instead; the answer stood).",
             audit_failures_.load());
  prom_value(out, "onceorder_auth_failures_total", "counter",
             "Requests answered 401: no token, or one the tokens file does not hold.",
             auth_failures_.load());
  prom_value(out, "onceorder_auth_refusals_total", "counter",
             "Requests answered 429 because their address sent too many bad tokens.",
             auth_refusals_.load());
  prom_header(out, "onceorder_rate_limited_total", "counter",
              "Requests refused 429 by the per-principal rate limit (serve --rate-limit), by the "
              "principal's role.");
  for (std::size_t i = 0; i < kRateLimitedRoles.size(); ++i) {
    fmt::format_to(put, "onceorder_rate_limited_total{{principal_role={}}} {}\n",
                   prom_label(kRateLimitedRoles[i]), rate_limited_[i].load());
  }
  prom_outcomes(out, "onceorder_documents_total",
                "Requests for a document number by outcome (issued: a new number committed).",
                kDocumentOutcomeNames, documents_.snapshot());

  std::lock_guard lock(mu_);
  prom_header(out, "onceorder_http_requests_total", "counter", "HTTP requests answered.");
  for (const auto& [key, count] : requests_) {
    const auto& [route, method, status] = key;
    fmt::format_to(put, "onceorder_http_requests_total{{route={},method={},status=\"{}\"}} {}\n",
                   prom_label(route), prom_label(method), status, count);
  }
  prom_header(out, "onceorder_http_request_duration_seconds", "histogram",
              "Time from a request's arrival to its answer.");
  for (const auto& [route, h] : durations_) {
    const std::string label = prom_label(route);
    std::uint64_t cumulative = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.buckets[i];
      fmt::format_to(put,
                     "onceorder_http_request_duration_seconds_bucket{{route={},le=\"{}\"}} {}\n",
                     label, kBuckets[i], cumulative);
    }
    fmt::format_to(put,
                   "onceorder_http_request_duration_seconds_bucket{{route={},le=\"+Inf\"}} {}\n",
                   label, h.count);
    fmt::format_to(put, "onceorder_http_request_duration_seconds_sum{{route={}}} {}\n", label,
                   h.sum);
    fmt::format_to(put, "onceorder_http_request_duration_seconds_count{{route={}}} {}\n", label,
                   h.count);
  }
}

}  // namespace onceorder::http
