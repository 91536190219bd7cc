#include "onceorder/core/recent_answers.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace onceorder {
namespace {

using Answers = RecentAnswers<std::string, int>;
using Kind = Answers::Entered::Kind;
using Clock = Answers::Clock;
using namespace std::chrono_literals;

Clock::time_point soon() { return Clock::now() + 5s; }

void wait_until_waiting(const Answers& a, const std::string& key, int n) {
  while (a.waiting(key) < n) std::this_thread::yield();
}

TEST(RecentAnswers, WithoutMemoryEveryRequestRunsAndLeaveSaysWhetherTheKeyWasShared) {
  Answers a(0ms, 16);
  const auto first = a.enter("k", 0, soon());
  const auto second = a.enter("k", 0, soon());  // no waiting: both run
  ASSERT_EQ(first.kind, Kind::run);
  ASSERT_EQ(second.kind, Kind::run);
  EXPECT_TRUE(a.leave("k", first, 1));  // another request with the key ran meanwhile
  EXPECT_FALSE(a.leave("k", second, 2));
  EXPECT_EQ(a.enter("k", 0, soon()).kind, Kind::run) << "nothing was remembered";
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.remembered_answers(), 0u);
}

TEST(RecentAnswers, ADecisionIsRememberedForItsKeyAndGeneration) {
  Answers a(1h, 16);
  const auto run = a.enter("k", 3, soon());
  ASSERT_EQ(run.kind, Kind::run);
  EXPECT_FALSE(a.leave("k", run, 42));
  const auto again = a.enter("k", 3, soon());
  ASSERT_EQ(again.kind, Kind::remembered);
  EXPECT_EQ(again.decision, 42);
  EXPECT_EQ(a.enter("other", 3, soon()).kind, Kind::run);
  EXPECT_EQ(a.remembered_answers(), 1u);
}

TEST(RecentAnswers, ARequestWithoutADecisionLeavesNothingToRemember) {
  Answers a(1h, 16);
  const auto run = a.enter("k", 0, soon());
  a.leave("k", run, std::nullopt);  // busy, an error, an unknown outcome
  const auto again = a.enter("k", 0, soon());
  EXPECT_EQ(again.kind, Kind::run);
  EXPECT_EQ(a.size(), 0u);
}

TEST(RecentAnswers, AnotherGenerationForgetsEverything) {
  Answers a(1h, 16);
  a.leave("k", a.enter("k", 0, soon()), 1);
  a.leave("j", a.enter("j", 0, soon()), 2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.enter("k", 1, soon()).kind, Kind::run) << "a connection was found dead since";
  EXPECT_EQ(a.size(), 0u) << "every entry of the old generation went";
  // A decision made by a request that entered before the generation changed is doubtful
  // too: it is remembered with the generation it entered in, and so never answers.
  const auto before = a.enter("x", 1, soon());
  a.leave("x", before, 7);
  EXPECT_EQ(a.enter("x", 2, soon()).kind, Kind::run);
}

TEST(RecentAnswers, MemoryEndsTtlAfterTheDecidedRequestEntered) {
  Answers a(50ms, 16);
  const auto run = a.enter("k", 0, soon());
  std::this_thread::sleep_for(60ms);  // the request ran longer than the memory lasts
  a.leave("k", run, 1);
  EXPECT_EQ(a.enter("k", 0, soon()).kind, Kind::run) << "expired before it was decided";
  const auto quick = a.enter("q", 0, soon());
  a.leave("q", quick, 2);
  ASSERT_EQ(a.enter("q", 0, soon()).kind, Kind::remembered);
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(a.enter("q", 0, soon()).kind, Kind::run);
}

TEST(RecentAnswers, TheOldestDecisionsAreForgottenPastCapacity) {
  Answers a(1h, 2);
  for (const char* k : {"a", "b", "c"}) a.leave(k, a.enter(k, 0, soon()), 1);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a.enter("a", 0, soon()).kind, Kind::run);
  EXPECT_EQ(a.enter("b", 0, soon()).kind, Kind::remembered);
  EXPECT_EQ(a.enter("c", 0, soon()).kind, Kind::remembered);
}

TEST(RecentAnswers, ARequestWhoseKeyIsRunningWaitsForItsDecision) {
  Answers a(1h, 16);
  const auto run = a.enter("k", 0, soon());
  std::optional<Answers::Entered> second;
  std::thread waiter([&] { second = a.enter("k", 0, soon()); });
  wait_until_waiting(a, "k", 1);
  EXPECT_FALSE(a.leave("k", run, 5)) << "a waiter is not a second runner";
  waiter.join();
  ASSERT_EQ(second->kind, Kind::remembered);
  EXPECT_EQ(second->decision, 5);
}

TEST(RecentAnswers, WhenTheRunningRequestEndsWithoutADecisionOneWaiterRunsAtATime) {
  Answers a(1h, 16);
  const auto run = a.enter("k", 0, soon());
  std::array<std::optional<Answers::Entered>, 2> w;
  std::atomic<int> ran{-1}, runs{0};
  std::latch one_ran(1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      w[i] = a.enter("k", 0, soon());
      if (w[i]->kind == Kind::run && runs.fetch_add(1) == 0) {
        ran = i;
        one_ran.count_down();
      }
    });
  }
  wait_until_waiting(a, "k", 2);
  a.leave("k", run, std::nullopt);
  one_ran.wait();
  // One of them runs; the other waits again, for the one that runs.
  wait_until_waiting(a, "k", 1);
  const int runner = ran.load();
  ASSERT_GE(runner, 0);
  EXPECT_FALSE(a.leave("k", *w[runner], 9));
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  const auto& other = *w[1 - runner];
  EXPECT_EQ(other.kind, Kind::remembered);
  EXPECT_EQ(other.decision, 9);
}

TEST(RecentAnswers, AWaiterGivesUpAtItsDeadline) {
  Answers a(1h, 16);
  const auto run = a.enter("k", 0, soon());
  const auto late = a.enter("k", 0, Clock::now() + 20ms);
  EXPECT_EQ(late.kind, Kind::gave_up);
  EXPECT_EQ(a.waiting("k"), 0);
  a.leave("k", run, 1);
  EXPECT_EQ(a.enter("k", 0, soon()).kind, Kind::remembered);
}

TEST(RecentAnswers, RunNowNeitherWaitsNorAnswersFromMemory) {
  Answers a(1h, 16);
  a.leave("k", a.enter("k", 0, soon()), 1);
  const auto first = a.run_now("k");
  const auto second = a.run_now("k");  // two requests of one key run together
  EXPECT_EQ(first.kind, Kind::run);
  EXPECT_EQ(second.kind, Kind::run);
  EXPECT_TRUE(a.leave("k", first, std::nullopt));
  EXPECT_FALSE(a.leave("k", second, std::nullopt));
}

}  // namespace
}  // namespace onceorder
