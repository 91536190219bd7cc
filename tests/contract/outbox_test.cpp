// The outbox on both engines (docs/EVENTS.md): events written with their facts and only with
// them, a feed that pages without repeating or skipping, consumers, endpoints, and deliveries
// settled by mode under their fence, one step of a send at a time.
#include <thread>

#include "contract/outbox_fixture.hpp"
#include "onceorder/core/signature.hpp"
#include "store/dialect.hpp"
#include "store/events_store.hpp"

namespace onceorder::testing {
namespace {

using nlohmann::json;

std::vector<std::string> types_of(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.type);
  return out;
}

TEST_P(OutboxTest, EventsAreWrittenWithTheirFacts) {
  const std::int64_t order = place(7, "k1", 2);
  ASSERT_TRUE(intake().cancel(order, soon()).ok());
  Numbering numbering(*db_);
  ASSERT_TRUE(numbering.issue({"INV", "invoice one", std::nullopt}, soon()).ok());
  Scheduler scheduler(*db_);
  const std::vector<SourceOrder> imported{{{"F1", "A1", "1"}, 10}};
  ASSERT_TRUE(scheduler.import_source_orders(imported, soon()).ok());
  auto run = scheduler.create_run(RunKind::batch, std::nullopt, soon());
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(scheduler.process_run(run->run.run_id).ok());

  const auto events = all_events();
  EXPECT_EQ(types_of(events), (std::vector<std::string>{
                                  "order.placed", "order.cancelled", "document.issued",
                                  "document.issued", "production_order.created", "run.finished"}));
  const json placed = json::parse(events.at(0).data);
  EXPECT_EQ(events.at(0).key, std::to_string(order));
  EXPECT_EQ(placed["order_id"], std::to_string(order));
  EXPECT_EQ(placed["lines"].size(), 1u);
  EXPECT_EQ(placed["lines"][0]["quantity"], 2);
  EXPECT_EQ(json::parse(events.at(1).data)["order_id"], std::to_string(order));
  EXPECT_EQ(events.at(2).key, "INV/0001");
  const json production = json::parse(events.at(4).data);
  EXPECT_EQ(events.at(4).key, "F1/A1/1");
  EXPECT_EQ(production["quantity"], 10);
  EXPECT_EQ(production["run_id"], run->run.run_id);
  EXPECT_EQ(production["document_number"], "000000001");
  EXPECT_EQ(events.at(3).key, "PO-F1/000000001");
  EXPECT_EQ(json::parse(events.at(5).data)["status"], "done");
  // The envelope: the same bytes every time it is written.
  const json envelope = json::parse(event_json(events.at(0)));
  EXPECT_EQ(envelope["id"], events.at(0).id);
  EXPECT_EQ(envelope["data"], placed);
  EXPECT_EQ(event_json(events.at(0)), event_json(all_events().at(0)));
}

TEST_P(OutboxTest, AFactThatRollsBackLeavesNoEvent) {
  IntakeOptions failing;
  failing.fault_after_deduction = [] { return Status(Code::internal, "planted"); };
  Intake broken(*db_, failing);
  ASSERT_TRUE(Stock(*db_).put_sku(1, 101, 100, 10, soon()).ok());
  EXPECT_FALSE(broken.place({7, 1, {{101, 1}}, "k"}, soon()).ok());
  NumberingOptions no_number;
  no_number.fault_after_allocate = [] { return Status(Code::internal, "planted"); };
  Numbering numbering(*db_, no_number);
  EXPECT_FALSE(numbering.issue({"INV", "t", std::nullopt}, soon()).ok());
  EXPECT_TRUE(all_events().empty());
}

TEST_P(OutboxTest, PagesNeverRepeatOrSkip) {
  for (int i = 0; i < 11; ++i) place(7, "k" + std::to_string(i));
  const auto every = all_events();
  ASSERT_EQ(every.size(), 11u);
  std::vector<std::int64_t> seen;
  FeedPosition after;
  settle_feed();
  for (int pages = 0; pages < 10; ++pages) {
    auto page = outbox_.read(after, {}, 3, soon());
    ASSERT_TRUE(page.ok());
    for (const Event& e : page->events) seen.push_back(e.id);
    if (page->events.empty()) break;
    EXPECT_GT(page->next_after, after);
    after = page->next_after;
  }
  std::vector<std::int64_t> expected;
  for (const Event& e : every) expected.push_back(e.id);
  EXPECT_EQ(seen, expected);
}

TEST_P(OutboxTest, AFilteredReadMovesPastWhatItDoesNotTake) {
  const std::int64_t order = place(7, "a");
  ASSERT_TRUE(intake().cancel(order, soon()).ok());
  place(7, "b");
  settle_feed();
  auto cancels = outbox_.read({}, {"order.cancelled"}, 10, soon());
  ASSERT_TRUE(cancels.ok());
  ASSERT_EQ(cancels->events.size(), 1u);
  EXPECT_EQ(cancels->events[0].type, "order.cancelled");
  // Not a full page: the next read starts after the last order.placed, not after the cancel.
  EXPECT_EQ(cancels->next_after, all_events().back().position());
  auto nothing = outbox_.read(cancels->next_after, {}, 10, soon());
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->events.empty());
  EXPECT_EQ(nothing->next_after, cancels->next_after);
}

