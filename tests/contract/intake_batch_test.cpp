// Request combining for order placement, differentially: one arrival sequence run as one
// batch (Intake::place_batch, what the combiner calls for placements that queued) and run
// one request at a time must give the same answers and leave the same database, on every
// engine. Order ids, numbers and timestamps differ between the two runs and are left out.
// The combiner's races are in intake_race_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/test_db.hpp"
#include "onceorder/service/intake.hpp"
#include "onceorder/service/invariants.hpp"
#include "onceorder/service/stock.hpp"
#include "store/dialect.hpp"
#include "store/intake_store.hpp"
#include "store/sql_catalog.hpp"

namespace onceorder::testing {
namespace {

constexpr std::int64_t kTera = 1'000'000'000'000;

class IntakeBatchTest : public ::testing::TestWithParam<Engine> {
 protected:
  // One database per way of running, each with the same stock and history.
  struct Side {
    explicit Side(Engine engine)
        : tdb(engine), db(tdb.open({.pool_size = 4})), intake(*db), stock(*db) {}
    TestDb tdb;
    std::unique_ptr<store::Database> db;
    Intake intake;
    Stock stock;
  };

  static void prepare(Side& side) {
    auto put = [&](std::int64_t sku, std::int64_t available, std::int64_t price) {
      auto r = side.stock.put_sku(1, sku, price, available, soon());
      ASSERT_TRUE(r.ok()) << r.status().to_string();
    };
    put(101, 11, 250);
    put(202, 5, 1999);
    put(303, 3, 7);
    // Dear enough that ten full lines overflow a 64-bit total.
    for (std::int64_t sku = 901; sku <= 911; ++sku) put(sku, 1'000'000, kTera);
    ASSERT_TRUE(side.intake.place({7, 1, {{101, 1}}, "k-old"}, soon()).ok());
    auto oos = side.intake.place({7, 1, {{303, 99}}, "k-oos"}, soon());
    ASSERT_TRUE(oos.ok() && oos->out_of_stock);
  }

  // Everything a caller sees except the order's id, number and created_at.
  static std::string answer_text(const Result<Placed>& r) {
    if (!r.ok()) {
      std::string out = std::string(code_name(r.status().code())) + ": " + r.status().message();
      for (const auto& f : r.status().fields()) out += " [" + f.field + ": " + f.message + "]";
      return out;
    }
    std::string out = r->replayed ? "replayed " : "";
    if (r->out_of_stock) {
      out += "out_of_stock";
      for (const auto& s : r->shortages)
        out += " " + std::to_string(s.sku_id) + ":" + std::to_string(s.requested) + ":" +
               std::to_string(s.available);
      return out;
    }
    const Order& o = r->order;
    out += o.status + " customer " + std::to_string(o.customer_id) + " warehouse " +
           std::to_string(o.warehouse_id) + " total " + std::to_string(o.total_cents);
    for (const auto& l : o.lines)
      out += " [" + std::to_string(l.line_no) + " " + std::to_string(l.sku_id) + "x" +
             std::to_string(l.quantity) + "@" + std::to_string(l.unit_price_cents) + "]";
    return out;
  }

  static std::vector<std::string> database_text(TestDb& tdb) {
    std::vector<std::string> out;
    auto add = [&](const std::string& what, const std::string& sql) {
      for (const auto& row : tdb.sql(sql)) {
        std::string line = what;
        for (size_t i = 0; i < row.size(); ++i) line += " | " + row.text(i);
        out.push_back(line);
      }
    };
    add("stock", "SELECT warehouse_id, sku_id, available, reserved FROM stock ORDER BY 1, 2");
    add("ledger",
        "SELECT warehouse_id, sku_id, kind, sum(delta), count(*) FROM stock_ledger "
        "GROUP BY warehouse_id, sku_id, kind ORDER BY 1, 2, 3");
    add("receipt",
        "SELECT r.customer_id, r.idempotency_key, r.normalized, coalesce(r.outcome, '-'), "
        "coalesce(r.shortages, '-'), coalesce(o.total_cents, -1), "
        "(SELECT count(*) FROM order_lines l WHERE l.order_id = r.order_id), "
        "(SELECT count(*) FROM stock_ledger g WHERE g.order_id = r.order_id) "
        "FROM order_receipts r LEFT JOIN orders o ON o.order_id = r.order_id ORDER BY 1, 2");
    add("orders", "SELECT count(*), coalesce(sum(total_cents), 0) FROM orders");
    add("source orders", "SELECT count(*), coalesce(sum(quantity), 0) FROM source_orders");
    return out;
  }

  // How the combined side's batches were decided (Intake::decided_ahead).
  struct Ahead {
    std::uint64_t decided = 0;
    std::uint64_t missed = 0;
  };

