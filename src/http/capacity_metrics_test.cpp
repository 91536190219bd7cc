// The capacity gauges' text (prom_outbox_gauges): every series the capacity alerts watch, and
// none of PostgreSQL's standbys where they could not be read.
#include <gtest/gtest.h>

#include "http/metrics.hpp"
#include "http/ops_monitor.hpp"

namespace onceorder::http {
namespace {

bool capacity_has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(CapacityGaugesText, ExhaustedScopesAndStandbys) {
  OutboxGauges g;
  g.at = store::Clock::now();
  g.capacity.exhausted_orders = 3;
  g.capacity.fullest_scopes = {{"INV-2026", 9500, 10000}, {"PO-W1", 2, 999999999}};
  g.capacity.sync_standbys = store::SyncStandbys{1, true};
  std::string text;
  prom_outbox_gauges(text, g);
  for (const char* line : {
           "onceorder_orders_exhausted 3",
           "onceorder_scope_last_value{scope=\"INV-2026\"} 9500",
           "onceorder_scope_max_value{scope=\"INV-2026\"} 10000",
           "onceorder_scope_last_value{scope=\"PO-W1\"} 2",
           "onceorder_pg_sync_standbys 1",
           "onceorder_pg_sync_standbys_named 1",
           "# TYPE onceorder_scope_last_value gauge",
       }) {
    EXPECT_TRUE(capacity_has_line(text, line)) << line << "\n" << text;
  }

  // Standbys the role cannot see (or SQLite): no series, rather than a count of 0 that would
  // read as "none".
  g.capacity.sync_standbys.reset();
  g.capacity.fullest_scopes.clear();
  std::string without;
  prom_outbox_gauges(without, g);
  EXPECT_EQ(without.find("onceorder_pg_sync_standbys"), std::string::npos) << without;
  EXPECT_EQ(without.find("onceorder_scope_"), std::string::npos) << without;
  EXPECT_TRUE(capacity_has_line(without, "onceorder_orders_exhausted 3")) << without;

  // Before the monitor's first read: nothing at all.
  std::string before;
  prom_outbox_gauges(before, OutboxGauges{});
  EXPECT_EQ(before.find("onceorder_orders_exhausted"), std::string::npos) << before;
}

}  // namespace
}  // namespace onceorder::http
