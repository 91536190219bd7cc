#include "onceorder/core/combiner.hpp"

#include <gtest/gtest.h>

#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

namespace onceorder {
namespace {

using Clock = std::chrono::steady_clock;
using IntCombiner = Combiner<int, int>;

Clock::time_point in_seconds(int s) { return Clock::now() + std::chrono::seconds(s); }

// Blocks the first run of a key until released, so that later requests queue behind it.
struct Gate {
  std::latch entered{1};
  std::latch release{1};
};

void wait_until_queued(const IntCombiner& c, std::string_view key, std::size_t n) {
  while (c.waiting(key) < n) std::this_thread::yield();
}

TEST(Combiner, LoneRequestRunsAtOnceOnTheCallersThread) {
  std::thread::id ran_on;
  IntCombiner c(
      64,
      [&](const int& r, Clock::time_point) {
        ran_on = std::this_thread::get_id();
        return r * 10;
      },
      [](std::span<const int>, Clock::time_point) -> std::vector<int> {
        ADD_FAILURE() << "a lone request was batched";
        return {};
      });
  EXPECT_EQ(c.run("k", 4, in_seconds(5)), 40);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(c.run("k", 5, in_seconds(5)), 50);  // the key went idle again
  const CombinerStats s = c.stats();
  EXPECT_EQ(s.runs[0], 2u);
  EXPECT_EQ(s.requests, 2u);
  EXPECT_EQ(s.largest, 1u);
}

TEST(Combiner, QueuedRequestsRunAsOneBatchInArrivalOrderAndEachGetsItsAnswer) {
  Gate gate;
  std::vector<int> batch_seen;
  std::thread::id batch_on;
  IntCombiner c(
      64,
      [&](const int& r, Clock::time_point) {
        if (r == 0) {
          gate.entered.count_down();
          gate.release.wait();
        }
        return r * 10;
      },
      [&](std::span<const int> rs, Clock::time_point) {
        batch_seen.assign(rs.begin(), rs.end());
        batch_on = std::this_thread::get_id();
        std::vector<int> out;
        for (int r : rs) out.push_back(r * 10);
        return out;
      });
  std::optional<int> first;
  std::thread runner([&] { first = c.run("k", 0, in_seconds(5)); });
  gate.entered.wait();
  std::vector<std::optional<int>> answers(3);
  std::vector<std::thread> waiters;
  std::vector<std::thread::id> ids(3);
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&, i] {
      ids[i] = std::this_thread::get_id();
      answers[i] = c.run("k", i + 1, in_seconds(5));
    });
    wait_until_queued(c, "k", static_cast<std::size_t>(i + 1));
  }
  // Another key never waits for this one.
  EXPECT_EQ(c.run("other", 7, in_seconds(5)), 70);
  gate.release.count_down();
  runner.join();
  for (auto& w : waiters) w.join();
  EXPECT_EQ(first, 0);
  EXPECT_EQ(batch_seen, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(batch_on, ids[0]) << "the first waiter leads its batch";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(answers[i], (i + 1) * 10);
  const CombinerStats s = c.stats();
  EXPECT_EQ(s.largest, 3u);
  EXPECT_EQ(s.requests, 5u);
  EXPECT_EQ(s.runs[2], 1u);  // the batch of 3 in bucket le=4
}

TEST(Combiner, BatchesAreBoundedAndTheNextOnesFollow) {
  Gate gate;
  std::vector<std::size_t> sizes;
  IntCombiner c(
      2,
      [&](const int& r, Clock::time_point) {
        if (r == 0) {
          gate.entered.count_down();
          gate.release.wait();
        }
        sizes.push_back(1);
        return r;
      },
      [&](std::span<const int> rs, Clock::time_point) {
        sizes.push_back(rs.size());
        return std::vector<int>(rs.begin(), rs.end());
      });
  std::thread runner([&] { (void)c.run("k", 0, in_seconds(5)); });
  gate.entered.wait();
  std::vector<std::thread> waiters;
  std::vector<std::optional<int>> answers(5);
  for (int i = 0; i < 5; ++i) {
    waiters.emplace_back([&, i] { answers[i] = c.run("k", i + 1, in_seconds(5)); });
    wait_until_queued(c, "k", static_cast<std::size_t>(i + 1));
  }
  gate.release.count_down();
  runner.join();
  for (auto& w : waiters) w.join();
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1, 2, 2, 1}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(answers[i], i + 1);
}

