// Document numbers over HTTP (API.md "Document numbers" and "Conventions"), on every
// engine the environment offers.
#include <algorithm>
#include <numeric>
#include <thread>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

class DocumentsHttpTest : public HttpTest {
 protected:
  HttpResponse issue(const std::string& scope, const std::string& title,
                     const std::optional<std::string>& key = std::nullopt) {
    Headers headers;
    if (key) headers.emplace_back("Idempotency-Key", *key);
    return client().post("/v1/scopes/" + scope + "/documents", json{{"title", title}}.dump(),
                         headers);
  }

  // The scope was never written: it does not exist.
  void expect_no_scope(const std::string& scope) {
    const auto r = client().get("/v1/scopes/" + scope);
    expect_problem(r, 404, "not_found");
  }
};

TEST(Environment, PostgresPresentWhenRequired) {
  const char* required = std::getenv("ONCEORDER_REQUIRE_PG");
  if (required != nullptr && std::string(required) == "1") {
    ASSERT_TRUE(postgres_configured())
        << "ONCEORDER_REQUIRE_PG=1 but neither PGHOST nor PGDATABASE is set (run the tests "
           "under pg_virtualenv)";
  }
}

TEST_P(DocumentsHttpTest, IssueAndReplay) {
  const auto first = issue("S-1", "first", "key-1");
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.header("content-type"), "application/json");
  EXPECT_FALSE(first.has_header("idempotent-replayed"));
  const json doc = first.json();
  EXPECT_EQ(doc["scope"], "S-1");
  EXPECT_EQ(doc["number"], "0001");
  EXPECT_EQ(doc["value"], 1);
  EXPECT_EQ(doc["title"], "first");
  EXPECT_FALSE(doc["created_at"].get<std::string>().empty());
  EXPECT_EQ(doc.size(), 8u) << first.body;  // and principal, header (null), lines ([])

  const auto replay = issue("S-1", "first", "key-1");
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");

  const auto second = issue("S-1", "second");
  ASSERT_EQ(second.status, 201) << second.body;
  EXPECT_EQ(second.json()["value"], 2);
  EXPECT_EQ(second.json()["number"], "0002");

  const auto scope = client().get("/v1/scopes/S-1");
  ASSERT_EQ(scope.status, 200) << scope.body;
  EXPECT_EQ(scope.json(), (json{{"scope", "S-1"},
                                {"width", 4},
                                {"radix", 10},
                                {"max", 9999},
                                {"last_value", 2},
                                {"issued", 2},
                                {"imported", 0},
                                {"remaining", 9997}}));
}

TEST_P(DocumentsHttpTest, SameKeyOtherTitleIsRejected) {
  ASSERT_EQ(issue("S", "a title", "k").status, 201);
  expect_problem(issue("S", "another title", "k"), 422, "idempotency_key_reused");
  EXPECT_EQ(client().get("/v1/scopes/S").json()["last_value"], 1);
  // Keys belong to their scope: the same key elsewhere is a new document.
  EXPECT_EQ(issue("T", "another title", "k").status, 201);
}

