// The numbering's waiting lane through the interleaving explorer on PostgreSQL: two
// processes' waiting lanes claim one scope at once (store::NumberingStore::claim_scopes with
// `wait`, the transaction Numbering runs for the requests that queued in a scope's waiting
// lane). The counter is read under its row lock, so the second claim waits and then numbers
// after the first. Read without the lock, both would take MAX+1: the documents' primary key
// refuses the second, and the lane's retry (a unique key met is run again) would hand out
// right numbers in the end. Only the explorer's count of second-line refusals sees it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/test_db.hpp"
#include "isolation/explorer.hpp"
#include "onceorder/core/principal.hpp"
#include "store/numbering_store.hpp"

namespace onceorder::isolation::lane_pairs {
namespace {

using namespace std::chrono_literals;

store::Clock::time_point deadline() { return store::Clock::now() + 60s; }

// The waiting lane's transaction for `titles` in scope S, with the lane's own mapping of a
// unique key met to a re-run (Numbering's issue_scopes): the values, space-separated, or
// the error's code.
std::string waiting_lane_claim(SessionContext& s, std::vector<std::string_view> titles) {
  store::NumberingStore numbers(s.db->dialect());
  std::vector<store::NewDocument> docs;
  for (std::string_view t : titles) docs.push_back({t, kInProcessPrincipal});
  const std::vector<store::ScopeClaim> claims{{"S", std::move(docs), {}}};
  auto r = store::transact<std::string>(
      *s.db, store::write_tx(deadline()), [&](store::Connection& c) -> Result<std::string> {
        auto claimed = numbers.claim_scopes(c, claims, /*wait=*/true, store::Then::commit);
        if (claimed.status().code() == Code::unique_violation)
          return Status(Code::retry_transaction, "a unique key met: run again");
        OO_ASSIGN_OR_RETURN(auto found, std::move(claimed));
        std::string out;
        if (auto it = found.find("S"); it != found.end())
          for (const Document& d : it->second.docs)
            out += (out.empty() ? "" : " ") + std::to_string(d.value);
        return out.empty() ? std::string("nothing") : out;
      });
  return r.ok() ? *r : std::string(code_name(r.status().code()));
}

std::int64_t count(Fixture& f, const std::string& sql) { return f.sql(sql).at(0).i64(0); }

// Each lane got two numbers, one after the other; together `first`..`first`+3, each once, and
// S's documents are 1..last_value.
PairSpec lane_pair(std::string name, bool scope_exists) {
  const std::int64_t first = scope_exists ? 2 : 1;
  return {std::move(name),
          [scope_exists](Fixture& f) {
            if (!scope_exists) return;
            auto issued = f.session[0]->numbering->issue({"S", "first", std::nullopt}, deadline());
            if (!issued.ok()) throw std::runtime_error(issued.status().to_string());
          },
          {[](Fixture&, SessionContext& s) {
             return waiting_lane_claim(s, {"a1", "a2"});
           },
           [](Fixture&, SessionContext& s) {
             return waiting_lane_claim(s, {"b1", "b2"});
           }},
          [first](Fixture& f, const std::string& a, const std::string& b) {
            std::vector<std::string> v;
            const std::set<std::string> blocks{fmt::format("{} {}", first, first + 1),
                                               fmt::format("{} {}", first + 2, first + 3)};
            if (a == b || !blocks.contains(a) || !blocks.contains(b))
              v.push_back(fmt::format("the lanes got {} and {}", a, b));
            const auto last = count(f, "SELECT last_value FROM doc_scopes WHERE scope = 'S'");
            if (last != first + 3) v.push_back(fmt::format("S's counter is {}", last));
            if (count(f, "SELECT count(*) FROM documents WHERE scope = 'S'") != last ||
                count(f, "SELECT max(value) FROM documents WHERE scope = 'S'") != last)
              v.push_back("S's documents are not 1..last_value");
            return v;
          },
          -1};
}

std::vector<PairSpec> lane_pairs() {
  return {lane_pair("waiting lane/waiting lane (one scope)", true),
          lane_pair("waiting lane/waiting lane (a new scope)", false)};
}

class LanePairTest : public ::testing::TestWithParam<int> {
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

TEST_P(LanePairTest, EveryScheduleNumbersEachClaimOnceWithoutARefusal) {
  if (!explorer_) GTEST_SKIP() << "PostgreSQL not configured (SQLite has one writer)";
  const PairSpec pair = lane_pairs().at(static_cast<size_t>(GetParam()));
  const PairReport report = explorer_->explore(pair);
  fmt::print("{}: {} schedules, up to {} steps, {} blocked steps, {} deadlocks, {} refusals\n",
             report.pair, report.schedules, report.max_steps, report.blocked_steps,
             report.deadlocks, report.second_line_refusals);
  for (const auto& [o, n] : report.outcomes) fmt::print("  {:>5} × {}\n", n, o);
  EXPECT_EQ(report.failing_schedules, 0) << report.pair;
  for (const auto& f : report.failures)
    ADD_FAILURE() << report.pair << "\n" << Explorer::describe(f);
  // Some schedule must have made the second claim wait for the first.
  EXPECT_GT(report.blocked_steps, 0);
}

INSTANTIATE_TEST_SUITE_P(Lanes, LanePairTest,
                         ::testing::Range(0, static_cast<int>(lane_pairs().size())),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const auto all = lane_pairs();  // keeps the names alive
                           std::string name;
                           for (char c : all.at(static_cast<size_t>(param.param)).name)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace onceorder::isolation::lane_pairs