TEST_P(OutboxTest, CursorsAndTypesAreChecked) {
  EXPECT_TRUE(parse_cursor("0").ok());
  EXPECT_EQ(parse_cursor("12:34")->event_id, 34);
  for (const char* bad :
       {"", "-1:2", "1:", ":1", "01:2", "1:2:3", "x", "1.5", "99999999999999999999:1"}) {
    EXPECT_EQ(parse_cursor(bad).status().code(), Code::invalid_request) << bad;
  }
  EXPECT_EQ(parse_event_types("order.placed,order.placed")->size(), 1u);
  EXPECT_EQ(parse_event_types("order.placed,nope").status().code(), Code::invalid_request);
  EXPECT_EQ(parse_event_types("order.placed,").status().code(), Code::invalid_request);
}

TEST_P(OutboxTest, ConsumersKeepTheirPositionAndLag) {
  place(7, "a");
  place(7, "b");
  const auto events = all_events();
  EXPECT_EQ(outbox_.consumer("erp", soon()).status().code(), Code::not_found);
  auto created = outbox_.put_consumer("erp", events.at(0).position(), soon());
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  EXPECT_TRUE(created->created);
  EXPECT_EQ(created->consumer.lag_events, 1);
  auto moved = outbox_.put_consumer("erp", events.at(1).position(), soon());
  ASSERT_TRUE(moved.ok());
  EXPECT_FALSE(moved->created);
  EXPECT_EQ(moved->consumer.lag_events, 0);
  EXPECT_EQ(outbox_.consumer("erp", soon())->after, events.at(1).position());
  // Past the head: a reader there would skip what comes next.
  FeedPosition past = events.at(1).position();
  past.event_id += 5;
  EXPECT_EQ(outbox_.put_consumer("erp", past, soon()).status().code(), Code::invalid_request);
  EXPECT_EQ(outbox_.consumer("erp", soon())->after, events.at(1).position());
  EXPECT_EQ(outbox_.put_consumer("bad name", {}, soon()).status().code(), Code::invalid_request);
  ASSERT_TRUE(outbox_.delete_consumer("erp", soon()).ok());
  EXPECT_EQ(outbox_.delete_consumer("erp", soon()).code(), Code::not_found);
}

