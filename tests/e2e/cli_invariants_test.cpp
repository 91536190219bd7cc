// `onceorder check` against every invariant: a realistic workload leaves them all at zero,
// and each invariant, planted with plain SQL in the shape a real bug would leave, makes
// check exit 1 naming that invariant (and, where the shape is specific, only that one).
// Runs the built binary (ONCEORDER_BIN) on every engine.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "e2e/http_fixture.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/service/stock.hpp"

namespace onceorder::testing {
namespace {

store::Clock::time_point soon() { return store::Clock::now() + std::chrono::seconds(30); }

struct Checked {
  int exit_code = -1;
  std::string output;
  std::map<std::string, std::int64_t> violations;
  std::map<std::string, std::string> samples;  // all samples of an id, one per line
};

Checked check(const std::string& url) {
  Checked r;
  FILE* p = popen((onceorder_bin() + " --db " + url + " check --json 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const auto brace = r.output.find('{');
  if (brace == std::string::npos) return r;
  const auto doc = nlohmann::json::parse(r.output.substr(brace), nullptr, false);
  if (doc.is_discarded()) return r;
  for (const auto& c : doc["checks"]) {
    const auto id = c["id"].get<std::string>();
    r.violations[id] = c["violations"].get<std::int64_t>();
    for (const auto& s : c["sample"]) r.samples[id] += s.get<std::string>() + "\n";
  }
  return r;
}

// Runs a script (several statements) as a plain client outside OnceOrder.
void plant(Engine engine, const std::string& url, const std::string& script) {
  if (engine == Engine::sqlite) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(url.substr(std::string("sqlite:").size()).c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, script.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << " in: " << script;
    sqlite3_free(err);
    sqlite3_close(db);
  } else {
    PGconn* c = PQconnectdb(url.c_str());
    ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
    PGresult* r = PQexec(c, script.c_str());
    EXPECT_TRUE(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
        << PQerrorMessage(c) << " in: " << script;
    PQclear(r);
    PQfinish(c);
  }
}

// Order ids of the workload, substituted for $A (placed and produced), $B (cancelled) and
// $D (placed after the run: not scheduled yet).
struct Workload {
  std::int64_t a = 0, b = 0, d = 0;
};

// Place, replay, run out of stock, cancel, schedule and number, as the service does.
Workload run_workload(const std::string& url_text) {
  Workload w;
  auto url = parse_db_url(url_text);
  EXPECT_TRUE(url.ok());
  auto opened = store::Database::open(*url, {});
  EXPECT_TRUE(opened.ok()) << opened.status().to_string();
  if (!opened.ok()) return w;
  auto db = std::move(opened).value();
  EXPECT_TRUE(store::migrate(*db).ok());
  {
    Intake intake(*db);
    Stock stock(*db);
    EXPECT_TRUE(stock.put_sku(1, 101, 1200, 10, soon()).ok());
    EXPECT_TRUE(stock.put_sku(1, 202, 2500, 5, soon()).ok());
    auto a = intake.place({7, 1, {{202, 1}, {101, 2}}, "a"}, soon());
    auto replay = intake.place({7, 1, {{101, 2}, {202, 1}}, "a"}, soon());
    auto b = intake.place({7, 1, {{101, 1}}, "b"}, soon());
    auto c = intake.place({8, 1, {{202, 9}}, "c"}, soon());
    EXPECT_TRUE(a.ok() && replay.ok() && b.ok() && c.ok());
    if (!a.ok() || !b.ok() || !c.ok()) return w;
    EXPECT_TRUE(replay->replayed);
    EXPECT_TRUE(c->out_of_stock);
    w.a = a->order.order_id;
    w.b = b->order.order_id;
    EXPECT_TRUE(intake.cancel(w.b, soon()).ok());
    Scheduler scheduler(*db);
    const std::vector<SourceOrder> imported{{{"F1", "A1", "1"}, 10}};
    EXPECT_TRUE(scheduler.import_source_orders(imported, soon()).ok());
    auto run = scheduler.create_run(RunKind::batch, std::nullopt, soon());
    EXPECT_TRUE(run.ok());
    if (run.ok()) {
      auto done = scheduler.process_run(run->run.run_id);
      EXPECT_TRUE(done.ok());
      if (done.ok()) {
        EXPECT_EQ(done->counts.success, 3);  // A's two lines and F1/A1
      }
    }
    // Keyed requests of the other creating routes, each replayed once.
    for (int i = 0; i < 2; ++i) {
      EXPECT_TRUE(stock.adjust(AdjustRequest{1, 101, 1, "count", std::string("adj")}, soon()).ok());
      const std::vector<SourceOrder> more{{{"F2", "B1", "1"}, 4}};
      EXPECT_TRUE(scheduler.import_source_orders(more, soon(), std::string("imp")).ok());
      const std::vector<OrderKey> keys{{"F2", "B1", "1"}};
      auto keyed = scheduler.create_run(RunKind::manual, keys, soon(), std::string("run"));
      EXPECT_TRUE(keyed.ok());
      if (keyed.ok() && !keyed->replayed) {
        EXPECT_TRUE(scheduler.process_run(keyed->run.run_id).ok());
      }
    }
    auto d = intake.place({9, 1, {{101, 1}}, "d"}, soon());
    EXPECT_TRUE(d.ok());
    if (d.ok()) w.d = d->order.order_id;
    EXPECT_TRUE(scheduler.reap(soon()).ok());
  }
  Numbering numbering(*db);
  EXPECT_TRUE(numbering.issue({"DOC", "first", std::string("k1")}, soon()).ok());
  EXPECT_TRUE(numbering.issue({"DOC", "second", std::string("k2")}, soon()).ok());
  EXPECT_TRUE(numbering.issue({"DOC", "first", std::string("k1")}, soon()).ok());  // replay
  return w;
}

std::string substitute(std::string sql, const Workload& w) {
  for (auto [token, value] : {std::pair{"$A", w.a}, {"$B", w.b}, {"$D", w.d}}) {
    for (size_t at; (at = sql.find(token)) != std::string::npos;)
      sql.replace(at, 2, std::to_string(value));
  }
  return sql;
}

const std::vector<std::string> kIds = {"I1",  "I2",  "I3",  "I4",  "I5",  "I6",  "I7",  "I8",
                                       "I9",  "I10", "I11", "I12", "I13", "I14", "I15", "I16",
                                       "I17", "I18", "I19", "I20", "I21", "I22", "I23"};

// A violation as a real bug leaves it. `sql` is for both engines unless `postgres` differs
// ("-" skips the engine); `also` lists invariants the same shape necessarily breaks too.
struct Planted {
  const char* name;
  const char* id;
  const char* sql;
  const char* postgres = nullptr;
  std::set<std::string> also = {};
  const char* sample = "";  // text the invariant's sample must contain
};

#define OO_ORDER_NO(ID) "(SELECT order_no FROM orders WHERE order_id = " ID ")"

const Planted kPlanted[] = {
    // Seed 000: uniqueness put on (run_id, key), so batch and manual both queued one order.
    {"RunScopedUniqueIndex",
     "I1",
     "DROP INDEX schedule_items_live; CREATE UNIQUE INDEX schedule_items_run_key ON "
     "schedule_items (run_id, site_code, order_no, lot_no) WHERE status NOT IN ('failed', "
     "'aborted'); INSERT INTO schedule_runs (kind, status, owner) VALUES ('manual', 'running', "
     "'operator'); INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) "
     "SELECT max(run_id), 'F1', 'A1', '1', 'wait' FROM schedule_runs",
     nullptr,
     {"I10"},
     "F1/A1/1"},
    // Seed 000: a run died (error) and its waiting item still claims the order. The run was
    // written finished, so it never told anyone so (I22).
    {"OrphanWait",
     "I2",
     "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('F1', 'A2', "
     "'1', 5); INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'error', 'w'); "
     "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) SELECT "
     "max(run_id), 'F1', 'A2', '1', 'wait' FROM schedule_runs",
     nullptr,
     {"I22"}},
    // The item was marked success but the production order was never written.
    {"SuccessWithoutProduction",
     "I3",
     "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('F1', 'A3', "
     "'1', 5); INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'done', 'w'); "
     "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, attempt, owner) "
     "SELECT max(run_id), 'F1', 'A3', '1', 'success', 1, 'w' FROM schedule_runs",
     nullptr,
     {"I22"}},
    // Seed 004: a deduction that wrote no ledger entry (stock changed off the books).
    {"DeductionWithoutLedger", "I4",
     "UPDATE stock SET available = available - 1 WHERE warehouse_id = 1 AND sku_id = 101"},
    // A restore that gave the quantity back to `available` and left it in `reserved` too.
    {"ReservedOffTheBooks",
     "I4",
     "UPDATE stock SET reserved = reserved + 1 WHERE warehouse_id = 1 AND sku_id = 101",
     nullptr,
     {},
     "but its placed orders hold"},
    // A cancel that stopped scheduling but never released the reservations: the lines have
    // no release entries, and their stock rows still count them as reserved.
    {"CancelKeptReservations",
     "I5",
     "UPDATE orders SET status = 'cancelled', cancelled_at = created_at WHERE order_id = $D; "
     "UPDATE source_orders SET cancelled_at = created_at WHERE order_no = " OO_ORDER_NO("$D"),
     nullptr,
     {"I4"},
     "0 release entries"},
    // A cancel released a line twice (its ledger entry written twice).
    {"ReleasedTwice",
     "I5",
     "INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason, order_id, line_no) "
     "SELECT warehouse_id, sku_id, delta, kind, reason, order_id, line_no FROM stock_ledger "
     "WHERE order_id = $B AND kind = 'release' AND line_no = 1",
     nullptr,
     {"I4"},
     "2 release entries"},
    // A placement that numbered its lines' reservations off by one.
    {"ReservationOfAnotherLine",
     "I5",
     "UPDATE stock_ledger SET line_no = line_no + 1 WHERE order_id = $D AND kind = "
     "'reservation'",
     nullptr,
     {},
     "is for no line"},
    // Seed 004: the receipt stored another request than the one placed (replay lies).
    {"ReceiptOfAnotherRequest", "I6",
     "UPDATE order_receipts SET normalized = '101x3,202x1' WHERE idempotency_key = 'a'"},
    // A batch's receipts committed by a transaction that decided nothing (an opening, sent
    // behind the last batch's COMMIT, committed by another transaction than its batch).
    {"UndecidedReceipt",
     "I6",
     "INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, "
     "normalization) VALUES (9, 'left-open', 1, '101x1', 1)",
     nullptr,
     {},
     "undecided"},
    // Seed 003: a number taken past the counter (MAX+1 elsewhere), leaving a gap.
    {"NumberPastTheCounter", "I7",
     "INSERT INTO documents (scope, value, number, origin, scheme, title, principal) VALUES "
     "('DOC', 5, '0005', 'issued', 'r10w4', 'x', 'test')"},
    // A worker died holding an item, and the reaper has not run.
    {"ExpiredLease",
     "I8",
     "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('F1', 'A4', "
     "'1', 5); INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'running', 'w'); "
     "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, attempt, owner, "
     "lease_until) SELECT max(run_id), 'F1', 'A4', '1', 'processing', 1, 'w', "
     "'2000-01-01T00:00:00.000Z' FROM schedule_runs",
     nullptr,
     {},
     "expired"},
    // A claim that forgot the lease: the reaper can never take the item back.
    {"ProcessingWithoutLease",
     "I8",
     "INSERT INTO source_orders (site_code, order_no, lot_no, quantity) VALUES ('F1', 'A5', "
     "'1', 5); INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'running', 'w'); "
     "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, attempt, owner) "
     "SELECT max(run_id), 'F1', 'A5', '1', 'processing', 1, 'w' FROM schedule_runs",
     nullptr,
     {},
     "no lease"},
    // A cancel refused as in_production that still committed its source-order update: the
    // order is placed and produced, its source orders cancelled. SQLite: a re-import with
    // INSERT OR REPLACE (no UPDATE trigger fires); PostgreSQL: foreign keys not enforced.
    {"HalfCommittedCancel",
     "I9",
     "INSERT OR REPLACE INTO source_orders (site_code, order_no, lot_no, quantity, created_at, "
     "cancelled_at) SELECT site_code, order_no, lot_no, quantity, created_at, created_at FROM "
     "source_orders WHERE order_no = " OO_ORDER_NO("$A"),
     "BEGIN; SET LOCAL session_replication_role = replica; UPDATE source_orders SET "
     "cancelled_at = created_at WHERE order_no = " OO_ORDER_NO("$A") "; COMMIT",
     {},
     "has a production order"},
    // A run that picked candidates without excluding cancelled source orders.
    {"CancelledOrderQueuedAgain",
     "I9",
     "INSERT INTO schedule_runs (kind, status, owner) VALUES ('manual', 'running', 'w'); "
     "INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status) SELECT "
     "(SELECT max(run_id) FROM schedule_runs), 'W1', " OO_ORDER_NO("$B") ", '1', 'wait'",
     nullptr,
     {},
     "in wait"},
    {"LiveIndexDropped",
     "I10",
     "DROP INDEX schedule_items_live",
     nullptr,
     {},
     "schedule_items_live"},
    // Seed 000: an allow-list predicate, so a status added later would slip through.
    {"LiveIndexAllowList",
     "I10",
     "DROP INDEX schedule_items_live; CREATE UNIQUE INDEX schedule_items_live ON schedule_items "
     "(site_code, order_no, lot_no) WHERE status IN ('wait', 'processing', 'success')",
     nullptr,
     {},
     "schedule_items_live"},
    // Two maintenance leaders at once: the lease row's key is what makes taking it exclusive.
    {"LeaderLeaseWithoutKey",
     "I10",
     "DROP TABLE leader_leases; CREATE TABLE leader_leases (name text NOT NULL, holder text NOT "
     "NULL, lease_until_ms bigint NOT NULL, term bigint NOT NULL)",
     nullptr,
     {},
     "leader_leases"},
    // Seed 000's ENABLE NOVALIDATE: the check protects new rows only.
    {"CheckNotValidated",
     "I10",
     "-",
     "ALTER TABLE stock DROP CONSTRAINT stock_available_check; ALTER TABLE stock ADD "
     "CONSTRAINT stock_available_check CHECK (available >= 0) NOT VALID",
     {},
     "CHECK ((available >= 0))"},
    // The guard of a batch decided ahead (SQLSTATE OO002) is gone: its miss would fail the batch
    // instead of having it decided again on locked rows.
    {"UnmovedGuardDropped",
     "I10",
     "-",
     "DROP FUNCTION oo_assert_unmoved(boolean, text)",
     {},
     "oo_assert_unmoved"},
    // The source order was written with the cart's quantity before normalization.
    {"SourceOrderQuantity", "I11",
     "UPDATE source_orders SET quantity = quantity + 1 WHERE order_no = " OO_ORDER_NO("$D")},
    // Seed 002: a number from a separate generator (cache) instead of the id.
    {"NumberFromAnotherGenerator", "I12",
     "UPDATE source_orders SET order_no = 'O-CACHE00000001' WHERE order_no = " OO_ORDER_NO(
         "$D") "; UPDATE orders SET order_no = 'O-CACHE00000001' WHERE order_id = $D"},
    // Seed 000: the order produced at twice its quantity.
    {"ProducedTwiceTheQuantity", "I13",
     "UPDATE production_orders SET quantity = quantity * 2 WHERE site_code = 'F1'"},
    // Seed 003: a production step that took MAX+1 and got its neighbour's document.
    {"SharedDocument",
     "I14",
     "UPDATE production_orders SET document_value = (SELECT min(document_value) FROM "
     "production_orders WHERE site_code = 'W1'), document_number = (SELECT min(document_number) "
     "FROM production_orders WHERE site_code = 'W1') WHERE site_code = 'W1' AND lot_no = '2'",
     nullptr,
     {},
     "2 production orders"},
    // Seed 003: the receipt recorded a concurrent request's number.
    {"ReceiptOfAnotherDocument", "I15",
     "UPDATE document_receipts SET value = 2 WHERE scope = 'DOC' AND idempotency_key = 'k1'"},
    // Rule 3: the key committed in a transaction of its own, apart from the adjustment; and
    // a run receipt that points at the batch run instead of the run the request made.
    {"ReceiptWithoutItsAnswer",
     "I16",
     "UPDATE request_receipts SET answer = NULL WHERE route = 'stock_adjustment'; UPDATE "
     "request_receipts SET run_id = (SELECT min(run_id) FROM schedule_runs WHERE kind = "
     "'batch') WHERE route = 'schedule_run'",
     nullptr,
     {},
     "has no answer"},
    // A status change that wrote no event (a statement past the triggers, or its event lost):
    // F1/A1's item is success, its history still ends at the claim.
    {"ProducedWithoutItsEvent",
     "I17",
     "DELETE FROM schedule_item_events WHERE kind = 'produced' AND item_id = (SELECT item_id FROM "
     "schedule_items WHERE site_code = 'F1' AND order_no = 'A1')",
     nullptr,
     {},
     "last event is claimed (processing, attempt 1)"},
    // The outbox (I18–I22): a fact committed without its event (a path that bypassed the
    // triggers, or its event deleted), an event without its fact, and a fact told twice.
    {"OrderWithoutItsEvent",
     "I18",
     "DELETE FROM events WHERE type = 'order.placed' AND key = '$D'",
     nullptr,
     {},
     "has no order.placed event"},
    {"PlacedEventTwice",
     "I18",
     "-",
     "ALTER TABLE events DROP CONSTRAINT events_type_key_key; INSERT INTO events (tx, type, key, "
     "occurred_at, ref) SELECT tx, type, key, occurred_at, ref FROM events WHERE type = "
     "'order.placed' AND key = '$D'",
     {"I10"},
     "is written 2 times"},
    {"CancelWithoutItsEvent",
     "I19",
     "DELETE FROM events WHERE type = 'order.cancelled' AND key = '$B'",
     nullptr,
     {},
     "has no order.cancelled event"},
    // A cancel whose fact rolled back but whose event was written outside its transaction.
    {"CancelEventOfAPlacedOrder",
     "I19",
     "INSERT INTO events (type, key, ref) VALUES ('order.cancelled', '$D', $D)",
     nullptr,
     {},
     "has no cancelled order"},
    {"ProductionOrderWithoutItsEvent",
     "I20",
     "DELETE FROM events WHERE type = 'production_order.created' AND key LIKE 'F1/A1/%'",
     nullptr,
     {},
     "has no production_order.created event"},
    // The seed's poller, moved into the database: an event for a production order that never
    // committed.
    {"ProductionEventWithoutItsOrder",
     "I20",
     "INSERT INTO events (type, key, ref) VALUES ('production_order.created', 'F9/Z9/1', 0)",
     nullptr,
     {},
     "has no production order"},
    {"DocumentWithoutItsEvent",
     "I21",
     "DELETE FROM events WHERE type = 'document.issued' AND key = 'DOC/0002'",
     nullptr,
     {},
     "has no document.issued event"},
    {"RunFinishedWithoutItsEvent",
     "I22",
     "DELETE FROM events WHERE type = 'run.finished' AND key = (SELECT CAST(min(run_id) AS TEXT) "
     "FROM schedule_runs)",
     nullptr,
     {},
     "has no run.finished event"},
    {"OrderEventTriggerDropped",
     "I10",
     "DROP TRIGGER events_order_placed",
     "DROP TRIGGER events_order_placed ON orders",
     {},
     "events_order_placed"},
    // I23: a delivery worker that sent a key's later event while the earlier one still waited
    // (its retry, or an operator's word on it).
    {"DeliveredOutOfOrder",
     "I23",
     "INSERT INTO endpoints (name, url, types, secret, delivery, max_attempts, backoff_seconds, "
     "after_tx, after_id) VALUES ('erp', 'http://127.0.0.1:9/', '', 'secret-secret-secret', "
     "'at_least_once', 5, 1, 0, 0); INSERT INTO deliveries (endpoint, event_id, ev_tx, key, "
     "status) SELECT 'erp', event_id, tx, key, CASE type WHEN 'order.placed' THEN 'pending' ELSE "
     "'delivered' END FROM events WHERE key = '$B'",
     nullptr,
     {},
     "while the earlier event"},
    // The trigger that writes the events is gone: the next change would have none.
    {"EventTriggerDropped",
     "I10",
     "DROP TRIGGER schedule_items_event_update",
     "DROP TRIGGER schedule_items_event_update ON schedule_items",
     {},
     "schedule_items_event_update"},
};

class CliInvariantsTest : public ::testing::TestWithParam<Engine> {};

TEST_P(CliInvariantsTest, RealisticWorkloadKeepsEveryInvariantAtZero) {
  TestDb db(GetParam());
  run_workload(db.url());
  const auto c = check(db.url());
  EXPECT_EQ(c.exit_code, 0) << c.output;
  std::vector<std::string> ids;
  for (const auto& [id, n] : c.violations) {
    ids.push_back(id);
    EXPECT_EQ(n, 0) << id << ": " << c.samples.at(id);
  }
  EXPECT_EQ(ids.size(), kIds.size()) << c.output;
}

class CliPlantedInvariantTest : public ::testing::TestWithParam<std::tuple<Engine, Planted>> {};

TEST_P(CliPlantedInvariantTest, CheckNamesIt) {
  const auto& [engine, p] = GetParam();
  const char* sql = engine == Engine::postgres && p.postgres ? p.postgres : p.sql;
  if (std::string(sql) == "-") GTEST_SKIP() << "no such shape on this engine";
  TestDb db(engine);
  const Workload w = run_workload(db.url());
  ASSERT_NE(w.d, 0);
  ASSERT_EQ(check(db.url()).exit_code, 0);
  plant(engine, db.url(), substitute(sql, w));
  auto c = check(db.url());
  EXPECT_EQ(c.exit_code, 1) << c.output;
  ASSERT_EQ(c.violations.size(), kIds.size()) << c.output;
  EXPECT_GT(c.violations.at(p.id), 0) << c.output;
  EXPECT_NE(c.samples[p.id].find(p.sample), std::string::npos) << c.samples[p.id];
  for (const auto& id : kIds) {
    if (id == p.id || p.also.contains(id)) continue;
    EXPECT_EQ(c.violations.at(id), 0) << id << ": " << c.samples[id];
  }
  for (const auto& id : p.also) EXPECT_GT(c.violations.at(id), 0) << id << "\n" << c.output;
}

INSTANTIATE_TEST_SUITE_P(Engines, CliInvariantsTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

std::string planted_name(const ::testing::TestParamInfo<std::tuple<Engine, Planted>>& info) {
  const auto& [engine, p] = info.param;
  return std::string(p.id) + "_" + p.name + "_" +
         (engine == Engine::sqlite ? "sqlite" : "postgres");
}

INSTANTIATE_TEST_SUITE_P(Engines, CliPlantedInvariantTest,
                         ::testing::Combine(::testing::ValuesIn(engines_under_test()),
                                            ::testing::ValuesIn(kPlanted)),
                         planted_name);

}  // namespace
}  // namespace onceorder::testing
