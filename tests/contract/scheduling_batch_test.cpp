// Set-based completion (Scheduler::complete) against the item-by-item path it replaces
// (Scheduler::complete_each), on every engine: the same claimed batch, prepared the same way
// in two fresh databases, must leave the same items, production orders, documents and
// counters, answer the same count, and keep every invariant.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "contract/scheduling_fixture.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder::testing {
namespace {

using BatchTable = std::vector<std::vector<std::string>>;

// A step that fails for chosen orders and otherwise numbers like the standard step, but
// writes for itself (no `numbered`): the batch takes the per-claim production path.
class BatchOwnStep final : public ProductionStep {
 public:
  explicit BatchOwnStep(std::set<std::string> failing = {}) : failing_(std::move(failing)) {}
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    if (failing_.contains(claim.key.order_no)) return Status(Code::internal, "machine jammed");
    return standard_production_step()->produce(claim, issuer);
  }

 private:
  std::set<std::string> failing_;
};

// The standard step for orders ending in an even digit, its own writing for the others.
class BatchHalfStep final : public ProductionStep {
 public:
  Result<ProductionOrder> produce(const Claim& claim, DocumentIssuer& issuer) override {
    return standard_production_step()->produce(claim, issuer);
  }
  std::optional<NumberedProduction> numbered(const Claim& claim) override {
    if ((claim.key.order_no.back() - '0') % 2 != 0) return std::nullopt;
    return standard_production_step()->numbered(claim);
  }
};

// One side of the comparison: a fresh database, orders imported, one run, its items claimed.
struct BatchSide {
  explicit BatchSide(Engine engine, const SchedulerOptions& o)
      : tdb(engine), db(tdb.open(options())), scheduler(*db, o) {}

  store::DatabaseOptions options() {
    store::DatabaseOptions d;
    d.pool_size = 4;
    d.statement_hook = [this](std::string_view name) {
      std::lock_guard lock(mu);
      statements.emplace_back(name);
    };
    return d;
  }
  std::vector<std::string> sent() {
    std::lock_guard lock(mu);
    return statements;
  }
  bool sent(const std::string& name) {
    auto all = sent();
    return std::find(all.begin(), all.end(), name) != all.end();
  }

  BatchTable table(const std::string& sql) {
    BatchTable out;
    for (const auto& r : tdb.sql(sql)) {
      std::vector<std::string> row;
      for (size_t i = 0; i < r.size(); ++i) row.push_back(r.is_null(i) ? "NULL" : r.text(i));
      out.push_back(std::move(row));
    }
    return out;
  }

  std::mutex mu;
  std::vector<std::string> statements;  // names of the statements sent, in order
  TestDb tdb;
  std::unique_ptr<store::Database> db;
  Scheduler scheduler;
  std::vector<Claim> claims;
};

struct BatchScenario {
  std::vector<SourceOrder> orders;
  SchedulerOptions options;
  // Runs on each side before the claim (e.g. a narrow scope).
  std::function<void(BatchSide&)> before_claim = [](BatchSide&) {};
  // Runs on each side after the claim (a lost claim, a cancel).
  std::function<void(BatchSide&)> after_claim = [](BatchSide&) {};
  std::int64_t expected_success = -1;
  // How the set-based side must have completed the batch.
  enum class Path { one_statement, set_fence, fallback } path = Path::fallback;
};

class SchedulingBatchTest : public ::testing::TestWithParam<Engine> {
 protected:
  std::string now() const {
    return GetParam() == Engine::postgres ? "now()" : "'2026-12-01T00:00:00.000Z'";
  }

  void prepare(BatchSide& side, const BatchScenario& sc) {
    ASSERT_TRUE(side.scheduler.import_source_orders(sc.orders, soon()).ok());
    sc.before_claim(side);
    auto run = side.scheduler.create_run(RunKind::batch, std::nullopt, soon());
    ASSERT_TRUE(run.ok()) << run.status().to_string();
    auto claims = side.scheduler.claim(run->run.run_id, 1000);
    ASSERT_TRUE(claims.ok()) << claims.status().to_string();
    ASSERT_EQ(claims->size(), sc.orders.size());
    side.claims = std::move(*claims);
    sc.after_claim(side);
  }

