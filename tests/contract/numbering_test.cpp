// Document numbers on every engine: the seed-003 scenarios (rollback without a gap, replays,
// legacy imports; the MAX+1 races, empty scope and per-scope locking are in
// numbering_race_test.cpp) over several connections.
#include <gtest/gtest.h>

#include <atomic>

#include <latch>

#include <algorithm>
#include <barrier>
#include <set>
#include <thread>

#include "common/test_db.hpp"
#include "contract/numbering_fixture.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/numbering.hpp"

namespace onceorder::testing {
namespace {

TEST_P(NumberingTest, FirstNumbersAreFormattedAndReturnedAfterCommit) {
  auto a = issue("TEST-001", "first");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->document.number, "0001");
  EXPECT_EQ(a->document.value, 1);
  EXPECT_EQ(a->document.origin, "issued");
  EXPECT_FALSE(a->replayed);
  EXPECT_EQ(a->document.created_at.size(), 24u) << a->document.created_at;  // 2026-…T…​.mmmZ
  auto b = issue("TEST-001", "second");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->document.number, "0002");
  // Visible to another client: the number was committed before it was returned.
  EXPECT_EQ(count_documents("TEST-001"), 2);
}

TEST_P(NumberingTest, FailureAfterCounterUpdateRollsBackWithoutGap) {
  int calls = 0;
  Numbering faulty(*db_, NumberingOptions{[&] {
    return ++calls == 2 ? Status(Code::internal, "injected failure") : Status::Ok();
  }});
  ASSERT_TRUE(faulty.issue({"F", "one", {}}, soon()).ok());
  auto failed = faulty.issue({"F", "two", {}}, soon());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Code::internal);
  // Checked through a new connection: counter and documents as before the failure.
  EXPECT_EQ(last_value("F"), 1);
  EXPECT_EQ(count_documents("F"), 1);
  auto next = faulty.issue({"F", "three", {}}, soon());
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->document.value, 2);
  expect_invariants_hold();
}

TEST_P(NumberingTest, ReplayReturnsTheSameDocumentAndOtherTitleIsRejected) {
  auto first = issue("R", "invoice", "key-1");
  ASSERT_TRUE(first.ok());
  auto again = issue("R", "invoice", "key-1");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->document.number, first->document.number);
  EXPECT_EQ(again->document.created_at, first->document.created_at);
  auto other = issue("R", "another title", "key-1");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::idempotency_key_reused);
  // Keys are per scope: the same key elsewhere is a new document.
  auto elsewhere = issue("R2", "invoice", "key-1");
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_FALSE(elsewhere->replayed);
  EXPECT_EQ(count_documents("R"), 1);
}

TEST_P(NumberingTest, ExhaustedScopeWritesNothing) {
  ASSERT_TRUE(numbering_.configure("SMALL", ScopeFormat{1, 10, 2}, soon()).ok());
  ASSERT_TRUE(issue("SMALL", "a").ok());
  ASSERT_TRUE(issue("SMALL", "b", "k-b").ok());
  auto over = issue("SMALL", "c", "k-c");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::scope_exhausted);
  EXPECT_EQ(count_documents("SMALL"), 2);
  EXPECT_EQ(last_value("SMALL"), 2);
  EXPECT_EQ(
      tdb_.sql("SELECT count(*) FROM document_receipts WHERE idempotency_key = 'k-c'").at(0).i64(0),
      0);
  // Raising max lets the scope continue where it stopped.
  ASSERT_TRUE(numbering_.configure("SMALL", ScopeFormat{1, 10, 9}, soon()).ok());
  auto next = issue("SMALL", "c", "k-c");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->document.number, "3");
}

