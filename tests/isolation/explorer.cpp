#include "isolation/explorer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "onceorder/service/invariants.hpp"

namespace onceorder::isolation {

using namespace std::chrono_literals;

namespace {

constexpr std::array<const char*, 2> kNames = {"A", "B"};
// How long a session may take to reach its next statement, wait for a lock or finish.
constexpr auto kSettleTimeout = 30s;
constexpr int kMaxSchedules = 4000;
// How long a released session may take to reach its next statement before the server is
// asked whether it waits for a lock (and again each time this long passes). Most statements
// arrive well within it: the gate wakes the explorer at once, and the step costs no round
// trip to the server. A statement that waits for a lock never arrives, so asking later only
// delays the answer.
constexpr auto kAskBlockedAfter = 1ms;

store::Clock::time_point soon() { return store::Clock::now() + 30s; }

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string with_param(const std::string& url, const std::string& param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
}

}  // namespace

// Parks a session's thread before each statement while a schedule runs. The explorer
// releases one statement at a time.
class Gate {
 public:
  enum class State { running, at_gate, done };

  void set_enabled(bool on) {
    std::lock_guard lock(mu_);
    enabled_ = on;
    cv_.notify_all();
  }
  void starting() {
    std::lock_guard lock(mu_);
    state_ = State::running;
    permits_ = 0;
  }
  void finished() {
    std::lock_guard lock(mu_);
    state_ = State::done;
    cv_.notify_all();
  }
  // On the session's thread (the statement hook).
  void at_statement(std::string_view what) {
    std::unique_lock lock(mu_);
    if (!enabled_) return;
    state_ = State::at_gate;
    statement_ = std::string(what);
    cv_.notify_all();
    cv_.wait(lock, [&] { return permits_ > 0 || !enabled_; });
    if (permits_ > 0) --permits_;
    state_ = State::running;
  }
  // On the explorer's thread.
  void release() {
    std::lock_guard lock(mu_);
    ++permits_;
    state_ = State::running;  // no stale at_gate between here and the session waking
    cv_.notify_all();
  }
  State state() {
    std::lock_guard lock(mu_);
    return state_;
  }
  // On the explorer's thread: the state once the session stopped at a statement or
  // finished, or after `timeout` (then `running`).
  State wait_moved(std::chrono::microseconds timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return state_ != State::running; });
    return state_;
  }
  std::string statement() {
    std::lock_guard lock(mu_);
    return statement_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool enabled_ = false;
  int permits_ = 0;
  State state_ = State::done;
  std::string statement_;
};

store::Rows Fixture::sql(const std::string& text) {
  // A connection keeps views of the statements it prepared: names and texts live here, one
  // prepared statement per distinct text.
  static std::mutex mu;
  static std::map<std::string, std::string> names;  // text → name; nodes never move
  store::Statement stmt;
  {
    std::lock_guard lock(mu);
    auto [it, added] = names.try_emplace(text, fmt::format("iso_adhoc_{}", names.size()));
    stmt = {it->second, it->first};
  }
  auto conn = control->acquire(soon());
  if (!conn.ok()) throw std::runtime_error(conn.status().to_string());
  auto rows = (*conn)->query(stmt, {});
  if (!rows.ok()) throw std::runtime_error(rows.status().to_string() + " in: " + text);
  return std::move(rows).value();
}

