// A document's body over HTTP (API.md "Document numbers"; seed 003), on every engine: the
// header and lines come back from the 201, from GET of the document and from a replay; the
// same body in another member order or spacing is the same request; another body under the
// key is 422; every bound and string check refuses and writes nothing.
#include <fmt/format.h>

#include <string>

#include "e2e/http_fixture.hpp"
#include "onceorder/core/document_types.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

class DocumentBodyHttpTest : public HttpTest {
 protected:
  HttpResponse issue(const std::string& body, const std::string& key) {
    return client().post("/v1/scopes/INV/documents", body, {{"Idempotency-Key", key}});
  }
  json last_value() { return client().get("/v1/scopes/INV").json()["last_value"]; }
};

constexpr const char* kInvoice =
    R"({"title": "invoice 7", "header": {"customer": "ACME", "currency": "EUR", "due": )"
    R"({"days": 30}}, "lines": [{"sku": "A-1", "qty": 2, "price": 12.5}, )"
    R"({"sku": "B-2", "qty": 1, "note": "gift wrap, 中文"}]})";

TEST_P(DocumentBodyHttpTest, TheBodyComesBackFromTheAnswerTheDocumentAndAReplay) {
  const auto first = issue(kInvoice, "inv-7");
  ASSERT_EQ(first.status, 201) << first.body;
  const json doc = first.json();
  EXPECT_EQ(doc["header"],
            json::parse(R"({"currency":"EUR","customer":"ACME","due":{"days":30}})"));
  ASSERT_EQ(doc["lines"].size(), 2u);
  EXPECT_EQ(doc["lines"][1]["note"], "gift wrap, 中文");
  EXPECT_EQ(doc["lines"][0]["price"], 12.5);

  const auto got = client().get("/v1/scopes/INV/documents/1");
  ASSERT_EQ(got.status, 200) << got.body;
  json stored = got.json();
  EXPECT_EQ(stored["origin"], "issued");
  EXPECT_EQ(stored["scheme"], "r10w4");
  stored.erase("origin");
  stored.erase("scheme");
  EXPECT_EQ(stored, doc);
  const auto listed = client().get("/v1/scopes/INV/documents");
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(listed.json()["documents"][0]["lines"], doc["lines"]);

  // The same body, members in another order and spaced otherwise: a replay, byte for byte.
  const std::string reordered =
      R"({"lines":[{"price":12.5,"qty":2,"sku":"A-1"},{"note":"gift wrap, 中文","qty":1,)"
      R"("sku":"B-2"}],"header":{"due":{"days":30},"currency":"EUR","customer":"ACME"},)"
      R"("title":"invoice 7"})";
  const auto replay = issue(reordered, "inv-7");
  ASSERT_EQ(replay.status, 201) << replay.body;
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(replay.body, first.body);

  // Another body under the key: refused, nothing written. So is a missing one.
  json other = json::parse(kInvoice);
  other["lines"][0]["qty"] = 3;
  expect_problem(issue(other.dump(), "inv-7"), 422, "idempotency_key_reused");
  expect_problem(issue(R"({"title": "invoice 7"})", "inv-7"), 422, "idempotency_key_reused");
  EXPECT_EQ(last_value(), 1);
  expect_problem(client().get("/v1/scopes/INV/documents/2"), 404, "not_found");
  expect_problem(client().get("/v1/scopes/INV/documents/x"), 400, "invalid_request", {"value"});
}

TEST_P(DocumentBodyHttpTest, BadBodiesAreRefusedAndWriteNothing) {
  ASSERT_EQ(issue(R"({"title": "first"})", "k0").status, 201);
  json many = {{"title", "t"}, {"lines", json::array()}};
  for (std::size_t i = 0; i <= kMaxDocumentLines; ++i) many["lines"].push_back({{"n", i}});
  expect_problem(issue(many.dump(), "k1"), 400, "invalid_request", {"lines"});
  json big = {{"title", "t"}, {"header", {{"blob", std::string(kMaxDocumentBodyBytes, 'x')}}}};
  expect_problem(issue(big.dump(), "k2"), 413, "payload_too_large");
  expect_problem(issue(R"({"title": "t", "header": [1]})", "k3"), 400, "invalid_request",
                 {"header"});
  expect_problem(issue(R"({"title": "t", "lines": [{"a": 1}, 7]})", "k4"), 400, "invalid_request",
                 {"lines[1]"});
  expect_problem(issue(R"({"title": "t", "lines": [{"a": {"b": "nul\u0000"}}]})", "k5"), 400,
                 "invalid_request", {"lines[0].a.b"});
  expect_problem(issue(R"({"title": "t", "header": {"bell\u0007": 1}})", "k6"), 400,
                 "invalid_request", {"header"});
  std::string deep = "1";
  for (int i = 0; i < 9; ++i) deep = R"({"d":)" + deep + "}";
  expect_problem(issue(R"({"title": "t", "header": )" + deep + "}", "k7"), 400, "invalid_request");
  EXPECT_EQ(last_value(), 1) << "no refused request took a number";
  // An empty array is no lines; a body at the bound is taken.
  const auto none = issue(R"({"title": "t", "lines": []})", "k8");
  ASSERT_EQ(none.status, 201) << none.body;
  EXPECT_EQ(none.json()["lines"], json::array());
  json full = {{"title", "t"}, {"lines", json::array()}};
  for (std::size_t i = 0; i < kMaxDocumentLines; ++i) full["lines"].push_back({{"n", i}});
  const auto taken = issue(full.dump(), "k9");
  ASSERT_EQ(taken.status, 201) << taken.body;
  EXPECT_EQ(client().get("/v1/scopes/INV/documents/3").json()["lines"].size(), kMaxDocumentLines);
}

INSTANTIATE_TEST_SUITE_P(Engines, DocumentBodyHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
