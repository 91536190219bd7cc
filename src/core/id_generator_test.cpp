#include "onceorder/core/id_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

namespace onceorder {
namespace {

constexpr std::int64_t kT0 = 1764460800000;  // 2025-11-30

TEST(IdGenerator, IdsAreUniqueOrderedAndCarryTheirParts) {
  std::int64_t now = kT0;
  IdGenerator gen(42, kT0 - 1000, [&] { return now; });
  auto a = gen.next();
  auto b = gen.next();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(*a, *b);
  EXPECT_EQ(decode_id(*a).ms, kT0);
  EXPECT_EQ(decode_id(*a).node, 42);
  EXPECT_EQ(decode_id(*b).sequence, decode_id(*a).sequence + 1);
  now += 1;
  auto c = gen.next();
  EXPECT_EQ(decode_id(*c).ms, kT0 + 1);
  EXPECT_EQ(decode_id(*c).sequence, 0);
  EXPECT_GT(*c, 0);
  EXPECT_EQ(order_number(*c).size(), 15u);
  EXPECT_NE(order_number(*c), order_number(*b));
}

TEST(IdGenerator, ClockGoingBackwardsIsRefused) {
  std::int64_t now = kT0;
  IdGenerator gen(1, 0, [&] { return now; });
  ASSERT_TRUE(gen.next().ok());
  now -= 1000;  // NTP step back by a second
  auto r = gen.next();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::unavailable);
  EXPECT_NE(r.status().message().find("behind"), std::string::npos);
  now += 1001;  // caught up
  auto ok = gen.next();
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(decode_id(*ok).ms, kT0 + 1);
}

TEST(IdGenerator, NoIdAtOrBeforeThePreviousLeaseEnd) {
  std::atomic<std::int64_t> now = kT0 - 2;  // our clock is 2 ms behind the old lease's end
  IdGenerator gen(7, kT0, [&] { return now.fetch_add(1); });
  auto r = gen.next();  // waits the few ms out
  ASSERT_TRUE(r.ok());
  EXPECT_GT(decode_id(*r).ms, kT0);
}

TEST(IdGenerator, ExhaustedSequenceWaitsForTheNextMillisecond) {
  std::atomic<std::int64_t> now = kT0;
  std::atomic<int> calls = 0;
  IdGenerator gen(3, 0, [&] {
    // The clock advances only after many reads, so the sequence runs out first.
    if (++calls % 50000 == 0) now.fetch_add(1);
    return now.load();
  });
  std::set<std::int64_t> ids;
  std::int64_t prev = 0;
  for (int i = 0; i < 3 * 16384; ++i) {
    auto r = gen.next();
    ASSERT_TRUE(r.ok());
    ASSERT_GT(*r, prev);
    prev = *r;
    ids.insert(*r);
  }
  EXPECT_EQ(ids.size(), 3u * 16384u);
  EXPECT_GE(decode_id(prev).ms, kT0 + 2);
}

TEST(IdGenerator, ManyThreadsNeverShareAnIdRace) {
  IdGenerator gen(9, 0);
  constexpr int kThreads = 4, kEach = 50000;
  std::vector<std::vector<std::int64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      got[t].reserve(kEach);
      for (int i = 0; i < kEach; ++i) got[t].push_back(*gen.next());
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::int64_t> all;
  for (auto& g : got) {
    EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

}  // namespace
}  // namespace onceorder
