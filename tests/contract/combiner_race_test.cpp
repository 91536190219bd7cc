// The combiner's hand-offs under real contention, in race_tests so that ThreadSanitizer runs
// them: threads are woken after the combiner's mutex is released, so a waiter can be woken
// (or time out) while the thread that answered it still holds on to it. No database: what is
// checked is the mechanism (src/core/combiner_test.cpp has its single steps).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "onceorder/core/combiner.hpp"

namespace onceorder {
namespace {

using Clock = std::chrono::steady_clock;

struct Req {
  int id = 0;
  int key = 0;
};

// 16 threads over three keys, runs of up to 8 that take a moment, and one request in four
// with a deadline of 200 µs, so that waiters time out while queued and at hand-off. Every
// request is run at most once; one that got an answer was run exactly once and got its own;
// one that got none (its deadline passed while queued) was never run; a key never has two
// runs at once; no waiter is left unwoken; and batches formed. Every other run claims its
// successors early (claim_next, as an order batch opening the next one does): the key's next
// run is then exactly those requests, even those whose deadline passed meanwhile.
TEST(CombinerRace, EveryRequestRunsAtMostOnceAndGetsItsOwnAnswer) {
  constexpr int kThreads = 16, kEach = 250, kKeys = 3;
  std::array<std::atomic<int>, kKeys> running{};
  std::atomic<int> overlaps{0}, mixed{0}, claims{0}, not_as_claimed{0};
  // Per key, the ids its running run claimed for the next one (only that key's runs, one at a
  // time, touch it).
  std::array<std::vector<int>, kKeys> claimed;
  std::array<int, kKeys> runs_of{};
  Combiner<Req, int>* self = nullptr;
  // At a run's start: it is what the run before claimed, if it claimed.
  const auto check_claim = [&](int key, std::span<const Req> rs) {
    if (claimed[key].empty()) return;
    std::vector<int> ids;
    for (const Req& r : rs) ids.push_back(r.id);
    if (ids != claimed[key]) not_as_claimed.fetch_add(1);
    claimed[key].clear();
  };
  // Before a run ends: every other one claims.
  const auto claim = [&](int key) {
    if (++runs_of[key] % 2 != 0) return;
    const auto two_or_more = [](std::span<const Req> would) { return would.size() >= 2; };
    for (const Req& r : self->claim_next("k" + std::to_string(key), two_or_more))
      claimed[key].push_back(r.id);
    if (!claimed[key].empty()) claims.fetch_add(1);
  };
  std::vector<std::atomic<int>> ran(kThreads * kEach);
  const auto enter = [&](int key) {
    if (running[key].fetch_add(1) != 0) overlaps.fetch_add(1);
  };
  const auto work = [](std::size_t n) {
    std::this_thread::sleep_for(std::chrono::microseconds(20 + 10 * static_cast<int>(n)));
  };
  Combiner<Req, int> combiner(
      8,
      [&](const Req& r, Clock::time_point) {
        enter(r.key);
        check_claim(r.key, std::span<const Req>(&r, 1));
        ran[r.id].fetch_add(1);
        work(1);
        claim(r.key);
        running[r.key].fetch_sub(1);
        return 2 * r.id;
      },
      [&](std::span<const Req> rs, Clock::time_point) {
        enter(rs.front().key);
        check_claim(rs.front().key, rs);
        std::vector<int> out;
        for (const Req& r : rs) {
          if (r.key != rs.front().key) mixed.fetch_add(1);
          ran[r.id].fetch_add(1);
          out.push_back(2 * r.id);
        }
        work(rs.size());
        claim(rs.front().key);
        running[rs.front().key].fetch_sub(1);
        return out;
      });
  self = &combiner;
  std::vector<std::atomic<int>> answered(kThreads * kEach), unanswered(kThreads * kEach);
  std::atomic<int> wrong{0}, stalled{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::minstd_rand rng(static_cast<unsigned>(t) + 1);
      start.arrive_and_wait();
      for (int i = 0; i < kEach && stalled.load() == 0; ++i) {
        const Req r{t * kEach + i, static_cast<int>(rng() % kKeys)};
        const auto deadline = Clock::now() + (rng() % 4 == 0 ? std::chrono::microseconds(200)
                                                             : std::chrono::seconds(3));
        const auto asked = Clock::now();
        const auto answer = combiner.run("k" + std::to_string(r.key), r, deadline);
        // Not a speed check: each request waits for a few runs of well under a millisecond,
        // so a second means a waiter nobody woke (it then runs only at its deadline). The
        // threads then stop rather than stall on every hand-off.
        if (Clock::now() - asked > std::chrono::seconds(1)) stalled.fetch_add(1);
        if (!answer) {
          unanswered[r.id].fetch_add(1);
        } else {
          answered[r.id].fetch_add(1);
          if (*answer != 2 * r.id) wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  int never_ran_answered = 0, ran_unanswered = 0, twice = 0, timed_out = 0;
  for (int id = 0; id < kThreads * kEach; ++id) {
    if (ran[id] > 1) ++twice;
    if (answered[id] == 1 && ran[id] != 1) ++never_ran_answered;
    if (unanswered[id] == 1 && ran[id] != 0) ++ran_unanswered;
    timed_out += unanswered[id];
    if (stalled.load() == 0) {
      ASSERT_EQ(answered[id] + unanswered[id], 1) << "request " << id;
    }
  }
  EXPECT_EQ(twice, 0);
  EXPECT_EQ(never_ran_answered, 0);
  EXPECT_EQ(ran_unanswered, 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(stalled.load(), 0) << "a waiter was not woken";
  EXPECT_EQ(overlaps.load(), 0) << "two runs of one key at once";
  EXPECT_EQ(mixed.load(), 0) << "a batch mixed keys";
  EXPECT_GT(claims.load(), 0) << "no run claimed its successors";
  EXPECT_EQ(not_as_claimed.load(), 0) << "a run was not the requests claimed for it";
  const CombinerStats stats = combiner.stats();
  EXPECT_GT(stats.largest, 1u) << "nothing was combined: the test raced nothing";
  if (stalled.load() == 0) {
    EXPECT_EQ(stats.requests + static_cast<std::uint64_t>(timed_out),
              static_cast<std::uint64_t>(kThreads * kEach));
  }
  // Every key is idle again: a request for each runs at once, alone.
  for (int k = 0; k < kKeys; ++k) {
    EXPECT_EQ(combiner.waiting("k" + std::to_string(k)), 0u);
    EXPECT_EQ(
        combiner.run("k" + std::to_string(k), Req{0, k}, Clock::now() + std::chrono::seconds(5)),
        0);
  }
}

}  // namespace
}  // namespace onceorder