Explorer::Explorer(std::string url) : url_(std::move(url)) {
  auto open = [](const std::string& u, store::DatabaseOptions options) {
    auto parsed = parse_db_url(u);
    if (!parsed.ok()) throw std::runtime_error(parsed.status().to_string());
    auto db = store::Database::open(*parsed, std::move(options));
    if (!db.ok()) throw std::runtime_error(db.status().to_string());
    return std::move(db).value();
  };
  control_ = open(url_, {.pool_size = 2});
  for (int i = 0; i < 2; ++i) {
    gates_[i] = std::make_unique<Gate>();
    Gate* gate = gates_[i].get();
    store::DatabaseOptions options;
    options.pool_size = 2;
    options.lock_timeout = 20s;  // a parked lock holder is let go, never timed out
    options.statement_hook = [gate](std::string_view what) { gate->at_statement(what); };
    auto& ctx = contexts_[i];
    auto parsed =
        parse_db_url(with_param(url_, fmt::format("application_name=oo_iso_{}", kNames[i])));
    if (!parsed.ok()) throw std::runtime_error(parsed.status().to_string());
    ctx.db = testing::open_counting_refusals(*parsed, std::move(options), ctx.refusals);
    // A lease that cannot come up for renewal while a pair runs: renewals would add
    // statements to some schedules and not to others.
    IntakeOptions intake_options;
    intake_options.node_lease = 24h;
    ctx.intake = std::make_unique<Intake>(*ctx.db, intake_options);
    ctx.stock = std::make_unique<Stock>(*ctx.db);
    ctx.scheduler = std::make_unique<Scheduler>(*ctx.db);
    ctx.numbering = std::make_unique<Numbering>(*ctx.db);
    if (auto node = ctx.intake->node_id(); !node.ok())
      throw std::runtime_error(node.status().to_string());
  }
}

Explorer::~Explorer() {
  for (auto& g : gates_) g->set_enabled(false);
}

namespace {

// The script that empties the tables before every schedule, built once from the catalog:
// every table but the schema's bookkeeping, children before
// the tables they reference, and the sequences those tables own set back to their start. It
// leaves the tables as TRUNCATE … RESTART IDENTITY did (run_id, item_id… start at 1 again in
// every schedule), but TRUNCATE gives every table and index a new file and invalidates the
// cached plans of every connection, which then replans each statement of the next schedule:
// on tables of a few rows DELETE costs a fraction of that. One simple query: one round trip,
// one transaction.
std::string reset_script(Fixture& f) {
  std::vector<std::string> tables;
  for (const auto& r : f.sql("SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = "
                             "current_schema() AND tablename NOT IN ('schema_migrations', "
                             "'id_nodes') ORDER BY tablename"))
    tables.push_back(r.text(0));
  std::multimap<std::string, std::string> referenced_by;  // parent → child
  for (const auto& r :
       f.sql("SELECT quote_ident(p.relname), quote_ident(c.relname) FROM pg_constraint k "
             "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid "
             "WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace AND "
             "k.conrelid <> k.confrelid"))
    referenced_by.emplace(r.text(0), r.text(1));
  std::string script;
  // A table goes once no table left to empty references it.
  while (!tables.empty()) {
    auto next = std::find_if(tables.begin(), tables.end(), [&](const std::string& t) {
      auto [from, to] = referenced_by.equal_range(t);
      return std::none_of(from, to, [&](const auto& e) { return contains(tables, e.second); });
    });
    if (next == tables.end()) throw std::runtime_error("the foreign keys form a cycle");
    script += fmt::format("DELETE FROM {};\n", *next);
    tables.erase(next);
  }
  for (const auto& r :
       f.sql("SELECT q.oid::regclass, s.seqstart FROM pg_class q "
             "JOIN pg_sequence s ON s.seqrelid = q.oid "
             "JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = q.oid AND "
             "d.deptype IN ('a', 'i') JOIN pg_class t ON t.oid = d.refobjid "
             "WHERE q.relnamespace = current_schema()::regnamespace AND "
             "t.relname NOT IN ('schema_migrations', 'id_nodes') ORDER BY 1"))
    script += fmt::format("SELECT setval('{}', {}, false);\n", r.text(0), r.text(1));
  return script;
}

}  // namespace

void Explorer::reset_tables() {
  Fixture f;
  f.control = control_.get();
  static const std::string kReset = reset_script(f);
  auto conn = control_->acquire(soon());
  if (!conn.ok()) throw std::runtime_error(conn.status().to_string());
  if (Status st = (*conn)->exec_script(kReset); !st.ok())
    throw std::runtime_error(st.to_string() + " in: " + kReset);
}

