// The delivery counters and the outbox's gauges as /metrics writes them: every outcome from
// the start, a cumulative latency histogram, a series per endpoint and consumer the monitor
// last read (a deleted one has none), nothing before the first read.
#include <gtest/gtest.h>

#include <string>

#include "http/metrics.hpp"
#include "http/ops_monitor.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::http {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(DeliveryMetricsText, EveryOutcomeFromTheStartAndACumulativeLatencyHistogram) {
  DeliveryMetrics d;
  std::string fresh;
  prom_deliveries(fresh, d);
  for (const char* outcome :
       {"delivered", "retried", "dead", "in_doubt", "fenced_out", "skipped_late", "reaped"}) {
    EXPECT_TRUE(
        has_line(fresh, std::string("onceorder_deliveries_total{outcome=\"") + outcome + "\"} 0"))
        << outcome << "\n"
        << fresh;
  }
  EXPECT_TRUE(has_line(fresh, "onceorder_delivery_errors_total 0")) << fresh;
  EXPECT_TRUE(has_line(fresh, "onceorder_delivery_latency_seconds_count 0")) << fresh;

  d.delivered = 3;
  d.retried = 4;
  d.dead = 1;
  d.in_doubt = 2;
  d.fenced_out = 5;
  d.skipped_late = 6;
  d.reaped = 7;
  d.errors = 8;
  // Binary fractions, so that the sum (kept in microseconds) is exact.
  d.observe_lag(0.0625);  // le 0.1
  d.observe_lag(0.375);   // le 0.5
  d.observe_lag(120);     // beyond the last bucket: +Inf only
  std::string text;
  prom_deliveries(text, d);
  for (const auto& [outcome, n] : std::vector<std::pair<std::string, int>>{{"delivered", 3},
                                                                           {"retried", 4},
                                                                           {"dead", 1},
                                                                           {"in_doubt", 2},
                                                                           {"fenced_out", 5},
                                                                           {"skipped_late", 6},
                                                                           {"reaped", 7}}) {
    EXPECT_TRUE(has_line(
        text, "onceorder_deliveries_total{outcome=\"" + outcome + "\"} " + std::to_string(n)))
        << outcome << "\n"
        << text;
  }
  EXPECT_TRUE(has_line(text, "onceorder_delivery_errors_total 8")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE onceorder_delivery_latency_seconds histogram")) << text;
  for (const auto& [le, n] : std::vector<std::pair<std::string, int>>{
           {"0.05", 0}, {"0.1", 1}, {"0.25", 1}, {"0.5", 2}, {"60", 2}, {"+Inf", 3}}) {
    EXPECT_TRUE(has_line(
        text, "onceorder_delivery_latency_seconds_bucket{le=\"" + le + "\"} " + std::to_string(n)))
        << le << "\n"
        << text;
  }
  EXPECT_TRUE(has_line(text, "onceorder_delivery_latency_seconds_sum 120.4375")) << text;
  EXPECT_TRUE(has_line(text, "onceorder_delivery_latency_seconds_count 3")) << text;
}

TEST(OutboxGaugesText, NothingBeforeTheFirstRead) {
  OutboxGauges g;
  g.endpoints.push_back({"mes", DeliveryCounts{}});
  std::string text;
  prom_outbox_gauges(text, g);
  EXPECT_EQ(text, "");
}

TEST(OutboxGaugesText, ASeriesPerEndpointAndConsumerThatWasRead) {
  OutboxGauges g;
  g.at = store::Clock::now();
  DeliveryCounts mes;
  mes.pending = 2;
  mes.sending = 1;
  mes.delivered = 40;
  mes.dead = 3;
  mes.in_doubt = 4;
  mes.lag_seconds = 12.5;
  g.endpoints = {{"erp.in", DeliveryCounts{}}, {"mes", mes}};
  Consumer wms;
  wms.name = "wms_1";
  wms.lag_events = 100000;
  wms.lag_seconds = 3600.25;
  g.consumers = {wms};
  g.held_seconds = 61.5;
  std::string text;
  prom_outbox_gauges(text, g);
  for (const char* line : {
           "onceorder_delivery_lag_seconds{endpoint=\"mes\"} 12.5",
           "onceorder_delivery_lag_seconds{endpoint=\"erp.in\"} 0",
           "onceorder_deliveries_pending{endpoint=\"mes\"} 3",  // pending and sending
           "onceorder_deliveries_pending{endpoint=\"erp.in\"} 0",
           "onceorder_deliveries_dead{endpoint=\"mes\"} 3",
           "onceorder_deliveries_dead{endpoint=\"erp.in\"} 0",
           "onceorder_deliveries_in_doubt{endpoint=\"mes\"} 4",
           "onceorder_consumer_lag_seconds{consumer=\"wms_1\"} 3600.25",
           "onceorder_consumer_lag_events{consumer=\"wms_1\"} 100000",
           "onceorder_feed_horizon_age_seconds 61.500",
           "# TYPE onceorder_deliveries_dead gauge",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }

  // An endpoint that is gone from the read is gone from the text; no consumers: no family.
  g.endpoints.erase(g.endpoints.begin() + 1);
  g.consumers.clear();
  std::string after;
  prom_outbox_gauges(after, g);
  EXPECT_EQ(after.find("endpoint=\"mes\""), std::string::npos) << after;
  EXPECT_TRUE(has_line(after, "onceorder_deliveries_dead{endpoint=\"erp.in\"} 0")) << after;
  EXPECT_EQ(after.find("onceorder_consumer_lag"), std::string::npos) << after;
}

}  // namespace
}  // namespace onceorder::http
