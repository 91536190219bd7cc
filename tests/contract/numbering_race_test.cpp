// Document numbers' races over several connections (seed 003's MAX+1 races, the empty
// scope, the two-session script, per-scope locking); their own program, race_tests, so that
// ThreadSanitizer runs them too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <latch>
#include <optional>
#include <set>
#include <thread>

#include "contract/numbering_fixture.hpp"

namespace onceorder::testing {
namespace {

TEST_P(NumberingTest, ConcurrentAllocationsOnOneScopeGiveExactlyOneToNM) {
  constexpr int kThreads = 8, kEach = 40;
  std::barrier start(kThreads);
  std::vector<std::vector<std::int64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        auto r = issue("HOT", "t" + std::to_string(t));
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        got[t].push_back(r->document.value);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::int64_t> all;
  for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kEach));
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(last_value("HOT"), kThreads * kEach);
  expect_invariants_hold();
}

// Request combining (Numbering's Combiner): many callers on one hot scope, half of them keyed
// and replaying their key once more. The values stay 1..N with every caller holding its own,
// the replays get their own document back, and batches of more than one request must have
// run: a Numbering that never combines fails here.
TEST_P(NumberingTest, QueuedRequestsOnOneHotScopeAreCombinedGaplessRace) {
  constexpr int kThreads = 16, kEach = 25;
  std::barrier start(kThreads);
  std::vector<std::vector<std::int64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        std::optional<std::string> key;
        if (i % 2 == 0) key = "t" + std::to_string(t) + "-" + std::to_string(i);
        const std::string title = "t" + std::to_string(t) + " #" + std::to_string(i);
        auto r = issue("COMBINED", title, key);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        ASSERT_FALSE(r->replayed);
        ASSERT_EQ(r->document.title, title);
        got[t].push_back(r->document.value);
        if (key) {
          auto again = issue("COMBINED", title, key);
          ASSERT_TRUE(again.ok()) << again.status().to_string();
          EXPECT_TRUE(again->replayed);
          EXPECT_EQ(again->document.value, r->document.value);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::int64_t> all;
  for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  constexpr int kN = kThreads * kEach;
  ASSERT_EQ(all.size(), static_cast<size_t>(kN));
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(last_value("COMBINED"), kN);
  EXPECT_EQ(count_documents("COMBINED"), kN);

  const CombinerStats stats = numbering_.combining();
  const int replays = kThreads * ((kEach + 1) / 2);
  EXPECT_EQ(stats.requests, static_cast<std::uint64_t>(kN + replays));
  EXPECT_GT(stats.largest, 1u) << "no two requests were ever combined";
  EXPECT_LT(stats.runs[0], stats.requests) << "every run carried one request";
  expect_invariants_hold();
}

// One lane for every scope: callers that each keep to a scope of their own still queue behind
// one another, and what queues is combined across scopes. Each caller issues one after
// another, so a run of more than one request must have mixed scopes: a lane per scope (which
// never combines here) fails. Every scope stays 1..N in its caller's order.
TEST_P(NumberingTest, QueuedRequestsOfDifferentScopesAreCombinedRace) {
  constexpr int kThreads = 16, kEach = 30;
  // Existing scopes: a batch hands a scope used for the first time back to run alone.
  for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(issue("OWN" + std::to_string(t), "first").ok());
  const CombinerStats before = numbering_.combining();
  std::barrier start(kThreads);
  std::vector<std::vector<std::int64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        auto r = issue("OWN" + std::to_string(t), "#" + std::to_string(i));
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        got[t].push_back(r->document.value);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), static_cast<std::size_t>(kEach));
    for (int i = 0; i < kEach; ++i) EXPECT_EQ(got[t][i], i + 2) << "scope OWN" << t;
    EXPECT_EQ(last_value("OWN" + std::to_string(t)), kEach + 1);
  }
  const CombinerStats after = numbering_.combining();
  EXPECT_EQ(after.requests - before.requests, static_cast<std::uint64_t>(kThreads * kEach));
  EXPECT_GT(after.largest, 1u) << "requests of different scopes were never combined";
  expect_invariants_hold();
}