bool Explorer::backend_blocked(int session) {
  static constexpr store::Statement kBlocked{
      "iso_blocked",
      "SELECT coalesce(bool_or(cardinality(pg_blocking_pids(pid)) > 0), false) FROM "
      "pg_stat_activity WHERE application_name = $1 AND datname = current_database()"};
  const std::string app = fmt::format("oo_iso_{}", kNames[session]);
  auto conn = control_->acquire(soon());
  if (!conn.ok()) return false;
  auto rows = (*conn)->query(kBlocked, {std::string_view(app)});
  return rows.ok() && rows->at(0).boolean(0);
}

ScheduleResult Explorer::run_once(const PairSpec& pair, const std::vector<int>& prefix,
                                  std::vector<Decision>& decisions, PairReport& report) {
  enum class Settled { at_gate, blocked, done, stuck };
  ScheduleResult result;
  Fixture fixture;
  fixture.control = control_.get();
  fixture.session = {&contexts_[0], &contexts_[1]};

  for (auto& g : gates_) g->set_enabled(false);
  reset_tables();
  pair.setup(fixture);
  for (auto& ctx : contexts_) ctx.refusals.reset();  // the setup's are not the schedule's

  // Until the session stopped at a statement, finished, or waits for a lock. The gate wakes
  // the explorer as soon as the session arrives; no sleep between looks.
  auto settle = [&](int i) {
    const auto give_up = store::Clock::now() + kSettleTimeout;
    for (;;) {
      const auto st = gates_[i]->wait_moved(kAskBlockedAfter);
      if (st == Gate::State::at_gate) return Settled::at_gate;
      if (st == Gate::State::done) return Settled::done;
      if (backend_blocked(i)) return Settled::blocked;
      if (store::Clock::now() > give_up) return Settled::stuck;
    }
  };

  std::array<std::thread, 2> threads;
  for (int i = 0; i < 2; ++i) {
    gates_[i]->starting();
    gates_[i]->set_enabled(true);
  }
  for (int i = 0; i < 2; ++i) {
    threads[i] = std::thread([&, i] {
      std::string out;
      try {
        out = pair.ops[i](fixture, contexts_[i]);
      } catch (const std::exception& e) {
        out = std::string("exception: ") + e.what();
      }
      result.outcomes[i] = out;
      gates_[i]->finished();
    });
  }

  std::array<Settled, 2> state{settle(0), settle(1)};
  int last = -1;
  int preemptions = 0;
  bool stuck = false;
  while (!stuck) {
    std::vector<int> enabled;
    for (int i = 0; i < 2; ++i)
      if (state[i] == Settled::at_gate) enabled.push_back(i);
    if (enabled.empty()) {
      if (state[0] == Settled::done && state[1] == Settled::done) break;
      // Both wait for locks (a deadlock the server will break), or one waits for a
      // session that is finishing: wait for either to move.
      const auto give_up = store::Clock::now() + kSettleTimeout;
      bool moved = false;
      while (!moved && store::Clock::now() < give_up) {
        for (int i = 0; i < 2; ++i) {
          if (state[i] == Settled::done) continue;
          const auto st = gates_[i]->state();
          if (st == Gate::State::at_gate || st == Gate::State::done) {
            state[i] = st == Gate::State::done ? Settled::done : Settled::at_gate;
            moved = true;
          }
        }
        if (!moved) std::this_thread::sleep_for(200us);
      }
      if (!moved) stuck = true;
      continue;
    }
    const size_t depth = decisions.size();
    int choice = -1;
    if (depth < prefix.size()) {
      choice = prefix[depth];
      if (!contains(enabled, choice)) {
        ++report.nondeterministic;
        choice = -1;
      }
    }
    if (choice < 0) choice = contains(enabled, last) ? last : enabled.front();
    Decision d;
    d.enabled = enabled;
    d.chosen = choice;
    d.last = last;
    d.preemptions_before = preemptions;
    decisions.push_back(d);
    if (last >= 0 && last != choice && contains(enabled, last)) ++preemptions;

    result.steps.push_back(fmt::format("{}:{}", kNames[choice], gates_[choice]->statement()));
    gates_[choice]->release();
    state[choice] = settle(choice);
    if (state[choice] == Settled::blocked) {
      result.steps.back() += " (waits)";
      ++report.blocked_steps;
    }
    if (state[choice] == Settled::stuck) stuck = true;
    const int other = 1 - choice;
    if (state[other] == Settled::blocked) state[other] = settle(other);
    if (state[other] == Settled::stuck) stuck = true;
    last = choice;
  }

  if (stuck) result.violations.push_back("a session neither moved nor waited for a lock in 30 s");
  for (auto& g : gates_) g->set_enabled(false);  // let anything still parked run out
  for (auto& t : threads) t.join();

  for (int i = 0; i < 2; ++i) {
    auto& seen = contexts_[i].refusals;
    report.deadlocks += seen.deadlocks;
    report.second_line_refusals += seen.second_line;
    if (pair.refusals_fail && (seen.deadlocks > 0 || seen.second_line > 0))
      result.violations.push_back(fmt::format(
          "{}: {} deadlocks, {} refusals by a second line the locks should have made needless "
          "({})",
          kNames[i], seen.deadlocks.load(), seen.second_line.load(), seen.describe()));
  }
  auto invariants = check_invariants(*control_, soon());
  if (!invariants.ok()) {
    result.violations.push_back("invariants could not run: " + invariants.status().to_string());
  } else {
    for (const auto& inv : *invariants) {
      if (inv.violations == 0) continue;
      result.violations.push_back(fmt::format("{} ({}): {}", inv.id, inv.name,
                                              inv.sample.empty() ? "" : inv.sample.front()));
    }
  }
  try {
    for (auto& v : pair.check(fixture, result.outcomes[0], result.outcomes[1]))
      result.violations.push_back(std::move(v));
  } catch (const std::exception& e) {
    result.violations.push_back(std::string("postcondition failed to run: ") + e.what());
  }
  return result;
}

