// A document's body in its number's transaction (seed 003: never "take a number, save the
// document later"), on every engine: the header and lines are stored with the number, alone
// and in a batch, and read back; a replay must match title and body; a failure while the
// lines are written (a fault planted in the database after the first line) leaves no number
// used, no document and no line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::testing {
namespace {

class DocumentBodyTest : public ::testing::TestWithParam<Engine> {
 protected:
  DocumentBodyTest() : tdb_(GetParam()), db_(tdb_.open({.pool_size = 4})), numbering_(*db_) {}

  static IssueRequest bodied(const std::string& title, int lines,
                             std::optional<std::string> key = std::nullopt) {
    IssueRequest r{"INV", title, std::move(key)};
    r.header = R"({"customer":")" + title + R"("})";
    if (lines > 0) {
      r.lines = "[";
      for (int i = 1; i <= lines; ++i)
        r.lines += (i > 1 ? "," : "") + std::string(R"({"line":)") + std::to_string(i) + "}";
      r.lines += "]";
    }
    return r;
  }
  std::int64_t count(const std::string& sql) { return tdb_.sql(sql).at(0).i64(0); }
  // The fault: an insert of a document's second line fails, after its first is in.
  void plant_fault_after_first_line() {
    if (GetParam() == Engine::postgres) {
      tdb_.sql(
          "CREATE FUNCTION t_fail_second_line() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
          "RAISE EXCEPTION 'planted fault after the first line'; END $$");
      tdb_.sql(
          "CREATE TRIGGER t_fail_second_line BEFORE INSERT ON document_lines FOR EACH ROW WHEN "
          "(NEW.line_no = 2) EXECUTE FUNCTION t_fail_second_line()");
    } else {
      tdb_.sql(
          "CREATE TRIGGER t_fail_second_line BEFORE INSERT ON document_lines WHEN "
          "NEW.line_no = 2 BEGIN SELECT RAISE(ABORT, 'planted fault after the first line'); END");
    }
  }

  TestDb tdb_;
  std::unique_ptr<store::Database> db_;
  Numbering numbering_;
};

TEST_P(DocumentBodyTest, TheBodyIsStoredWithItsNumberAloneAndInABatch) {
  auto one = numbering_.issue(bodied("a", 3, "k1"), soon());
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->document.lines, R"([{"line":1},{"line":2},{"line":3}])");
  std::vector<IssueRequest> batch{bodied("b", 2), bodied("c", 0), bodied("d", 20, "k2"),
                                  bodied("a", 3, "k1")};
  auto issued = numbering_.issue_batch(batch, soon());
  ASSERT_EQ(issued.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE(issued[i].ok()) << i << ": " << issued[i].status().to_string();
    EXPECT_EQ(issued[i]->document.header, batch[i].header);
    EXPECT_EQ(issued[i]->document.lines, batch[i].lines);
  }
  EXPECT_TRUE(issued[3]->replayed);
  EXPECT_EQ(issued[3]->document.value, 1);
  for (std::int64_t value = 1; value <= 4; ++value) {
    auto got = numbering_.get("INV", value, soon());
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const IssueRequest& asked = value == 1 ? batch[3] : batch[value - 2];
    EXPECT_EQ(got->header, asked.header) << value;
    EXPECT_EQ(got->lines, asked.lines) << value;
  }
  EXPECT_EQ(count("SELECT count(*) FROM document_lines"), 3 + 2 + 20);
  // A key's request with another body, or none, is refused; nothing is written.
  IssueRequest other = bodied("a", 3, "k1");
  other.lines = R"([{"line":1}])";
  EXPECT_EQ(numbering_.issue(other, soon()).status().code(), Code::idempotency_key_reused);
  other = bodied("a", 0, "k1");
  other.header.clear();
  EXPECT_EQ(numbering_.issue(other, soon()).status().code(), Code::idempotency_key_reused);
  EXPECT_EQ(count("SELECT last_value FROM doc_scopes WHERE scope = 'INV'"), 4);
  expect_invariants_hold(*db_);
}

TEST_P(DocumentBodyTest, AFailureAfterTheFirstLineLeavesNoNumberUsed) {
  ASSERT_TRUE(numbering_.issue(bodied("before", 1), soon()).ok());
  plant_fault_after_first_line();
  auto failed = numbering_.issue(bodied("doomed", 3, "k"), soon());
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().to_string().find("planted fault"), std::string::npos)
      << failed.status().to_string();
  // In a batch too: the doomed request fails, the others get the next numbers, no gap.
  std::vector<IssueRequest> batch{bodied("x", 1), bodied("doomed", 2), bodied("y", 0)};
  auto issued = numbering_.issue_batch(batch, soon());
  ASSERT_EQ(issued.size(), 3u);
  EXPECT_FALSE(issued[1].ok());
  ASSERT_TRUE(issued[0].ok()) << issued[0].status().to_string();
  ASSERT_TRUE(issued[2].ok()) << issued[2].status().to_string();
  EXPECT_EQ(issued[0]->document.value + issued[2]->document.value, 2 + 3);
  EXPECT_EQ(count("SELECT last_value FROM doc_scopes WHERE scope = 'INV'"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM documents WHERE title = 'doomed'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM document_receipts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM document_lines"), 2) << "'before' and 'x' only";
  expect_invariants_hold(*db_);
}

INSTANTIATE_TEST_SUITE_P(Engines, DocumentBodyTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
