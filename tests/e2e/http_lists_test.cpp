// The console's lists over HTTP (API.md additions, "Lists"): paging by next_after to the end,
// hostile queries answered 400 naming the field, and who may see what.
#include <set>
#include <string>
#include <vector>

#include "e2e/http_fixture.hpp"

namespace onceorder::testing {
namespace {

using json = nlohmann::json;

class ListsHttpTest : public HttpTest {
 protected:
  void put_sku(std::int64_t sku, std::int64_t available) {
    const auto r =
        client().put(fmt::format("/v1/warehouses/1/skus/{}", sku),
                     fmt::format(R"({{"price_cents": 10, "available": {}}})", available));
    ASSERT_EQ(r.status, 201) << r.body;
  }
  std::string place(std::int64_t customer, std::int64_t sku, const std::string& key,
                    const Headers& extra = {}) {
    Headers headers = {{"Idempotency-Key", key}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    const json body = {{"customer_id", customer},
                       {"warehouse_id", 1},
                       {"lines", {{{"sku_id", sku}, {"quantity", 1}}}}};
    const auto r = client().post("/v1/orders", body.dump(), headers);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? r.json()["order_id"].get<std::string>() : "";
  }
  // Every entry of `list` under `path`, following next_after; `pages` counts the requests.
  std::vector<json> all_pages(const std::string& path, const std::string& list, int& pages,
                              const Headers& headers = {}) {
    std::vector<json> out;
    std::string cursor;
    pages = 0;
    for (int guard = 0; guard < 50; ++guard) {
      const std::string sep = path.find('?') == std::string::npos ? "?" : "&";
      const auto r = client().get(path + (cursor.empty() ? "" : sep + "after=" + cursor), headers);
      EXPECT_EQ(r.status, 200) << r.body;
      if (r.status != 200) break;
      ++pages;
      const json page = r.json();
      for (const json& e : page[list]) out.push_back(e);
      if (page["next_after"].is_null()) break;
      cursor = page["next_after"].is_string() ? page["next_after"].get<std::string>()
                                              : page["next_after"].dump();
    }
    return out;
  }
  void expect_field_error(const std::string& target, const std::string& field) {
    const auto r = client().get(target);
    EXPECT_EQ(r.status, 400) << target << ": " << r.body;
    if (r.status != 400) return;
    const json body = r.json();
    EXPECT_EQ(body["code"], "invalid_request") << target;
    bool named = false;
    for (const json& e : body.value("errors", json::array())) named |= e["field"] == field;
    EXPECT_TRUE(named) << target << " does not name " << field << ": " << r.body;
  }
};

TEST_P(ListsHttpTest, PagesFollowNextAfterToTheEndWithoutRepeats) {
  for (int s = 1; s <= 5; ++s) put_sku(s, 10);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(place(7 + i % 2, 1 + i, "k" + std::to_string(i)));
  int pages = 0;
  const auto orders = all_pages("/v1/orders?limit=2", "orders", pages);
  ASSERT_EQ(orders.size(), 5u);
  EXPECT_EQ(pages, 3);
  for (size_t i = 0; i < orders.size(); ++i) EXPECT_EQ(orders[i]["order_id"], ids[4 - i]);
  EXPECT_EQ(all_pages("/v1/orders?customer_id=8&limit=1", "orders", pages).size(), 2u);
  EXPECT_EQ(pages, 3);  // the third page is empty: the second was full

  const auto skus = all_pages("/v1/warehouses/1/skus?limit=2", "skus", pages);
  ASSERT_EQ(skus.size(), 5u);
  EXPECT_EQ(skus[2]["sku_id"], 3);
  EXPECT_EQ(skus[2]["reserved"], 1);
  EXPECT_EQ(skus[2]["available"], 9);
  EXPECT_TRUE(all_pages("/v1/warehouses/2/skus", "skus", pages).empty());

  for (const char* scope : {"Z", "A.1", "m_2"}) {
    ASSERT_EQ(
        client().post(fmt::format("/v1/scopes/{}/documents", scope), R"({"title": "t"})").status,
        201);
  }
  const auto scopes = all_pages("/v1/scopes?limit=1", "scopes", pages);
  ASSERT_EQ(scopes.size(), 3u);
  std::set<std::string> names;
  for (const json& s : scopes) {
    names.insert(s["scope"].get<std::string>());
    EXPECT_EQ(s["gaps"], 0) << s;
    EXPECT_EQ(s["missing"], 0) << s;
    EXPECT_EQ(s["last_value"], 1) << s;
  }
  EXPECT_EQ(names.size(), 3u);

  const auto receipts = client().get("/v1/orders/" + ids[0] + "/receipts");
  ASSERT_EQ(receipts.status, 200) << receipts.body;
  ASSERT_EQ(receipts.json()["receipts"].size(), 1u);
  const json r = receipts.json()["receipts"][0];
  EXPECT_EQ(r["idempotency_key"], "k0");
  EXPECT_EQ(r["normalized"], "1x1");
  EXPECT_EQ(r["lines"], json::parse(R"([{"sku_id": 1, "quantity": 1}])"));
  EXPECT_EQ(r["outcome"], "placed");
}

TEST_P(ListsHttpTest, HostileQueriesAreAClear400) {
  expect_field_error("/v1/orders?limit=0", "limit");
  expect_field_error("/v1/orders?limit=100000", "limit");
  expect_field_error("/v1/orders?after=99999999999999999999999", "after");
  expect_field_error("/v1/orders?after=-1", "after");
  expect_field_error("/v1/orders?customer_id=abc", "customer_id");
  expect_field_error("/v1/orders?warehouse_id=0", "warehouse_id");
  expect_field_error("/v1/orders?status=PLACED%00", "status");
  expect_field_error("/v1/orders?status=shipped", "status");
  expect_field_error("/v1/orders?sort=id", "sort");
  expect_field_error("/v1/orders/1x/receipts", "order_id");
  expect_field_error("/v1/warehouses/abc/skus", "warehouse_id");
  expect_field_error("/v1/warehouses/1/skus?after=1e3", "after");
  expect_field_error("/v1/warehouses/1/skus?limit=1001", "limit");
  expect_field_error("/v1/scopes?after=%00", "after");
  expect_field_error("/v1/scopes?after=%C3%28", "after");  // invalid UTF-8
  expect_field_error("/v1/scopes?after=a%20b", "after");
  expect_field_error("/v1/scopes?after=" + std::string(65, 'a'), "after");
  expect_field_error("/v1/scopes?limit=x", "limit");
  EXPECT_EQ(client().get("/v1/orders?after=9223372036854775807").status, 200);
  EXPECT_EQ(client().get("/v1/scopes?after=zzzz").json()["scopes"], json::array());
}

TEST_P(ListsHttpTest, ACustomerSeesItsOwnOrdersOnly) {
  put_sku(1, 10);
  const std::string mine = place(7, 1, "a");
  const std::string theirs = place(8, 1, "b");
  ServerOptions options;
  options.tokens_file = write_tokens("a admin\no operator\nc customer:7\n");
  start_server(options);

  const auto own = client().get("/v1/orders", bearer("c"));
  ASSERT_EQ(own.status, 200) << own.body;
  ASSERT_EQ(own.json()["orders"].size(), 1u) << own.body;
  EXPECT_EQ(own.json()["orders"][0]["order_id"], mine);
  EXPECT_EQ(client().get("/v1/orders?customer_id=7", bearer("c")).json()["orders"].size(), 1u);
  const auto other = client().get("/v1/orders?customer_id=8", bearer("c"));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(other.json()["code"], "forbidden");
  EXPECT_EQ(client().get("/v1/orders/" + mine + "/receipts", bearer("c")).status, 200);
  EXPECT_EQ(client().get("/v1/orders/" + theirs + "/receipts", bearer("c")).status, 404);

  EXPECT_EQ(client().get("/v1/orders", bearer("o")).json()["orders"].size(), 2u);
  EXPECT_EQ(client().get("/v1/orders?customer_id=8", bearer("a")).json()["orders"].size(), 1u);
  EXPECT_EQ(client().get("/v1/orders/" + theirs + "/receipts", bearer("o")).status, 200);
  // Placing is still for admins and customers only.
  const json body = {
      {"customer_id", 7}, {"warehouse_id", 1}, {"lines", {{{"sku_id", 1}, {"quantity", 1}}}}};
  Headers op = bearer("o");
  op.push_back({"Idempotency-Key", "x"});
  EXPECT_EQ(client().post("/v1/orders", body.dump(), op).status, 403);

  EXPECT_EQ(client().get("/v1/warehouses/1/skus", bearer("c")).status, 403);
  EXPECT_EQ(client().get("/v1/scopes", bearer("c")).status, 403);
  EXPECT_EQ(client().get("/v1/scopes", bearer("o")).status, 200);
  EXPECT_EQ(client().get("/v1/orders").status, 401);
}

TEST_P(ListsHttpTest, ClaimsShowOwnerAttemptAndLease) {
  SchedulerOptions o;
  o.owner = "w-9";
  Scheduler worker(db(), o);
  ASSERT_TRUE(
      worker.import_source_orders(std::vector<SourceOrder>{{{"S1", "A", "1"}, 1}}, soon()).ok());
  auto run = worker.create_run(RunKind::manual, std::nullopt, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_EQ(worker.claim(run->run.run_id, 1)->size(), 1u);

  EXPECT_EQ(client().get("/v1/schedule/claims").json()["claims"], json::array());
  const auto soon_ending = client().get("/v1/schedule/claims?within=1h");
  ASSERT_EQ(soon_ending.status, 200) << soon_ending.body;
  ASSERT_EQ(soon_ending.json()["claims"].size(), 1u) << soon_ending.body;
  const json c = soon_ending.json()["claims"][0];
  EXPECT_EQ(c["owner"], "w-9");
  EXPECT_EQ(c["attempt"], 1);
  EXPECT_EQ(c["expired"], false);
  EXPECT_EQ(c["site_code"], "S1");
  EXPECT_TRUE(c["lease_until"].is_string()) << c;
  expect_field_error("/v1/schedule/claims?within=2d", "within");
  expect_field_error("/v1/schedule/claims?within=soon", "within");
  expect_field_error("/v1/schedule/claims?after=x", "after");
}

// Timelines over HTTP (API.md, "Timelines"): a produced order from placed to produced, its
// item's timeline with the claim's owner for staff; a customer sees its own order's timeline
// without worker names and another customer's not at all.
TEST_P(ListsHttpTest, TimelinesShowTheOrderAndItsItems) {
  put_sku(1, 10);
  const std::string mine = place(7, 1, "a");
  const std::string theirs = place(8, 1, "b");
  SchedulerOptions o;
  o.owner = "w-9";
  Scheduler worker(db(), o);
  auto run = worker.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_TRUE(worker.process_run(run->run.run_id).ok());
  ServerOptions options;
  options.tokens_file = write_tokens("o operator\nv viewer\nc customer:7\n");
  start_server(options);

  const auto staff = client().get("/v1/orders/" + mine + "/timeline", bearer("o"));
  ASSERT_EQ(staff.status, 200) << staff.body;
  const json t = staff.json();
  EXPECT_EQ(t["order_id"], mine);
  EXPECT_EQ(t["status"], "placed");
  std::vector<std::string> kinds;
  std::int64_t item = 0;
  for (const json& e : t["entries"]) {
    kinds.push_back(e["kind"]);
    if (e["kind"] == "claimed") {
      EXPECT_EQ(e["owner"], "w-9") << e;
      EXPECT_EQ(e["attempt"], 1) << e;
      item = e["item_id"];
    }
    if (e["kind"] == "produced") {
      EXPECT_TRUE(e["document_number"].is_string()) << e;
      EXPECT_EQ(e["lot_no"], "1") << e;
    }
  }
  ASSERT_EQ(kinds.size(), 6u) << t;
  EXPECT_EQ((std::vector<std::string>(kinds.begin() + 3, kinds.end())),
            (std::vector<std::string>{"created", "claimed", "produced"}))
      << t;
  ASSERT_NE(item, 0);

  const auto own = client().get("/v1/orders/" + mine + "/timeline", bearer("c"));
  ASSERT_EQ(own.status, 200) << own.body;
  for (const json& e : own.json()["entries"]) {
    if (e.contains("owner")) {
      EXPECT_TRUE(e["owner"].is_null()) << e;
    }
  }
  const auto other = client().get("/v1/orders/" + theirs + "/timeline", bearer("c"));
  EXPECT_EQ(other.status, 404) << other.body;
  EXPECT_EQ(other.json()["code"], "not_found");

  const auto it = client().get(fmt::format("/v1/schedule/items/{}/timeline", item), bearer("v"));
  ASSERT_EQ(it.status, 200) << it.body;
  EXPECT_EQ(it.json()["item"]["status"], "success");
  EXPECT_EQ(it.json()["events"].size(), 3u) << it.body;
  EXPECT_EQ(it.json()["events"][1]["owner"], "w-9");
  EXPECT_EQ(client().get(fmt::format("/v1/schedule/items/{}/timeline", item), bearer("c")).status,
            403);
  EXPECT_EQ(client().get("/v1/schedule/items/99999/timeline", bearer("o")).status, 404);
  const auto bad = client().get("/v1/schedule/items/1/timeline?x=1", bearer("o"));
  EXPECT_EQ(bad.status, 400) << bad.body;
}

INSTANTIATE_TEST_SUITE_P(Engines, ListsHttpTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