  // Runs `sequence` one by one on one side and as the batches `cuts` describe (sizes, in
  // order) on the other, and compares. `between(side, k)` runs on each side once the first
  // k cuts' requests have been answered there (after every cut but the last).
  Ahead expect_same(const std::vector<PlaceRequest>& sequence, const std::vector<size_t>& cuts,
                    const std::function<void(TestDb&)>& setup = {},
                    const std::function<void(Side&, size_t)>& between = {}) {
    Side alone(GetParam()), combined(GetParam());
    prepare(alone);
    prepare(combined);
    if (HasFatalFailure()) return {};
    if (setup) {
      setup(alone.tdb);
      setup(combined.tdb);
    }

    std::vector<std::string> one_by_one;
    size_t from = 0;
    for (size_t k = 0; k < cuts.size(); ++k) {
      for (size_t i = from; i < std::min(sequence.size(), from + cuts[k]); ++i)
        one_by_one.push_back(answer_text(alone.intake.place(sequence[i], soon())));
      from += cuts[k];
      if (between && k + 1 < cuts.size()) between(alone, k + 1);
    }

    std::vector<std::string> batched;
    from = 0;
    for (size_t k = 0; k < cuts.size(); ++k) {
      const size_t n = cuts[k];
      auto answers = combined.intake.place_batch(
          std::span<const PlaceRequest>(sequence).subspan(from, n), soon());
      EXPECT_EQ(answers.size(), n);
      if (answers.size() != n) return {};
      for (const auto& a : answers) batched.push_back(answer_text(a));
      from += n;
      if (between && k + 1 < cuts.size()) between(combined, k + 1);
    }
    EXPECT_EQ(from, sequence.size());
    if (from != sequence.size()) return {};

    for (size_t i = 0; i < sequence.size(); ++i)
      EXPECT_EQ(batched[i], one_by_one[i])
          << "request " << i << " (customer " << sequence[i].customer_id << ", key '"
          << sequence[i].idempotency_key << "')";
    EXPECT_EQ(database_text(combined.tdb), database_text(alone.tdb));
    for (Side* side : {&alone, &combined}) {
      auto inv = check_invariants(*side->db, soon());
      EXPECT_TRUE(inv.ok()) << inv.status().to_string();
      if (!inv.ok()) continue;
      for (const auto& r : *inv)
        EXPECT_EQ(r.violations, 0) << r.id << ": " << (r.sample.empty() ? "" : r.sample[0]);
    }
    return {combined.intake.decided_ahead(), combined.intake.decided_ahead_missed()};
  }

  // Stock in warehouse 2 (sku 101 as in warehouse 1, and 505), written outside OnceOrder
  // with its initial ledger entries.
  static void second_warehouse(TestDb& tdb) {
    tdb.sql(
        "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) VALUES (2, 101, 3, "
        "40), (2, 505, 6, 3)");
    tdb.sql(
        "INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) VALUES (2, 101, 3, "
        "'initial', 'test'), (2, 505, 6, 'initial', 'test')");
  }

  static std::vector<CartLine> dear(std::int64_t from_sku) {
    std::vector<CartLine> lines;
    for (std::int64_t sku = from_sku; sku < from_sku + 10; ++sku) lines.push_back({sku, 1'000'000});
    return lines;
  }