PairReport Explorer::explore(const PairSpec& pair) {
  PairReport report;
  report.pair = pair.name;
  std::vector<Decision> stack;
  std::vector<int> prefix;
  for (;;) {
    std::vector<Decision> decisions;
    ScheduleResult r = run_once(pair, prefix, decisions, report);
    ++report.schedules;
    report.max_steps = std::max(report.max_steps, static_cast<int>(r.steps.size()));
    ++report.outcomes[fmt::format("A={} B={}", r.outcomes[0], r.outcomes[1])];
    if (!r.violations.empty()) {
      ++report.failing_schedules;
      if (report.failures.size() < 5) report.failures.push_back(r);
    }
    if (std::getenv("ONCEORDER_ISOLATION_VERBOSE")) fmt::print("{}\n", describe(r));

    // Decisions the prefix replayed keep what was tried there; new ones tried their choice.
    for (size_t d = 0; d < decisions.size(); ++d) {
      if (d < prefix.size() && d < stack.size()) {
        decisions[d].tried = stack[d].tried;
      } else {
        decisions[d].tried = {decisions[d].chosen};
      }
    }
    stack = std::move(decisions);

    // Backtrack to the deepest decision with an untried choice within the bound.
    bool next = false;
    for (int d = static_cast<int>(stack.size()) - 1; d >= 0 && !next; --d) {
      Decision& node = stack[static_cast<size_t>(d)];
      for (int e : node.enabled) {
        if (contains(node.tried, e)) continue;
        const bool preempts = node.last >= 0 && node.last != e && contains(node.enabled, node.last);
        const int used = node.preemptions_before + (preempts ? 1 : 0);
        if (pair.max_preemptions >= 0 && used > pair.max_preemptions) continue;
        node.tried.push_back(e);
        node.chosen = e;
        stack.resize(static_cast<size_t>(d) + 1);
        prefix.clear();
        for (const auto& s : stack) prefix.push_back(s.chosen);
        next = true;
        break;
      }
    }
    if (!next || report.schedules >= kMaxSchedules) break;
  }
  return report;
}

std::string Explorer::describe(const ScheduleResult& s) {
  std::string out = fmt::format("  outcomes: A={} B={}\n  steps:", s.outcomes[0], s.outcomes[1]);
  for (const auto& step : s.steps) out += "\n    " + step;
  for (const auto& v : s.violations) out += "\n  VIOLATION: " + v;
  return out;
}

}  // namespace onceorder::isolation
