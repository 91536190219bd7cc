// Every pair of OnceOrder operations that write the same rows, run through the
// interleaving explorer on PostgreSQL: after each schedule every invariant and the pair's
// own postcondition must hold. The counts are printed at the end (docs/ISOLATION.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "common/test_db.hpp"
#include "isolation/explorer.hpp"
#include "onceorder/service/legacy_items.hpp"

namespace onceorder::isolation {
namespace {

using namespace std::chrono_literals;
using testing::TestDb;

store::Clock::time_point later() { return store::Clock::now() + 60s; }

template <class T>
T must(Result<T> r, const char* what) {
  if (!r.ok()) throw std::runtime_error(std::string(what) + ": " + r.status().to_string());
  return std::move(r).value();
}

std::string outcome(const Status& st) { return std::string(code_name(st.code())); }

// --- operations --------------------------------------------------------------------------

std::string place(SessionContext& s, std::int64_t customer, const std::string& key,
                  std::vector<CartLine> lines) {
  auto r = s.intake->place({customer, 1, std::move(lines), key}, later());
  if (!r.ok()) return outcome(r.status());
  return r->out_of_stock ? "out_of_stock" : "placed";
}

// A combined batch of placements (Intake::place_batch, what the lane runs for carts that
// queued), each of warehouse 1: each answer ("placed", "out_of_stock" or its error's code),
// space-separated, in the requests' order.
std::string place_batch(SessionContext& s, std::vector<PlaceRequest> reqs) {
  for (auto& r : reqs) r.warehouse_id = 1;
  std::string out;
  for (const auto& r : s.intake->place_batch(reqs, later())) {
    if (!out.empty()) out += ' ';
    out += !r.ok() ? outcome(r.status()) : r->out_of_stock ? "out_of_stock" : "placed";
  }
  return out;
}

std::string cancel(SessionContext& s, std::int64_t order_id) {
  auto r = s.intake->cancel(order_id, later());
  return r.ok() ? r->status : outcome(r.status());
}

std::string run(SessionContext& s, RunKind kind, std::optional<std::vector<OrderKey>> keys) {
  auto created = s.scheduler->create_run(kind, keys, later());
  if (!created.ok()) return outcome(created.status());
  auto done = s.scheduler->process_run(created->run.run_id);
  if (!done.ok()) return outcome(done.status());
  return std::string(to_string(done->status));
}

std::string reap(SessionContext& s) {
  auto r = s.scheduler->reap(later());
  return r.ok() ? "reaped" : outcome(r.status());
}

// A combined batch of document requests (Numbering::issue_batch, what the lane runs for
// requests that queued): each answer, its value or its error's code, space-separated.
std::string issue_batch(SessionContext& s, const std::vector<IssueRequest>& reqs) {
  std::string out;
  for (const auto& r : s.numbering->issue_batch(reqs, later())) {
    if (!out.empty()) out += ' ';
    out += r.ok() ? std::to_string(r->document.value) : outcome(r.status());
  }
  return out;
}

// Scope S's max set to `max` (width 4, radix 10): "configured" or the refusal's code.
std::string configure(SessionContext& s, std::int64_t max) {
  auto r = s.numbering->configure("S", {4, 10, max}, later());
  return r.ok() ? std::string("configured") : outcome(r.status());
}

// --- setups ------------------------------------------------------------------------------

void stock(Fixture& f, std::int64_t sku, std::int64_t available) {
  must(f.session[0]->stock->put_sku(1, sku, 100, available, later()), "put_sku");
}

// An order of `lines` (sku 101, 202, 303 …, one each), placed before the schedule.
void placed_order(Fixture& f, int lines) {
  std::vector<CartLine> cart;
  for (int i = 1; i <= lines; ++i) {
    stock(f, 101 * i, 10);
    cart.push_back({101 * i, 1});
  }
  auto placed = must(f.session[0]->intake->place({7, 1, cart, "setup"}, later()), "place");
  f.ids["order"] = placed.order.order_id;
  f.ids["lines"] = lines;
}

std::string order_no(Fixture& f) {
  return f.sql(fmt::format("SELECT order_no FROM orders WHERE order_id = {}", f.ids["order"]))
      .at(0)
      .text(0);
}

std::vector<OrderKey> order_keys(Fixture& f) {
  std::vector<OrderKey> keys;
  const std::string no = order_no(f);
  for (int i = 1; i <= f.ids["lines"]; ++i) keys.push_back({"W1", no, std::to_string(i)});
  return keys;
}

std::int64_t count(Fixture& f, const std::string& sql) { return f.sql(sql).at(0).i64(0); }

// A run whose items wait for a worker (made before the schedule).
void waiting_run(Fixture& f) {
  auto created =
      must(f.session[1]->scheduler->create_run(RunKind::manual, order_keys(f), later()), "run");
  f.ids["run"] = created.run.run_id;
}

// The run's item claimed by session `s`, its lease already expired (a stalled worker).
void expired_claim(Fixture& f, int s) {
  auto claims = must(f.session[s]->scheduler->claim(f.ids["run"], 16), "claim");
  if (claims.size() != 1) throw std::runtime_error("expected one claim");
  f.claims["claim"] = claims[0];
  f.sql(
      "UPDATE schedule_items SET lease_until = now() - interval '1 second' WHERE status = "
      "'processing'");
}

// Cancel against production: either the cancel won (no production order, no live item)
// or production won and the cancel answered in_production.
std::vector<std::string> cancelled_xor_produced(Fixture& f, const std::string& cancel_outcome) {
  std::vector<std::string> v;
  const std::string no = order_no(f);
  const auto produced =
      count(f, fmt::format("SELECT count(*) FROM production_orders WHERE order_no = '{}'", no));
  const auto live = count(f, fmt::format("SELECT count(*) FROM schedule_items WHERE order_no = "
                                         "'{}' AND status IN ('wait', 'processing', 'success')",
                                         no));
  const auto status =
      f.sql(fmt::format("SELECT status FROM orders WHERE order_id = {}", f.ids["order"]))
          .at(0)
          .text(0);
  if (cancel_outcome == "cancelled") {
    if (produced > 0) v.push_back(fmt::format("cancelled, yet {} production orders", produced));
    if (live > 0) v.push_back(fmt::format("cancelled, yet {} live items", live));
    if (status != "cancelled") v.push_back("cancel answered cancelled; order is " + status);
  } else if (cancel_outcome == "in_production") {
    if (produced == 0) v.push_back("in_production, yet no production order");
    if (status != "placed") v.push_back("in_production, yet the order is " + status);
  } else {
    v.push_back("unexpected cancel outcome " + cancel_outcome);
  }
  return v;
}

std::vector<std::string> expect(bool ok, const std::string& what) {
  return ok ? std::vector<std::string>{} : std::vector<std::string>{what};
}

// Scope S with max `max` and its first number issued.
void scope_with_one_issued(Fixture& f, std::int64_t max) {
  must(f.session[0]->numbering->configure("S", {4, 10, max}, later()), "configure");
  must(f.session[0]->numbering->issue({"S", "first", std::nullopt}, later()), "issue");
}

// S's counter never passes its max, and its documents are 1..last_value.
std::vector<std::string> counter_within_max(Fixture& f) {
  std::vector<std::string> v;
  const auto max = count(f, "SELECT max_value FROM doc_scopes WHERE scope = 'S'");
  const auto last = count(f, "SELECT last_value FROM doc_scopes WHERE scope = 'S'");
  if (last > max) v.push_back("the counter passed the scope's max");
  if (count(f, "SELECT count(*) FROM documents WHERE scope = 'S'") != last)
    v.push_back("S's documents are not 1..last_value");
  return v;
}

// How often session A's batch was decided ahead, and missed, in each pair's schedules (by
// pair name): a pair about batches decided ahead must have seen both.
struct AheadSeen {
  std::uint64_t decided = 0;
  std::uint64_t missed = 0;
};
std::map<std::string, AheadSeen>& ahead_seen() {
  static std::map<std::string, AheadSeen> seen;
  return seen;
}

// Stock 101 and 202 with one unit of each taken by a batch of session A's Intake, which then
// knows both rows: its next batch of them is decided ahead (Intake::decided_ahead).
void stock_known_to_a(Fixture& f) {
  stock(f, 101, 2);
  stock(f, 202, 5);
  const std::vector<PlaceRequest> warm = {{7, 1, {{101, 1}}, "w1"}, {8, 1, {{202, 1}}, "w2"}};
  for (auto& r : f.session[0]->intake->place_batch(warm, later())) must(std::move(r), "warm");
}

// Session A's operation in those pairs: a batch of one unit of 101 (key `key`, customer 1)
// and one of 202, counted in ahead_seen()[pair].
Operation batch_decided_ahead(std::string pair, std::string key) {
  return [pair, key](Fixture&, SessionContext& s) {
    const std::uint64_t decided = s.intake->decided_ahead(),
                        missed = s.intake->decided_ahead_missed();
    std::string out = place_batch(s, {{1, 0, {{101, 1}}, key}, {2, 0, {{202, 1}}, "b"}});
    ahead_seen()[pair].decided += s.intake->decided_ahead() - decided;
    ahead_seen()[pair].missed += s.intake->decided_ahead_missed() - missed;
    return out;
  };
}

// Postconditions shared by the order-batch pairs, whose batch is {101 for key "a" or "k",
// 202 for "b"}; `before` orders (and receipts) were made in the setup, and `left_202` units of
// 202 must be left.
using Check = decltype(PairSpec::check);
// Against a lone placement (key "c") of the last unit of 101.
Check last_unit_of_101_to_one_cart(std::int64_t before, std::int64_t left_202) {
  return [=](Fixture& f, const std::string& a, const std::string& b) {
    auto v = expect((a == "placed placed" && b == "out_of_stock") ||
                        (a == "out_of_stock placed" && b == "placed"),
                    "the last unit of 101 to exactly one cart, 202 placed");
    if (count(f, "SELECT count(*) FROM orders") != before + 2)
      v.push_back("not one order per placed cart");
    if (count(f, "SELECT count(*) FROM order_receipts") != before + 3)
      v.push_back("not one receipt per request");
    if (count(f, "SELECT available FROM stock WHERE sku_id = 202") != left_202)
      v.push_back("202 not deducted exactly once");
    return v;
  };
}
// Against a lone placement with the batch's key "k" (customer 1), leaving `left_101` of 101.
Check one_key_placed_once(std::int64_t left_101, std::int64_t left_202) {
  return [=](Fixture& f, const std::string& a, const std::string& b) {
    auto v = expect(a == "placed placed" && b == "placed", "every request placed");
    if (count(f, "SELECT count(*) FROM orders WHERE customer_id = 1") != 1)
      v.push_back("one key made more than one order");
    if (count(f, "SELECT available FROM stock WHERE sku_id = 101") != left_101)
      v.push_back("one key deducted more than once");
    if (count(f, "SELECT available FROM stock WHERE sku_id = 202") != left_202)
      v.push_back("202 not deducted exactly once");
    return v;
  };
}

// An adjustment taking one unit of 101: "adjusted" or its error's code.
std::string damage_one_of_101(Fixture&, SessionContext& s) {
  auto r = s.stock->adjust(1, 101, -1, "damaged", later());
  return r.ok() ? std::string("adjusted") : outcome(r.status());
}

std::vector<PairSpec> pairs() {
  std::vector<PairSpec> out;

  out.push_back({"place/place (same SKUs, either display order)",
                 [](Fixture& f) {
                   stock(f, 101, 1);
                   stock(f, 202, 1);
                 },
                 {[](Fixture&, SessionContext& s) {
                    return place(s, 1, "a", {{101, 1}, {202, 1}});
                  },
                  [](Fixture&, SessionContext& s) {
                    return place(s, 2, "b", {{202, 1}, {101, 1}});
                  }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect((a == "placed") != (b == "placed") &&
                                       (a == "out_of_stock" || b == "out_of_stock"),
                                   "one order must be placed and the other out of stock");
                   if (count(f, "SELECT count(*) FROM orders") != 1)
                     v.push_back("not exactly one order");
                   return v;
                 },
                 -1});

  out.push_back({"place/place (same key)",
                 [](Fixture& f) { stock(f, 101, 5); },
                 {[](Fixture&, SessionContext& s) {
                    return place(s, 1, "k", {{101, 1}});
                  },
                  [](Fixture&, SessionContext& s) {
                    return place(s, 1, "k", {{101, 1}});
                  }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect(a == "placed" && b == "placed", "both must answer placed");
                   if (count(f, "SELECT count(*) FROM orders") != 1)
                     v.push_back("one key made more than one order");
                   if (count(f, "SELECT available FROM stock WHERE sku_id = 101") != 4)
                     v.push_back("one key deducted more than once");
                   return v;
                 },
                 -1});

  out.push_back({"place/cancel (the cancel frees the stock the place needs)",
                 [](Fixture& f) {
                   stock(f, 101, 1);
                   f.ids["order"] =
                       must(f.session[0]->intake->place({7, 1, {{101, 1}}, "x"}, later()), "place")
                           .order.order_id;
                 },
                 {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
                  [](Fixture&, SessionContext& s) {
                    return place(s, 8, "y", {{101, 1}});
                  }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect(a == "cancelled", "the cancel must succeed");
                   const auto available =
                       count(f, "SELECT available FROM stock WHERE sku_id = 101");
                   if (b == "placed" && available != 0) v.push_back("placed, yet stock left");
                   if (b == "out_of_stock" && available != 1)
                     v.push_back("out of stock, yet the cancel's unit is not available");
                   if (b != "placed" && b != "out_of_stock") v.push_back("place answered " + b);
                   return v;
                 },
                 -1});

  for (int lines : {1, 3}) {
    out.push_back(
        {fmt::format("cancel/manual run ({} line{})", lines, lines > 1 ? "s" : ""),
         [lines](Fixture& f) { placed_order(f, lines); },
         {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
          [](Fixture& f, SessionContext& s) { return run(s, RunKind::manual, order_keys(f)); }},
         [](Fixture& f, const std::string& a, const std::string&) {
           return cancelled_xor_produced(f, a);
         },
         2});
  }

  out.push_back({"cancel/batch run",
                 [](Fixture& f) { placed_order(f, 1); },
                 {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
                  [](Fixture&, SessionContext& s) { return run(s, RunKind::batch, std::nullopt); }},
                 [](Fixture& f, const std::string& a, const std::string&) {
                   return cancelled_xor_produced(f, a);
                 },
                 2});

  out.push_back({"cancel/claim+complete",
                 [](Fixture& f) {
                   placed_order(f, 1);
                   waiting_run(f);
                 },
                 {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
                  [](Fixture& f, SessionContext& s) {
                    auto done = s.scheduler->process_run(f.ids["run"]);
                    return done.ok() ? std::string(to_string(done->status))
                                     : outcome(done.status());
                  }},
                 [](Fixture& f, const std::string& a, const std::string&) {
                   return cancelled_xor_produced(f, a);
                 },
                 2});

  out.push_back(
      {"cancel/reaper (an expired claim)",
       [](Fixture& f) {
         placed_order(f, 1);
         waiting_run(f);
         expired_claim(f, 1);
       },
       {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
        [](Fixture&, SessionContext& s) { return reap(s); }},
       [](Fixture& f, const std::string& a, const std::string& b) {
         auto v = cancelled_xor_produced(f, a);
         if (a != "cancelled") v.push_back("nothing was produced: the cancel must win");
         if (b != "reaped") v.push_back("reaper answered " + b);
         if (count(f, "SELECT count(*) FROM schedule_items WHERE status = 'processing'") != 0)
           v.push_back("an item is still processing");
         return v;
       },
       -1});

  out.push_back(
      {"complete/reaper (a stale worker)",
       [](Fixture& f) {
         placed_order(f, 1);
         waiting_run(f);
         expired_claim(f, 0);
       },
       {[](Fixture& f, SessionContext& s) {
          const Claim claim = f.claims["claim"];
          auto done = s.scheduler->complete(std::span<const Claim>(&claim, 1));
          return done.ok() ? fmt::format("completed {}", *done) : outcome(done.status());
        },
        [](Fixture&, SessionContext& s) { return reap(s); }},
       [](Fixture& f, const std::string& a, const std::string&) {
         const auto produced = count(f, "SELECT count(*) FROM production_orders");
         const auto success =
             count(f, "SELECT count(*) FROM schedule_items WHERE status = 'success'");
         const auto failed =
             count(f, "SELECT count(*) FROM schedule_items WHERE status = 'failed'");
         std::vector<std::string> v;
         if (!(produced == 1 && success == 1 && failed == 0) &&
             !(produced == 0 && success == 0 && failed == 1))
           v.push_back(fmt::format("produced {} success {} failed {}", produced, success, failed));
         if ((a == "completed 1") != (produced == 1))
           v.push_back("the worker's answer " + a + " disagrees with the database");
         return v;
       },
       -1});

  out.push_back(
      {"manual/batch run on one key",
       [](Fixture& f) { placed_order(f, 1); },
       {[](Fixture& f, SessionContext& s) { return run(s, RunKind::manual, order_keys(f)); },
        [](Fixture&, SessionContext& s) { return run(s, RunKind::batch, std::nullopt); }},
       [](Fixture& f, const std::string&, const std::string&) {
         return expect(count(f, "SELECT count(*) FROM production_orders") == 1,
                       "the key must be produced exactly once");
       },
       2});

  out.push_back({"issue/issue on an empty scope",
                 [](Fixture&) {},
                 {[](Fixture&, SessionContext& s) {
                    auto r = s.numbering->issue({"S", "a", std::nullopt}, later());
                    return r.ok() ? std::to_string(r->document.value) : outcome(r.status());
                  },
                  [](Fixture&, SessionContext& s) {
                    auto r = s.numbering->issue({"S", "b", std::nullopt}, later());
                    return r.ok() ? std::to_string(r->document.value) : outcome(r.status());
                  }},
                 [](Fixture&, const std::string& a, const std::string& b) {
                   return expect((a == "1" && b == "2") || (a == "2" && b == "1"),
                                 "two requests on an empty scope must get 1 and 2");
                 },
                 -1});

  out.push_back({"issue/issue with one Idempotency-Key",
                 [](Fixture&) {},
                 {[](Fixture&, SessionContext& s) {
                    auto r = s.numbering->issue({"S", "t", std::string("key")}, later());
                    return r.ok() ? std::to_string(r->document.value) : outcome(r.status());
                  },
                  [](Fixture&, SessionContext& s) {
                    auto r = s.numbering->issue({"S", "t", std::string("key")}, later());
                    return r.ok() ? std::to_string(r->document.value) : outcome(r.status());
                  }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect(a == "1" && b == "1", "one key must answer one number to both");
                   if (count(f, "SELECT count(*) FROM documents") != 1)
                     v.push_back("one key, two documents");
                   return v;
                 },
                 -1});

  out.push_back({"cancel/cancel (one order)",
                 [](Fixture& f) { placed_order(f, 2); },
                 {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
                  [](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect(a == "cancelled" && b == "cancelled",
                                   "both cancels answer cancelled");
                   if (count(f, "SELECT count(*) FROM stock_ledger WHERE kind = 'release'") != 2)
                     v.push_back("the reservations were not released exactly once");
                   return v;
                 },
                 -1});

  out.push_back({"issue/scope reconfigure",
                 [](Fixture& f) { scope_with_one_issued(f, 2); },
                 {[](Fixture&, SessionContext& s) {
                    auto r = s.numbering->issue({"S", "second", std::nullopt}, later());
                    return r.ok() ? r->document.number : outcome(r.status());
                  },
                  [](Fixture&, SessionContext& s) { return configure(s, 1); }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   // Lowering max to 1 after 0002 was issued must be refused; before, 0002 must not
                   // be.
                   std::vector<std::string> v = counter_within_max(f);
                   if (a == "0002" && b == "configured") v.push_back("max 1 accepted after 0002");
                   if (b == "configured" && a != "scope_exhausted")
                     v.push_back("issue answered " + a);
                   if (b == "scope_conflict" && a != "0002")
                     v.push_back("refused max 1, yet issue got " + a);
                   if (b != "configured" && b != "scope_conflict")
                     v.push_back("configure answered " + b);
                   return v;
                 },
                 -1});

  // The batch's one statement (num_claim_scopes) against a reconfigure holding the counter:
  // the batch skips the held counter and its requests wait for it outside the lane.
  out.push_back(
      {"issue batch/scope reconfigure",
       [](Fixture& f) { scope_with_one_issued(f, 3); },
       {[](Fixture&, SessionContext& s) {
          return issue_batch(
              s, {{"S", "x", std::nullopt}, {"S", "y", std::nullopt}, {"T", "t", std::nullopt}});
        },
        [](Fixture&, SessionContext& s) { return configure(s, 2); }},
       [](Fixture& f, const std::string& a, const std::string& b) {
         // Lowering max to 2 after 3 was issued is refused; before, S has room for one more.
         std::vector<std::string> v = counter_within_max(f);
         if (b == "configured" && a != "2 scope_exhausted 1")
           v.push_back("max 2 accepted, yet the batch answered " + a);
         if (b == "scope_conflict" && a != "2 3 1")
           v.push_back("max 2 refused, yet the batch answered " + a);
         if (b != "configured" && b != "scope_conflict") v.push_back("configure answered " + b);
         return v;
       },
       -1});

  // Two batches with one Idempotency-Key: the key's document once, both answered it, and
  // every other request its own number.
  out.push_back(
      {"issue batch/issue batch with one Idempotency-Key",
       [](Fixture& f) {
         must(f.session[0]->numbering->issue({"S", "setup", std::nullopt}, later()), "issue");
       },
       {[](Fixture&, SessionContext& s) {
          return issue_batch(s, {{"S", "t", std::string("key")}, {"S", "a", std::nullopt}});
        },
        [](Fixture&, SessionContext& s) {
          return issue_batch(s, {{"S", "b", std::nullopt}, {"S", "t", std::string("key")}});
        }},
       [](Fixture& f, const std::string& a, const std::string& b) {
         std::vector<std::string> v;
         const auto space_a = a.find(' '), space_b = b.find(' ');
         if (space_a == std::string::npos || space_b == std::string::npos)
           return std::vector<std::string>{"answers " + a + " / " + b};
         const std::string key_a = a.substr(0, space_a), key_b = b.substr(space_b + 1);
         if (key_a != key_b) v.push_back("one key answered " + key_a + " and " + key_b);
         std::set<std::string> values{key_a, a.substr(space_a + 1), b.substr(0, space_b)};
         if (values != std::set<std::string>{"2", "3", "4"})
           v.push_back("the numbers are not 2, 3 and 4 once each: " + a + " / " + b);
         if (count(f, "SELECT count(*) FROM documents") != 4) v.push_back("not four documents");
         if (count(f, "SELECT count(*) FROM document_receipts") != 1)
           v.push_back("not one receipt");
         return v;
       },
       -1});

  // A batch locks its stock rows with SKIP LOCKED: a cart touching a row another
  // transaction holds leaves the batch (which runs again without it) and waits for the row
  // alone; the other carts are placed either way.
  out.push_back({"place batch/place (the place holds a row of the batch)",
                 [](Fixture& f) {
                   stock(f, 101, 1);
                   stock(f, 202, 5);
                 },
                 {[](Fixture&, SessionContext& s) {
                    return place_batch(s, {{1, 0, {{101, 1}}, "a"}, {2, 0, {{202, 1}}, "b"}});
                  },
                  [](Fixture&, SessionContext& s) {
                    return place(s, 3, "c", {{101, 1}});
                  }},
                 last_unit_of_101_to_one_cart(0, 4),
                 -1});

  // A batch and a lone placement with one key: whichever inserts the receipt first decides,
  // the other replays it (the batch waits for the receipt before it locks any stock row).
  out.push_back({"place batch/place with one Idempotency-Key",
                 [](Fixture& f) {
                   stock(f, 101, 5);
                   stock(f, 202, 5);
                 },
                 {[](Fixture&, SessionContext& s) {
                    return place_batch(s, {{1, 0, {{101, 1}}, "k"}, {2, 0, {{202, 1}}, "b"}});
                  },
                  [](Fixture&, SessionContext& s) {
                    return place(s, 1, "k", {{101, 1}});
                  }},
                 one_key_placed_once(4, 4),
                 -1});

  // A batch against a cancel that holds the row it frees: the cart waits for the cancel
  // outside the batch, and its answer matches the stock it met.
  out.push_back({"place batch/cancel (the cancel frees the stock a cart needs)",
                 [](Fixture& f) {
                   stock(f, 101, 1);
                   stock(f, 202, 5);
                   f.ids["order"] =
                       must(f.session[0]->intake->place({7, 1, {{101, 1}}, "x"}, later()), "place")
                           .order.order_id;
                 },
                 {[](Fixture& f, SessionContext& s) { return cancel(s, f.ids["order"]); },
                  [](Fixture&, SessionContext& s) {
                    return place_batch(s, {{8, 0, {{101, 1}}, "y"}, {9, 0, {{202, 1}}, "z"}});
                  }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect(a == "cancelled", "the cancel must succeed");
                   const auto available =
                       count(f, "SELECT available FROM stock WHERE sku_id = 101");
                   if (b == "placed placed" && available != 0)
                     v.push_back("placed, yet stock left");
                   if (b == "out_of_stock placed" && available != 1)
                     v.push_back("out of stock, yet the cancel's unit is not available");
                   if (b != "placed placed" && b != "out_of_stock placed")
                     v.push_back("the batch answered " + b);
                   return v;
                 },
                 2});

  // A batch decided ahead (on the rows as A's last batch left them, one statement) against
  // another process's placement, an adjustment, and another process storing one of its keys:
  // whatever moved first, the batch writes only what the locked rows allow, and otherwise
  // writes nothing and is decided again.
  {
    const std::string name = "place batch decided ahead/place (the place takes its row)";
    out.push_back({name,
                   stock_known_to_a,
                   {batch_decided_ahead(name, "a"),
                    [](Fixture&, SessionContext& s) {
                      return place(s, 3, "c", {{101, 1}});
                    }},
                   last_unit_of_101_to_one_cart(2, 3),
                   -1});
  }
  {
    const std::string name = "place batch decided ahead/adjustment (it takes the batch's row)";
    out.push_back({name,
                   stock_known_to_a,
                   {batch_decided_ahead(name, "a"), damage_one_of_101},
                   [](Fixture& f, const std::string& a, const std::string& b) {
                     auto v = expect((a == "placed placed" && b == "insufficient_stock") ||
                                         (a == "out_of_stock placed" && b == "adjusted"),
                                     "exactly one of the adjustment and the order takes the unit");
                     if (count(f, "SELECT available FROM stock WHERE sku_id = 101") != 0)
                       v.push_back("the unit is still available");
                     if (count(f, "SELECT available FROM stock WHERE sku_id = 202") != 3)
                       v.push_back("202 not deducted exactly once");
                     return v;
                   },
                   -1});
  }
  {
    const std::string name = "place batch decided ahead/place with one Idempotency-Key";
    out.push_back({name,
                   stock_known_to_a,
                   {batch_decided_ahead(name, "k"),
                    [](Fixture&, SessionContext& s) {
                      return place(s, 1, "k", {{101, 1}});
                    }},
                   one_key_placed_once(0, 3),
                   -1});
  }

  out.push_back({"adjustment/place",
                 [](Fixture& f) { stock(f, 101, 1); },
                 {damage_one_of_101,
                  [](Fixture&, SessionContext& s) {
                    return place(s, 1, "p", {{101, 1}});
                  }},
                 [](Fixture& f, const std::string& a, const std::string& b) {
                   auto v = expect((a == "adjusted" && b == "out_of_stock") ||
                                       (a == "insufficient_stock" && b == "placed"),
                                   "exactly one of the adjustment and the order takes the unit");
                   if (count(f, "SELECT available FROM stock WHERE sku_id = 101") != 0)
                     v.push_back("the unit is still available");
                   return v;
                 },
                 -1});

  out.push_back({"legacy dedup apply/manual run",
                 [](Fixture& f) {
                   must(f.session[0]->scheduler->import_source_orders(
                            std::vector<SourceOrder>{{{"L1", "A-1", "1"}, 1}}, later()),
                        "source");
                   must(import_legacy_items(*f.control,
                                            "site_code,order_no,lot_no,status,created_at\n"
                                            "L1,A-1,1,WAIT,2024-01-01T00:00:00Z\n"
                                            "L1,A-1,1,wait,2024-01-02T00:00:00Z\n",
                                            later()),
                        "import");
                 },
                 {[](Fixture& f, SessionContext&) {
                    auto r = apply_legacy_dedup(*f.session[0]->db, later());
                    return r.ok() ? std::string("applied") : outcome(r.status());
                  },
                  [](Fixture&, SessionContext& s) {
                    return run(s, RunKind::manual, std::vector<OrderKey>{{"L1", "A-1", "1"}});
                  }},
                 [](Fixture& f, const std::string&, const std::string&) {
                   return expect(count(f, "SELECT count(*) FROM production_orders") <= 1,
                                 "the key was produced twice");
                 },
                 2});

  return out;
}

// One migrated PostgreSQL database for the whole program.
class IsolationEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    const auto engines = testing::engines_under_test();
    if (std::find(engines.begin(), engines.end(), Engine::postgres) == engines.end()) return;
    db = std::make_unique<TestDb>(Engine::postgres);
    db->open();
    // Deadlocks the server breaks are part of some schedules: break them quickly.
    db->sql(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET deadlock_timeout = ''50ms''', "
        "current_database()); END $$");
    explorer = std::make_unique<Explorer>(db->url());
  }
  void TearDown() override {
    if (!reports.empty()) {
      fmt::print("\n{:<58} {:>9} {:>6} {:>8} {:>7}\n", "pair", "schedules", "steps", "blocked",
                 "failing");
      int total = 0;
      for (const auto& r : reports) {
        fmt::print("{:<58} {:>9} {:>6} {:>8} {:>7}\n", r.pair, r.schedules, r.max_steps,
                   r.blocked_steps, r.failing_schedules);
        total += r.schedules;
      }
      fmt::print("{} pairs, {} schedules\n", reports.size(), total);
    }
    explorer.reset();
    db.reset();
  }
  std::unique_ptr<TestDb> db;
  std::unique_ptr<Explorer> explorer;
  std::vector<PairReport> reports;
};

IsolationEnv* env = nullptr;

class PairTest : public ::testing::TestWithParam<int> {};

TEST_P(PairTest, EveryScheduleKeepsEveryInvariant) {
  if (!env->explorer) GTEST_SKIP() << "PostgreSQL not configured (SQLite has one writer)";
  const auto all = pairs();
  const PairSpec& pair = all.at(static_cast<size_t>(GetParam()));
  PairSpec bounded = pair;
  if (const char* b = std::getenv("ONCEORDER_ISOLATION_PREEMPTIONS");
      b && pair.max_preemptions >= 0)
    bounded.max_preemptions = std::atoi(b);
  const PairReport report = env->explorer->explore(bounded);
  env->reports.push_back(report);
  fmt::print(
      "{}: {} schedules, up to {} steps, {} blocked steps, {} nondeterministic replays, {} "
      "deadlocks, {} second-line refusals\n",
      report.pair, report.schedules, report.max_steps, report.blocked_steps,
      report.nondeterministic, report.deadlocks, report.second_line_refusals);
  for (const auto& [o, n] : report.outcomes) fmt::print("  {:>5} × {}\n", n, o);
  EXPECT_EQ(report.failing_schedules, 0) << report.pair;
  for (const auto& f : report.failures)
    ADD_FAILURE() << report.pair << "\n" << Explorer::describe(f);
  EXPECT_GT(report.schedules, 1);
  if (pair.name.find("decided ahead") != std::string::npos) {
    EXPECT_GT(ahead_seen()[pair.name].decided, 0u) << "no schedule decided the batch ahead";
    EXPECT_GT(ahead_seen()[pair.name].missed, 0u) << "no schedule moved the row first";
  }
}

INSTANTIATE_TEST_SUITE_P(Pairs, PairTest, ::testing::Range(0, static_cast<int>(pairs().size())),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const auto all = pairs();  // keeps the names alive
                           std::string name;
                           for (char c : all.at(static_cast<size_t>(param.param)).name)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

const bool registered = [] {
  env = new IsolationEnv;
  ::testing::AddGlobalTestEnvironment(env);
  return true;
}();

}  // namespace
}  // namespace onceorder::isolation