  // Carts sharing SKUs where one runs short, an order that fits only because an earlier one
  // did not take the stock, replays (of an earlier transaction and within the batch), a
  // reused key, unknown SKUs and overflowing totals (which store nothing, so their key is
  // fresh again), an order that would overflow but is short first, invalid requests.
  static std::vector<PlaceRequest> mixed_sequence() {
    return {
        {1, 1, {{101, 4}, {202, 2}}, "a"},
        {2, 1, {{101, 3}, {202, 4}}, "b"},  // 202 runs out: 101 stays untouched for it
        {3, 1, {{202, 3}}, "c"},            // fits only because "b" took nothing
        {1, 1, {{202, 2}, {101, 4}}, "a"},  // replays "a" from within the batch
        {1, 1, {{101, 1}}, "a"},            // the same key, another cart
        {7, 1, {{101, 1}}, "k-old"},        // replay of an earlier transaction
        {7, 1, {{101, 2}}, "k-old"},
        {7, 1, {{303, 99}}, "k-oos"},       // replays a stored out_of_stock
        {4, 1, {{101, 1}, {999, 1}}, "d"},  // unknown SKU: nothing stored
        {4, 1, {{101, 1}}, "d"},            // so the key is new again
        {5, 1, dear(901), "e"},             // the total overflows: nothing stored
        {5, 1, {{911, 1}}, "e"},
        {5, 1, dear(902), "e2"},            // would overflow, but 911 is short first
        {2, 1, {{101, 3}, {202, 4}}, "b"},  // replays "b"'s out_of_stock
        {6, 1, {}, "x"},                    // invalid: answered, takes no part
        {6, 1, {{101, 1}}, ""},
        {0, 1, {{101, 1}}, "y"},
        {8, 1, {{101, 1}, {101, 5}}, "f"},  // merged: 6 of 101, and only 4 are left
        {8, 1, {{101, 4}}, "g"},
        {9, 1, {{303, 3}, {101, 1}}, "h"},  // the last of 303 and of 101
        {9, 1, {{303, 3}}, "i"},            // 303 ran out
        {4, 1, {{101, 1}, {999, 1}}, "d"},  // "d" is placed now: another cart
        {3, 1, {{202, 3}}, "c"},
    };
  }
};

TEST_P(IntakeBatchTest, OneBatchAnswersAsOneByOne) {
  const auto seq = mixed_sequence();
  expect_same(seq, {seq.size()});
}

TEST_P(IntakeBatchTest, SeveralBatchesAnswerAsOneByOne) {
  const auto seq = mixed_sequence();
  expect_same(seq, {1, 3, 5, 2, 7, 5});
}

TEST_P(IntakeBatchTest, DuplicateKeysInOneBatchAnswerAsOneByOne) {
  std::vector<PlaceRequest> seq;
  for (int i = 0; i < 12; ++i)
    seq.push_back({1 + i % 2, 1, {{101, 1 + i % 3}, {202, 1}}, "key-" + std::to_string(i % 4)});
  expect_same(seq, {seq.size()});
}

TEST_P(IntakeBatchTest, BatchOfOnlyReplaysAndRefusalsWritesNothing) {
  const std::vector<PlaceRequest> seq = {
      {7, 1, {{101, 1}}, "k-old"},       {7, 1, {{303, 99}}, "k-oos"}, {7, 1, {{202, 1}}, "k-old"},
      {4, 1, {{999, 1}}, "u"},           {5, 1, dear(901), "e"},       {6, 1, {}, "x"},
      {4, 1, {{101, 1}, {998, 1}}, "u"},
  };
  expect_same(seq, {seq.size()});
}

// An order placed before principals were recorded (migration 25 left its principal NULL)
// replays from a batch with its lines, as from a lone placement: the stored receipts' columns
// are read by their statement's offsets, not by the order's last column.
TEST_P(IntakeBatchTest, AnOrderWithoutAPrincipalReplaysWithItsLines) {
  Side side(GetParam());
  prepare(side);
  side.tdb.sql("UPDATE orders SET principal = NULL");
  Intake fresh(*side.db);  // nothing remembered of the order
  const std::vector<PlaceRequest> reqs = {{7, 1, {{101, 1}}, "k-old"}, {8, 1, {{202, 1}}, "n"}};
  auto answers = fresh.place_batch(reqs, soon());
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answer_text(answers[0]),
            "replayed placed customer 7 warehouse 1 total 250 [1 101x1@250]");
  EXPECT_EQ(answer_text(fresh.place(reqs[0], soon())), answer_text(answers[0]));
}

// One bad request never sinks the others: an order the database refuses (a trigger stands in
// for any failure that is not transient) fails the combined transaction, which then runs its
// requests one at a time: only that request fails, with the error it gets alone.
TEST_P(IntakeBatchTest, AnOrderTheDatabaseRefusesFailsAloneAndTheOthersArePlaced) {
  auto poison = [](TestDb& tdb) {
    if (GetParam() == Engine::sqlite) {
      tdb.sql(
          "CREATE TRIGGER poison BEFORE INSERT ON orders WHEN NEW.customer_id = 666 "
          "BEGIN SELECT RAISE(ABORT, 'poisoned customer'); END");
    } else {
      tdb.sql(
          "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
          "IF NEW.customer_id = 666 THEN RAISE EXCEPTION 'poisoned customer'; END IF; "
          "RETURN NEW; END $$");
      tdb.sql(
          "CREATE TRIGGER poison BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION "
          "poison()");
    }
  };
  const std::vector<PlaceRequest> seq = {
      {1, 1, {{101, 2}}, "p1"}, {666, 1, {{101, 1}}, "p2"}, {2, 1, {{101, 3}, {202, 1}}, "p3"},
      {1, 1, {{101, 2}}, "p1"}, {666, 1, {{303, 9}}, "p4"},  // out of stock: never inserts
      {3, 1, {{101, 9}}, "p5"},
  };
  expect_same(seq, {seq.size()}, poison);
  // The same in a batch decided ahead (the batch before it learned its rows).
  const std::vector<PlaceRequest> ahead = {
      {1, 1, {{101, 1}}, "q1"}, {2, 1, {{202, 1}}, "q2"},           {666, 1, {{101, 1}}, "q3"},
      {3, 1, {{202, 1}}, "q4"}, {4, 1, {{101, 2}, {202, 1}}, "q5"},
  };
  const Ahead seen = expect_same(ahead, {2, 3}, poison);
  EXPECT_EQ(seen.decided, 0u);  // it failed, and its requests ran one at a time
  EXPECT_EQ(seen.missed, 0u);
}

// Carts of two warehouses sharing SKU ids and one another's SKUs, an out-of-stock order in
// the middle that the ones after it must not see as deducted, a key stored before the batch
// and replayed next to fresh ones, a key reused within the batch, refusals in the middle.
TEST_P(IntakeBatchTest, MixedWarehousesSharedSkusAndOutOfStockInTheMiddle) {
  const std::vector<PlaceRequest> seq = {
      {1, 2, {{101, 1}, {505, 2}}, "w2-a"},
      {1, 1, {{101, 2}, {202, 1}}, "w1-a"},
      {2, 2, {{101, 1}}, "w2-b"},
      {2, 2, {{101, 2}, {505, 1}}, "w2-c"},  // 101 in warehouse 2 is short now
      {2, 1, {{101, 2}}, "w1-b"},            // warehouse 1's 101 is plenty
      {7, 1, {{101, 1}}, "k-old"},           // stored before the batch
      {3, 2, {{505, 4}}, "w2-d"},            // the last four of 505 in warehouse 2
      {3, 2, {{505, 1}}, "w2-e"},
      {4, 2, {{202, 1}}, "w2-f"},            // 202 is not stocked in warehouse 2
      {1, 2, {{505, 2}, {101, 1}}, "w2-a"},  // replays "w2-a" from within the batch
      {1, 1, {{202, 1}}, "w2-a"},            // that key for another warehouse: reused
      {3, 1, {{202, 4}}, "w1-c"},            // short by one
      {3, 1, {{202, 3}, {101, 1}}, "w1-d"},  // fits exactly
      {5, 1, dear(901), "e"},                // refused: the total overflows
      {5, 1, {{303, 3}}, "e"},
      {7, 1, {{303, 99}}, "k-oos"},
  };
  expect_same(seq, {seq.size()}, second_warehouse);
  expect_same(seq, {4, 1, 6, 5}, second_warehouse);
}

// Keys with characters the batch's text[] literals must escape (quotes,
// backslashes, commas, braces, spaces, the word NULL), first fresh and then stored, placed
// and out of stock.
TEST_P(IntakeBatchTest, KeysThatNeedEscapingAnswerAsOneByOne) {
  const std::vector<PlaceRequest> seq = {
      {1, 1, {{101, 1}}, "q\"uote"}, {1, 1, {{101, 1}}, "back\\slash"},
      {1, 1, {{101, 1}}, "q\"uote"}, {2, 1, {{202, 1}}, "{\"i\":1}"},
      {2, 1, {{202, 9}}, "'; --"},   {1, 1, {{202, 1}}, "back\\slash"},
      {1, 1, {{101, 1}}, "a,b"},     {2, 1, {{202, 9}}, "{x,y}"},
      {1, 1, {{101, 1}}, " NULL "},  {2, 1, {{202, 9}}, "NULL"},
      {1, 1, {{101, 1}}, "a,b"},     {2, 1, {{202, 9}}, "{x,y}"},
  };
  expect_same(seq, {seq.size()});
  expect_same(seq, {3, 3, 6});
  expect_same(seq, {2, 4, 1, 5});
}

// A lane's batches after its first are decided ahead, on the stock rows as the batch before
// left them (PostgreSQL): carts sharing rows, one running a row out in the middle, one that
// fits only because an earlier one was short, overflowing totals, the last of a row.
TEST_P(IntakeBatchTest, BatchesDecidedAheadAnswerAsOneByOne) {
  const std::vector<PlaceRequest> seq = {
      {1, 1, {{101, 1}, {202, 1}, {303, 1}}, "a1"},  // learns the rows
      {2, 1, dear(901), "a2"},
      {3, 1, {{911, 1}}, "a3"},
      {1, 1, {{101, 3}, {202, 1}}, "b1"},  // decided ahead from here on
      {2, 1, {{202, 9}}, "b2"},
      {3, 1, {{202, 3}}, "b3"},  // the last three of 202
      {4, 1, {{303, 1}, {101, 1}}, "b4"},
      {5, 1, dear(901), "c1"},  // the total overflows
      {5, 1, {{202, 1}}, "c2"},
      {6, 1, {{101, 6}}, "c3"},  // one short
      {6, 1, {{101, 5}}, "c4"},  // the last five of 101
      {7, 1, {{303, 1}}, "d1"},
      {7, 1, {{303, 1}}, "d2"},
      {8, 1, {{911, 2}, {101, 1}}, "d3"},
  };
  const Ahead ahead = expect_same(seq, {3, 4, 4, 3});
  // The third batch's first run, with "c1" (whose rows no placement has left), is decided
  // on the locked rows and refuses it; its run again without "c1" is decided ahead.
  EXPECT_EQ(ahead.missed, 0u);
  EXPECT_EQ(ahead.decided, GetParam() == Engine::postgres ? 3u : 0u);
}

// A refusal decided ahead would stand on remembered prices that nothing checks (a refused
// request writes nothing): here another process lowered one price, so the total that
// overflowed on the remembered prices fits, and the order is placed as one by one.
TEST_P(IntakeBatchTest, ARefusalOnRememberedPricesIsDecidedAgain) {
  std::vector<CartLine> one_each, the_rest;
  for (std::int64_t sku = 901; sku <= 910; ++sku) {
    one_each.push_back({sku, 1});
    the_rest.push_back({sku, 999'999});  // 10^13 less than 10^19: still overflows
  }
  const std::vector<PlaceRequest> seq = {
      {5, 1, one_each, "learn"},
      {6, 1, {{101, 1}}, "x"},  // the rows are known after this
      {5, 1, the_rest, "e"},
      {6, 1, {{101, 1}}, "y"},  // fits once 905 costs 1
  };
  const auto lower = [](Side& side, size_t) {
    side.tdb.sql("UPDATE stock SET price_cents = 1 WHERE warehouse_id = 1 AND sku_id = 905");
  };
  const Ahead ahead = expect_same(seq, {2, 2}, {}, lower);
  EXPECT_EQ(ahead.missed, GetParam() == Engine::postgres ? 1u : 0u);
  EXPECT_EQ(ahead.decided, 0u);
}

// A batch decided ahead on rows that moved since this process last wrote them, or with a key
// stored since, writes nothing and is decided again on the locked rows, answering as one by
// one: another process's placement took stock, OnceOrder set a price and added stock, another
// process stored an out-of-stock answer for a key the next batch replays, a price changed
// outside OnceOrder. The last batch follows a lone placement of this process, which left the
// rows known as it wrote them: it is decided ahead.
TEST_P(IntakeBatchTest, ABatchDecidedOnRowsThatMovedIsDecidedAgain) {
  const std::vector<PlaceRequest> seq = {
      {1, 1, {{101, 1}, {202, 1}, {303, 1}}, "a1"},
      {2, 1, {{101, 1}}, "a2"},
      {1, 1, {{101, 3}, {202, 1}}, "b1"},
      {2, 1, {{101, 5}}, "b2"},
      {3, 1, {{202, 3}}, "c1"},
      {3, 1, {{202, 2}}, "c2"},
      {4, 1, {{303, 99}}, "r"},
      {4, 1, {{303, 1}}, "d2"},
      {5, 1, {{101, 1}, {303, 1}}, "e1"},
      {5, 1, {{101, 1}}, "e2"},
      {6, 1, {{101, 1}}, "f1"},
      {6, 1, {{202, 1}}, "f2"},
  };
  const auto move = [](Side& side, size_t k) {
    if (k == 1) {  // another process
      Intake other(*side.db);
      auto lone = other.place({9, 1, {{101, 2}}, "lone"}, soon());
      ASSERT_TRUE(lone.ok() && !lone->out_of_stock) << lone.status().to_string();
    } else if (k == 2) {
      auto priced = side.stock.put_sku(1, 202, 2222, std::nullopt, soon());
      ASSERT_TRUE(priced.ok()) << priced.status().to_string();
      auto restocked = side.stock.adjust(1, 202, 3, "restock", soon());
      ASSERT_TRUE(restocked.ok()) << restocked.status().to_string();
    } else if (k == 3) {  // by another process: this one would answer "r" from memory
      Intake other(*side.db);
      auto lone = other.place({4, 1, {{303, 99}}, "r"}, soon());
      ASSERT_TRUE(lone.ok() && lone->out_of_stock) << lone.status().to_string();
    } else if (k == 4) {
      side.tdb.sql("UPDATE stock SET price_cents = 300 WHERE warehouse_id = 1 AND sku_id = 101");
    } else if (k == 5) {  // this process's lone placement leaves the rows known as it left them
      auto lone = side.intake.place({9, 1, {{101, 1}, {202, 1}}, "lone-2"}, soon());
      ASSERT_TRUE(lone.ok() && !lone->out_of_stock) << lone.status().to_string();
    }
  };
  const Ahead ahead = expect_same(seq, {2, 2, 2, 2, 2, 2}, {}, move);
  EXPECT_EQ(ahead.missed, GetParam() == Engine::postgres ? 4u : 0u);
  EXPECT_EQ(ahead.decided, GetParam() == Engine::postgres ? 1u : 0u);
}

// The set-based batch: a constant number of statements per transaction, whatever its size
// (PostgreSQL; SQLite, in process, sends one statement per row).
TEST_P(IntakeBatchTest, ABatchSendsTheSameNumberOfStatementsWhateverItsSize) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "per-row statements on this engine";
  TestDb tdb(GetParam());
  std::atomic<int> statements{0};
  auto db = tdb.open({.pool_size = 2, .statement_hook = [&](std::string_view) { ++statements; }});
  Intake intake(*db);
  Stock stock(*db);
  for (std::int64_t sku = 1; sku <= 10; ++sku)
    ASSERT_TRUE(stock.put_sku(1, sku, 100, 1'000'000, soon()).ok());
  ASSERT_TRUE(intake.place({1, 1, {{1, 1}}, "warm"}, soon()).ok());  // leases the node id
  auto sent = [&](int n, const std::string& tag) {
    std::vector<PlaceRequest> reqs;
    for (int i = 0; i < n; ++i)
      reqs.push_back(
          {1 + i % 3, 1, {{1 + i % 10, 1}, {1 + (i + 3) % 10, 2}}, tag + std::to_string(i)});
    reqs.push_back({1, 1, {{1, 1}}, "warm"});  // and a replay
    statements = 0;
    auto answers = intake.place_batch(reqs, soon());
    for (const auto& a : answers) EXPECT_TRUE(a.ok()) << a.status().to_string();
    return statements.load();
  };
  const int small = sent(2, "s");
  const int large = sent(40, "l");
  EXPECT_EQ(small, large);
  // The plan settings, the receipts with the stock lock (one warehouse), the replays, the
  // writes with the COMMIT.
  EXPECT_LE(large, 4);
}

// PostgreSQL's own batch statements (store/postgres/intake_ops.cpp), by name.
struct PgIntakeSql {
  store::Statement place_many, place_known, find_receipts, insert_receipts_lock_stock,
      lock_free_stock, batch_plans;
};
PgIntakeSql pg_intake_sql() {
  const store::SqlCatalog& c = store::SqlCatalog::of(Engine::postgres);
  return {c.get("in_place_many"),      c.get("in_place_known"),
          c.get("in_find_receipts"),   c.get("in_insert_receipts_lock_stock"),
          c.get("in_lock_free_stock"), c.get("in_batch_plans")};
}

// EXECUTE arguments for the plan checks below: one order placed, two out of stock, and the
// stored receipts of two keys.
// in_place_many's 24 columns: one order (no lines), two out-of-stock receipts, one deduction,
// then the order's principal.
const std::string kPlaceManyFirst23 =
    R"(('1', '{"N"}', '3', '1', '1', '', '', '', '', '', '', '{}', '{}', '{}', '4,5', '1', '1', )"
    R"('1', '{"k9","k10"}', '{"s","s"}', '1', '3', '{"k7"}')";
const std::string kPlaceManyArgs = kPlaceManyFirst23 + R"(, '{"alice"}'))";
// in_place_known's 31: in_place_many's first 23, then the receipts' carts, the warehouse, the
// normalization version and the one stock row the batch was decided on, then the principal.
// (It inserts the receipts, through their primary key, instead of updating them: no read of
// the table.)
const std::string kPlaceKnownArgs =
    kPlaceManyFirst23 + R"(, '{"1x1"}', '{"4x9","5x9"}', 1, 1, '1', '5', '100', '{"alice"}'))";
const std::string kFindReceiptsArgs = R"(('3,4', '{"k7","k8"}'))";
const std::string kReceiptsAndStockArgs = R"(('3', '{"k11"}', '1', '{"1x1"}', 1, 1, '1,2'))";

// A batch's receipt lookups (the placed and out-of-stock updates, the stored receipts) stay
// on the receipts' primary key with a receipts table of 20,000 rows, in the generic plan and
// in a custom one. With the keys as JSON (estimated at 100 rows) PostgreSQL hashed the whole
// table for every batch, inside the window in which the batch holds its stock rows.
TEST_P(IntakeBatchTest, ReceiptLookupsOfABatchStayOnTheirIndex) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "one statement per row on this engine";
  TestDb tdb(GetParam());
  auto db = tdb.open({.pool_size = 1});
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 1, 100, 1'000'000, soon()).ok());  // migrates the schema
  tdb.sql(
      "INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, "
      "normalization) SELECT g % 50 + 1, 'k' || g, 1, '1x1', 1 FROM generate_series(1, 20000) g");
  tdb.sql("ANALYZE");
  const PgIntakeSql sql = pg_intake_sql();
  const struct {
    const store::Statement* statement;
    std::string args;
  } cases[] = {
      {&sql.place_many, kPlaceManyArgs},
      {&sql.find_receipts, kFindReceiptsArgs},
  };
  RawPg pg(tdb.url());
  for (const auto& c : cases) expect_index_reads(pg, *c.statement, c.args, "order_receipts");
}

