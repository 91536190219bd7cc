#include "http/ops_monitor.hpp"

#include <gtest/gtest.h>

namespace onceorder::http {
namespace {

using std::chrono::milliseconds;

// After a run the next waits the interval, or nine times the run if that is longer: the
// background checks keep at most a tenth of one database session busy.
TEST(OpsMonitorRest, TheNextRunWaitsTheIntervalOrNineTimesTheRun) {
  EXPECT_EQ(OpsMonitor::next_run_after(milliseconds(30000), milliseconds(200)),
            milliseconds(30000));
  EXPECT_EQ(OpsMonitor::next_run_after(milliseconds(30000), milliseconds(3333)),
            milliseconds(30000));
  EXPECT_EQ(OpsMonitor::next_run_after(milliseconds(30000), milliseconds(3334)),
            milliseconds(30006));
  EXPECT_EQ(OpsMonitor::next_run_after(milliseconds(30000), milliseconds(60000)),
            milliseconds(540000));
  EXPECT_EQ(OpsMonitor::next_run_after(milliseconds(20), milliseconds(400)), milliseconds(3600));
}

}  // namespace
}  // namespace onceorder::http
