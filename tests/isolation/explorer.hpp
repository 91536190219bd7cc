// An interleaving explorer for OnceOrder operations on PostgreSQL, in the manner of
// PostgreSQL's own isolation tester (src/test/isolation): two sessions each run one
// OnceOrder operation on their own connections and stop before every statement (the
// store's statement hook). The explorer lets one statement go at a time, notices a
// statement that waits for a lock (pg_blocking_pids of that session's backend) and runs
// the other session on, and enumerates the schedules depth-first by replaying prefixes of
// choices. After each schedule it checks every invariant and the pair's postcondition.
//
// The number of schedules grows combinatorially with the statements per operation, so the
// enumeration is bounded by preemptions (switching away from a session that could go on),
// as model checkers for concurrent programs do: most concurrency bugs need one or two.
// Switches forced by a lock wait or by an operation ending are free. A bound of -1
// enumerates every interleaving.
//
// SQLite has one writer at a time: its transactions cannot interleave, so it has no
// explorer.
//
// Thread-safety: one Explorer runs one pair at a time, from one thread; it starts the two
// session threads itself.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/refusals.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::isolation {

class Gate;

// What one session of a pair works with: its own Database (its connections stop at the
// gate while a schedule runs) and services built on it, created once per pair.
struct SessionContext {
  std::unique_ptr<store::Database> db;
  std::unique_ptr<Intake> intake;
  std::unique_ptr<Stock> stock;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Numbering> numbering;
  // Deadlocks and second-line refusals its statements met in the schedule running.
  testing::Refusals refusals;
};

// The data a pair's setup made for its operations (order ids, claims…), by name.
struct Fixture {
  std::array<SessionContext*, 2> session{};
  store::Database* control = nullptr;  // never gated: setup and checks
  std::map<std::string, std::int64_t> ids;
  std::map<std::string, Claim> claims;
  // Runs SQL on the control connection; a failure throws (it is the test's own SQL).
  store::Rows sql(const std::string& text);
};

// An operation returns its outcome as text ("placed", "in_production", "busy"…), which the
// postcondition reads.
using Operation = std::function<std::string(Fixture&, SessionContext&)>;

struct PairSpec {
  std::string name;
  std::function<void(Fixture&)> setup;  // runs before each schedule on empty tables
  std::array<Operation, 2> ops;         // sessions A and B
  // The pair's own postcondition after a schedule: a list of violations (empty when ok).
  std::function<std::vector<std::string>(Fixture&, const std::string& a, const std::string& b)>
      check;
  int max_preemptions = 2;  // -1: every interleaving
  // A schedule in which a deadlock happened, or in which a foreign key, trigger, CHECK or
  // unique key (an idempotency receipt's aside: that is a first line) refused what the
  // locks should have prevented, fails: the retry or the mapped answer that follows hides a
  // lock gone missing from every end state. A pair whose readers are shown failing on
  // purpose may turn it off.
  bool refusals_fail = true;
};

struct ScheduleResult {
  std::vector<std::string> steps;  // "A:in_lock_order", "B:COMMIT", "A:in_release (waits)"
  std::array<std::string, 2> outcomes;
  std::vector<std::string> violations;
};

struct PairReport {
  std::string pair;
  int schedules = 0;
  int max_steps = 0;
  int blocked_steps = 0;                 // steps that waited for a lock, over all schedules
  int nondeterministic = 0;              // replays whose choices were not available again
  std::map<std::string, int> outcomes;   // "A=cancelled B=in_production" → schedules
  std::vector<ScheduleResult> failures;  // schedules with violations (first few kept)
  int failing_schedules = 0;
  int deadlocks = 0;             // over all schedules
  int second_line_refusals = 0;  // over all schedules
};

// One step of the depth-first search: which sessions could go, which one went.
struct Decision {
  std::vector<int> enabled;
  int chosen = -1;
  int last = -1;  // the session that ran the step before (-1 at the start)
  int preemptions_before = 0;
  std::vector<int> tried;
};

class Explorer {
 public:
  // `url`: a migrated PostgreSQL database that the explorer may empty at will.
  explicit Explorer(std::string url);
  ~Explorer();

  PairReport explore(const PairSpec& pair);

  static std::string describe(const ScheduleResult& s);

 private:
  ScheduleResult run_once(const PairSpec& pair, const std::vector<int>& prefix,
                          std::vector<Decision>& decisions, PairReport& report);
  void reset_tables();
  bool backend_blocked(int session);

  std::string url_;
  std::unique_ptr<store::Database> control_;
  std::array<std::unique_ptr<Gate>, 2> gates_;
  std::array<SessionContext, 2> contexts_;
};

}  // namespace onceorder::isolation