TEST_P(OutboxTest, EndpointsAreCheckedAndNeverShowTheirSecret) {
  EndpointSpec s = endpoint("mes");
  for (auto [field, change] :
       std::vector<std::pair<std::string, std::function<void(EndpointSpec&)>>>{
           {"url", [](EndpointSpec& e) { e.url = "ftp://x/"; }},
           {"url", [](EndpointSpec& e) { e.url = "http://user:pw@host/"; }},
           {"url", [](EndpointSpec& e) { e.url = "http://host:99999/"; }},
           {"secret", [](EndpointSpec& e) { e.secret = "short"; }},
           {"max_attempts", [](EndpointSpec& e) { e.max_attempts = 0; }},
           {"backoff_seconds", [](EndpointSpec& e) { e.backoff_seconds = 0; }},
           {"types", [](EndpointSpec& e) { e.types = {"order.nope"}; }},
           {"name", [](EndpointSpec& e) { e.name = "a/b"; }},
       }) {
    EndpointSpec bad = s;
    change(bad);
    auto st = outbox_.put_endpoint(bad, soon());
    ASSERT_EQ(st.status().code(), Code::invalid_request) << field;
    EXPECT_EQ(st.status().fields().at(0).field, field);
  }
  EXPECT_TRUE(outbox_.endpoints(soon())->empty());
  auto put = outbox_.put_endpoint(s, soon());
  ASSERT_TRUE(put.ok()) << put.status().to_string();
  EXPECT_TRUE(put->created);
  EXPECT_TRUE(put->endpoint.spec.secret.empty());
  s.url = "https://mes.example/in";
  auto again = outbox_.put_endpoint(s, soon());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(outbox_.endpoint("mes", soon())->spec.url, "https://mes.example/in");
  ASSERT_TRUE(outbox_.delete_endpoint("mes", soon()).ok());
  EXPECT_EQ(outbox_.endpoint("mes", soon()).status().code(), Code::not_found);
}

TEST_P(OutboxTest, ANewEndpointStartsAtTheHeadUnlessToldOtherwise) {
  place(7, "before");
  settle_feed();  // "the head" is what a reader can see
  EndpointSpec from_now = endpoint("now");
  from_now.after.reset();
  ASSERT_TRUE(outbox_.put_endpoint(from_now, soon()).ok());
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("all"), soon()).ok());
  place(7, "after");
  ScriptedSender sender;
  auto w = worker(sender);
  ASSERT_TRUE(run(w).ok());
  const auto events = all_events();
  EXPECT_EQ(status_of("now", events.at(0).id), "missing");
  EXPECT_EQ(status_of("now", events.at(1).id), "delivered");
  EXPECT_EQ(status_of("all", events.at(0).id), "delivered");
  EXPECT_EQ(status_of("all", events.at(1).id), "delivered");
  EXPECT_EQ(sender.sent.size(), 3u);
}

TEST_P(OutboxTest, ADeliveryCarriesTheEventItsKeyAndSignature) {
  place(7, "a");
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("mes"), soon()).ok());
  ScriptedSender sender;
  auto w = worker(sender);
  ASSERT_EQ(*run(w), 1);
  ASSERT_EQ(sender.sent.size(), 1u);
  const SendRequest& r = sender.sent[0];
  const Event e = all_events().at(0);
  EXPECT_EQ(r.body, event_json(e));
  EXPECT_EQ(r.url, "http://127.0.0.1:9/hook");
  std::map<std::string, std::string> h(r.headers.begin(), r.headers.end());
  EXPECT_EQ(h["Idempotency-Key"], std::to_string(e.id));
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  EXPECT_EQ(verify_signature(h["OnceOrder-Signature"], "0123456789abcdef-secret", r.body, now),
            SignatureCheck::ok);
  EXPECT_EQ(verify_signature(h["OnceOrder-Signature"], "another-secret-entirely", r.body, now),
            SignatureCheck::mismatch);
  EXPECT_EQ(
      verify_signature(h["OnceOrder-Signature"], "0123456789abcdef-secret", r.body + " ", now),
      SignatureCheck::mismatch);
  EXPECT_EQ(
      verify_signature(h["OnceOrder-Signature"], "0123456789abcdef-secret", r.body, now + 3600),
      SignatureCheck::stale);
  EXPECT_EQ(metrics_.delivered.load(), 1u);
}