TEST_P(NumberingTest, ConfigureValidatesAndRefusesMaxBelowUsedValues) {
  auto created = numbering_.configure("CFG", ScopeFormat{3, 16, 0xFFF}, soon());
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(created->created);
  for (int i = 0; i < 11; ++i) ASSERT_TRUE(issue("CFG", "x").ok());
  auto r = issue("CFG", "x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->document.number, "00C");
  auto lowered = numbering_.configure("CFG", ScopeFormat{3, 16, 5}, soon());
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), Code::scope_conflict);
  auto bad = numbering_.configure("CFG", ScopeFormat{2, 10, 100}, soon());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::invalid_request);
  ASSERT_EQ(bad.status().fields().size(), 1u);
  EXPECT_EQ(bad.status().fields()[0].field, "max");
  auto info = numbering_.scope("CFG", soon());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->format.max, 0xFFF);
  EXPECT_EQ(info->issued, 12);
  EXPECT_EQ(info->remaining(), 0xFFF - 12);
}

// A scope's numbers keep one look: width and radix may change until the scope issued its first
// number (legacy imports keep their own numbers, so they do not count), and never after; max
// may change as long as it stays at or above the counter.
TEST_P(NumberingTest, WidthAndRadixStayOnceANumberWasIssued) {
  ASSERT_TRUE(numbering_.configure("FIX", ScopeFormat{4, 10, 9999}, soon()).ok());
  ASSERT_TRUE(numbering_.import_legacy("FIX", LegacyScheme::dec3, "number\n007\n", soon()).ok());
  auto before = numbering_.configure("FIX", ScopeFormat{6, 10, 999999}, soon());
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  EXPECT_FALSE(before->created);
  auto first = issue("FIX", "first");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->document.number, "000008");
  // The same width and radix with another max is still a change the scope takes.
  auto same = numbering_.configure("FIX", ScopeFormat{6, 10, 5000}, soon());
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ(same->info.format.max, 5000);

  for (const ScopeFormat& changed : {ScopeFormat{4, 10, 9999}, ScopeFormat{6, 16, 0xFFFFFF}}) {
    auto refused = numbering_.configure("FIX", changed, soon());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), Code::scope_conflict);
    ASSERT_EQ(refused.status().fields().size(), 1u);
    EXPECT_EQ(refused.status().fields()[0].field, changed.width != 6 ? "width" : "radix");
    EXPECT_NE(refused.status().message().find("000001"), std::string::npos)
        << refused.status().message();
  }
  auto info = numbering_.scope("FIX", soon());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->format, (ScopeFormat{6, 10, 5000}));
  auto next = issue("FIX", "second");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->document.number, "000009");
  // A new scope may be created with any format.
  auto created = numbering_.configure("NEW", ScopeFormat{2, 36, 1295}, soon());
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(created->created);
  expect_invariants_hold();
}

TEST_P(NumberingTest, BadInputIsRejectedWithFieldErrorsAndWritesNothing) {
  struct Case {
    IssueRequest req;
    std::string field;
  };
  const std::vector<Case> cases = {
      {{"", "t", {}}, "scope"},
      {{"has space", "t", {}}, "scope"},
      {{std::string(65, 'a'), "t", {}}, "scope"},
      {{"S", "", {}}, "title"},
      {{"S", std::string(201, 'x'), {}}, "title"},
      {{"S", "bad\x01", {}}, "title"},
      {{"S", "\xff\xfe", {}}, "title"},
      {{"S", "t", std::string("")}, "Idempotency-Key"},
      {{"S", "t", std::string(256, 'k')}, "Idempotency-Key"},
      {{"S", "t", std::string("with space")}, "Idempotency-Key"},
  };
  for (const auto& c : cases) {
    auto r = numbering_.issue(c.req, soon());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::invalid_request);
    ASSERT_FALSE(r.status().fields().empty());
    EXPECT_EQ(r.status().fields()[0].field, c.field);
  }
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM documents").at(0).i64(0), 0);
  EXPECT_EQ(tdb_.sql("SELECT count(*) FROM doc_scopes").at(0).i64(0), 0);
}

