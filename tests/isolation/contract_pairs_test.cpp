// Issue 49's contract rules through the interleaving explorer on PostgreSQL (SQLite has one
// writer): a scope's first number against a width change (the scope does not exist yet, so the
// change finds no row to lock), and an order that commits late against a follower of
// GET /v1/orders?order=asc. After each schedule every invariant and the pair's own
// postcondition must hold.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <thread>

#include "common/test_db.hpp"
#include "isolation/explorer.hpp"
#include "onceorder/service/listings.hpp"

namespace onceorder::isolation::contract_pairs {
namespace {

using namespace std::chrono_literals;

store::Clock::time_point deadline_ahead() { return store::Clock::now() + 60s; }

std::string error_code(const Status& st) { return std::string(code_name(st.code())); }

// --- first number / width change -------------------------------------------------------------

PairSpec first_number_and_width_change() {
  return {"first number/width change of a new scope",
          [](Fixture&) {},
          {[](Fixture&, SessionContext& s) {
             auto r = s.numbering->issue({"S", "first", std::nullopt}, deadline_ahead());
             return r.ok() ? r->document.number : error_code(r.status());
           },
           [](Fixture&, SessionContext& s) {
             auto r = s.numbering->configure("S", {6, 10, 999999}, deadline_ahead());
             return r.ok() ? std::string("configured") : error_code(r.status());
           }},
          [](Fixture& f, const std::string& a, const std::string& b) {
            std::vector<std::string> v;
            const auto width = f.sql("SELECT width FROM doc_scopes WHERE scope = 'S'");
            const auto lengths =
                f.sql("SELECT DISTINCT length(number) FROM documents WHERE scope = 'S'");
            if (width.size() != 1 || lengths.size() != 1 || lengths[0].i64(0) != width[0].i64(0))
              v.push_back("S's numbers do not all have its width");
            // The change either came first (every number has 6 digits) or was refused.
            if (b == "configured" && a != "000001") v.push_back("width 6 taken, yet issued " + a);
            if (b == "scope_conflict" && a != "0001") v.push_back("refused, yet issued " + a);
            if (b != "configured" && b != "scope_conflict") v.push_back("configure answered " + b);
            return v;
          },
          -1};
}

// --- late order / follower -------------------------------------------------------------------

// What session B's follower read, for the postcondition (written by B's thread, read after it
// was joined).
struct Followed {
  std::vector<std::int64_t> ids;
  std::optional<FeedPosition> next_after;
};
Followed& followed() {
  static Followed seen;
  return seen;
}

std::string place_for(SessionContext& s, std::int64_t customer, std::int64_t sku,
                      const std::string& key) {
  auto r = s.intake->place({customer, 1, {{sku, 1}}, key}, deadline_ahead());
  if (!r.ok()) return error_code(r.status());
  return r->out_of_stock ? "out_of_stock" : "placed";
}

// Every order read once by B's page and the pages after it, once every transaction ended.
std::vector<std::string> every_order_once(Fixture& f) {
  std::map<std::int64_t, int> times;
  for (auto id : followed().ids) ++times[id];
  OrderFilter all;
  all.limit = 1000;
  FeedPosition at = followed().next_after.value_or(FeedPosition{});
  const auto give_up = store::Clock::now() + 20s;
  while (times.size() < f.sql("SELECT order_id FROM orders").size() &&
         store::Clock::now() < give_up) {
    auto page = follow_orders(*f.control, all, at, deadline_ahead());
    if (!page.ok()) return {"final read: " + page.status().to_string()};
    for (const auto& o : page->orders) ++times[o.order_id];
    if (page->next_after) at = *page->next_after;
    if (page->orders.empty()) std::this_thread::sleep_for(1ms);
  }
  std::vector<std::string> v;
  for (const auto& r : f.sql("SELECT order_id FROM orders ORDER BY order_id")) {
    const int n = times[r.i64(0)];
    if (n != 1) v.push_back(fmt::format("order {} followed {} times", r.i64(0), n));
  }
  return v;
}

// A places an order; B places another (which may commit first), then reads a follower's page
// from the start.
PairSpec late_order_and_follower() {
  return {"order placement/follower (orders ascending)",
          [](Fixture& f) {
            followed() = {};
            for (std::int64_t sku : {101, 202}) {
              auto r = f.session[0]->stock->put_sku(1, sku, 100, 10, deadline_ahead());
              if (!r.ok()) throw std::runtime_error("put_sku: " + r.status().to_string());
            }
          },
          {[](Fixture&, SessionContext& s) { return place_for(s, 1, 101, "a"); },
           [](Fixture&, SessionContext& s) {
             const std::string placed = place_for(s, 2, 202, "b");
             OrderFilter all;
             all.limit = 1000;
             auto page = follow_orders(*s.db, all, {}, deadline_ahead());
             if (!page.ok()) return placed + ", " + error_code(page.status());
             for (const auto& o : page->orders) followed().ids.push_back(o.order_id);
             followed().next_after = page->next_after;
             return fmt::format("{}, followed {}", placed, page->orders.size());
           }},
          [](Fixture& f, const std::string& a, const std::string& b) {
            auto v = every_order_once(f);
            if (a != "placed" || b.rfind("placed, followed", 0) != 0)
              v.push_back("not placed and followed: " + a + " / " + b);
            return v;
          },
          2};
}

std::vector<PairSpec> contract_pair_list() {
  return {first_number_and_width_change(), late_order_and_follower()};
}

class ContractPairTest : public ::testing::TestWithParam<int> {
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
    delete explorer_;
    delete db_;
    explorer_ = nullptr;
    db_ = nullptr;
  }
  static inline testing::TestDb* db_ = nullptr;
  static inline Explorer* explorer_ = nullptr;
};

TEST_P(ContractPairTest, EveryScheduleKeepsEveryInvariant) {
  if (!explorer_) GTEST_SKIP() << "PostgreSQL not configured (SQLite has one writer)";
  const auto all = contract_pair_list();
  const PairSpec& pair = all.at(static_cast<size_t>(GetParam()));
  const PairReport report = explorer_->explore(pair);
  fmt::print("{}: {} schedules, up to {} steps, {} blocked steps, {} nondeterministic\n",
             report.pair, report.schedules, report.max_steps, report.blocked_steps,
             report.nondeterministic);
  for (const auto& [o, n] : report.outcomes) fmt::print("  {:>5} × {}\n", n, o);
  EXPECT_GT(report.schedules, 1);
  EXPECT_EQ(report.failing_schedules, 0) << report.pair;
  for (const auto& f : report.failures)
    ADD_FAILURE() << report.pair << "\n" << Explorer::describe(f);
}

INSTANTIATE_TEST_SUITE_P(Contract, ContractPairTest,
                         ::testing::Range(0, static_cast<int>(contract_pair_list().size())),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const auto all = contract_pair_list();
                           std::string name;
                           for (char c : all.at(static_cast<size_t>(param.param)).name)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace onceorder::isolation::contract_pairs