// Step 4 of docs/EVENTS.md's table: an answer that is not 2xx arrived. Both modes retry it,
// with the same body and key, until max_attempts; then it is dead, and redeliver revives it.
TEST_P(OutboxTest, ARefusalIsRetriedUntilDeadThenRedelivered) {
  for (DeliveryMode mode : {DeliveryMode::at_least_once, DeliveryMode::at_most_once}) {
    SCOPED_TRACE(std::string(to_string(mode)));
    const std::string name = mode == DeliveryMode::at_most_once ? "most" : "least";
    ASSERT_TRUE(outbox_.put_endpoint(endpoint(name, mode), soon()).ok());
    if (all_events().empty()) place(7, "a");
    const std::int64_t id = all_events().at(0).id;
    ScriptedSender sender;
    sender.otherwise = answered(500);
    auto w = worker(sender);
    ASSERT_TRUE(run(w).ok());
    EXPECT_EQ(status_of(name, id), "pending");
    make_due();
    ASSERT_TRUE(run(w).ok());
    make_due();
    ASSERT_TRUE(run(w).ok());
    EXPECT_EQ(status_of(name, id), "dead");
    ASSERT_EQ(sender.sent.size(), 3u);
    EXPECT_EQ(sender.sent[0].body, sender.sent[2].body);
    make_due();
    ASSERT_TRUE(run(w).ok());
    EXPECT_EQ(sender.sent.size(), 3u);  // dead: not sent again on its own
    const std::vector<std::int64_t> ids{id};
    EXPECT_EQ(outbox_.redeliver(name, std::vector<std::int64_t>{id + 1000}, soon()).status().code(),
              Code::not_found);
    ASSERT_TRUE(outbox_.redeliver(name, ids, soon()).ok());
    EXPECT_EQ(outbox_.redeliver(name, ids, soon()).status().code(), Code::conflict);
    sender.otherwise = answered(204);
    ASSERT_TRUE(run(w).ok());
    EXPECT_EQ(status_of(name, id), "delivered");
    EXPECT_EQ(sender.sent.size(), 4u);
  }
}

// Steps 3 and 4: the request may have arrived. at_least_once sends it again; at_most_once
// leaves it in doubt until an operator's word, and `false` sends it once more.
TEST_P(OutboxTest, AnUnknownOutcomeIsResentOrLeftInDoubtByMode) {
  place(7, "a");
  const std::int64_t id = all_events().at(0).id;
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("least"), soon()).ok());
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("most", DeliveryMode::at_most_once), soon()).ok());
  ScriptedSender sender;
  sender.otherwise = unknown_outcome();
  auto w = worker(sender);
  ASSERT_TRUE(run(w).ok());
  EXPECT_EQ(status_of("least", id), "pending");
  EXPECT_EQ(status_of("most", id), "in_doubt");
  make_due();
  sender.otherwise = answered(200);
  ASSERT_TRUE(run(w).ok());
  EXPECT_EQ(status_of("least", id), "delivered");
  EXPECT_EQ(status_of("most", id), "in_doubt");
  EXPECT_EQ(sender.sent.size(), 3u);  // least twice, most once
  EXPECT_EQ(outbox_.resolve("least", id, true, soon()).status().code(), Code::conflict);
  EXPECT_EQ(outbox_.resolve("most", id + 99, true, soon()).status().code(), Code::not_found);
  auto resent = outbox_.resolve("most", id, false, soon());
  ASSERT_TRUE(resent.ok()) << resent.status().to_string();
  EXPECT_EQ(resent->status, DeliveryStatus::pending);
  ASSERT_TRUE(run(w).ok());
  EXPECT_EQ(status_of("most", id), "delivered");
  EXPECT_EQ(sender.sent.size(), 4u);
  ASSERT_TRUE(run(w).ok());
  EXPECT_EQ(sender.sent.size(), 4u);
}