TEST_P(NumberingTest, LegacyImportConvertsByDeclaredSchemeAndCounterContinues) {
  // "100" is 100 in dec3 and 256 in hex3; 3E8 is 1000.
  auto dec = numbering_.import_legacy(
      "LEG", LegacyScheme::dec3, "number,title\n100,a\n295,b\n\"099\",\"c, quoted\"\n", soon());
  ASSERT_TRUE(dec.ok()) << dec.status().to_string();
  EXPECT_EQ(dec->imported, 3);
  EXPECT_EQ(dec->last_value, 295);
  auto hex = numbering_.import_legacy("LEG", LegacyScheme::hex3, "number\n100\n3E8\n", soon());
  ASSERT_TRUE(hex.ok()) << hex.status().to_string();
  EXPECT_EQ(hex->last_value, 1000);
  auto next = issue("LEG", "new");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->document.value, 1001);
  EXPECT_EQ(next->document.number, "1001");
  auto rows =
      tdb_.sql("SELECT value, number, scheme FROM documents WHERE scope = 'LEG' AND value = 256");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].text(1), "100");
  EXPECT_EQ(rows[0].text(2), "hex3");
  auto page = numbering_.list("LEG", 0, 2, soon());
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->documents.size(), 2u);
  EXPECT_EQ(page->documents[0].value, 99);
  ASSERT_TRUE(page->next_after.has_value());
  auto rest = numbering_.list("LEG", *page->next_after, 100, soon());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->documents.size(), 4u);
  EXPECT_FALSE(rest->next_after.has_value());
  expect_invariants_hold();
}

// Seed 003's mixed history: one old file whose rows were written under different schemes
// (295 in dec3, 3E8 in hex3, 0296 in dec4), each declared on its row, never guessed. A dry
// run reconciles per scheme before anything is written.
TEST_P(NumberingTest, MixedLegacyHistoryIsDeclaredPerRowAndReconciledFirst) {
  const std::string csv = "number,scheme,title\n295,dec3,a\n3E8,hex3,b\n0296,dec4,c\n";
  auto dry = numbering_.import_legacy("MIX", LegacyImportOptions{std::nullopt, true}, csv, soon());
  ASSERT_TRUE(dry.ok()) << dry.status().to_string();
  EXPECT_TRUE(dry->dry_run);
  EXPECT_EQ(dry->imported, 0);
  EXPECT_EQ(dry->last_value, 1000);
  ASSERT_EQ(dry->schemes.size(), 3u);
  EXPECT_EQ(dry->schemes[0].scheme, "dec3");
  EXPECT_EQ(dry->schemes[0].min, 295);
  EXPECT_EQ(dry->schemes[1].scheme, "dec4");
  EXPECT_EQ(dry->schemes[1].max, 296);
  EXPECT_EQ(dry->schemes[2].scheme, "hex3");
  EXPECT_EQ(dry->schemes[2].max, 1000);
  EXPECT_TRUE(dry->collisions.empty());
  EXPECT_EQ(count_documents("MIX"), 0) << "a dry run wrote";

  auto real = numbering_.import_legacy("MIX", LegacyImportOptions{}, csv, soon());
  ASSERT_TRUE(real.ok()) << real.status().to_string();
  EXPECT_EQ(real->imported, 3);
  EXPECT_EQ(last_value("MIX"), 1000);
  auto rows = tdb_.sql("SELECT value, scheme FROM documents WHERE scope = 'MIX' ORDER BY value");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].i64(0), 296);
  EXPECT_EQ(rows[1].text(1), "dec4");

  // 064 in hex3 is 100, which line 2 already holds, and 295 is in the scope: the dry run
  // counts both collisions; the import refuses and writes nothing.
  const std::string clash = "number,scheme\n100,dec3\n064,hex3\n295,dec3\n";
  auto report =
      numbering_.import_legacy("MIX", LegacyImportOptions{std::nullopt, true}, clash, soon());
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->collisions.size(), 2u);
  EXPECT_EQ(report->collisions[0].field, "line 3");
  EXPECT_EQ(report->collisions[1].field, "line 4");
  EXPECT_EQ(report->schemes[0].collisions + report->schemes[1].collisions, 2);
  EXPECT_FALSE(numbering_.import_legacy("MIX", LegacyImportOptions{}, clash, soon()).ok());
  EXPECT_EQ(count_documents("MIX"), 3);

  // The scheme is declared once, per file or per row, never both and never guessed.
  auto both = numbering_.import_legacy("MIX", LegacyImportOptions{LegacyScheme::dec3, false},
                                       "number,scheme\n401,dec3\n", soon());
  EXPECT_EQ(both.status().code(), Code::invalid_request);
  auto neither = numbering_.import_legacy("MIX", LegacyImportOptions{}, "number\n401\n", soon());
  EXPECT_EQ(neither.status().code(), Code::invalid_request);
  auto unknown = numbering_.import_legacy("MIX", LegacyImportOptions{},
                                          "number,scheme\n401,dec3\n402,oct3\n", soon());
  ASSERT_FALSE(unknown.ok());
  ASSERT_FALSE(unknown.status().fields().empty());
  EXPECT_EQ(unknown.status().fields()[0].field, "line 3");
  EXPECT_EQ(count_documents("MIX"), 3);
  expect_invariants_hold();
}

