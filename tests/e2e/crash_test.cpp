// The whole `serve` process killed (SIGKILL) in the middle of a batch run, on every engine:
// after a restart the dead run becomes `error`, its `wait` items `aborted`, a new run
// schedules the rest, and every order ends with exactly one production order.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "common/test_db.hpp"
#include "e2e/serve_process.hpp"

namespace {

using onceorder::Engine;
using onceorder::testing::onceorder_bin;

std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// A database on one engine (the one fixture's), queried from outside OnceOrder (as the source
// system would).
class EngineDb {
 public:
  explicit EngineDb(Engine engine) : engine_(engine), db_(engine) {}
  std::string sql(const std::string& q) const {
    if (engine_ == Engine::postgres)
      return shell("psql -qXAt -d " + db_.name() + " -c \"" + q + "\"");
    return shell("sqlite3 " + db_.name() + " \"" + q + "\"");
  }
  long number(const std::string& q) const {
    const std::string s = sql(q);
    return s.empty() ? -1 : std::stol(s);
  }
  const std::string& url() const { return db_.url(); }

 private:
  Engine engine_;
  onceorder::testing::TestDb db_;
};

pid_t start_serve(const std::string& url) {
  // A tokens file of the test's own: without one, serve would make its own in the working
  // directory (PostgreSQL) and print a token there.
  static const std::string tokens = onceorder::testing::write_test_tokens();
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string log = "/tmp/onceorder-crash-serve-" + std::to_string(getppid()) + ".log";
    freopen(log.c_str(), "a", stderr);
    execl(onceorder_bin().c_str(), onceorder_bin().c_str(), "--db", url.c_str(), "serve",
          "--listen", "127.0.0.1:0", "--batch-interval", "300ms", "--reap-interval", "200ms",
          "--run-timeout", "1s", "--lease", "2s", "--leader-lease", "3s", "--tokens",
          tokens.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

template <class Pred>
bool wait_for(Pred pred, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

class CrashTest : public ::testing::TestWithParam<Engine> {};

TEST_P(CrashTest, KilledServeLeavesNoDoubleAndNoLostOrder) {
  EngineDb db(GetParam());
  ASSERT_EQ(shell(onceorder_bin() + " --db " + db.url() + " migrate >/dev/null 2>&1; echo $?"),
            "0");
  constexpr int kOrders = 4000;
  // The source system's orders.
  db.sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
         std::to_string(kOrders) +
         ") INSERT INTO source_orders (site_code, order_no, lot_no, quantity) "
         "SELECT 'K1', 'ORD-' || i, '1', 1 FROM n");
  ASSERT_EQ(db.number("SELECT count(*) FROM source_orders"), kOrders);

  pid_t pid = start_serve(db.url());
  ASSERT_TRUE(wait_for([&] { return db.number("SELECT count(*) FROM production_orders") > 0; }, 30))
      << "the batch run never started";
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  const long made_before = db.number("SELECT count(*) FROM production_orders");
  ASSERT_LT(made_before, kOrders) << "the run finished before the kill: make it longer";
  ASSERT_EQ(db.number("SELECT count(*) FROM schedule_runs WHERE status = 'running'"), 1);
  const std::string dead_run = db.sql("SELECT run_id FROM schedule_runs WHERE status = 'running'");

  pid = start_serve(db.url());
  const bool finished = wait_for(
      [&] {
        return db.number("SELECT count(*) FROM production_orders") == kOrders &&
               db.number(
                   "SELECT count(*) FROM schedule_runs WHERE status IN ('creating', 'running')") ==
                   0;
      },
      90);
  kill(pid, SIGTERM);
  waitpid(pid, &status, 0);
  ASSERT_TRUE(finished) << db.number("SELECT count(*) FROM production_orders") << " of " << kOrders;
  EXPECT_EQ(db.sql("SELECT status FROM schedule_runs WHERE run_id = " + dead_run), "error");
  EXPECT_GT(db.number("SELECT count(*) FROM schedule_items WHERE run_id = " + dead_run +
                      " AND status = 'aborted'"),
            0);
  EXPECT_EQ(db.number("SELECT count(*) FROM schedule_items WHERE run_id = " + dead_run +
                      " AND status IN ('wait', 'processing')"),
            0);
  EXPECT_EQ(db.number("SELECT count(*) FROM production_orders"), kOrders);
  EXPECT_EQ(db.number("SELECT count(DISTINCT order_no) FROM production_orders"), kOrders);
  EXPECT_EQ(db.number("SELECT count(*) FROM schedule_items WHERE status = 'success'"), kOrders);
  EXPECT_EQ(shell(onceorder_bin() + " --db " + db.url() + " check >/dev/null 2>&1; echo $?"), "0");
}

INSTANTIATE_TEST_SUITE_P(Engines, CrashTest,
                         ::testing::ValuesIn(onceorder::testing::engines_under_test()),
                         onceorder::testing::engine_param_name);

}  // namespace