TEST_P(NumberingTest, EmptyScopeRaceGivesOneToN) {
  // Many first allocations at once in scopes that do not exist yet, round after round.
  constexpr int kThreads = 8, kRounds = 15;
  for (int round = 0; round < kRounds; ++round) {
    const std::string scope = "NEW-" + std::to_string(round);
    std::barrier start(kThreads);
    std::vector<std::int64_t> got(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto r = issue(scope, "racer");
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        got[t] = r->document.value;
      });
    }
    for (auto& th : threads) th.join();
    std::sort(got.begin(), got.end());
    for (int i = 0; i < kThreads; ++i) ASSERT_EQ(got[i], i + 1) << "round " << round;
  }
  expect_invariants_hold();
}

// A width change racing the first numbers of a scope that does not exist yet: either the
// change comes first and every number has the new width, or a number comes first and the
// change is refused. Never a scope whose numbers have two widths (configure found no row to
// lock, an issue created the scope meanwhile, and the write went ahead).
TEST_P(NumberingTest, WidthChangeRacingTheFirstNumbersKeepsOneWidth) {
  constexpr int kIssuers = 3, kRounds = 30;
  int changed = 0, refused = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string scope = "WIDE-" + std::to_string(round);
    std::barrier start(kIssuers + 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < kIssuers; ++t) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        auto r = issue(scope, "racer");
        ASSERT_TRUE(r.ok()) << r.status().to_string();
      });
    }
    Result<Numbering::Configured> configured = Status(Code::internal, "not run");
    threads.emplace_back([&] {
      start.arrive_and_wait();
      configured = numbering_.configure(scope, ScopeFormat{6, 10, 999999}, soon());
    });
    for (auto& th : threads) th.join();
    if (configured.ok()) {
      ++changed;
    } else {
      ASSERT_EQ(configured.status().code(), Code::scope_conflict)
          << configured.status().to_string();
      ++refused;
    }
    const auto width = tdb_.sql("SELECT width FROM doc_scopes WHERE scope = '" + scope + "'");
    ASSERT_EQ(width.size(), 1u);
    EXPECT_EQ(width[0].i64(0), configured.ok() ? 6 : 4) << scope;
    const auto lengths =
        tdb_.sql("SELECT DISTINCT length(number) FROM documents WHERE scope = '" + scope + "'");
    ASSERT_EQ(lengths.size(), 1u) << scope << " mixes number widths";
    EXPECT_EQ(lengths[0].i64(0), width[0].i64(0)) << scope;
  }
  std::printf("width changes: %d taken, %d refused\n", changed, refused);
  expect_invariants_hold();
}

TEST_P(NumberingTest, SameKeyRaceMakesOneDocument) {
  constexpr int kThreads = 8, kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = "race-" + std::to_string(round);
    std::barrier start(kThreads);
    std::vector<std::int64_t> got(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto r = issue("K", "same", key);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        got[t] = r->document.value;
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(std::set<std::int64_t>(got.begin(), got.end()).size(), 1u) << "round " << round;
  }
  EXPECT_EQ(count_documents("K"), kRounds);
  EXPECT_EQ(last_value("K"), kRounds);
  expect_invariants_hold();
}