TEST_P(NumberingTest, LegacyImportWithAnyBadLineWritesNothing) {
  ASSERT_TRUE(numbering_.import_legacy("LEG", LegacyScheme::dec3, "number\n100\n", soon()).ok());
  const auto before = count_documents("LEG");
  struct Case {
    LegacyScheme scheme;
    std::string csv;
    std::string field;
  };
  const std::vector<Case> cases = {
      {LegacyScheme::dec3, "number\n101\n3E8\n", "line 3"},       // not decimal
      {LegacyScheme::dec3, "number\n101\n1000\n", "line 3"},      // four digits in dec3
      {LegacyScheme::hex3, "number\n101\nXYZ\n", "line 3"},       // not hex
      {LegacyScheme::dec4, "number\n0102\n102\n", "line 3"},      // three digits in dec4
      {LegacyScheme::dec3, "number\n101\n100\n", "line 3"},       // collides with the scope
      {LegacyScheme::hex3, "number\n064\n", "line 2"},            // hex 064 = 100: collides
      {LegacyScheme::dec3, "number\n101\n101\n", "line 3"},       // twice in the file
      {LegacyScheme::dec3, "number\n000\n", "line 2"},            // numbers start at 1
      {LegacyScheme::dec3, "num\n101\n", "line 1"},               // header
      {LegacyScheme::dec3, "number,title\n101,a,b\n", "line 2"},  // too many fields
  };
  for (const auto& c : cases) {
    auto r = numbering_.import_legacy("LEG", c.scheme, c.csv, soon());
    ASSERT_FALSE(r.ok()) << c.csv;
    ASSERT_FALSE(r.status().fields().empty()) << c.csv;
    EXPECT_EQ(r.status().fields()[0].field, c.field) << c.csv << " → " << r.status().to_string();
  }
  EXPECT_EQ(count_documents("LEG"), before);
  EXPECT_EQ(last_value("LEG"), 100);
  // Past the scope's max: rejected too.
  ASSERT_TRUE(numbering_.configure("TINY", ScopeFormat{3, 10, 500}, soon()).ok());
  auto past = numbering_.import_legacy("TINY", LegacyScheme::dec3, "number\n501\n", soon());
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(count_documents("TINY"), 0);
}

TEST_P(NumberingTest, InvariantI7DetectsAGapAndACounterMismatch) {
  ASSERT_TRUE(issue("GAP", "one").ok());
  ASSERT_TRUE(issue("GAP", "two").ok());
  // Damage the data behind OnceOrder's back: an issued value 5 with 3 and 4 missing.
  tdb_.sql(
      "INSERT INTO documents (scope, value, number, origin, scheme, title, principal) "
      "VALUES ('GAP', 5, '0005', 'issued', 'r10w4', 'x', 'test')");
  auto inv = check_invariants(*db_, soon());
  ASSERT_TRUE(inv.ok());
  auto i7 = std::find_if(inv->begin(), inv->end(), [](const auto& r) { return r.id == "I7"; });
  ASSERT_NE(i7, inv->end());
  EXPECT_EQ(i7->violations, 2);  // the gap before 5, and the counter (2) behind 5
}

INSTANTIATE_TEST_SUITE_P(Engines, NumberingTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