// The same statements planned while the tables are new (no rows, never analyzed), as on a
// fresh database: with the batch's plan settings (`batch_plans`, first in every batch
// transaction) they still read the receipts and the stock by index. Without them PostgreSQL
// planned a hash join over a scan of the whole receipts table and kept that plan while the
// table grew (docs/BENCHMARKS.md, "Index plans for order batches").
TEST_P(IntakeBatchTest, BatchStatementsPlannedOnNewTablesReadByIndex) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "one statement per row on this engine";
  TestDb tdb(GetParam());
  auto db = tdb.open({.pool_size = 1});
  const PgIntakeSql sql = pg_intake_sql();
  RawPg pg(tdb.url());
  pg.exec("BEGIN");
  pg.exec(std::string(sql.batch_plans.sql));
  expect_index_reads(pg, sql.place_many, kPlaceManyArgs, "order_receipts");
  expect_index_reads(pg, sql.place_many, kPlaceManyArgs, "stock");
  expect_index_reads(pg, sql.place_known, kPlaceKnownArgs, "stock");
  expect_index_reads(pg, sql.find_receipts, kFindReceiptsArgs, "order_receipts");
  expect_index_reads(pg, sql.insert_receipts_lock_stock, kReceiptsAndStockArgs, "stock");
  expect_index_reads(pg, sql.lock_free_stock, "(1, '1,2')", "stock");
  pg.exec("ROLLBACK");
}

