// The audit row travels with its action's effect (store::AuditInTransaction, API.md "The
// audit trail") on every engine: the first committed write transaction of the thread carries
// it, whatever commits that transaction; a rolled-back attempt takes it back with the effect;
// read transactions and later writes never carry it again; without one, nothing is added.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/test_db.hpp"
#include "onceorder/service/audit.hpp"

namespace onceorder::testing {
namespace {

using namespace std::chrono_literals;

const store::Statement kAddScope{"t_audit_add_scope",
                                 "INSERT INTO doc_scopes (scope) VALUES ('audited')"};
const store::Statement kAddOtherScope{"t_audit_add_other",
                                      "INSERT INTO doc_scopes (scope) VALUES ('later')"};
const store::Statement kCountScopes{"t_audit_count", "SELECT count(*) FROM doc_scopes"};

class AuditInTransactionTest : public ::testing::TestWithParam<Engine> {
 protected:
  AuditInTransactionTest() : tdb_(GetParam()), db_(tdb_.open()) {
    row_.principal = "alice";
    row_.role = "admin";
    row_.action = "scope.configure";
    row_.summary = R"({"method":"PUT"})";
  }

  static store::Clock::time_point soon() { return store::Clock::now() + 5s; }

  // Runs `statement` in a write transaction; `fail_after` makes the body fail after it.
  Status write(const store::Statement& statement, bool fail_after = false) {
    return store::transact<bool>(*db_, store::write_tx(soon()),
                                 [&](store::Connection& c) -> Result<bool> {
                                   OO_RETURN_IF_ERROR(c.query(statement, {}).status());
                                   if (fail_after) return Status(Code::conflict, "refused inside");
                                   return true;
                                 })
        .status();
  }

  std::vector<ActionRecord> rows() {
    auto all = list_actions(*db_, ActionFilter{}, soon());
    EXPECT_TRUE(all.ok()) << all.status().to_string();
    return all.ok() ? *all : std::vector<ActionRecord>{};
  }

  std::int64_t scopes() {
    return std::stoll(tdb_.sql(std::string(kCountScopes.sql)).at(0).text(0));
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  ActionRecord row_;
};

TEST_P(AuditInTransactionTest, TheRowCommitsWithTheFirstWriteAndOnlyWithIt) {
  store::AuditInTransaction in_tx(row_);
  // A read transaction does not take it.
  ASSERT_TRUE(store::transact<bool>(*db_, store::read_tx(soon()),
                                    [&](store::Connection& c) -> Result<bool> {
                                      OO_RETURN_IF_ERROR(c.query(kCountScopes, {}).status());
                                      return true;
                                    })
                  .ok());
  EXPECT_EQ(in_tx.action_id(), 0);
  EXPECT_TRUE(rows().empty());

  // The effect refused inside its transaction: neither the effect nor the row stays.
  EXPECT_EQ(write(kAddScope, /*fail_after=*/true).code(), Code::conflict);
  EXPECT_EQ(in_tx.action_id(), 0);
  EXPECT_EQ(scopes(), 0);
  EXPECT_TRUE(rows().empty());

  // The effect commits: so does the row, with no answer yet.
  ASSERT_TRUE(write(kAddScope).ok());
  EXPECT_EQ(scopes(), 1);
  auto after = rows();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].action_id, in_tx.action_id());
  EXPECT_EQ(after[0].action, "scope.configure");
  EXPECT_EQ(after[0].principal, "alice");
  EXPECT_EQ(after[0].outcome, "applied");
  EXPECT_EQ(after[0].status, 0);  // null: no answer written yet

  // A later write of the same thread does not write it again.
  ASSERT_TRUE(write(kAddOtherScope).ok());
  EXPECT_EQ(rows().size(), 1u);

  // The answer goes into that row.
  ActionRecord answered = after[0];
  answered.status = 201;
  answered.target = "audited";
  answered.summary = R"({"method":"PUT","answer":{}})";
  ASSERT_TRUE(finish_action(*db_, answered, soon()).ok());
  auto finished = rows();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].status, 201);
  EXPECT_EQ(finished[0].target, "audited");
  EXPECT_EQ(finished[0].outcome, "applied");
}

TEST_P(AuditInTransactionTest, WithoutOneAWriteAddsNoRow) {
  { store::AuditInTransaction in_tx(row_); }
  ASSERT_TRUE(write(kAddScope).ok());
  EXPECT_EQ(scopes(), 1);
  EXPECT_TRUE(rows().empty());
}

TEST_P(AuditInTransactionTest, ARefusedActionsRowIsRecordedWithItsOutcome) {
  ActionRecord refused = row_;
  refused.status = 409;
  refused.outcome = "refused";
  ASSERT_TRUE(record_action(*db_, refused, soon()).ok());
  auto all = rows();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].status, 409);
  EXPECT_EQ(all[0].outcome, "refused");
  // The engine keeps the outcome to its words.
  ActionRecord odd = row_;
  odd.status = 200;
  odd.outcome = "maybe";
  EXPECT_FALSE(record_action(*db_, odd, soon()).ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, AuditInTransactionTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
