// The feed under real concurrency, both engines: writers commit in whatever order the
// database lets them while a reader follows the feed page by page. The reader must see every
// event exactly once (the interleavings that matter are enumerated by the explorer's event
// writer / feed reader pair; this shows it under load). Deliveries of many keys by two workers
// at once keep each key's order.
#include <atomic>
#include <set>
#include <thread>

#include "contract/outbox_fixture.hpp"

namespace onceorder::testing {
namespace {

class OutboxRaceTest : public OutboxTest {};

TEST_P(OutboxRaceTest, AReaderFollowingTheFeedSeesEveryEventOnceWhileWritersCommit) {
  constexpr int kWriters = 6;
  constexpr int kOrdersEach = 40;
  intake();  // the SKU, before the writers start
  std::atomic<int> writers_left{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      Intake own(*db_);
      for (int i = 0; i < kOrdersEach; ++i) {
        auto placed = own.place({100 + w, 1, {{101, 1}}, "k" + std::to_string(i)}, soon());
        EXPECT_TRUE(placed.ok()) << placed.status().to_string();
      }
      writers_left.fetch_sub(1);
    });
  }
  std::vector<std::int64_t> seen;
  FeedPosition after;
  for (;;) {
    const bool last_pass = writers_left.load() == 0;
    if (last_pass) settle_feed();
    auto page = outbox_.read(after, {}, 7, soon());
    ASSERT_TRUE(page.ok()) << page.status().to_string();
    for (const Event& e : page->events) seen.push_back(e.id);
    after = page->next_after;
    if (last_pass && page->events.empty()) break;
  }
  for (auto& t : writers) t.join();
  const std::set<std::int64_t> distinct(seen.begin(), seen.end());
  EXPECT_EQ(distinct.size(), seen.size()) << "an event was read twice";
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kWriters * kOrdersEach))
      << "the reader missed events";
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM events")[0].i64(0), kWriters * kOrdersEach);
}

TEST_P(OutboxRaceTest, TwoWorkersKeepEachKeysOrder) {
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("erp"), soon()).ok());
  std::vector<std::int64_t> orders;
  for (int i = 0; i < 20; ++i) orders.push_back(place(7, "k" + std::to_string(i)));
  for (std::int64_t id : orders) ASSERT_TRUE(intake().cancel(id, soon()).ok());
  ScriptedSender sender;
  auto a = worker(sender);
  auto b = worker(sender);
  std::thread ta([&] {
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(run(a).ok());
  });
  std::thread tb([&] {
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(run(b).ok());
  });
  ta.join();
  tb.join();
  const auto events = all_events();
  std::map<std::int64_t, std::string> type_of;
  for (const Event& e : events) type_of[e.id] = e.type + "/" + e.key;
  std::set<std::string> placed_sent;
  for (std::int64_t id : sender.sent_ids()) {
    const std::string& t = type_of.at(id);
    const std::string key = t.substr(t.find('/') + 1);
    if (t.starts_with("order.placed")) placed_sent.insert(key);
    if (t.starts_with("order.cancelled")) {
      EXPECT_TRUE(placed_sent.contains(key)) << "a cancel overtook its order.placed: " << key;
    }
  }
  EXPECT_EQ(sender.sent.size(), events.size());
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM deliveries WHERE status = 'delivered'")[0].i64(0),
            static_cast<std::int64_t>(events.size()));
}

INSTANTIATE_TEST_SUITE_P(Engines, OutboxRaceTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