// A batch statement is planned once per connection, not once per batch: small batches
// (whose unnested arrays PostgreSQL sizes exactly in a custom plan) made it plan
// in_place_many anew every time, which cost a batch of one about a third of its PostgreSQL
// time (docs/BENCHMARKS.md, "One plan per batch statement").
TEST_P(IntakeBatchTest, ABatchStatementKeepsOneGenericPlan) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no plan cache on this engine";
  TestDb tdb(GetParam());
  auto db = tdb.open({.pool_size = 1});  // every batch on the connection asked below
  Intake intake(*db);
  Stock stock(*db);
  for (std::int64_t sku = 1; sku <= 3; ++sku)
    ASSERT_TRUE(stock.put_sku(1, sku, 100, 1'000'000, soon()).ok());
  constexpr int kBatches = 8;
  for (int i = 0; i < kBatches; ++i) {
    const std::vector<PlaceRequest> reqs = {{1, 1, {{1 + i % 3, 1}}, "p" + std::to_string(i)}};
    for (const auto& r : intake.place_batch(reqs, soon()))
      ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  const store::Statement plans{
      "test_batch_plans",
      "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1"};
  auto conn = db->acquire(soon());
  ASSERT_TRUE(conn.ok()) << conn.status().to_string();
  // Each batch after the first few (which learn the stock rows) is decided ahead: it writes
  // with in_place_known instead of in_insert_receipts_lock_stock and in_place_many.
  const PgIntakeSql sql = pg_intake_sql();
  std::map<std::string_view, std::int64_t> generic;
  for (const auto* statement :
       {&sql.place_many, &sql.insert_receipts_lock_stock, &sql.place_known}) {
    auto rows = (*conn)->query(plans, {std::string(statement->name)});
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    ASSERT_EQ(rows->size(), 1u) << statement->name;
    EXPECT_EQ(rows->at(0).i64(1), 0) << statement->name << ": custom plans";
    generic[statement->name] = rows->at(0).i64(0);
  }
  EXPECT_EQ(generic[sql.place_many.name], 3);
  EXPECT_EQ(generic[sql.insert_receipts_lock_stock.name], 3);
  EXPECT_EQ(generic[sql.place_known.name], kBatches - 3);
  EXPECT_EQ(intake.decided_ahead(), static_cast<std::uint64_t>(kBatches - 3));
}

