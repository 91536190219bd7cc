// Request combining for document numbers, differentially: one arrival sequence run as one
// batch (Numbering::issue_batch, what the combiner calls for requests that queued) and run
// one request at a time must give the same answers and leave the same database, on every
// engine. The combiner's races are in numbering_race_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/core/db_url.hpp"
#include "onceorder/service/numbering.hpp"
#include "store/dialect.hpp"
#include "store/numbering_store.hpp"
#include "store/sql_catalog.hpp"

namespace onceorder::testing {
namespace {

class NumberingBatchTest : public ::testing::TestWithParam<Engine> {
 protected:
  // One database per way of running, each with the same history before the sequence.
  struct Side {
    explicit Side(Engine engine) : tdb(engine), db(tdb.open({.pool_size = 4})), numbering(*db) {}
    TestDb tdb;
    std::unique_ptr<store::Database> db;
    Numbering numbering;
  };

  static void prepare(Side& side) {
    ASSERT_TRUE(side.numbering.configure("SMALL", ScopeFormat{2, 10, 3}, soon()).ok());
    ASSERT_TRUE(side.numbering.issue({"SMALL", "s0", std::nullopt}, soon()).ok());
    ASSERT_TRUE(side.numbering.issue({"OLD", "old invoice", "k-old"}, soon()).ok());
    ASSERT_TRUE(side.numbering.configure("FULL", ScopeFormat{1, 10, 1}, soon()).ok());
    ASSERT_TRUE(side.numbering.issue({"FULL", "only", "k-full"}, soon()).ok());
  }

  // The answer as text: everything a caller sees except created_at (another run, another
  // clock; a replay's created_at is the original's by construction of the receipt join).
  static std::string answer_text(const Result<Issued>& r) {
    if (!r.ok()) {
      std::string out = std::string(code_name(r.status().code())) + ": " + r.status().message();
      for (const auto& f : r.status().fields()) out += " [" + f.field + ": " + f.message + "]";
      return out;
    }
    const Document& d = r->document;
    return d.scope + " " + std::to_string(d.value) + " " + d.number + " " + d.origin + " " +
           d.scheme + " '" + d.title + "'" + (r->replayed ? " replayed" : "");
  }

  static std::vector<std::string> database_text(TestDb& tdb) {
    std::vector<std::string> out;
    auto add = [&](const std::string& what, const std::string& sql) {
      for (const auto& row : tdb.sql(sql)) {
        std::string line = what;
        for (size_t i = 0; i < row.size(); ++i) line += " | " + row.text(i);
        out.push_back(line);
      }
    };
    add("scope",
        "SELECT scope, width, radix, max_value, last_value FROM doc_scopes ORDER BY scope");
    add("document",
        "SELECT scope, value, number, origin, scheme, title FROM documents ORDER BY scope, value");
    add("receipt",
        "SELECT scope, idempotency_key, title, value FROM document_receipts "
        "ORDER BY scope, idempotency_key");
    return out;
  }

  // Runs `sequence` one by one on one side and as the batches `cuts` describe (sizes, in
  // order) on the other, and compares.
  void expect_same(const std::vector<IssueRequest>& sequence, const std::vector<size_t>& cuts,
                   const std::function<void(TestDb&)>& setup = {}) {
    Side alone(GetParam()), combined(GetParam());
    prepare(alone);
    prepare(combined);
    if (setup) {
      setup(alone.tdb);
      setup(combined.tdb);
    }
    if (HasFatalFailure()) return;

    std::vector<std::string> one_by_one;
    for (const auto& req : sequence)
      one_by_one.push_back(answer_text(alone.numbering.issue(req, soon())));

    std::vector<std::string> batched;
    size_t from = 0;
    for (size_t n : cuts) {
      auto answers = combined.numbering.issue_batch(
          std::span<const IssueRequest>(sequence).subspan(from, n), soon());
      ASSERT_EQ(answers.size(), n);
      for (const auto& a : answers) batched.push_back(answer_text(a));
      from += n;
    }
    ASSERT_EQ(from, sequence.size());

    for (size_t i = 0; i < sequence.size(); ++i)
      EXPECT_EQ(batched[i], one_by_one[i])
          << "request " << i << " (" << sequence[i].scope << ", '" << sequence[i].title << "')";
    EXPECT_EQ(database_text(combined.tdb), database_text(alone.tdb));
  }