// Steps 1 and 5: a sender that stops after claiming (or before recording) leaves the lease to
// the reaper; its late outcome is fenced out.
TEST_P(OutboxTest, AStaleSenderIsFencedOutAndTheReaperDecidesByMode) {
  place(7, "a");
  const std::int64_t id = all_events().at(0).id;
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("least"), soon()).ok());
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("most", DeliveryMode::at_most_once), soon()).ok());
  settle_feed();
  ASSERT_TRUE(outbox_.dispatch(100, soon()).ok());
  auto claims = outbox_.claim("stale", 10, std::chrono::milliseconds(1), soon());
  ASSERT_TRUE(claims.ok());
  ASSERT_EQ(claims->size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto reaped = outbox_.reap(soon());
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(reaped->pending, 1);
  EXPECT_EQ(reaped->in_doubt, 1);
  std::vector<DeliveryOutcome> late;
  for (const auto& c : *claims)
    late.push_back(decide_outcome(c, SendResult::delivered, 200, "", 0));
  EXPECT_EQ(recorded(outbox_.settle(late, soon())), 0u);
  EXPECT_EQ(status_of("least", id), "pending");
  EXPECT_EQ(status_of("most", id), "in_doubt");
  // A fresh claim of the re-queued one carries a new attempt: the old token stays useless.
  auto fresh = outbox_.claim("fresh", 10, std::chrono::seconds(30), soon());
  ASSERT_EQ(fresh->size(), 1u);
  EXPECT_EQ(fresh->at(0).attempt, 2);
  EXPECT_EQ(recorded(outbox_.settle(late, soon())), 0u);
  EXPECT_EQ(recorded(outbox_.settle(std::vector<DeliveryOutcome>{decide_outcome(
                                        fresh->at(0), SendResult::delivered, 200, "", 0)},
                                    soon())),
            1u);
  EXPECT_EQ(status_of("least", id), "delivered");
}

// A cancel never overtakes its order.placed: while the placed event is undelivered, the
// cancel waits; other keys do not.
TEST_P(OutboxTest, AKeysEventsAreDeliveredInOrderAndOtherKeysDoNotWait) {
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("erp"), soon()).ok());
  const std::int64_t first = place(7, "a");
  ScriptedSender sender;
  sender.script = {answered(503)};
  auto w = worker(sender);
  ASSERT_TRUE(run(w).ok());  // order.placed refused: pending with a backoff
  ASSERT_TRUE(intake().cancel(first, soon()).ok());
  place(8, "b");
  ASSERT_TRUE(run(w).ok());
  const auto events = all_events();  // placed(a), cancelled(a), placed(b)
  EXPECT_EQ(status_of("erp", events.at(0).id), "pending");
  EXPECT_EQ(status_of("erp", events.at(1).id), "pending");  // waits for its placed
  EXPECT_EQ(status_of("erp", events.at(2).id), "delivered");
  auto listed = outbox_.deliveries("erp", DeliveryStatus::pending, 0, 100, soon());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->at(1).blocked_by, events.at(0).id);
  // PostgreSQL sets a waiting one aside (no next_at) until its key's earlier one is delivered.
  if (GetParam() == Engine::postgres) {
    EXPECT_FALSE(listed->at(1).next_at.has_value());
  }
  make_due();
  ASSERT_TRUE(run(w).ok());  // placed(a) now; its cancel becomes free only after
  ASSERT_TRUE(run(w).ok());
  EXPECT_EQ(sender.sent_ids(), (std::vector<std::int64_t>{events.at(0).id, events.at(2).id,
                                                          events.at(0).id, events.at(1).id}));
}