  void compare(const BatchScenario& sc) {
    BatchSide set_based(GetParam(), sc.options);
    BatchSide each(GetParam(), sc.options);
    ASSERT_NO_FATAL_FAILURE(prepare(set_based, sc));
    ASSERT_NO_FATAL_FAILURE(prepare(each, sc));
    {
      std::lock_guard lock(set_based.mu);
      set_based.statements.clear();
    }
    auto a = set_based.scheduler.complete(set_based.claims);
    const auto sent = set_based.sent();
    auto b = each.scheduler.complete_each(each.claims);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_EQ(*a, *b);
    const std::string all = fmt::format("{}", fmt::join(sent, " "));
    using Path = BatchScenario::Path;
    if (sc.path == Path::one_statement && GetParam() == Engine::postgres) {
      // One statement for the whole batch, carrying its COMMIT: one round trip.
      EXPECT_EQ(sent, std::vector<std::string>{"sch_complete_numbered"}) << all;
    } else if (sc.path != Path::fallback) {
      EXPECT_TRUE(set_based.sent("sch_fence_many")) << all;
      EXPECT_FALSE(set_based.sent("sch_fence_success")) << all;
      // Without data-modifying CTEs: each scope's production orders in one statement.
      if (sc.path == Path::one_statement) {
        EXPECT_TRUE(set_based.sent("sch_insert_production_many")) << all;
        EXPECT_FALSE(set_based.sent("sch_insert_production")) << all;
      }
    } else {
      EXPECT_TRUE(set_based.sent("sch_fence_success")) << "no fallback: " << all;
    }
    if (sc.expected_success >= 0) {
      EXPECT_EQ(*a, sc.expected_success);
    }
    for (const char* sql : {
             "SELECT item_id, site_code, order_no, lot_no, status, attempt, owner, "
             "coalesce(error, ''), lease_until IS NULL FROM schedule_items ORDER BY item_id",
             "SELECT site_code, order_no, lot_no, item_id, quantity, document_scope, "
             "document_value, document_number FROM production_orders ORDER BY item_id",
             "SELECT scope, value, number, origin, scheme, title FROM documents ORDER BY scope, "
             "value",
             "SELECT scope, width, radix, max_value, last_value FROM doc_scopes ORDER BY scope",
         }) {
      EXPECT_EQ(set_based.table(sql), each.table(sql)) << sql;
    }
    for (BatchSide* side : {&set_based, &each}) {
      auto inv = check_invariants(*side->db, soon());
      ASSERT_TRUE(inv.ok()) << inv.status().to_string();
      for (const auto& r : *inv)
        EXPECT_EQ(r.violations, 0) << r.id << ": " << (r.sample.empty() ? "" : r.sample[0]);
    }
    // Numbers follow the claims: in each scope, item order is value order.
    auto po = set_based.table(
        "SELECT document_scope, item_id, document_value FROM production_orders ORDER BY "
        "document_scope, item_id");
    for (size_t i = 1; i < po.size(); ++i) {
      if (po[i][0] == po[i - 1][0]) {
        EXPECT_EQ(std::stoll(po[i][2]), std::stoll(po[i - 1][2]) + 1) << po[i][1];
      }
    }
  }

  SchedulerOptions options() const {
    SchedulerOptions o;
    o.owner = "worker-a";
    return o;
  }
};

