// Issue 49's lists over HTTP: GET /v1/warehouses, and GET /v1/orders?order=asc for a client
// that follows new orders with feed cursors (API.md, "Lists"): who may read them, hostile
// queries answered 400 naming the field, and a follower that goes on from next_after.
#include <string>
#include <vector>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

class FollowListsHttpTest : public HttpTest {
 protected:
  void stock(std::int64_t warehouse, std::int64_t sku) {
    const auto r = client().put(fmt::format("/v1/warehouses/{}/skus/{}", warehouse, sku),
                                R"({"price_cents": 10, "available": 100})");
    ASSERT_EQ(r.status, 201) << r.body;
  }
  std::string order_for(std::int64_t customer, const std::string& key) {
    const json body = {{"customer_id", customer},
                       {"warehouse_id", 1},
                       {"lines", {{{"sku_id", 1}, {"quantity", 1}}}}};
    const auto r = client().post("/v1/orders", body.dump(), {{"Idempotency-Key", key}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["order_id"].get<std::string>() : "";
  }
  void expect_refused_field(const std::string& target, const std::string& field) {
    const auto r = client().get(target);
    EXPECT_EQ(r.status, 400) << target << ": " << r.body;
    if (r.status != 400) return;
    bool named = false;
    for (const json& e : r.json().value("errors", json::array())) named |= e["field"] == field;
    EXPECT_TRUE(named) << target << " does not name " << field << ": " << r.body;
  }
};

TEST_P(FollowListsHttpTest, WarehousesPageByIdForStaffOnly) {
  stock(5, 1);
  stock(2, 1);
  stock(2, 3);
  ServerOptions options;
  options.tokens_file = write_tokens("o operator\nv viewer\nc customer:7\n");
  start_server(options);
  const auto first = client().get("/v1/warehouses?limit=1", bearer("v"));
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json(), json::parse(R"({"warehouses": [{"warehouse_id": 2, "skus": 2,
      "available": 200, "reserved": 0}], "next_after": 2})"));
  const auto rest = client().get("/v1/warehouses?after=2", bearer("o"));
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.json()["warehouses"].size(), 1u);
  EXPECT_EQ(rest.json()["warehouses"][0]["warehouse_id"], 5);
  EXPECT_TRUE(rest.json()["next_after"].is_null());
  EXPECT_EQ(client().get("/v1/warehouses", bearer("c")).status, 403);
  EXPECT_EQ(client().get("/v1/warehouses").status, 401);
}

TEST_P(FollowListsHttpTest, HostileWarehouseAndFollowQueriesNameTheirField) {
  for (const std::string q : {"after=-1", "after=x", "after=1.0", "limit=0", "limit=1001"})
    expect_refused_field("/v1/warehouses?" + q, q.substr(0, q.find('=')));
  expect_refused_field("/v1/warehouses?sort=desc", "sort");
  expect_refused_field("/v1/orders?order=sideways", "order");
  expect_refused_field("/v1/orders?order=ASC", "order");
  // Ascending, `after` is a feed cursor: an order id, a half cursor or a signed one is refused.
  for (const std::string after : {"17", "1:", ":1", "-1:2", "01:2", "1:2:3"})
    expect_refused_field("/v1/orders?order=asc&after=" + after, "after");
  // Newest first, `after` stays an order id.
  expect_refused_field("/v1/orders?order=desc&after=1:2", "after");
}

TEST_P(FollowListsHttpTest, AFollowerGoesOnFromNextAfterAndSeesOnlyItsOwnAsACustomer) {
  stock(1, 1);
  const std::string a = order_for(7, "a"), b = order_for(8, "b");
  ServerOptions options;
  options.tokens_file = write_tokens("o operator\nc customer:7\n");
  start_server(options);

  const auto all = client().get("/v1/orders?order=asc&limit=1", bearer("o"));
  ASSERT_EQ(all.status, 200) << all.body;
  ASSERT_EQ(all.json()["orders"].size(), 1u);
  EXPECT_EQ(all.json()["orders"][0]["order_id"], a);
  const std::string cursor = all.json()["next_after"];
  const auto next = client().get("/v1/orders?order=asc&after=" + cursor, bearer("o"));
  ASSERT_EQ(next.status, 200) << next.body;
  ASSERT_EQ(next.json()["orders"].size(), 1u);
  EXPECT_EQ(next.json()["orders"][0]["order_id"], b);
  const std::string end = next.json()["next_after"];
  const auto none = client().get("/v1/orders?order=asc&after=" + end, bearer("o"));
  EXPECT_EQ(none.json(), json::parse(R"({"orders": [], "next_after": null})")) << none.body;

  // A customer's page reads past the other customer's order and ends where it stopped.
  const auto own = client().get("/v1/orders?order=asc", bearer("c"));
  ASSERT_EQ(own.status, 200) << own.body;
  ASSERT_EQ(own.json()["orders"].size(), 1u);
  EXPECT_EQ(own.json()["orders"][0]["order_id"], a);
  EXPECT_EQ(own.json()["next_after"], end);
  EXPECT_EQ(client().get("/v1/orders?order=asc&customer_id=8", bearer("c")).status, 403);
}

INSTANTIATE_TEST_SUITE_P(Engines, FollowListsHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