// Seed 003's two-session script: A takes the next number and holds it; B waits for it;
// A commits → B gets the next one; A rolls back → B gets A's number.
TEST_P(NumberingTest, TwoSessionScriptCommitAndRollbackRace) {
  ASSERT_TRUE(issue("SEQ", "first").ok());
  for (const bool commit : {true, false}) {
    std::latch allocated(1), release(1);
    NumberingOptions options;
    options.fault_after_allocate = [&] {
      allocated.count_down();
      release.wait();
      return commit ? Status::Ok() : Status(Code::internal, "A rolls back");
    };
    Numbering a(*db_, options);
    const auto before = last_value("SEQ");
    Result<Issued> ra = Status(Code::internal, "not run");
    std::thread session_a([&] { ra = a.issue({"SEQ", "A", std::nullopt}, soon()); });
    allocated.wait();
    std::atomic<bool> b_done{false};
    Result<Issued> rb = Status(Code::internal, "not run");
    std::thread session_b([&] {
      rb = issue("SEQ", "B");
      b_done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(b_done.load()) << "B did not wait for A's number";
    release.count_down();
    session_a.join();
    session_b.join();
    ASSERT_TRUE(rb.ok()) << rb.status().to_string();
    if (commit) {
      ASSERT_TRUE(ra.ok()) << ra.status().to_string();
      EXPECT_EQ(ra->document.value, before + 1);
      EXPECT_EQ(rb->document.value, before + 2) << "A committed: B takes the next one";
    } else {
      EXPECT_FALSE(ra.ok());
      EXPECT_EQ(rb->document.value, before + 1) << "A rolled back: B takes A's number";
    }
  }
  expect_invariants_hold();
}

// PostgreSQL row locks: a held counter blocks its own scope only (SQLite has no row lock to
// hold). A Numbering, and a raw session that holds one scope's counter the way a production
// run or a `configure` would.
class PgScopeLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto engines = engines_under_test();
    if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end()) {
      GTEST_SKIP() << "PostgreSQL not configured";
    }
    tdb_.emplace(Engine::postgres);
    db_ = tdb_->open({.pool_size = 4});
    numbering_.emplace(*db_);
  }
  // Holds the counter of `scope` until the caller sends COMMIT on the session returned.
  RawPg& hold(const std::string& scope) {
    holder_.emplace(tdb_->url());
    holder_->exec("BEGIN");
    holder_->exec("SELECT * FROM doc_scopes WHERE scope = '" + scope + "' FOR UPDATE");
    return *holder_;
  }

  std::optional<TestDb> tdb_;
  std::unique_ptr<store::Database> db_;
  std::optional<Numbering> numbering_;
  std::optional<RawPg> holder_;
};

TEST_F(PgScopeLockTest, HeldCounterDelaysOwnScopeOnlyRace) {
  Numbering& numbering = *numbering_;
  ASSERT_TRUE(numbering.issue({"A", "a1", {}}, soon()).ok());
  ASSERT_TRUE(numbering.issue({"B", "b1", {}}, soon()).ok());

  RawPg& holder = hold("A");

  // B is not delayed: it completes while A's counter is held.
  auto b = numbering.issue({"B", "b2", {}}, soon());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->document.value, 2);

  // A waits until the holder ends.
  std::atomic<bool> done{false};
  Result<Issued> a = Status(Code::internal, "not run");
  std::thread waiter([&] {
    a = numbering.issue({"A", "a2", {}}, soon(30));
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(done.load()) << "allocation in A did not wait for the held counter";
  // Nor while A's request waits: B never queues behind it (with a combining lane shared by
  // several scopes, B would wait for the holder, which only ends below, and time out).
  auto b3 = numbering.issue({"B", "b3", {}}, soon());
  ASSERT_TRUE(b3.ok()) << b3.status().to_string();
  EXPECT_EQ(b3->document.value, 3);
  EXPECT_FALSE(done.load());
  holder.exec("COMMIT");
  waiter.join();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->document.value, 2);
}