  // Fresh scopes, a scope that runs out mid-batch, keys (new, replayed from an earlier
  // transaction, replayed and refused within the batch, refused after the scope ran out),
  // invalid requests, titles that need quoting.
  static std::vector<IssueRequest> mixed_sequence() {
    return {
        {"A", "a1", std::nullopt},
        {"A", "a2", "k1"},
        {"SMALL", "s1", std::nullopt},
        {"A", "a2", "k1"},     // replays a2 from within the batch
        {"A", "other", "k1"},  // same key, another title
        {"SMALL", "s2", "ks"},
        {"SMALL", "s3", "kx"},  // SMALL is full from here on
        {"SMALL", "s3", "kx"},  // its key never got a document: exhausted again
        {"SMALL", "s4", "kx"},
        {"SMALL", "s5", std::nullopt},
        {"OLD", "old invoice", "k-old"},  // replay of an earlier transaction
        {"OLD", "changed", "k-old"},
        {"OLD", "new one", std::nullopt},
        {"bad scope!", "x", std::nullopt},  // invalid: answered, takes no part
        {"A", "", std::nullopt},
        {"A", "t", std::string("bad key")},
        {"SMALL", "s2", "ks"},  // replays s2 from within the batch, after the scope ran out
        {"A", "quote \" backslash \\ comma, Müller — 請求書", "k,2"},
        {"B", "b1", "k1"},  // the same key in another scope is another document
        {"FULL", "only", "k-full"},
        {"FULL", "more", std::nullopt},
        {"A", "a3", std::nullopt},
        {"A", "quote \" backslash \\ comma, Müller — 請求書", "k,2"},
    };
  }
};

TEST_P(NumberingBatchTest, OneBatchOfManyScopesAnswersAsOneByOne) {
  const auto seq = mixed_sequence();
  expect_same(seq, {seq.size()});
}

TEST_P(NumberingBatchTest, BatchesOfOneScopeAnswerAsOneByOne) {
  // The combiner's shape: every batch is one scope's queue.
  const std::vector<IssueRequest> seq = {
      {"H", "h1", "k1"}, {"H", "h2", std::nullopt}, {"H", "h1", "k1"}, {"H", "x", "k1"},
      {"H", "h3", "k3"}, {"H", "h4", std::nullopt}, {"H", "h3", "k3"}, {"H", "h1", "k1"},
      {"H", "h5", "k5"}, {"H", "h6", std::nullopt},
  };
  expect_same(seq, {1, 3, 4, 2});
}

TEST_P(NumberingBatchTest, ScopeRunningOutMidBatchAnswersAsOneByOne) {
  std::vector<IssueRequest> seq;
  for (int i = 0; i < 6; ++i)
    seq.push_back({"SMALL", "t" + std::to_string(i), "key-" + std::to_string(i % 4)});
  for (int i = 0; i < 3; ++i) seq.push_back({"FULL", "f" + std::to_string(i), std::nullopt});
  expect_same(seq, {6, 3});
}

TEST_P(NumberingBatchTest, BatchOfOnlyInvalidOrReplayedRequestsWritesNothing) {
  const std::vector<IssueRequest> seq = {
      {"OLD", "old invoice", "k-old"}, {"OLD", "x", "k-old"},   {"", "x", std::nullopt},
      {"FULL", "only", "k-full"},      {"FULL", "x", "k-full"},
  };
  expect_same(seq, {seq.size()});
}

// One bad request never sinks the others: a document the database refuses (a trigger stands in
// for any failure that is not transient) fails the combined transaction, which then runs its
// requests one at a time: only that request fails, with the error it gets alone.
TEST_P(NumberingBatchTest, ARequestTheDatabaseRefusesFailsAloneAndTheOthersAreIssued) {
  auto poison = [](TestDb& tdb) {
    if (GetParam() == Engine::sqlite) {
      tdb.sql(
          "CREATE TRIGGER poison BEFORE INSERT ON documents WHEN NEW.title = 'poison' "
          "BEGIN SELECT RAISE(ABORT, 'poisoned title'); END");
    } else {
      tdb.sql(
          "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
          "IF NEW.title = 'poison' THEN RAISE EXCEPTION 'poisoned title'; END IF; "
          "RETURN NEW; END $$");
      tdb.sql(
          "CREATE TRIGGER poison BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION "
          "poison()");
    }
  };
  const std::vector<IssueRequest> seq = {
      {"P", "p1", "k1"},         {"P", "p2", std::nullopt}, {"P", "poison", "k2"},
      {"P", "p1", "k1"},         {"P", "p3", "k3"},         {"P", "poison", std::nullopt},
      {"Q", "q1", std::nullopt},
  };
  expect_same(seq, {seq.size()}, poison);
}

// On PostgreSQL a batch's counters and documents are one statement whose COMMIT travels with
// it, so the statement itself must refuse to write documents past a counter it did not move.
// Planted: a trigger stands in for a counter that changed under the batch (the update of
// scope G applies to no row). The batch writes nothing for G, not even the documents; H's
// request, run alone after the batch failed, is still issued.
TEST_P(NumberingBatchTest, DocumentsOfACounterThatDidNotMoveAreNeverCommitted) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "one statement per scope on this engine";
  Side side(GetParam());
  ASSERT_TRUE(side.numbering.issue({"G", "first", std::nullopt}, soon()).ok());
  side.tdb.sql(
      "CREATE FUNCTION stuck() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
      "IF NEW.scope = 'G' THEN RETURN NULL; END IF; RETURN NEW; END $$");
  side.tdb.sql(
      "CREATE TRIGGER stuck BEFORE UPDATE ON doc_scopes FOR EACH ROW EXECUTE FUNCTION stuck()");
  const std::vector<IssueRequest> reqs = {
      {"G", "g1", std::nullopt}, {"H", "h1", std::nullopt}, {"G", "g2", "k-g2"}};
  const auto answers = side.numbering.issue_batch(reqs, soon());
  ASSERT_EQ(answers.size(), reqs.size());
  EXPECT_FALSE(answers[0].ok()) << answer_text(answers[0]);
  EXPECT_FALSE(answers[2].ok()) << answer_text(answers[2]);
  ASSERT_TRUE(answers[1].ok()) << answer_text(answers[1]);
  EXPECT_EQ(answers[1]->document.value, 1);
  EXPECT_EQ(side.tdb.sql("SELECT count(*) FROM documents WHERE scope = 'G'").at(0).i64(0), 1);
  EXPECT_EQ(side.tdb.sql("SELECT count(*) FROM document_receipts").at(0).i64(0), 0);
  side.tdb.sql("DROP TRIGGER stuck ON doc_scopes");
  expect_invariants_hold(*side.db);
}

// A batch's stored-receipt lookup stays on the receipts' primary key for a scope of 5,000
// receipts (next to another scope's 5,000), in the generic plan and in a custom one. With
// the keys as `IN (SELECT jsonb_array_elements_text(…))`, estimated at 100 rows, PostgreSQL
// read every receipt of the table for every batch that carried a key.
TEST_P(NumberingBatchTest, ReceiptLookupOfABatchStaysOnItsIndex) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "PostgreSQL's planner";
  Side side(GetParam());
  for (const char* scope : {"HOT", "COLD"}) {
    ASSERT_TRUE(side.numbering.configure(scope, ScopeFormat{9, 10, 999999999}, soon()).ok());
    side.tdb.sql(std::string("INSERT INTO documents (scope, value, number, origin, scheme, title, "
                             "principal) SELECT '") +
                 scope +
                 "', g, lpad(g::text, 9, '0'), 'issued', 'r10w9', 't', 'test' FROM "
                 "generate_series(1, 5000) g");
    side.tdb.sql(std::string("INSERT INTO document_receipts (scope, idempotency_key, title, "
                             "value) SELECT '") +
                 scope + "', 'k' || g, 't', g FROM generate_series(1, 5000) g");
  }
  side.tdb.sql("ANALYZE");
  RawPg pg(side.tdb.url());
  expect_index_reads(pg, side.db->dialect().numbering.find_receipts,
                     R"(('HOT', '["k5", "k77", "new"]'))", "document_receipts");
}