TEST_P(DocumentsHttpTest, BadDocumentInputWritesNothing) {
  const std::string path = "/v1/scopes/S/documents";
  struct Case {
    std::string body;
    Headers headers;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {R"({})", {}, {"title"}},
      {R"({"title": 5})", {}, {"title"}},
      {R"({"title": null})", {}, {"title"}},
      {R"({"title": ["a"]})", {}, {"title"}},
      {R"({"title": ""})", {}, {"title"}},
      {json{{"title", std::string(201, 'x')}}.dump(), {}, {"title"}},
      {R"({"title": "a\u0001b"})", {}, {"title"}},
      {R"({"title": "ok", "titel": "typo"})", {}, {"titel"}},
      {R"({"title": "a", "title": "b"})", {}, {"title"}},
      {R"({"title": "ok"})", {{"Idempotency-Key", std::string(256, 'k')}}, {"Idempotency-Key"}},
      {R"({"title": "ok"})", {{"Idempotency-Key", "has space"}}, {"Idempotency-Key"}},
      {R"({"title": "ok"})", {{"Idempotency-Key", "caf\xc3\xa9"}}, {"Idempotency-Key"}},
      {R"({"title": 1})", {{"Idempotency-Key", "bad key"}}, {"title", "Idempotency-Key"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_problem(client().post(path, c.body, c.headers), 400, "invalid_request", c.fields);
  }
  expect_problem(
      client().post("/v1/scopes/" + std::string(65, 's') + "/documents", R"({"title":"ok"})"), 400,
      "invalid_request", {"scope"});
  expect_problem(client().post("/v1/scopes/a!b/documents", R"({"title":"ok"})"), 400,
                 "invalid_request", {"scope"});
  expect_problem(client().post(path + "?dry_run=1", R"({"title":"ok"})"), 400, "invalid_request",
                 {"dry_run"});
  expect_no_scope("S");
}

TEST_P(DocumentsHttpTest, BadScopeFormatWritesNothing) {
  struct Case {
    std::string body;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {R"({"width": 4.0})", {"width"}},
      {R"({"width": "4"})", {"width"}},
      {R"({"width": true})", {"width"}},
      {R"({"width": null})", {"width"}},
      {R"({"width": 0})", {"width"}},
      {R"({"width": 19})", {"width"}},
      {R"({"width": 1e30})", {"width"}},
      {R"({"radix": 1})", {"radix"}},
      {R"({"radix": 37})", {"radix"}},
      {R"({"max": 0})", {"max"}},
      {R"({"max": -1})", {"max"}},
      {R"({"max": 1e3})", {"max"}},
      {R"({"max": 10000})", {"max"}},
      {R"({"max": 9223372036854775808})", {"max"}},
      {R"({"width": 2, "max": 100})", {"max"}},
      {R"({"width": "x", "radix": 99, "max": 1.5})", {"width", "radix", "max"}},
      {R"({"witdh": 4})", {"witdh"}},
      {R"({"width": 4, "width": 5})", {"width"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_problem(client().put("/v1/scopes/S", c.body), 400, "invalid_request", c.fields);
  }
  expect_problem(client().put("/v1/scopes/" + std::string(65, 's'), "{}"), 400, "invalid_request",
                 {"scope"});
  expect_no_scope("S");
}

TEST_P(DocumentsHttpTest, MalformedAndNonObjectBodies) {
  for (const std::string body : {"{\"title\": ", "{'title': 'x'}", "", "{\"title\": \"\xff\"}"}) {
    SCOPED_TRACE(body);
    expect_problem(client().post("/v1/scopes/S/documents", body), 400, "invalid_json");
    expect_problem(client().put("/v1/scopes/S", body), 400, "invalid_json");
  }
  for (const std::string body : {"[]", "\"title\"", "42", "null", "[{\"title\": \"x\"}]"}) {
    SCOPED_TRACE(body);
    expect_problem(client().post("/v1/scopes/S/documents", body), 400, "invalid_request");
    expect_problem(client().put("/v1/scopes/S", body), 400, "invalid_request");
  }
  expect_no_scope("S");
}

TEST_P(DocumentsHttpTest, ConfigureScope) {
  const auto created = client().put("/v1/scopes/HEX", R"({"width": 3, "radix": 16, "max": 4095})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.json()["radix"], 16);
  EXPECT_EQ(created.json()["remaining"], 4095);

  const auto doc = issue("HEX", "hex");
  ASSERT_EQ(doc.status, 201) << doc.body;
  EXPECT_EQ(doc.json()["number"], "001");

  const auto updated = client().put("/v1/scopes/HEX", R"({"width": 3, "radix": 16, "max": 100})");
  EXPECT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(updated.json()["max"], 100);

  // Missing members take the defaults.
  const auto defaults = client().put("/v1/scopes/DEF", "{}");
  ASSERT_EQ(defaults.status, 201) << defaults.body;
  EXPECT_EQ(defaults.json()["width"], 4);
  EXPECT_EQ(defaults.json()["radix"], 10);
  EXPECT_EQ(defaults.json()["max"], 9999);
}

TEST_P(DocumentsHttpTest, ScopeExhausted) {
  ASSERT_EQ(client().put("/v1/scopes/TINY", R"({"max": 2})").status, 201);
  EXPECT_EQ(issue("TINY", "one").status, 201);
  EXPECT_EQ(issue("TINY", "two").status, 201);
  expect_problem(issue("TINY", "three", "k3"), 409, "scope_exhausted");
  const auto scope = client().get("/v1/scopes/TINY").json();
  EXPECT_EQ(scope["last_value"], 2);
  EXPECT_EQ(scope["issued"], 2);
  EXPECT_EQ(scope["remaining"], 0);
  // Nothing was stored for the refused key: after raising max it issues a new number.
  ASSERT_EQ(client().put("/v1/scopes/TINY", R"({"max": 3})").status, 200);
  const auto later = issue("TINY", "three", "k3");
  EXPECT_EQ(later.status, 201);
  EXPECT_FALSE(later.has_header("idempotent-replayed"));
  EXPECT_EQ(later.json()["value"], 3);
}

TEST_P(DocumentsHttpTest, LoweringMaxBelowUsedValueConflicts) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(issue("C", "doc").status, 201);
  expect_problem(client().put("/v1/scopes/C", R"({"max": 2})"), 409, "scope_conflict");
  EXPECT_EQ(client().get("/v1/scopes/C").json()["max"], 9999);
  EXPECT_EQ(client().put("/v1/scopes/C", R"({"max": 3})").status, 200);
}

// PUT replaces the whole format (a missing member is its default): once the scope issued a
// number, a body whose width or radix differs is 409 with a field error naming what must stay,
// and nothing changes; the same width and radix with another max are taken.
TEST_P(DocumentsHttpTest, WidthChangeAfterIssueConflicts) {
  ASSERT_EQ(client().put("/v1/scopes/W", R"({"width": 5, "max": 99999})").status, 201);
  ASSERT_EQ(client().put("/v1/scopes/W", R"({"width": 6, "max": 999999})").status, 200);
  ASSERT_EQ(issue("W", "doc").json()["number"], "000001");
  EXPECT_EQ(client().put("/v1/scopes/W", R"({"width": 6, "max": 999999})").status, 200);
  for (const std::string body : {R"({"max": 9999})", R"({"width": 6, "radix": 16, "max": 99})"}) {
    SCOPED_TRACE(body);
    const bool radix = body.find("radix") != std::string::npos;
    expect_problem(client().put("/v1/scopes/W", body), 409, "scope_conflict",
                   {radix ? "radix" : "width"});
  }
  const auto scope = client().get("/v1/scopes/W").json();
  EXPECT_EQ(scope["width"], 6);
  EXPECT_EQ(scope["max"], 999999);
  EXPECT_EQ(issue("W", "doc").json()["number"], "000002");
}

TEST_P(DocumentsHttpTest, ListDocumentsPages) {
  for (int i = 1; i <= 5; ++i) ASSERT_EQ(issue("L", "doc " + std::to_string(i)).status, 201);
  auto page = client().get("/v1/scopes/L/documents?limit=2");
  ASSERT_EQ(page.status, 200) << page.body;
  auto body = page.json();
  ASSERT_EQ(body["documents"].size(), 2u);
  EXPECT_EQ(body["documents"][0]["value"], 1);
  EXPECT_EQ(body["documents"][0]["origin"], "issued");
  EXPECT_EQ(body["documents"][0]["scheme"], "r10w4");
  EXPECT_EQ(body["documents"][1]["title"], "doc 2");
  EXPECT_EQ(body["next_after"], 2);

  body = client().get("/v1/scopes/L/documents?after=2&limit=2").json();
  EXPECT_EQ(body["documents"][0]["value"], 3);
  EXPECT_EQ(body["next_after"], 4);
  body = client().get("/v1/scopes/L/documents?after=4").json();
  ASSERT_EQ(body["documents"].size(), 1u);
  EXPECT_TRUE(body["next_after"].is_null());

  for (const std::string q : {"limit=0", "limit=1001", "limit=abc", "limit=1.5", "limit="}) {
    expect_problem(client().get("/v1/scopes/L/documents?" + q), 400, "invalid_request", {"limit"});
  }
  expect_problem(client().get("/v1/scopes/L/documents?after=-1"), 400, "invalid_request",
                 {"after"});
  expect_problem(client().get("/v1/scopes/L/documents?sort=asc"), 400, "invalid_request", {"sort"});
  expect_problem(client().get("/v1/scopes/NONE/documents"), 404, "not_found");
}

TEST_P(DocumentsHttpTest, ConcurrentIssuesAreGapless) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 25;
  std::vector<std::vector<std::int64_t>> values(kThreads);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        HttpClient c(port());
        for (int i = 0; i < kPerThread; ++i) {
          const auto r = c.post("/v1/scopes/HOT/documents",
                                json{{"title", fmt::format("t{} #{}", t, i)}}.dump(),
                                {{"Idempotency-Key", fmt::format("t{}-{}", t, i)}});
          if (r.status != 201) {
            failures[t] = fmt::format("status {}: {}", r.status, r.body);
            return;
          }
          values[t].push_back(r.json()["value"].get<std::int64_t>());
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");

  std::vector<std::int64_t> all;
  for (const auto& v : values) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  std::vector<std::int64_t> expected(kThreads * kPerThread);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(all, expected);

  const auto listed = client().get("/v1/scopes/HOT/documents?limit=1000").json();
  ASSERT_EQ(listed["documents"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(listed["documents"][i]["value"], expected[i]);
  }
  EXPECT_EQ(client().get("/v1/scopes/HOT").json()["issued"], kThreads * kPerThread);
  EXPECT_EQ(client().get("/v1/invariants").json()["ok"], true);
}

INSTANTIATE_TEST_SUITE_P(Engines, DocumentsHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