// Orders of several sites, interleaved in claim (key) order.
std::vector<SourceOrder> batch_mixed_sites() {
  std::vector<SourceOrder> out;
  for (const std::string site : {"S1", "S2", "S3"}) {
    auto part = make_orders(site, "M", 4);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

TEST_P(SchedulingBatchTest, AWholeBatchMatchesItemByItem) {
  BatchScenario sc{make_orders("S1", "B", 16), options()};
  sc.expected_success = 16;
  sc.path = BatchScenario::Path::one_statement;
  compare(sc);
}

TEST_P(SchedulingBatchTest, MixedSitesAndAScopeInUseMatchItemByItem) {
  BatchScenario sc{batch_mixed_sites(), options()};
  // S2's scope exists with numbers already issued; S1's and S3's are created by the batch.
  sc.before_claim = [](BatchSide& s) {
    s.tdb.sql(
        "INSERT INTO doc_scopes (scope, width, radix, max_value, last_value) VALUES ('PO-S2', "
        "4, 10, 9999, 0)");
    for (int i = 0; i < 3; ++i) {
      s.tdb.sql("UPDATE doc_scopes SET last_value = last_value + 1 WHERE scope = 'PO-S2'");
      s.tdb.sql(
          "INSERT INTO documents (scope, value, number, origin, scheme, title, principal) "
          "SELECT scope, last_value, '000' || last_value, 'issued', 'r10w4', 'earlier', 'test' "
          "FROM doc_scopes "
          "WHERE scope = 'PO-S2'");
    }
  };
  sc.expected_success = 12;
  sc.path = BatchScenario::Path::one_statement;
  compare(sc);
}

TEST_P(SchedulingBatchTest, ALostClaimSettlesEachItemOnItsOwn) {
  BatchScenario sc{batch_mixed_sites(), options()};
  // Its lease expired and another worker took it.
  sc.after_claim = [](BatchSide& s) {
    s.tdb.sql(
        "UPDATE schedule_items SET owner = 'worker-b', attempt = attempt + 1 WHERE order_no = "
        "'M2' AND site_code = 'S2'");
  };
  sc.expected_success = 11;
  compare(sc);
}

TEST_P(SchedulingBatchTest, ACancelledOrderInTheMiddleIsAbortedNeverProduced) {
  BatchScenario sc{batch_mixed_sites(), options()};
  const std::string now = this->now();
  sc.after_claim = [now](BatchSide& s) {
    s.tdb.sql("UPDATE source_orders SET cancelled_at = " + now +
              " WHERE site_code = 'S2' AND order_no = 'M1'");
  };
  sc.expected_success = 11;
  compare(sc);
  BatchSide probe(GetParam(), options());
  ASSERT_NO_FATAL_FAILURE(prepare(probe, sc));
  ASSERT_TRUE(probe.scheduler.complete(probe.claims).ok());
  EXPECT_EQ(probe.table("SELECT status FROM schedule_items WHERE site_code = 'S2' AND order_no = "
                        "'M1'"),
            (BatchTable{{"aborted"}}));
  EXPECT_EQ(probe.table("SELECT count(*) FROM production_orders WHERE site_code = 'S2' AND "
                        "order_no = 'M1'"),
            (BatchTable{{"0"}}));
}

TEST_P(SchedulingBatchTest, AFailingStepFailsOnlyItsItem) {
  BatchScenario sc{batch_mixed_sites(), options()};
  sc.options.site_steps["S2"] = std::make_shared<BatchOwnStep>(std::set<std::string>{"M2"});
  sc.expected_success = 11;
  compare(sc);
}

TEST_P(SchedulingBatchTest, AStepThatWritesForItselfKeepsClaimOrderInItsScope) {
  BatchScenario sc{make_orders("S1", "W", 8), options()};
  // Every other claim of the one scope is produced by the step itself.
  sc.options.site_steps["S1"] = std::make_shared<BatchHalfStep>();
  sc.expected_success = 8;
  sc.path = BatchScenario::Path::set_fence;
  compare(sc);
  BatchScenario mixed{batch_mixed_sites(), options()};
  mixed.options.site_steps["S2"] = std::make_shared<BatchOwnStep>();
  mixed.expected_success = 12;
  mixed.path = BatchScenario::Path::set_fence;
  compare(mixed);
}

TEST_P(SchedulingBatchTest, AnExhaustedScopeFailsTheItemsPastItsMax) {
  BatchScenario sc{make_orders("S1", "X", 5), options()};
  sc.before_claim = [](BatchSide& s) {
    s.tdb.sql(
        "INSERT INTO doc_scopes (scope, width, radix, max_value, last_value) VALUES ('PO-S1', "
        "1, 10, 3, 0)");
  };
  sc.expected_success = 3;
  compare(sc);
}

TEST_P(SchedulingBatchTest, ABatchOfLostClaimsWritesNothing) {
  BatchScenario sc{make_orders("S1", "L", 4), options()};
  sc.after_claim = [](BatchSide& s) {
    s.tdb.sql("UPDATE schedule_items SET owner = 'worker-b', attempt = attempt + 1");
  };
  sc.expected_success = 0;
  compare(sc);
}

INSTANTIATE_TEST_SUITE_P(Engines, SchedulingBatchTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