// A batch over several scopes finds its counters by the primary key among 5,000 scopes, when
// it locks them and when it moves them, in the generic plan and in a custom one: with the
// scopes as the JSON alone (estimated at 100 rows) both read every scope.
TEST_P(NumberingBatchTest, ScopeCountersOfABatchStayOnTheirIndex) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "PostgreSQL's planner";
  Side side(GetParam());
  ASSERT_TRUE(side.numbering.configure("S1", ScopeFormat{9, 10, 999999999}, soon()).ok());
  side.tdb.sql(
      "INSERT INTO doc_scopes (scope, width, radix, max_value, last_value) SELECT 'S' || g, 9, "
      "10, 999999999, 0 FROM generate_series(2, 5000) g");
  side.tdb.sql("ANALYZE");
  RawPg pg(side.tdb.url());
  expect_index_reads(pg, store::SqlCatalog::of(Engine::postgres).get("num_claim_scopes"),
                     R"(('[["S5", 1], ["S77", 1]]', '[["S5", 1, "t"], ["S77", 1, "t"]]', '[]'))",
                     "doc_scopes");
}

// A real connection whose answer to the first successful COMMIT after `armed` is lost: the
// connection dies right after the COMMIT went out, as when a fail-over kills the primary
// (the transaction is on the standby, the client never hears).
class LosesCommitAnswer final : public store::Connection {
 public:
  LosesCommitAnswer(std::unique_ptr<store::Connection> inner, std::atomic<bool>& armed)
      : inner_(std::move(inner)), armed_(armed) {}
  Engine engine() const override { return inner_->engine(); }
  Status do_begin(store::TxMode mode) override { return inner_->begin(mode); }
  void rollback() override {
    if (!dead_) inner_->rollback();
  }
  bool in_transaction() const override { return !dead_ && inner_->in_transaction(); }
  bool broken() const override { return dead_ || inner_->broken(); }
  Status exec_script(std::string_view sql) override { return inner_->exec_script(sql); }
  Status lock_migrations() override { return inner_->lock_migrations(); }
  void unlock_migrations() override { inner_->unlock_migrations(); }