// A combined placement runs the plan settings first in its transaction, before any statement
// that they are for.
TEST_P(IntakeBatchTest, ABatchSetsItsPlansFirst) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "one statement per row on this engine";
  std::mutex mu;
  std::vector<std::string> sent;
  TestDb tdb(GetParam());
  auto db = tdb.open({.pool_size = 1, .statement_hook = [&](std::string_view name) {
                        std::lock_guard lock(mu);
                        sent.emplace_back(name);
                      }});
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 250, 10, soon()).ok());
  {
    std::lock_guard lock(mu);
    sent.clear();
  }
  const std::vector<PlaceRequest> reqs = {{7, 1, {{101, 1}}, "a"}, {8, 1, {{101, 2}}, "b"}};
  for (const auto& r : intake.place_batch(reqs, soon()))
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  // (The order ids' node lease may come first, in a transaction of its own.)
  std::lock_guard lock(mu);
  const auto receipts = std::find(sent.begin(), sent.end(), "in_insert_receipts_lock_stock");
  ASSERT_NE(receipts, sent.end()) << ::testing::PrintToString(sent);
  ASSERT_NE(receipts, sent.begin()) << ::testing::PrintToString(sent);
  EXPECT_EQ(*std::prev(receipts), pg_intake_sql().batch_plans.name)
      << ::testing::PrintToString(sent);
}