// A delivery waiting behind one in doubt goes out once an operator says that one arrived: no
// settle of a send releases it, the reaper's pass does.
TEST_P(OutboxTest, AWordOnTheEarlierOneReleasesTheOneWaitingBehindIt) {
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("most", DeliveryMode::at_most_once), soon()).ok());
  const std::int64_t order = place(7, "a");
  ScriptedSender sender;
  sender.otherwise = unknown_outcome();
  auto w = worker(sender);
  ASSERT_TRUE(run(w).ok());
  ASSERT_TRUE(intake().cancel(order, soon()).ok());
  ASSERT_TRUE(run(w).ok());
  ASSERT_TRUE(run(w).ok());
  const auto events = all_events();  // placed, cancelled
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(status_of("most", events.at(0).id), "in_doubt");
  EXPECT_EQ(status_of("most", events.at(1).id), "pending");
  EXPECT_EQ(sender.sent.size(), 1u);
  ASSERT_TRUE(outbox_.resolve("most", events.at(0).id, true, soon()).ok());
  sender.otherwise = answered(200);
  ASSERT_TRUE(run(w).ok());
  EXPECT_EQ(status_of("most", events.at(1).id), "delivered");
  EXPECT_EQ(sender.sent_ids(), (std::vector<std::int64_t>{events.at(0).id, events.at(1).id}));
}

// The claim's plan reads a window from the front of deliveries_due, in its order, and stops,
// whatever the statistics of `deliveries` say. Planted: statistics taken while the table held
// only delivered rows, then a backlog. On PostgreSQL a NOT EXISTS anti-join planned from them
// sorted every pending row and probed the whole table for each, seconds per claim at a few
// thousand; on SQLite an index on next_at alone left the rest of the order to a sort.
TEST_P(OutboxTest, TheClaimReadsAWindowWhateverTheStatisticsSay) {
  const bool pg = GetParam() == Engine::postgres;
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("history"), soon()).ok());
  ASSERT_TRUE(outbox_.put_endpoint(endpoint("backlog"), soon()).ok());
  tdb_.sql(
      "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000) INSERT "
      "INTO events (type, key, ref) SELECT 'document.issued', 'S/' || n, n FROM g");
  tdb_.sql(
      "INSERT INTO deliveries (endpoint, event_id, ev_tx, key, status, delivered_at) SELECT "
      "'history', event_id, tx, key, 'delivered', '2026-01-01' FROM events");
  tdb_.sql("ANALYZE");
  tdb_.sql(
      "INSERT INTO deliveries (endpoint, event_id, ev_tx, key, status) SELECT 'backlog', "
      "event_id, tx, key, 'pending' FROM events");
  std::string sql(store::dialect_for(pg ? Engine::postgres : Engine::sqlite).events.claim.sql);
  const char* mark = pg ? "$" : "?";
  for (const auto& [n, value] : {std::pair{"1", "'w'"}, {"2", "32"}, {"3", "30000"}}) {
    const std::string param = std::string(mark) + n;
    for (auto at = sql.find(param); at != std::string::npos; at = sql.find(param)) {
      sql.replace(at, 2, value);
    }
  }
  std::string plan;
  for (const auto& row : tdb_.sql((pg ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + sql)) {
    plan += row.text(pg ? 0 : 3) + "\n";
  }
  EXPECT_NE(plan.find(pg ? "Index Scan using deliveries_due" : "USING INDEX deliveries_due"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find(pg ? "Sort" : "TEMP B-TREE"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("Anti Join"), std::string::npos) << plan;
}

TEST_P(OutboxTest, OutcomesFollowTheModeRule) {
  DeliveryClaim c;
  c.mode = DeliveryMode::at_most_once;
  c.max_attempts = 2;
  c.backoff_seconds = 10;
  c.attempt = 1;
  EXPECT_EQ(decide_outcome(c, SendResult::unknown, {}, "x", 0).status, DeliveryStatus::in_doubt);
  EXPECT_EQ(decide_outcome(c, SendResult::refused, 500, "x", 0).status, DeliveryStatus::pending);
  EXPECT_EQ(decide_outcome(c, SendResult::refused, 500, "x", 0).retry_after_ms, 5000);
  c.attempt = 2;
  EXPECT_EQ(decide_outcome(c, SendResult::refused, {}, "x", 0.99).status, DeliveryStatus::dead);
  c.mode = DeliveryMode::at_least_once;
  c.attempt = 1;
  EXPECT_EQ(decide_outcome(c, SendResult::unknown, {}, "x", 0).status, DeliveryStatus::pending);
  EXPECT_EQ(retry_delay(10, 3, 0.5).count(), 40000);
  EXPECT_EQ(retry_delay(86400, 30, 0.5).count(), 3600000);
}

INSTANTIATE_TEST_SUITE_P(Engines, OutboxTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

// The classic outbox bug, made to happen on PostgreSQL: ids come from the insert, commits come
// in another order. A plain `event_id > cursor` reader passes over the event that committed
// late; the feed (a visibility horizon) holds it back until it has committed and then returns
// both, in order.
class OutboxFeedTest : public ::testing::Test {};

TEST_F(OutboxFeedTest, NaiveIdCursorLosesAnEventCommittedLate) {
  if (!postgres_configured()) GTEST_SKIP() << "PostgreSQL only: SQLite has one writer";
  TestDb tdb(Engine::postgres);
  auto db = tdb.open();
  Outbox outbox(*db);
  RawPg early(tdb.url()), late(tdb.url());
  early.exec("BEGIN");
  early.exec("INSERT INTO events (type, key, ref) VALUES ('run.finished', 'early', 0)");
  late.exec("INSERT INTO events (type, key, ref) VALUES ('run.finished', 'late', 0)");
  const auto naive = [&](std::int64_t after) {
    return tdb.sql("SELECT event_id, key FROM events WHERE event_id > " + std::to_string(after) +
                   " ORDER BY event_id");
  };
  auto first = naive(0);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].text(1), "late");
  const std::int64_t naive_cursor = first[0].i64(0);
  auto held = outbox.read({}, {}, 100, soon());
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->events.empty()) << "an event above an open transaction was read";
  early.exec("COMMIT");
  EXPECT_TRUE(naive(naive_cursor).empty()) << "the naive reader was expected to lose 'early'";
  wait_feed_settled(tdb, Engine::postgres);
  auto both = outbox.read(held->next_after, {}, 100, soon());
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(both->events.size(), 2u);
  EXPECT_EQ(both->events[0].key, "early");
  EXPECT_EQ(both->events[1].key, "late");
}