// A combined batch over several scopes, one of whose counters another transaction holds: the
// batch locks what it can without waiting, commits the other scopes' documents while the
// counter is still held, and the held scope's requests run afterwards, in order, once it is
// free. (A batch that waited for the counter would commit nothing before the holder ends.)
TEST_F(PgScopeLockTest, BatchSkipsAHeldCounterAndIssuesTheRestRace) {
  Numbering& numbering = *numbering_;
  ASSERT_TRUE(numbering.issue({"A", "a1", {}}, soon()).ok());
  ASSERT_TRUE(numbering.issue({"B", "b1", {}}, soon()).ok());

  RawPg& holder = hold("A");

  const std::vector<IssueRequest> batch{
      {"B", "b2", {}}, {"A", "a2", std::string("ka")}, {"C", "c1", {}},
      {"A", "a3", {}}, {"B", "b3", std::string("kb")}, {"A", "a2", std::string("ka")}};
  std::vector<Result<Issued>> answers;
  std::atomic<bool> done{false};
  std::thread runner([&] {
    answers = numbering.issue_batch(batch, soon(30));
    done = true;
  });
  // B's documents are committed while A's counter is still held.
  RawPg reader(tdb_->url());
  bool b_committed = false;
  for (int i = 0; i < 200 && !b_committed; ++i) {
    b_committed = reader.scalar("SELECT count(*) FROM documents WHERE scope = 'B'") == "3";
    if (!b_committed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(b_committed) << "the batch waited for the held counter of A";
  EXPECT_EQ(reader.scalar("SELECT count(*) FROM documents WHERE scope = 'A'"), "1");
  EXPECT_FALSE(done.load()) << "A's requests did not wait for the held counter";
  holder.exec("COMMIT");
  runner.join();
  ASSERT_EQ(answers.size(), batch.size());
  for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(answers[0]->document.value, 2);
  EXPECT_EQ(answers[4]->document.value, 3);
  EXPECT_EQ(answers[2]->document.value, 1);  // C, a scope used for the first time
  // A's three, in arrival order; the second use of key "ka" replays the first.
  EXPECT_EQ(answers[1]->document.value, 2);
  EXPECT_EQ(answers[3]->document.value, 3);
  EXPECT_EQ(answers[5]->document.value, 2);
  EXPECT_TRUE(answers[5]->replayed);
  EXPECT_EQ(answers[5]->document.title, "a2");
}

// Many callers over several scopes while one scope's counter is held: every caller of the
// other scopes finishes before the holder lets go (the shared combining lane never waits for
// it), and the held scope's callers all finish after, gapless.
TEST_F(PgScopeLockTest, CallersOfOtherScopesNeverQueueBehindAHeldCounterRace) {
  Numbering& numbering = *numbering_;
  for (const char* scope : {"HELD", "F1", "F2", "F3"})
    ASSERT_TRUE(numbering.issue({scope, "first", {}}, soon()).ok());
  RawPg& holder = hold("HELD");

  constexpr int kThreads = 12, kEach = 15;
  std::barrier start(kThreads);
  std::atomic<int> free_done{0}, held_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      const bool held = t % 4 == 0;
      for (int i = 0; i < (held ? 1 : kEach); ++i) {
        const std::string scope = held ? "HELD" : "F" + std::to_string(1 + t % 3);
        auto r = numbering.issue({scope, "t" + std::to_string(t), {}}, soon(30));
        ASSERT_TRUE(r.ok()) << r.status().to_string();
      }
      (held ? held_done : free_done).fetch_add(1);
    });
  }
  const int free_callers = kThreads - kThreads / 4;
  for (int i = 0; i < 1000 && free_done.load() < free_callers; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(free_done.load(), free_callers) << "callers of free scopes waited for a held one";
  EXPECT_EQ(held_done.load(), 0) << "the held counter was not waited for";
  holder.exec("COMMIT");
  for (auto& th : threads) th.join();
  RawPg reader(tdb_->url());
  EXPECT_EQ(reader.scalar("SELECT last_value FROM doc_scopes WHERE scope = 'HELD'"),
            std::to_string(1 + kThreads / 4));
  for (const char* scope : {"F1", "F2", "F3"}) {
    EXPECT_EQ(
        reader.scalar(std::string("SELECT count(*) = max(value) FROM documents WHERE scope = '") +
                      scope + "'"),
        "t");
  }
  EXPECT_EQ(reader.scalar("SELECT count(*) FROM documents WHERE scope LIKE 'F%'"),
            std::to_string(3 + free_callers * kEach));
}

