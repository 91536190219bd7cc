// The reaper against run creation over one orphan (a `wait` item of a run that is not alive),
// through the interleaving explorer on PostgreSQL: run creation aborts the orphans on its
// keys first (docs/DESIGN.md, "Production scheduling"), the reaper aborts every orphan, and
// whichever comes first, the orphan is aborted exactly once, the key is produced exactly
// once, and no schedule deadlocks (the server's count of deadlocks in the database does not
// move). After each schedule every invariant holds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <thread>

#include "common/test_db.hpp"
#include "isolation/explorer.hpp"

namespace onceorder::isolation::run_orphans_pairs {
namespace {

using namespace std::chrono_literals;

store::Clock::time_point orphan_pair_deadline() { return store::Clock::now() + 60s; }

std::int64_t one_number(Fixture& f, const std::string& sql) { return f.sql(sql).at(0).i64(0); }

const OrderKey kKey{"S1", "O1", "1"};

// How the orphan's run died: it ended without settling its item, or its owner went silent
// (heart-beaten an hour ago; the reaper then also ends the run).
enum class Death { ended, silent };

void orphan(Fixture& f, Death death) {
  auto& s = *f.session[1]->scheduler;
  const std::vector<SourceOrder> orders = {{kKey, 1}};
  if (auto r = s.import_source_orders(orders, orphan_pair_deadline()); !r.ok())
    throw std::runtime_error("import: " + r.status().to_string());
  auto run = s.create_run(RunKind::manual, std::vector<OrderKey>{kKey}, orphan_pair_deadline());
  if (!run.ok()) throw std::runtime_error("run: " + run.status().to_string());
  f.ids["dead"] = run->run.run_id;
  f.sql(death == Death::ended
            ? fmt::format("UPDATE schedule_runs SET status = 'error' WHERE run_id = {}",
                          run->run.run_id)
            : fmt::format("UPDATE schedule_runs SET heartbeat_at = now() - interval '1 hour' "
                          "WHERE run_id = {}",
                          run->run.run_id));
}

// "reaped <orphans aborted> dead <runs ended>" or the error's code. A silent run's items are
// aborted with the run (its cascade), not counted as orphans.
std::string reap_orphans(SessionContext& s) {
  auto r = s.scheduler->reap(orphan_pair_deadline());
  if (!r.ok()) return std::string(code_name(r.status().code()));
  return fmt::format("reaped {} dead {}", r->aborted_waiting, r->dead_runs);
}

// "<run status> <orphans aborted at creation>" or the error's code.
std::string run_over_orphan(SessionContext& s, RunKind kind) {
  std::optional<std::vector<OrderKey>> keys;
  if (kind == RunKind::manual) keys.emplace(std::vector<OrderKey>{kKey});
  auto created = s.scheduler->create_run(kind, keys, orphan_pair_deadline());
  if (!created.ok()) return std::string(code_name(created.status().code()));
  auto done = s.scheduler->process_run(created->run.run_id);
  if (!done.ok()) return std::string(code_name(done.status().code()));
  return fmt::format("{} {}", to_string(done->status), created->orphans_aborted);
}

PairSpec reaper_and_run(RunKind kind, Death death) {
  return {
      fmt::format("reaper/{} run over an orphan ({})", kind == RunKind::manual ? "manual" : "batch",
                  death == Death::ended ? "run ended" : "owner silent"),
      [death](Fixture& f) { orphan(f, death); },
      {[](Fixture&, SessionContext& s) { return reap_orphans(s); },
       [kind](Fixture&, SessionContext& s) { return run_over_orphan(s, kind); }},
      [death](Fixture& f, const std::string& a, const std::string& b) {
        std::vector<std::string> v;
        const bool run_took = b == "done 1";
        if (death == Death::ended && (a == "reaped 1 dead 0") == run_took)
          v.push_back("the orphan was not aborted by exactly one of them: " + a + ", " + b);
        if (death == Death::silent && a != "reaped 0 dead 1")
          v.push_back("the reaper did not end the silent run alone: " + a);
        if (b != "done 0" && b != "done 1") v.push_back("the run answered " + b);
        if (one_number(f, "SELECT count(*) FROM production_orders") != 1)
          v.push_back("the key was not produced exactly once");
        if (one_number(f, fmt::format("SELECT count(*) FROM schedule_items WHERE run_id = {} "
                                      "AND status = 'aborted'",
                                      f.ids["dead"])) != 1)
          v.push_back("the orphan is not aborted");
        if (one_number(f,
                       "SELECT count(*) FROM schedule_items WHERE status IN ('wait', "
                       "'processing')") != 0)
          v.push_back("an item is left wait or processing");
        return v;
      },
      2};
}

struct OrphanPair {
  PairSpec spec;
  std::vector<std::string> must_see;  // outcomes some schedule must show
};

std::vector<OrphanPair> orphan_pair_list() {
  std::vector<OrphanPair> out;
  for (RunKind kind : {RunKind::manual, RunKind::batch}) {
    out.push_back({reaper_and_run(kind, Death::ended), {"A=reaped 1", "B=done 1"}});
    out.push_back({reaper_and_run(kind, Death::silent), {"B=done 0", "B=done 1"}});
  }
  return out;
}

class RunOrphansPairTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    const auto engines = testing::engines_under_test();
    if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end()) return;
    db_ = new testing::TestDb(Engine::postgres);
    db_->open();
    db_->sql(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET deadlock_timeout = ''50ms''', "
        "current_database()); END $$");
    explorer_ = new Explorer(db_->url());
  }
  static void TearDownTestSuite() {
    for (const auto& r : reports_)
      fmt::print("{:<58} {:>9} {:>6} {:>8} {:>7}\n", r.pair, r.schedules, r.max_steps,
                 r.blocked_steps, r.failing_schedules);
    delete explorer_;
    delete db_;
    explorer_ = nullptr;
    db_ = nullptr;
  }
  // The server's count of deadlocks in this database, once the backends have reported them
  // (they flush their counts within a second of going idle).
  static std::int64_t deadlocks() {
    std::this_thread::sleep_for(1500ms);
    return db_->sql("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        .at(0)
        .i64(0);
  }
  static inline testing::TestDb* db_ = nullptr;
  static inline Explorer* explorer_ = nullptr;
  static inline std::vector<PairReport> reports_;
};

TEST_P(RunOrphansPairTest, EveryScheduleAbortsTheOrphanOnceWithoutDeadlock) {
  if (!explorer_) GTEST_SKIP() << "PostgreSQL not configured (SQLite has one writer)";
  const auto all = orphan_pair_list();
  const OrphanPair& pair = all.at(static_cast<size_t>(GetParam()));
  PairSpec bounded = pair.spec;
  if (const char* n = std::getenv("ONCEORDER_ISOLATION_PREEMPTIONS");
      n && bounded.max_preemptions >= 0)
    bounded.max_preemptions = std::atoi(n);
  const std::int64_t deadlocks_before = deadlocks();
  const PairReport report = explorer_->explore(bounded);
  reports_.push_back(report);
  fmt::print("{}: {} schedules ({} failing), up to {} steps, {} blocked, {} nondeterministic\n",
             report.pair, report.schedules, report.failing_schedules, report.max_steps,
             report.blocked_steps, report.nondeterministic);
  for (const auto& [o, n] : report.outcomes) fmt::print("  {:>5} × {}\n", n, o);
  EXPECT_GT(report.schedules, 1);
  EXPECT_EQ(report.failing_schedules, 0) << report.pair;
  for (const auto& f : report.failures)
    ADD_FAILURE() << report.pair << "\n" << Explorer::describe(f);
  for (const auto& part : pair.must_see) {
    EXPECT_TRUE(std::any_of(report.outcomes.begin(), report.outcomes.end(),
                            [&](const auto& o) { return o.first.find(part) != std::string::npos; }))
        << "no schedule of " << report.pair << " ended with " << part;
  }
  EXPECT_EQ(deadlocks(), deadlocks_before) << "a schedule of " << report.pair << " deadlocked";
}

INSTANTIATE_TEST_SUITE_P(RunOrphans, RunOrphansPairTest,
                         ::testing::Range(0, static_cast<int>(orphan_pair_list().size())),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const auto all = orphan_pair_list();
                           std::string name;
                           for (char c : all.at(static_cast<size_t>(param.param)).spec.name)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace onceorder::isolation::run_orphans_pairs