// The batch's first round trip inserts its receipts and locks its stock rows in one statement
// (insert_receipts_lock_stock), in the order two statements would, the order the lone path
// keeps too: while the batch waits for a key another transaction holds, it holds no stock
// row, so that transaction can still lock the batch's rows and finish. (Were the stock locked
// first, the two would wait for each other until one timed out.)
TEST_P(IntakeBatchTest, ABatchWaitingForAKeyHoldsNoStockRow) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no row locks on this engine";
  TestDb tdb(GetParam());
  auto db = tdb.open({.pool_size = 2, .lock_timeout = std::chrono::milliseconds(10000)});
  Intake intake(*db);
  Stock stock(*db);
  ASSERT_TRUE(stock.put_sku(1, 101, 250, 10, soon()).ok());
  ASSERT_TRUE(intake.place({9, 1, {{101, 1}}, "warm"}, soon()).ok());  // leases the node id
  RawPg other(tdb.url());
  other.exec("BEGIN");
  other.exec(
      "INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, "
      "normalization) VALUES (7, 'held', 1, 'x', 1)");
  std::vector<Result<Placed>> answers;
  std::thread batch([&] {
    const std::vector<PlaceRequest> reqs = {{7, 1, {{101, 1}}, "held"}, {8, 1, {{101, 2}}, "b"}};
    answers = intake.place_batch(reqs, soon(30));
  });
  RawPg reader(tdb.url());
  bool waits = false;
  for (int i = 0; i < 500 && !waits; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    waits = reader.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                "current_database() AND wait_event_type = 'Lock' AND query LIKE "
                "'%INSERT INTO order_receipts%'") == "1";
  }
  EXPECT_TRUE(waits) << "the batch never waited for the held key";
  const auto probe = other.notices(
      "DO $$ BEGIN PERFORM set_config('lock_timeout', '300ms', true); PERFORM 1 FROM stock "
      "WHERE warehouse_id = 1 AND sku_id = 101 FOR UPDATE; RAISE NOTICE 'locked'; "
      "EXCEPTION WHEN lock_not_available THEN RAISE NOTICE 'waited'; END $$");
  ASSERT_EQ(probe.size(), 1u);
  EXPECT_NE(probe[0].find("locked"), std::string::npos) << probe[0];
  other.exec("ROLLBACK");  // the key was never stored: the batch takes it
  batch.join();
  ASSERT_EQ(answers.size(), 2u);
  for (const auto& a : answers) {
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    EXPECT_FALSE(a->replayed);
    EXPECT_FALSE(a->out_of_stock);
  }
  expect_invariants_hold(*db);
}

// For a batch that meets a stock row another transaction holds: a PostgreSQL database whose
// lock waits time out after 200 ms, an intake with `attempts` attempts per transaction, and
// a second session (`holder`) that holds stock row (1, sku) from hold() until it commits.
struct HeldRowWorld {
  HeldRowWorld(Engine engine, int attempts)
      : tdb(engine),
        db(tdb.open({.pool_size = 2, .lock_timeout = std::chrono::milliseconds(200)})),
        intake(*db, with_attempts(attempts)),
        holder(tdb.url()) {}
  // `skus` with 10 each at 250, and one order of `warm` placed (it leases the node id).
  void stock(std::initializer_list<std::int64_t> skus, std::int64_t warm) {
    for (std::int64_t sku : skus) ASSERT_TRUE(Stock(*db).put_sku(1, sku, 250, 10, soon()).ok());
    ASSERT_TRUE(intake.place({9, 1, {{warm, 1}}, "warm"}, soon()).ok());
  }
  void hold(std::int64_t sku) {
    holder.exec("BEGIN");
    holder.exec(
        fmt::format("SELECT 1 FROM stock WHERE warehouse_id = 1 AND sku_id = {} FOR UPDATE", sku));
  }
  static IntakeOptions with_attempts(int attempts) {
    IntakeOptions options;
    options.max_attempts = attempts;
    return options;
  }
  TestDb tdb;
  std::unique_ptr<store::Database> db;
  Intake intake;
  RawPg holder;
};

