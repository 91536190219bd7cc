// The outbox's pairs (docs/EVENTS.md) through the interleaving explorer on PostgreSQL: the
// feed read against a writer that commits late, the delivery worker against the reaper, and
// a delivery against the cancel of its order. After each schedule every invariant (I18–I23
// among them) and the pair's own postcondition must hold. The same pair with a wrong reader
// must lose an event in some schedule, or the pair could not catch that bug: a naive poller
// (`event_id > cursor`), and a feed that reads its page and its head in two statements (each
// with its own snapshot and horizon: the head can pass an event that committed between them).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "common/test_db.hpp"
#include "isolation/explorer.hpp"
#include "onceorder/service/outbox.hpp"

namespace onceorder::isolation::outbox_pairs {
namespace {

using namespace std::chrono_literals;

store::Clock::time_point minute_ahead() { return store::Clock::now() + 60s; }

template <class T>
T value_or_throw(Result<T> r, const char* what) {
  if (!r.ok()) throw std::runtime_error(std::string(what) + ": " + r.status().to_string());
  return std::move(r).value();
}

std::string code_text(const Status& st) { return std::string(code_name(st.code())); }

std::int64_t scalar(Fixture& f, const std::string& sql) { return f.sql(sql).at(0).i64(0); }

// An order of one unit of `sku` (stocked here) for `customer`, placed by session `s`'s Intake.
std::string place_one(SessionContext& s, std::int64_t customer, std::int64_t sku,
                      const std::string& key) {
  auto r = s.intake->place({customer, 1, {{sku, 1}}, key}, minute_ahead());
  if (!r.ok()) return code_text(r.status());
  return r->out_of_stock ? "out_of_stock" : "placed";
}

void stock_of(Fixture& f, std::int64_t sku) {
  value_or_throw(f.session[0]->stock->put_sku(1, sku, 100, 10, minute_ahead()), "put_sku");
}

// Until every event in the table is below the feed's horizon: a transaction elsewhere in the
// cluster holds it back for as long as it runs, and the final read must see everything.
void wait_for_horizon(Fixture& f) {
  const auto give_up = store::Clock::now() + 20s;
  while (
      !f.sql("SELECT coalesce(oo_event_horizon() > max(tx), true) FROM events").at(0).boolean(0)) {
    if (store::Clock::now() > give_up)
      throw std::runtime_error("another transaction held the feed's horizon back for 20 s");
    std::this_thread::sleep_for(1ms);
  }
}

// --- event writer / feed reader --------------------------------------------------------------

// How session B reads the feed: through the service; with the page, then the head in a second
// statement of the same READ COMMITTED transaction (each with its own snapshot and horizon);
// as a naive poller writes it (ids above the last one it saw).
enum class Reader { service, page_then_head, event_id };

// What session B's reader took from the feed, for the postcondition (written by B's thread,
// read after it was joined).
struct ReaderSeen {
  std::vector<std::int64_t> ids;
  FeedPosition next_after;   // where a feed reader goes on
  std::int64_t last_id = 0;  // the naive cursor
};
ReaderSeen& reader_seen() {
  static ReaderSeen seen;
  return seen;
}

std::string read_feed(SessionContext& s) {
  auto page = Outbox(*s.db).read({}, {}, EventLimits::kFeedPage, minute_ahead());
  if (!page.ok()) return code_text(page.status());
  for (const Event& e : page->events) reader_seen().ids.push_back(e.id);
  reader_seen().next_after = page->next_after;
  return fmt::format("read {}", page->events.size());
}

std::string read_page_then_head(SessionContext& s) {
  static constexpr store::Statement kPage{
      "iso_split_page",
      "SELECT event_id, tx FROM events WHERE tx < oo_event_horizon() ORDER BY tx, event_id"};
  static constexpr store::Statement kHead{
      "iso_split_head",
      "SELECT event_id, tx FROM events WHERE tx < oo_event_horizon() ORDER BY tx DESC, "
      "event_id DESC LIMIT 1"};
  auto read = store::transact<std::size_t>(
      *s.db, store::read_tx(minute_ahead()), [&](store::Connection& c) -> Result<std::size_t> {
        reader_seen() = {};
        OO_ASSIGN_OR_RETURN(auto page, c.query(kPage, {}));
        OO_ASSIGN_OR_RETURN(auto head, c.query(kHead, {}));
        for (const auto& r : page) {
          reader_seen().ids.push_back(r.i64(0));
          reader_seen().next_after = {r.i64(1), r.i64(0)};
        }
        if (!head.empty())
          reader_seen().next_after =
              std::max(reader_seen().next_after, FeedPosition{head[0].i64(1), head[0].i64(0)});
        return page.size();
      });
  return read.ok() ? fmt::format("read {}", *read) : code_text(read.status());
}

std::string read_by_event_id(SessionContext& s) {
  static constexpr store::Statement kNaive{
      "iso_naive_feed", "SELECT event_id FROM events WHERE event_id > $1 ORDER BY event_id"};
  auto conn = s.db->acquire(minute_ahead());
  if (!conn.ok()) return code_text(conn.status());
  auto rows = (*conn)->query(kNaive, {std::int64_t{0}});
  if (!rows.ok()) return code_text(rows.status());
  for (const auto& r : *rows) {
    reader_seen().ids.push_back(r.i64(0));
    reader_seen().last_id = r.i64(0);
  }
  return fmt::format("read {}", rows->size());
}

// Every event in the table read exactly once by B's read and a final read from where B left
// off: with the naive cursor by id, else through the service once every event is visible.
std::vector<std::string> every_event_once(Fixture& f, Reader reader) {
  std::vector<std::int64_t> seen = reader_seen().ids;
  if (reader == Reader::event_id) {
    for (const auto& r :
         f.sql(fmt::format("SELECT event_id FROM events WHERE event_id > {} ORDER BY event_id",
                           reader_seen().last_id)))
      seen.push_back(r.i64(0));
  } else {
    wait_for_horizon(f);
    auto rest = value_or_throw(
        Outbox(*f.control)
            .read(reader_seen().next_after, {}, EventLimits::kFeedPage, minute_ahead()),
        "final read");
    for (const Event& e : rest.events) seen.push_back(e.id);
  }
  std::map<std::int64_t, int> times;
  for (std::int64_t id : seen) ++times[id];
  std::vector<std::string> v;
  for (const auto& r : f.sql("SELECT event_id, type FROM events ORDER BY event_id")) {
    const int n = times[r.i64(0)];
    if (n == 0) v.push_back(fmt::format("lost: event {} ({})", r.i64(0), r.text(1)));
    if (n > 1) v.push_back(fmt::format("duplicated: event {} read {} times", r.i64(0), n));
  }
  return v;
}

// A cancels an order placed in the setup: its transaction writes order.cancelled, then reads
// the order back before it commits, so another event can commit after it was written and
// before it commits. B places another order (its event commits at once), then reads the feed
// from the start.
PairSpec writer_and_reader(Reader reader) {
  const char* how = reader == Reader::service          ? "Outbox::read"
                    : reader == Reader::page_then_head ? "page, then head, apart"
                                                       : "naive event_id cursor";
  return {fmt::format("event writer/feed reader ({})", how),
          [](Fixture& f) {
            reader_seen() = {};
            stock_of(f, 101);
            stock_of(f, 202);
            f.ids["order"] =
                value_or_throw(f.session[0]->intake->place({7, 1, {{101, 1}}, "x"}, minute_ahead()),
                               "place")
                    .order.order_id;
          },
          {[](Fixture& f, SessionContext& s) {
             auto r = s.intake->cancel(f.ids["order"], minute_ahead());
             return r.ok() ? r->status : code_text(r.status());
           },
           [reader](Fixture&, SessionContext& s) {
             const std::string placed = place_one(s, 2, 202, "b");
             return placed + ", " +
                    (reader == Reader::service          ? read_feed(s)
                     : reader == Reader::page_then_head ? read_page_then_head(s)
                                                        : read_by_event_id(s));
           }},
          [reader](Fixture& f, const std::string& a, const std::string& b) {
            auto v = every_event_once(f, reader);
            if (a != "cancelled" || b.rfind("placed, read", 0) != 0)
              v.push_back("not cancelled and placed: " + a + " / " + b);
            return v;
          },
          2};
}

// --- delivery worker / reaper ----------------------------------------------------------------

constexpr std::string_view kSecret = "0123456789abcdef0123";

// Endpoint "ep" taking `types` from the start of the feed.
void endpoint_from_start(Fixture& f, DeliveryMode mode, std::vector<std::string> types) {
  EndpointSpec spec;
  spec.name = "ep";
  spec.url = "http://127.0.0.1:9/hook";
  spec.types = std::move(types);
  spec.secret = std::string(kSecret);
  spec.mode = mode;
  spec.after = FeedPosition{};
  value_or_throw(Outbox(*f.control).put_endpoint(spec, minute_ahead()), "put_endpoint");
}

// The setup's events dispatched to the endpoint before the schedule, once the feed shows them
// all (a transaction elsewhere in the cluster may hold its horizon back for a moment).
void dispatched(Fixture& f) {
  wait_for_horizon(f);
  value_or_throw(Outbox(*f.control).dispatch(500, minute_ahead()), "dispatch");
  if (scalar(f, "SELECT count(*) FROM deliveries") == 0)
    throw std::runtime_error("the setup's dispatch made no delivery");
}

// A worker that claims with a 1 ms lease, is delivered to, and records its outcome only after
// its lease ended (it sleeps past it between the claim and the settle, outside any statement).
std::string claim_sleep_settle(SessionContext& s) {
  Outbox outbox(*s.db);
  auto claims = outbox.claim("worker-a", 32, 1ms, minute_ahead());
  if (!claims.ok()) return code_text(claims.status());
  if (claims->empty()) return "claimed 0";
  std::this_thread::sleep_for(10ms);
  std::vector<DeliveryOutcome> outcomes;
  for (const auto& c : *claims)
    outcomes.push_back(decide_outcome(c, SendResult::delivered, 200, "", 0.5));
  auto settled = outbox.settle(outcomes, minute_ahead());
  return settled.ok()
             ? fmt::format("settled {}", std::count(settled->begin(), settled->end(), true))
             : code_text(settled.status());
}

std::string reap_deliveries(SessionContext& s) {
  auto r = Outbox(*s.db).reap(minute_ahead());
  if (!r.ok()) return code_text(r.status());
  return fmt::format("reaped {}", r->pending + r->dead + r->in_doubt);
}

PairSpec worker_and_reaper(DeliveryMode mode) {
  return {fmt::format("delivery worker/reaper ({})", to_string(mode)),
          [mode](Fixture& f) {
            stock_of(f, 101);
            value_or_throw(f.session[0]->intake->place({7, 1, {{101, 1}}, "x"}, minute_ahead()),
                           "place");
            endpoint_from_start(f, mode, {});
            dispatched(f);
          },
          {[](Fixture&, SessionContext& s) { return claim_sleep_settle(s); },
           [](Fixture&, SessionContext& s) { return reap_deliveries(s); }},
          [mode](Fixture& f, const std::string& a, const std::string& b) {
            std::vector<std::string> v;
            const auto status =
                f.sql("SELECT status FROM deliveries WHERE endpoint = 'ep'").at(0).text(0);
            const std::string taken_back =
                mode == DeliveryMode::at_least_once ? "pending" : "in_doubt";
            if (a == "settled 1" && b == "reaped 0") {
              if (status != "delivered") v.push_back("settled, yet the delivery is " + status);
            } else if (a == "settled 0" && b == "reaped 1") {
              if (status != taken_back)
                v.push_back("reaped, yet the delivery is " + status + ", not " + taken_back);
            } else {
              v.push_back("not delivered XOR taken back by the reaper: " + a + " / " + b);
            }
            return v;
          },
          -1};
}

// --- delivery / cancel -----------------------------------------------------------------------

// Each event as it is sent or claimed in a schedule: order.cancelled only once order.placed's
// delivery is delivered, as read on the control connection (never gated) right after the
// claim committed. A delivered status never goes back, so a correct claim never fails this.
struct SendLog {
  std::mutex mu;
  std::vector<std::string> violations;
  void note(Fixture& f, const std::string& who, const std::string& type) {
    const bool placed_delivered =
        scalar(f,
               "SELECT count(*) FROM deliveries d JOIN events e ON e.event_id = d.event_id WHERE "
               "e.type = 'order.placed' AND d.status = 'delivered'") > 0;
    std::lock_guard lock(mu);
    if (type == "order.cancelled" && !placed_delivered)
      violations.push_back(who + " took order.cancelled before order.placed was delivered");
  }
};
SendLog& send_log() {
  static SendLog log;
  return log;
}

// Answers every request delivered, noting each event's type as it is sent.
class DeliveredSender final : public Sender {
 public:
  explicit DeliveredSender(Fixture& f) : f_(f) {}
  std::vector<SendReport> send(std::span<const SendRequest> requests,
                               std::chrono::milliseconds) override {
    for (const auto& r : requests)
      for (const auto& [name, value] : r.headers)
        if (name == "OnceOrder-Event-Type") {
          send_log().note(f_, "A sent", value);
          sent += " " + value;
        }
    return std::vector<SendReport>(requests.size(), SendReport{SendResult::delivered, 200, ""});
  }
  std::string sent;  // the types, in the order sent