 protected:
  Status do_commit() override { return lose(inner_->commit()); }
  Result<store::Rows> do_query(const store::Statement& stmt, std::span<const store::Param> params,
                               store::Then then) override {
    auto rows = inner_->query(stmt, params, then);
    if (then != store::Then::commit || !rows.ok()) return rows;
    if (Status st = lose(Status::Ok()); !st.ok()) return st;
    return rows;
  }

 private:
  Status lose(Status committed) {
    if (!committed.ok() || !armed_.exchange(false)) return committed;
    dead_ = true;
    return Status(Code::unavailable, "the connection was lost after COMMIT (test)");
  }
  std::unique_ptr<store::Connection> inner_;
  std::atomic<bool>& armed_;
  bool dead_ = false;
};

// A batch whose COMMIT went out on a connection that died: the batch may have committed, so
// no request is run again (one without a key would be numbered twice); each gets
// `unavailable`, and exactly the batch's documents exist.
TEST_P(NumberingBatchTest, ABatchWhoseCommitAnswerIsLostRunsNothingAgain) {
  TestDb tdb(GetParam());
  (void)tdb.open();  // migrated
  auto url = parse_db_url(tdb.url());
  ASSERT_TRUE(url.ok());
  std::atomic<bool> armed{false};
  const store::DatabaseOptions options{.pool_size = 2};
  store::Database db(url->engine, options, [&]() -> Result<std::unique_ptr<store::Connection>> {
    OO_ASSIGN_OR_RETURN(auto conn, store::dialect_for(url->engine).connect(url->target, options));
    return std::unique_ptr<store::Connection>(
        std::make_unique<LosesCommitAnswer>(std::move(conn), armed));
  });
  Numbering numbering(db);
  ASSERT_TRUE(numbering.issue({"LOST", "before", std::nullopt}, soon()).ok());
  const std::vector<IssueRequest> reqs{
      {"LOST", "a", std::nullopt}, {"LOST", "b", std::nullopt}, {"LOST", "c", std::string("k-c")}};
  armed = true;
  auto answers = numbering.issue_batch(reqs, soon());
  EXPECT_FALSE(armed.load()) << "no COMMIT was sent";
  ASSERT_EQ(answers.size(), reqs.size());
  for (const auto& a : answers) {
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), Code::unavailable) << a.status().to_string();
  }
  for (const char* title : {"a", "b", "c"})
    EXPECT_EQ(tdb.sql(std::string("SELECT count(*) FROM documents WHERE title = '") + title + "'")
                  .at(0)
                  .i64(0),
              1)
        << title << ": numbered once, by the batch that committed";
  // The keyed one, asked again, finds its document.
  auto again = numbering.issue(reqs[2], soon());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_TRUE(again->replayed);
}

INSTANTIATE_TEST_SUITE_P(Engines, NumberingBatchTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