// A batch whose stock row another transaction holds past the lock timeout: the requests that
// touch it leave the batch and wait alone, then are answered busy, not request_in_progress
// (no key was held), and nothing is written for them.
TEST_P(IntakeBatchTest, AStockRowHeldPastTheTimeoutIsBusyNotAKeyInProgress) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no row locks on this engine";
  HeldRowWorld world(GetParam(), 1);
  auto& [tdb, db, intake, holder] = world;
  ASSERT_NO_FATAL_FAILURE(world.stock({101}, 101));
  world.hold(101);
  const std::vector<PlaceRequest> reqs = {{7, 1, {{101, 1}}, "a"}, {8, 1, {{101, 2}}, "b"}};
  for (const auto& a : intake.place_batch(reqs, soon())) {
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), Code::busy) << a.status().to_string();
  }
  holder.exec("COMMIT");
  EXPECT_EQ(intake.held_back(), 2u);
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM order_receipts").at(0).text(0), "1");
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM orders").at(0).text(0), "1");
}

// A batch meets a stock row another transaction holds past the lock timeout: the requests
// whose carts touch it (and every request with their keys) leave the batch and run alone,
// waiting for their own row; the others are placed as if the row were not held. Before, the
// whole batch waited out its attempts and every member was answered busy.
TEST_P(IntakeBatchTest, AHeldStockRowHoldsBackOnlyTheCartsThatTouchIt) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no row locks on this engine";
  HeldRowWorld world(GetParam(), 2);
  auto& [tdb, db, intake, holder] = world;
  ASSERT_NO_FATAL_FAILURE(world.stock({101, 202, 303}, 202));
  world.hold(101);
  const std::vector<PlaceRequest> reqs = {
      {7, 1, {{202, 2}}, "a"},               // free rows only
      {7, 1, {{101, 1}, {303, 1}}, "held"},  // touches the held row
      {8, 1, {{303, 9}}, "b"},               // takes the rest of 303: decided after "held" left
      {7, 1, {{101, 1}, {303, 1}}, "held"},  // the same key again: leaves with it
      {8, 1, {{202, 1}}, "c"},
      {9, 1, {{101, 2}}, "alone"},  // touches the held row, its key alone in the batch
  };
  EXPECT_EQ(intake.held_back(), 0u);
  const auto answers = intake.place_batch(reqs, soon());
  holder.exec("COMMIT");
  ASSERT_EQ(answers.size(), reqs.size());
  // The two requests of the key whose cart touches the row, and the one alone with its key;
  // each counted once, however often the batch ran again.
  EXPECT_EQ(intake.held_back(), 3u);
  for (std::size_t i : {0u, 2u, 4u}) {
    ASSERT_TRUE(answers[i].ok()) << i << ": " << answers[i].status().to_string();
    EXPECT_FALSE(answers[i]->out_of_stock) << i;
  }
  // Retryable either way: busy, or request_in_progress while another request with the key
  // was in flight (Intake::finish); busy for the one alone with its key.
  for (std::size_t i : {1u, 3u}) {
    ASSERT_FALSE(answers[i].ok()) << i;
    EXPECT_TRUE(answers[i].status().code() == Code::busy ||
                answers[i].status().code() == Code::request_in_progress)
        << answers[i].status().to_string();
  }
  ASSERT_FALSE(answers[5].ok());
  EXPECT_EQ(answers[5].status().code(), Code::busy) << answers[5].status().to_string();
  EXPECT_EQ(tdb.sql("SELECT count(*) FROM order_receipts WHERE idempotency_key IN ('held', "
                    "'alone')")
                .at(0)
                .text(0),
            "0");
  EXPECT_EQ(tdb.sql("SELECT available FROM stock WHERE sku_id = 303").at(0).text(0), "1");
  EXPECT_EQ(tdb.sql("SELECT available FROM stock WHERE sku_id = 101").at(0).text(0), "10");
  expect_invariants_hold(*db);
}

// A batch decided ahead whose row another transaction holds does not wait for it: the
// statement skips the row, writes nothing, and the batch is decided again the usual way,
// handing back the cart that touches the row; once the row is free, batches are decided
// ahead again.
TEST_P(IntakeBatchTest, ABatchDecidedAheadOnAHeldRowIsDecidedAgain) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no row locks on this engine";
  HeldRowWorld world(GetParam(), 1);
  auto& [tdb, db, intake, holder] = world;
  ASSERT_NO_FATAL_FAILURE(world.stock({101, 202}, 202));
  const auto batch = [&](const std::string& tag) {
    const std::vector<PlaceRequest> reqs = {{7, 1, {{101, 1}}, tag + "-a"},
                                            {8, 1, {{202, 1}}, tag + "-b"}};
    return intake.place_batch(reqs, soon());
  };
  for (const auto& a : batch("learn")) ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(intake.decided_ahead(), 0u);
  world.hold(101);
  const auto answers = batch("held");
  holder.exec("COMMIT");
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(intake.decided_ahead_missed(), 1u);
  EXPECT_EQ(intake.held_back(), 1u);
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].status().code(), Code::busy) << answers[0].status().to_string();
  ASSERT_TRUE(answers[1].ok()) << answers[1].status().to_string();
  for (const auto& a : batch("free")) ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(intake.decided_ahead(), 1u);
  EXPECT_EQ(tdb.sql("SELECT available FROM stock WHERE sku_id = 101").at(0).text(0), "8");
  EXPECT_EQ(tdb.sql("SELECT available FROM stock WHERE sku_id = 202").at(0).text(0), "6");
  expect_invariants_hold(*db);
}

INSTANTIATE_TEST_SUITE_P(Engines, IntakeBatchTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