// A run takes its successors early (claim_next): the same ones every time it asks, run as
// the next batch even past a member's deadline; a request that arrives after the claim
// waits for the batch after that. Refused by `accept`, a claim takes nothing.
TEST(Combiner, ARunClaimsItsSuccessorsEarlyAndTheyRunNextAsOneBatch) {
  Gate gate;
  std::latch claimed{1};
  std::latch late_queued{1};
  std::vector<std::vector<int>> runs;
  std::vector<int> first_claim, second_claim, refused, refused_offer;
  std::size_t refused_left = 0;
  IntCombiner* self = nullptr;
  IntCombiner c(
      2,
      [&](const int& r, Clock::time_point) {
        if (r == 0) {
          gate.entered.count_down();
          gate.release.wait();
          // Refused: nothing taken (asked with what it would take: 1 and 2, not 3).
          std::vector<int> offered;
          refused = self->claim_next("k", [&](std::span<const int> would) {
            offered.assign(would.begin(), would.end());
            return false;
          });
          refused_offer = offered;
          refused_left = self->waiting("k");
          first_claim = self->claim_next("k");
          claimed.count_down();
          late_queued.wait();
          // Past member 1's deadline by now: it was taken, so it still runs.
          std::this_thread::sleep_for(std::chrono::milliseconds(400));
          second_claim = self->claim_next("k");
        }
        runs.push_back({r});
        return r;
      },
      [&](std::span<const int> rs, Clock::time_point) {
        runs.emplace_back(rs.begin(), rs.end());
        return std::vector<int>(rs.begin(), rs.end());
      });
  self = &c;
  std::thread runner([&] { (void)c.run("k", 0, in_seconds(5)); });
  gate.entered.wait();
  std::vector<std::optional<int>> answers(4);
  std::vector<std::thread> waiters;
  const auto deadline_of = [](int i) {
    return i == 1 ? Clock::now() + std::chrono::milliseconds(300) : in_seconds(5);
  };
  for (int i = 1; i <= 3; ++i) {
    waiters.emplace_back([&, i] { answers[i] = c.run("k", i, deadline_of(i)); });
    wait_until_queued(c, "k", static_cast<std::size_t>(i));
  }
  gate.release.count_down();
  claimed.wait();
  EXPECT_EQ(c.waiting("k"), 1u);  // 3 stays queued: the claim took at most max_batch
  waiters.emplace_back([&] { (void)c.run("k", 4, in_seconds(5)); });
  wait_until_queued(c, "k", 2);
  late_queued.count_down();
  runner.join();
  for (auto& w : waiters) w.join();
  EXPECT_TRUE(refused.empty());
  EXPECT_EQ(refused_offer, (std::vector<int>{1, 2}));
  EXPECT_EQ(refused_left, 3u);
  EXPECT_EQ(first_claim, (std::vector<int>{1, 2}));
  EXPECT_EQ(second_claim, first_claim);
  EXPECT_EQ(runs, (std::vector<std::vector<int>>{{0}, {1, 2}, {3, 4}}));
  EXPECT_EQ(answers[1], 1);
  EXPECT_EQ(answers[2], 2);
  EXPECT_EQ(answers[3], 3);
}

TEST(Combiner, ClaimingOutsideARunIsAnError) {
  IntCombiner c(
      2, [](const int& r, Clock::time_point) { return r; },
      [](std::span<const int> rs, Clock::time_point) {
        return std::vector<int>(rs.begin(), rs.end());
      });
  EXPECT_THROW((void)c.claim_next("k"), std::logic_error);
}

TEST(Combiner, AWaiterStillQueuedAtItsDeadlineLeavesUnrun) {
  Gate gate;
  std::vector<int> ran;
  IntCombiner c(
      64,
      [&](const int& r, Clock::time_point) {
        if (r == 0) {
          gate.entered.count_down();
          gate.release.wait();
        }
        ran.push_back(r);
        return r;
      },
      [&](std::span<const int> rs, Clock::time_point) {
        ran.insert(ran.end(), rs.begin(), rs.end());
        return std::vector<int>(rs.begin(), rs.end());
      });
  std::thread runner([&] { (void)c.run("k", 0, in_seconds(5)); });
  gate.entered.wait();
  const auto t0 = Clock::now();
  EXPECT_EQ(c.run("k", 1, Clock::now() + std::chrono::milliseconds(50)), std::nullopt);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(50));
  EXPECT_EQ(c.waiting("k"), 0u);
  gate.release.count_down();
  runner.join();
  EXPECT_EQ(ran, (std::vector<int>{0}));
}

TEST(Combiner, AnExceptionReachesEveryMemberOfItsRun) {
  Gate gate;
  IntCombiner c(
      64,
      [&](const int& r, Clock::time_point) {
        if (r == 0) {
          gate.entered.count_down();
          gate.release.wait();
        }
        return r;
      },
      [](std::span<const int>, Clock::time_point) -> std::vector<int> {
        throw std::runtime_error("batch failed");
      });
  std::thread runner([&] { (void)c.run("k", 0, in_seconds(5)); });
  gate.entered.wait();
  std::vector<std::thread> waiters;
  std::vector<int> threw(2, 0);
  for (int i = 0; i < 2; ++i) {
    waiters.emplace_back([&, i] {
      try {
        (void)c.run("k", i + 1, in_seconds(5));
      } catch (const std::runtime_error&) {
        threw[i] = 1;
      }
    });
    wait_until_queued(c, "k", static_cast<std::size_t>(i + 1));
  }
  gate.release.count_down();
  runner.join();
  for (auto& w : waiters) w.join();
  EXPECT_EQ(threw, (std::vector<int>{1, 1}));
  EXPECT_EQ(c.run("k", 9, in_seconds(5)), 9) << "the key is usable again";
}

}  // namespace
}  // namespace onceorder