 private:
  Fixture& f_;
};

std::string worker_pass(Fixture& f, SessionContext& s) {
  DeliveredSender sender(f);
  DeliveryMetrics metrics;
  DeliveryWorkerOptions options;
  options.owner = "worker-a";
  options.send_timeout = 1s;
  DeliveryWorker worker(*s.db, sender, options, metrics);
  auto done = worker.run_once();
  if (!done.ok()) return code_text(done.status());
  return fmt::format("sent{}, settled {}", sender.sent.empty() ? " nothing" : sender.sent, *done);
}

std::string cancel_dispatch_claim(Fixture& f, SessionContext& s) {
  auto cancelled = s.intake->cancel(f.ids["order"], minute_ahead());
  if (!cancelled.ok()) return code_text(cancelled.status());
  Outbox outbox(*s.db);
  if (auto d = outbox.dispatch(500, minute_ahead()); !d.ok()) return code_text(d.status());
  auto claims = outbox.claim("worker-b", 32, 30s, minute_ahead());
  if (!claims.ok()) return code_text(claims.status());
  std::string types;
  for (const auto& c : *claims) {
    send_log().note(f, "B claimed", c.event.type);
    types += " " + c.event.type;
  }
  return fmt::format("{}, claimed{}", cancelled->status, types.empty() ? " nothing" : types);
}

// The endpoint's position never passes an event it takes without that event's delivery.
std::vector<std::string> no_event_passed_over(Fixture& f) {
  std::vector<std::string> v;
  for (const auto& r :
       f.sql("SELECT e.event_id, e.type FROM events e JOIN endpoints ep ON ep.name = 'ep' WHERE "
             "(e.tx, e.event_id) <= (ep.after_tx, ep.after_id) AND e.type LIKE 'order.%' AND NOT "
             "EXISTS (SELECT 1 FROM deliveries d WHERE d.endpoint = 'ep' AND d.event_id = "
             "e.event_id) ORDER BY e.event_id"))
    v.push_back(fmt::format("the endpoint's position passed event {} ({}) without a delivery",
                            r.i64(0), r.text(1)));
  return v;
}

PairSpec delivery_and_cancel() {
  return {
      "delivery/cancel (order.placed, then order.cancelled)",
      [](Fixture& f) {
        {
          std::lock_guard lock(send_log().mu);
          send_log().violations.clear();
        }
        stock_of(f, 101);
        f.ids["order"] =
            value_or_throw(f.session[0]->intake->place({7, 1, {{101, 1}}, "x"}, minute_ahead()),
                           "place")
                .order.order_id;
        endpoint_from_start(f, DeliveryMode::at_least_once, {"order.cancelled", "order.placed"});
        dispatched(f);
      },
      {worker_pass, cancel_dispatch_claim},
      [](Fixture& f, const std::string& a, const std::string& b) {
        std::vector<std::string> v;
        {
          std::lock_guard lock(send_log().mu);
          v = send_log().violations;
        }
        if (b.rfind("cancelled, claimed", 0) != 0) v.push_back("the cancel answered " + b);
        if (a.find("order.cancelled") != std::string::npos)
          v.push_back("the worker sent order.cancelled in the pass that delivered order.placed");
        for (auto& p : no_event_passed_over(f)) v.push_back(std::move(p));
        return v;
      },
      2};
}

// --- the suite -------------------------------------------------------------------------------

struct OutboxPair {
  PairSpec spec;
  bool must_fail = false;  // a wrong reader: some schedule must lose an event
  // Outcomes (a part of "A=… B=…") that some schedule must show, or the pair proved little.
  std::vector<std::string> must_see = {};
};

std::vector<OutboxPair> outbox_pair_list() {
  const std::vector<std::string> either = {"A=settled 1 B=reaped 0", "A=settled 0 B=reaped 1"};
  return {{writer_and_reader(Reader::service), false, {"read 1", "read 3"}},
          {writer_and_reader(Reader::page_then_head), true},
          {writer_and_reader(Reader::event_id), true},
          {worker_and_reaper(DeliveryMode::at_least_once), false, either},
          {worker_and_reaper(DeliveryMode::at_most_once), false, either},
          {delivery_and_cancel(),
           false,
           {"A=sent order.placed", "claimed order.placed", "claimed order.cancelled"}}};
}

class OutboxPairTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    const auto engines = testing::engines_under_test();
    if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end()) return;
    db_ = new testing::TestDb(Engine::postgres);
    db_->open();
    db_->sql(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET deadlock_timeout = ''50ms''', "
        "current_database()); END $$");
    explorer_ = new Explorer(db_->url());
  }
  static void TearDownTestSuite() {
    for (const auto& r : reports_)
      fmt::print("{:<58} {:>9} {:>6} {:>8} {:>7}\n", r.pair, r.schedules, r.max_steps,
                 r.blocked_steps, r.failing_schedules);
    delete explorer_;
    delete db_;
    explorer_ = nullptr;
    db_ = nullptr;
  }
  static inline testing::TestDb* db_ = nullptr;
  static inline Explorer* explorer_ = nullptr;
  static inline std::vector<PairReport> reports_;
};

TEST_P(OutboxPairTest, EveryScheduleKeepsEveryInvariant) {
  if (!explorer_) GTEST_SKIP() << "PostgreSQL not configured (SQLite has one writer)";
  const auto all = outbox_pair_list();
  const OutboxPair& pair = all.at(static_cast<size_t>(GetParam()));
  PairSpec bounded = pair.spec;
  if (const char* n = std::getenv("ONCEORDER_ISOLATION_PREEMPTIONS");
      n && bounded.max_preemptions >= 0)
    bounded.max_preemptions = std::atoi(n);
  const auto started = std::chrono::steady_clock::now();
  const PairReport report = explorer_->explore(bounded);
  reports_.push_back(report);
  fmt::print(
      "{}: {} schedules ({} failing), up to {} steps, {} blocked, {} nondeterministic, "
      "{} ms\n",
      report.pair, report.schedules, report.failing_schedules, report.max_steps,
      report.blocked_steps, report.nondeterministic,
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                            started)
          .count());
  for (const auto& [o, n] : report.outcomes) fmt::print("  {:>5} × {}\n", n, o);
  EXPECT_GT(report.schedules, 1);
  for (const auto& part : pair.must_see) {
    EXPECT_TRUE(std::any_of(report.outcomes.begin(), report.outcomes.end(),
                            [&](const auto& o) { return o.first.find(part) != std::string::npos; }))
        << "no schedule of " << report.pair << " ended with " << part;
  }
  if (pair.must_fail) {
    EXPECT_GT(report.failing_schedules, 0) << "the reader lost no event in any schedule";
    // Losing events is its only failure: every invariant held.
    for (const auto& f : report.failures) {
      for (const auto& v : f.violations)
        EXPECT_EQ(v.rfind("lost: ", 0), 0u) << Explorer::describe(f);
    }
    if (!report.failures.empty())
      fmt::print("a schedule where the reader loses an event:\n{}\n",
                 Explorer::describe(report.failures.front()));
    return;
  }
  EXPECT_EQ(report.failing_schedules, 0) << report.pair;
  for (const auto& f : report.failures)
    ADD_FAILURE() << report.pair << "\n" << Explorer::describe(f);
}

INSTANTIATE_TEST_SUITE_P(Outbox, OutboxPairTest,
                         ::testing::Range(0, static_cast<int>(outbox_pair_list().size())),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const auto all = outbox_pair_list();
                           std::string name;
                           for (char c : all.at(static_cast<size_t>(param.param)).spec.name)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace onceorder::isolation::outbox_pairs