// A restore into a new cluster starts transaction ids low: `migrate` raises the clock so that
// new events still sort after the stored ones.
TEST_F(OutboxFeedTest, MigrateKeepsTheFeedOrderPastARestore) {
  if (!postgres_configured()) GTEST_SKIP() << "PostgreSQL only";
  TestDb tdb(Engine::postgres);
  auto db = tdb.open();
  Outbox outbox(*db);
  tdb.sql("INSERT INTO events (type, key, ref) VALUES ('run.finished', 'old', 0)");
  // As if restored from a cluster a trillion transactions older: until the clock is raised, the
  // stored events sit above the horizon, held back rather than passed over.
  tdb.sql("UPDATE events SET tx = tx + 1000000000000");
  EXPECT_TRUE(outbox.read({}, {}, 100, soon())->events.empty());
  ASSERT_TRUE(store::migrate(*db).ok());
  auto head = outbox.head(soon());
  ASSERT_TRUE(head.ok());
  wait_feed_settled(tdb, Engine::postgres);
  EXPECT_EQ(outbox.read({}, {}, 100, soon())->events.size(), 1u);
  tdb.sql("INSERT INTO events (type, key, ref) VALUES ('run.finished', 'new', 0)");
  wait_feed_settled(tdb, Engine::postgres);
  auto after = outbox.read(*head, {}, 100, soon());
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->events.size(), 1u);
  EXPECT_EQ(after->events[0].key, "new");
  ASSERT_TRUE(store::migrate(*db).ok());  // nothing to raise now
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM events WHERE tx > (SELECT max(tx) FROM events WHERE "
                    "key = 'old')")[0]
                .i64(0),
            1);
}

}  // namespace
}  // namespace onceorder::testing
