#include "store/sqlite/writer_turns.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace onceorder::store::sqlite {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(WriterTurns, OneQueuePerFile) {
  EXPECT_EQ(WriterTurns::of("/tmp/oo-turns-a.db"), WriterTurns::of("/tmp/./oo-turns-a.db"));
  EXPECT_NE(WriterTurns::of("/tmp/oo-turns-a.db"), WriterTurns::of("/tmp/oo-turns-b.db"));
}

// A holder that gives its turn back and asks again at once (a batch's loop) goes behind the
// writer already waiting: the waiter is served next, every time.
TEST(WriterTurns, AWriterAskingAgainGoesBehindTheOneWaiting) {
  WriterTurns turns;
  ASSERT_TRUE(turns.take(Clock::now() + 1s));
  std::atomic<bool> waiter_served{false};
  std::thread waiter([&] {
    ASSERT_TRUE(turns.take(Clock::now() + 5s));
    waiter_served = true;
    std::this_thread::sleep_for(20ms);
    turns.give_back();
  });
  std::this_thread::sleep_for(50ms);  // the waiter is in line
  turns.give_back();
  ASSERT_TRUE(turns.take(Clock::now() + 5s));
  EXPECT_TRUE(waiter_served) << "the loop took its turn back before the waiting writer";
  turns.give_back();
  waiter.join();
}

// A writer whose turn does not come by its deadline leaves the line without the turn, and the
// writer behind it is not held up by it.
TEST(WriterTurns, AWriterPastItsDeadlineLeavesTheLine) {
  WriterTurns turns;
  ASSERT_TRUE(turns.take(Clock::now() + 1s));
  std::atomic<int> outcome{-1};
  std::thread late([&] { outcome = turns.take(Clock::now() + 30ms) ? 1 : 0; });
  std::atomic<bool> next_served{false};
  std::thread next([&] {
    std::this_thread::sleep_for(10ms);  // behind `late`
    next_served = turns.take(Clock::now() + 5s);
    if (next_served) turns.give_back();
  });
  late.join();
  EXPECT_EQ(outcome, 0);
  turns.give_back();
  next.join();
  EXPECT_TRUE(next_served);
}

}  // namespace
}  // namespace onceorder::store::sqlite
