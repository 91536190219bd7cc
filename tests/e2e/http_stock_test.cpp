// Stock over HTTP (API.md "Stock"): SKU rows, prices and adjustments, on every engine the
// environment offers.
#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

class StockHttpTest : public HttpTest {
 protected:
  static std::string sku_path(std::int64_t warehouse, std::int64_t sku) {
    return fmt::format("/v1/warehouses/{}/skus/{}", warehouse, sku);
  }

  json sku(std::int64_t warehouse, std::int64_t sku_id) {
    const auto r = client().get(sku_path(warehouse, sku_id));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json() : json();
  }

  static json sku_json(std::int64_t warehouse, std::int64_t sku, std::int64_t available,
                       std::int64_t reserved, std::int64_t price) {
    return {{"warehouse_id", warehouse},
            {"sku_id", sku},
            {"available", available},
            {"reserved", reserved},
            {"price_cents", price}};
  }
};

TEST_P(StockHttpTest, PutCreatesThenUpdatesThePrice) {
  const auto created = client().put(sku_path(1, 101), R"({"price_cents": 1200, "available": 5})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.header("content-type"), "application/json");
  EXPECT_EQ(created.json(), sku_json(1, 101, 5, 0, 1200));

  const auto updated = client().put(sku_path(1, 101), R"({"price_cents": 1300})");
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(updated.json(), sku_json(1, 101, 5, 0, 1300));

  // Stock changes only by adjustment; the refused request changed nothing.
  expect_problem(client().put(sku_path(1, 101), R"({"price_cents": 1, "available": 9})"), 409,
                 "use_adjustment");
  EXPECT_EQ(sku(1, 101), sku_json(1, 101, 5, 0, 1300));

  // Without `available` a new SKU starts empty; the same SKU id elsewhere is another row.
  const auto empty = client().put(sku_path(2, 101), R"({"price_cents": 0})");
  ASSERT_EQ(empty.status, 201) << empty.body;
  EXPECT_EQ(empty.json(), sku_json(2, 101, 0, 0, 0));
  EXPECT_EQ(sku(1, 101)["available"], 5);
}

TEST_P(StockHttpTest, Adjustments) {
  ASSERT_EQ(client().put(sku_path(1, 7), R"({"price_cents": 100, "available": 5})").status, 201);
  const auto down =
      client().post(sku_path(1, 7) + "/adjustments", R"({"delta": -2, "reason": "damaged"})");
  ASSERT_EQ(down.status, 201) << down.body;
  EXPECT_EQ(down.json(), sku_json(1, 7, 3, 0, 100));

  const auto up =
      client().post(sku_path(1, 7) + "/adjustments", R"({"delta": 10, "reason": "delivery"})");
  ASSERT_EQ(up.status, 201) << up.body;
  EXPECT_EQ(up.json()["available"], 13);

  // Never below zero; exactly zero is fine.
  expect_problem(
      client().post(sku_path(1, 7) + "/adjustments", R"({"delta": -14, "reason": "count"})"), 409,
      "insufficient_stock");
  EXPECT_EQ(sku(1, 7)["available"], 13);
  const auto zero =
      client().post(sku_path(1, 7) + "/adjustments", R"({"delta": -13, "reason": "count"})");
  ASSERT_EQ(zero.status, 201) << zero.body;
  EXPECT_EQ(zero.json()["available"], 0);

  // A SKU without a row: nothing to adjust or read.
  expect_problem(
      client().post(sku_path(1, 8) + "/adjustments", R"({"delta": 5, "reason": "delivery"})"), 404,
      "not_found");
  expect_problem(client().get(sku_path(1, 8)), 404, "not_found");
  expect_problem(client().get(sku_path(2, 7)), 404, "not_found");
}

TEST_P(StockHttpTest, PathIdsAreExactPositiveIntegers) {
  const std::string max = "9223372036854775807";
  ASSERT_EQ(client().put("/v1/warehouses/" + max + "/skus/" + max, R"({"price_cents": 1})").status,
            201);
  EXPECT_EQ(client().get("/v1/warehouses/" + max + "/skus/" + max).json()["sku_id"],
            std::numeric_limits<std::int64_t>::max());

  for (const std::string bad : {"0", "01", "-1", "+1", "1.0", "1e3", "abc", "9223372036854775808",
                                "99999999999999999999", "%31", "1%20"}) {
    SCOPED_TRACE(bad);
    expect_problem(client().get("/v1/warehouses/" + bad + "/skus/1"), 400, "invalid_request",
                   {"warehouse_id"});
    expect_problem(client().get("/v1/warehouses/1/skus/" + bad), 400, "invalid_request",
                   {"sku_id"});
    expect_problem(client().put("/v1/warehouses/1/skus/" + bad, R"({"price_cents": 1})"), 400,
                   "invalid_request", {"sku_id"});
    expect_problem(client().post("/v1/warehouses/" + bad + "/skus/1/adjustments",
                                 R"({"delta": 1, "reason": "x"})"),
                   400, "invalid_request", {"warehouse_id"});
  }
  // Both named, with the body's problems, in one answer.
  expect_problem(client().put("/v1/warehouses/0/skus/x", R"({"price_cents": "1"})"), 400,
                 "invalid_request", {"warehouse_id", "sku_id", "price_cents"});
  expect_problem(client().get("/v1/warehouses/1/skus/1"), 404, "not_found");
  expect_problem(client().get("/v1/warehouses/1/skus/"), 404, "not_found");
  expect_problem(client().get("/v1/warehouses//skus/1"), 404, "not_found");
}

TEST_P(StockHttpTest, BadSkuInputWritesNothing) {
  struct Case {
    std::string body;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {R"({})", {"price_cents"}},
      {R"({"available": 5})", {"price_cents"}},
      {R"({"price_cents": 1.0})", {"price_cents"}},
      {R"({"price_cents": 1e3})", {"price_cents"}},
      {R"({"price_cents": "12"})", {"price_cents"}},
      {R"({"price_cents": -1})", {"price_cents"}},
      {R"({"price_cents": null})", {"price_cents"}},
      {R"({"price_cents": 1000000000001})", {"price_cents"}},
      {R"({"price_cents": 9223372036854775808})", {"price_cents"}},
      {R"({"price_cents": 1, "available": -1})", {"available"}},
      {R"({"price_cents": 1, "available": 2.5})", {"available"}},
      {R"({"price_cents": 1, "available": true})", {"available"}},
      {R"({"price_cents": 1, "avail": 5})", {"avail"}},
      {R"({"price_cents": 1, "price_cents": 2})", {"price_cents"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_problem(client().put(sku_path(1, 101), c.body), 400, "invalid_request", c.fields);
  }
  expect_problem(client().put(sku_path(1, 101), "[]"), 400, "invalid_request");
  expect_problem(client().put(sku_path(1, 101), "{"), 400, "invalid_json");
  expect_problem(client().put(sku_path(1, 101) + "?force=1", R"({"price_cents": 1})"), 400,
                 "invalid_request", {"force"});
  expect_problem(client().get(sku_path(1, 101)), 404, "not_found");
}

TEST_P(StockHttpTest, BadAdjustmentInputChangesNothing) {
  ASSERT_EQ(client().put(sku_path(1, 5), R"({"price_cents": 100, "available": 5})").status, 201);
  struct Case {
    std::string body;
    std::vector<std::string> fields;
  };
  const std::vector<Case> cases = {
      {R"({})", {"delta", "reason"}},
      {R"({"delta": 1})", {"reason"}},
      {R"({"reason": "x"})", {"delta"}},
      {R"({"delta": 0, "reason": "x"})", {"delta"}},
      {R"({"delta": 1.5, "reason": "x"})", {"delta"}},
      {R"({"delta": "1", "reason": "x"})", {"delta"}},
      {R"({"delta": 1000000000001, "reason": "x"})", {"delta"}},
      {R"({"delta": -1000000000001, "reason": "x"})", {"delta"}},
      {R"({"delta": 1, "reason": ""})", {"reason"}},
      {R"({"delta": 1, "reason": 5})", {"reason"}},
      {json{{"delta", 1}, {"reason", std::string(201, 'r')}}.dump(), {"reason"}},
      {R"({"delta": 1, "reason": "x", "note": "y"})", {"note"}},
  };
  const std::string path = sku_path(1, 5) + "/adjustments";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_problem(client().post(path, c.body), 400, "invalid_request", c.fields);
  }
  // A malformed key is named with the body's problems.
  expect_problem(
      client().post(path, R"({"delta": 1, "reason": "x"})", {{"Idempotency-Key", "bad key"}}), 400,
      "invalid_request", {"Idempotency-Key"});
  expect_problem(client().post(path, R"({"delta": 0, "reason": "x"})",
                               {{"Idempotency-Key", std::string(256, 'k')}}),
                 400, "invalid_request", {"Idempotency-Key", "delta"});
  EXPECT_EQ(sku(1, 5), sku_json(1, 5, 5, 0, 100));
}

// Issue 8: a NUL cut the reason short on PostgreSQL ("a\u0000b" stored as "a"). Every JSON
// string is UTF-8 text without control characters, checked once where bodies are read.
TEST_P(StockHttpTest, ControlCharactersInStringsAreRefusedAndWriteNothing) {
  ASSERT_EQ(client().put(sku_path(1, 5), R"({"price_cents": 100, "available": 5})").status, 201);
  const std::string path = sku_path(1, 5) + "/adjustments";
  for (const std::string reason :
       {R"(a\u0000b)", R"(a\u0001b)", R"(line\nbreak)", R"(del\u007f)"}) {
    SCOPED_TRACE(reason);
    expect_problem(client().post(path, R"({"delta": 1, "reason": ")" + reason + R"("})"), 400,
                   "invalid_request", {"reason"});
  }
  EXPECT_EQ(sku(1, 5), sku_json(1, 5, 5, 0, 100));
  // Non-ASCII text is fine.
  EXPECT_EQ(client().post(path, R"({"delta": 1, "reason": "beschädigt \u00e9"})").status, 201);
}

// Issue 11 item 5: a keyed adjustment answers once; the replay is the same status and body
// with Idempotent-Replayed, and the stock does not move again.
TEST_P(StockHttpTest, IdempotencyKeyReplaysTheAdjustment) {
  ASSERT_EQ(client().put(sku_path(1, 8), R"({"price_cents": 100, "available": 5})").status, 201);
  const std::string path = sku_path(1, 8) + "/adjustments";
  const Headers key = {{"Idempotency-Key", "adj-1"}};
  const auto first = client().post(path, R"({"delta": -2, "reason": "damaged"})", key);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_FALSE(first.has_header("idempotent-replayed"));
  ASSERT_EQ(client().post(path, R"({"delta": 4, "reason": "found"})").status, 201);
  const auto replay = client().post(path, R"({"reason": "damaged", "delta": -2})", key);
  ASSERT_EQ(replay.status, 201) << replay.body;
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(sku(1, 8), sku_json(1, 8, 7, 0, 100));
  expect_problem(client().post(path, R"({"delta": -3, "reason": "damaged"})", key), 422,
                 "idempotency_key_reused");
  EXPECT_EQ(sku(1, 8)["available"], 7);
}

INSTANTIATE_TEST_SUITE_P(Engines, StockHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