// Requests whose counter is held are handed back by the lane and wait in their scope's
// waiting lane: however many, one session of the process waits on the counter's row lock,
// and the rest go as one batch after it. (Each waiting on the lock itself, they would hold
// the counter one after another, the lane would miss it again and hand back the requests
// behind them, which would queue in turn: a hot scope stuck at one request per commit.)
// Once the holder ends, every one is answered, gapless, in one or two transactions.
TEST_F(PgScopeLockTest, ManyHandedBackRequestsAndOneLockWaiterRace) {
  Numbering& numbering = *numbering_;
  ASSERT_TRUE(numbering.issue({"H", "h1", {}}, soon()).ok());
  RawPg& holder = hold("H");
  constexpr int kThreads = 8;
  std::atomic<int> done{0};
  std::vector<Result<Issued>> answers(kThreads, Status(Code::internal, "not run"));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      answers[t] = numbering.issue({"H", "t" + std::to_string(t), {}}, soon(30));
      done.fetch_add(1);
    });
  }
  RawPg reader(tdb_->url());
  const std::string lock_waiters =
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
      "wait_event_type = 'Lock'";
  int most = 0;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    most = std::max(most, std::stoi(reader.scalar(lock_waiters)));
  }
  EXPECT_EQ(most, 1) << "sessions queued on the held counter";
  EXPECT_EQ(done.load(), 0) << "a request did not wait for the held counter";
  const CombinerStats before = numbering.combining();
  holder.exec("COMMIT");
  for (auto& th : threads) th.join();
  std::set<std::int64_t> values;
  for (const auto& a : answers) {
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    values.insert(a->document.value);
  }
  EXPECT_EQ(values.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(*values.begin(), 2);
  EXPECT_EQ(*values.rbegin(), 1 + kThreads);
  // Nothing went back through the main lane after the holder ended: the waiting lane
  // answered them all.
  EXPECT_EQ(numbering.combining().requests, before.requests);
}

// A full scope is answered while another transaction holds its counter, alone and in a
// batch: a request that can only be refused writes nothing, so it neither locks the counter nor
// waits for it. (Locking it first, such a request would wait out the holder and its deadline:
// busy instead of scope_exhausted; and every refusal would cost a commit flush.)
TEST_F(PgScopeLockTest, AFullScopeIsRefusedWhileItsCounterIsHeldRace) {
  Numbering& numbering = *numbering_;
  ASSERT_TRUE(numbering.configure("FULL", ScopeFormat{4, 10, 2}, soon()).ok());
  ASSERT_TRUE(numbering.issue({"FULL", "f1", {}}, soon()).ok());
  ASSERT_TRUE(numbering.issue({"FULL", "f2", {}}, soon()).ok());
  ASSERT_TRUE(numbering.issue({"B", "b1", {}}, soon()).ok());

  RawPg& holder = hold("FULL");
  auto alone = numbering.issue({"FULL", "f3", std::string("k3")}, soon(3));
  EXPECT_EQ(alone.status().code(), Code::scope_exhausted) << alone.status().to_string();

  const std::vector<IssueRequest> batch{
      {"FULL", "f4", {}}, {"B", "b2", {}}, {"FULL", "f5", std::string("k5")}};
  auto answers = numbering.issue_batch(batch, soon(3));
  ASSERT_EQ(answers.size(), batch.size());
  EXPECT_EQ(answers[0].status().code(), Code::scope_exhausted) << answers[0].status().to_string();
  ASSERT_TRUE(answers[1].ok()) << answers[1].status().to_string();
  EXPECT_EQ(answers[1]->document.value, 2);
  EXPECT_EQ(answers[2].status().code(), Code::scope_exhausted) << answers[2].status().to_string();
  holder.exec("COMMIT");

  RawPg reader(tdb_->url());
  EXPECT_EQ(reader.scalar("SELECT last_value FROM doc_scopes WHERE scope = 'FULL'"), "2");
  EXPECT_EQ(reader.scalar("SELECT count(*) FROM documents WHERE scope = 'FULL'"), "2");
  EXPECT_EQ(reader.scalar("SELECT count(*) FROM document_receipts WHERE scope = 'FULL'"), "0");
}

INSTANTIATE_TEST_SUITE_P(Engines, NumberingTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
