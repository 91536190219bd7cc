// Order intake's races over several connections (seed 004's cart and cancel, the same key
// at once); their own program, race_tests, so that ThreadSanitizer runs them too.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "contract/intake_fixture.hpp"
#include "onceorder/service/scheduling.hpp"

namespace onceorder::testing {
namespace {

// A cart of 1 to `skus` lines over SKUs 1..`skus`, 1 or 2 of each (repeats merge).
std::vector<CartLine> random_cart(std::mt19937& rng, int skus) {
  std::vector<CartLine> lines;
  const int n = std::uniform_int_distribution<int>(1, skus)(rng);
  for (int k = 0; k < n; ++k)
    lines.push_back({std::uniform_int_distribution<int>(1, skus)(rng),
                     std::uniform_int_distribution<int>(1, 2)(rng)});
  return lines;
}

// A placement's answer, by whom it was for.
struct Seen {
  std::string key;
  std::int64_t customer;
  Placed placed;
};

TEST_P(IntakeTest, SameKeyRaceMakesOneOrderAndLostAnswerFindsIt) {
  stock(101, 100);
  stock(202, 100);
  constexpr int kThreads = 8;
  for (int round = 0; round < 5; ++round) {
    const std::string key = "race-" + std::to_string(round);
    std::barrier start(kThreads);
    std::vector<std::int64_t> ids(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        auto r = place(key, {{101, 1}, {202, 2}});
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        ASSERT_FALSE(r->out_of_stock);
        ids[t] = r->order.order_id;
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), 1u);
  }
  EXPECT_EQ(count("SELECT count(*) FROM orders"), 5);
  EXPECT_EQ(available(101), 95);
  // The answer is lost after commit: the same key finds the same order, whole.
  auto first = place("lost", {{101, 3}, {202, 1}});
  ASSERT_TRUE(first.ok());
  auto found = place("lost", {{202, 1}, {101, 3}});
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->replayed);
  EXPECT_EQ(found->order.order_id, first->order.order_id);
  EXPECT_EQ(found->order.lines.size(), 2u);
  EXPECT_EQ(count("SELECT count(*) FROM stock_ledger WHERE kind = 'reservation' AND order_id = " +
                  std::to_string(first->order.order_id)),
            2);
  EXPECT_EQ(available(101), 92);
  expect_invariants_hold();
}

TEST_P(IntakeTest, CancelRacingProductionNeverLeavesACancelledOrderWithAProductionOrderRace) {
  stock(101, 1000);
  Scheduler s(*db_);
  int cancelled = 0, produced = 0;
  for (int round = 0; round < 30; ++round) {
    auto r = place("p" + std::to_string(round), {{101, 1}});
    ASSERT_TRUE(r.ok());
    const Order o = r->order;
    auto run =
        s.create_run(RunKind::manual, std::vector<OrderKey>{{"W1", o.order_no, "1"}}, soon());
    ASSERT_TRUE(run.ok());
    std::barrier start(2);
    Result<Order> cancel = Status(Code::internal, "not run");
    std::thread canceller([&] {
      start.arrive_and_wait();
      cancel = intake_.cancel(o.order_id, soon());
    });
    start.arrive_and_wait();
    ASSERT_TRUE(s.process_run(run->run.run_id).ok());
    canceller.join();
    const auto made =
        count("SELECT count(*) FROM production_orders WHERE order_no = '" + o.order_no + "'");
    if (cancel.ok()) {
      ++cancelled;
      EXPECT_EQ(made, 0) << "a cancelled order got a production order";
    } else {
      ++produced;
      EXPECT_EQ(cancel.status().code(), Code::in_production) << cancel.status().to_string();
      EXPECT_EQ(made, 1);
    }
  }
  EXPECT_EQ(cancelled + produced, 30);
  EXPECT_EQ(
      count("SELECT count(*) FROM orders o JOIN production_orders p ON p.order_no = o.order_no "
            "WHERE o.status = 'cancelled'"),
      0);
  expect_invariants_hold();
}

// The cancel arrives while a run is being created for the order (manual, by its lines, or
// a batch of every candidate): the run's items must not be made from a source order read
// before the cancel committed. Either the cancel wins and nothing is produced, or
// production wins and the cancel answers in_production. Orders of 1–3 lines.
TEST_P(IntakeTest, CancelRacingRunCreationNeverProducesACancelledOrderRace) {
  for (int sku = 1; sku <= 3; ++sku) stock(sku, 100000);
  auto other_db = tdb_.open({.pool_size = 4}, false);
  Scheduler s(*other_db);
  int cancelled = 0, in_production = 0;
  const int rounds = GetParam() == Engine::sqlite ? 12 : 40;
  for (int round = 0; round < rounds; ++round) {
    for (const bool batch : {false, true}) {
      const int lines = 1 + round % 3;
      std::vector<CartLine> cart;
      for (int l = 1; l <= lines; ++l) cart.push_back({l, 1});
      auto r = place(fmt::format("c{}-{}", round, batch), cart);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      const Order o = r->order;
      std::vector<OrderKey> keys;
      for (int l = 1; l <= lines; ++l) keys.push_back({"W1", o.order_no, std::to_string(l)});
      std::barrier start(2);
      Result<Order> cancel = Status(Code::internal, "not run");
      std::thread canceller([&] {
        start.arrive_and_wait();
        cancel = intake_.cancel(o.order_id, soon());
      });
      start.arrive_and_wait();
      auto run = s.create_run(batch ? RunKind::batch : RunKind::manual,
                              batch ? std::nullopt : std::optional(keys), soon());
      ASSERT_TRUE(run.ok()) << run.status().to_string();
      ASSERT_TRUE(s.process_run(run->run.run_id).ok());
      canceller.join();
      const auto made =
          count("SELECT count(*) FROM production_orders WHERE order_no = '" + o.order_no + "'");
      const auto live = count("SELECT count(*) FROM schedule_items WHERE order_no = '" +
                              o.order_no + "' AND status IN ('wait', 'processing', 'success')");
      if (cancel.ok()) {
        ++cancelled;
        EXPECT_EQ(made, 0) << "round " << round << ": a cancelled order was produced";
        EXPECT_EQ(live, 0) << "round " << round << ": a cancelled order has live items";
      } else {
        ++in_production;
        EXPECT_EQ(cancel.status().code(), Code::in_production) << cancel.status().to_string();
        EXPECT_EQ(made, lines);
      }
    }
  }
  EXPECT_EQ(cancelled + in_production, 2 * rounds);
  expect_invariants_hold();
}

TEST_P(IntakeTest, ManyRandomCartsAndCancelsOnFewSkusKeepStockHonestRace) {
  for (int sku = 1; sku <= 4; ++sku) stock(sku, 30);
  constexpr int kThreads = 6, kEach = 25;
  std::vector<std::thread> threads;
  std::atomic<int> placed{0}, refused{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t * 7919 + 1));
      for (int i = 0; i < kEach; ++i) {
        std::vector<CartLine> lines;
        const int n = std::uniform_int_distribution<int>(1, 4)(rng);
        for (int k = 0; k < n; ++k)
          lines.push_back({std::uniform_int_distribution<int>(1, 4)(rng),
                           std::uniform_int_distribution<int>(1, 3)(rng)});
        auto r = place("k" + std::to_string(t) + "-" + std::to_string(i), lines, 1 + t);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        if (r->out_of_stock) {
          ++refused;
        } else {
          ++placed;
          if (i % 3 == 0) {
            ASSERT_TRUE(intake_.cancel(r->order.order_id, soon()).ok());
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(placed.load(), 0);
  EXPECT_GT(refused.load(), 0) << "the race never ran out of stock: make it tighter";
  EXPECT_EQ(count("SELECT count(*) FROM stock WHERE available < 0"), 0);
  expect_invariants_hold();
}

// Request combining (Intake's Combiner): many callers on a few hot SKUs with too little
// stock, some replaying their key. Nothing is oversold, every answer is what the database
// kept, and batches of more than one placement must have run: an Intake that never combines
// fails here.
// Two batches holding the same keys in opposite arrival orders: a batch inserts its receipts
// in key order, so they wait for each other instead of deadlocking, and each key is one order.
TEST_P(IntakeTest, BatchesWithTheSameKeysInOppositeOrdersNeverDeadlockRace) {
  stock(101, 10'000);
  stock(202, 10'000);
  constexpr int kRounds = 10, kKeys = 16;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<PlaceRequest> forward;
    for (int k = 0; k < kKeys; ++k)
      forward.push_back({7, 1, {{101, 1}, {202, 1 + k % 2}}, fmt::format("r{}-{}", round, k)});
    std::vector<PlaceRequest> backward(forward.rbegin(), forward.rend());
    std::vector<Result<Placed>> a, b;
    std::barrier start(2);
    std::thread other([&] {
      start.arrive_and_wait();
      b = intake_.place_batch(backward, soon());
    });
    start.arrive_and_wait();
    a = intake_.place_batch(forward, soon());
    other.join();
    ASSERT_EQ(a.size(), static_cast<size_t>(kKeys));
    ASSERT_EQ(b.size(), static_cast<size_t>(kKeys));
    for (int k = 0; k < kKeys; ++k) {
      const auto& x = a[static_cast<size_t>(k)];
      const auto& y = b[static_cast<size_t>(kKeys - 1 - k)];
      ASSERT_TRUE(x.ok()) << x.status().to_string();
      ASSERT_TRUE(y.ok()) << y.status().to_string();
      EXPECT_EQ(x->order.order_id, y->order.order_id);
      EXPECT_NE(x->replayed, y->replayed);
    }
  }
  EXPECT_EQ(db_->metrics().retries_deadlock.load(), 0u);
  EXPECT_EQ(count("SELECT count(*) FROM orders"), kRounds * kKeys);
  expect_invariants_hold();
}

TEST_P(IntakeTest, QueuedPlacementsOnHotSkusAreCombinedAndNeverOversellRace) {
  constexpr int kSkus = 3, kInitial = 120, kThreads = 16, kEach = 20;
  for (int sku = 1; sku <= kSkus; ++sku) stock(sku, kInitial);
  std::vector<std::vector<Seen>> seen(kThreads);
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t * 104729 + 3));
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        const std::vector<CartLine> lines = random_cart(rng, kSkus);
        const std::string key = fmt::format("c{}-{}", t, i);
        auto r = place(key, lines, 100 + t);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        ASSERT_FALSE(r->replayed);
        if (i % 4 == 0) {
          auto again = place(key, lines, 100 + t);
          ASSERT_TRUE(again.ok()) << again.status().to_string();
          EXPECT_TRUE(again->replayed);
          EXPECT_EQ(again->out_of_stock, r->out_of_stock);
          EXPECT_EQ(again->order.order_id, r->order.order_id);
        }
        seen[t].push_back({key, 100 + t, std::move(*r)});
      }
    });
  }
  for (auto& th : threads) th.join();

  std::map<std::int64_t, std::int64_t> taken;
  int placed = 0, refused = 0;
  for (const auto& answers : seen) {
    for (const Seen& s : answers) {
      const std::string receipt = fmt::format(
          "SELECT count(*) FROM order_receipts WHERE customer_id = {} AND idempotency_key = '{}' "
          "AND outcome = '{}'",
          s.customer, s.key, s.placed.out_of_stock ? "out_of_stock" : "placed");
      EXPECT_EQ(count(receipt), 1) << s.key;
      if (s.placed.out_of_stock) {
        ++refused;
        EXPECT_FALSE(s.placed.shortages.empty()) << s.key;
        continue;
      }
      ++placed;
      for (const auto& l : s.placed.order.lines) taken[l.sku_id] += l.quantity;
      EXPECT_EQ(count(fmt::format("SELECT count(*) FROM order_lines WHERE order_id = {}",
                                  s.placed.order.order_id)),
                static_cast<std::int64_t>(s.placed.order.lines.size()))
          << s.key;
    }
  }
  EXPECT_GT(placed, 0);
  EXPECT_GT(refused, 0) << "the race never ran out of stock: make it tighter";
  EXPECT_EQ(count("SELECT count(*) FROM orders"), placed);
  for (int sku = 1; sku <= kSkus; ++sku) {
    EXPECT_GE(available(sku), 0);
    EXPECT_EQ(kInitial - available(sku), taken[sku]) << "sku " << sku;
    EXPECT_EQ(count(fmt::format("SELECT -coalesce(sum(delta), 0) FROM stock_ledger WHERE sku_id "
                                "= {} AND kind = 'reservation'",
                                sku)),
              taken[sku])
        << "sku " << sku;
  }
  const CombinerStats stats = intake_.combining();
  // A request handed back for a held row (PostgreSQL) is carried again when it queues again:
  // every hand-back but those after which the request ran alone.
  EXPECT_EQ(stats.requests,
            static_cast<std::uint64_t>(kThreads * kEach + kThreads * ((kEach + 3) / 4)) +
                intake_.held_back() - intake_.ran_alone());
  EXPECT_GT(stats.largest, 1u) << "no two placements were ever combined";
  // Carts over a few SKUs collide (PostgreSQL's collision lane); SQLite has one lane for all.
  if (GetParam() == Engine::sqlite)
    EXPECT_EQ(intake_.lane_collisions(), 0u);
  else
    EXPECT_GT(intake_.lane_collisions(), 0u);
  expect_invariants_hold();
}

// Batches decided ahead (PostgreSQL, Intake::decided_ahead) on rows that another process
// and restocks move under them: clients combine on a few hot SKUs while a second Intake (a
// second process) places lone carts on the same rows and a restocker adds stock. A batch
// decided on a moved row must write nothing and be decided again: no row is oversold, every
// row's stock is its initial stock plus the restocks minus the orders both processes
// answered placed, and every answer is the receipt the database kept.
TEST_P(IntakeTest, BatchesDecidedAheadOnRowsAnotherProcessMovesNeverOversellRace) {
  constexpr int kSkus = 3, kInitial = 60, kThreads = 12, kEach = 20;
  for (int sku = 1; sku <= kSkus; ++sku) stock(sku, kInitial);
  Intake other(*db_);
  std::vector<std::vector<Seen>> seen(kThreads + 1);
  std::map<std::int64_t, std::int64_t> restocked;
  std::atomic<int> running{kThreads};
  std::barrier start(kThreads + 2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t * 7919 + 11));
      start.arrive_and_wait();
      // On PostgreSQL the clients go on (up to 4 * kEach each) until a batch met a moved row:
      // whether one does in the first kEach depends on timing.
      for (int i = 0; i < kEach || (GetParam() == Engine::postgres &&
                                    intake_.decided_ahead_missed() == 0 && i < 4 * kEach);
           ++i) {
        const std::string key = fmt::format("c{}-{}", t, i);
        auto r = place(key, random_cart(rng, kSkus), 100 + t);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        seen[t].push_back({key, 100 + t, std::move(*r)});
      }
      --running;
    });
  }
  // The second process: one lone cart, then a pause the first one's lanes run batches in.
  threads.emplace_back([&] {
    std::mt19937 rng(5);
    start.arrive_and_wait();
    for (int i = 0; running > 0; ++i) {
      const std::string key = fmt::format("o-{}", i);
      auto r = place(key, random_cart(rng, kSkus), 99, &other);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      seen[kThreads].push_back({key, 99, std::move(*r)});
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
  });
  threads.emplace_back([&] {
    start.arrive_and_wait();
    for (int i = 0; running > 0; ++i) {
      const std::int64_t sku = 1 + i % kSkus;
      auto r = stock_.adjust(1, sku, 2, "restock", soon());
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      restocked[sku] += 2;
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
  });
  for (auto& th : threads) th.join();

  std::map<std::int64_t, std::int64_t> taken;
  int placed = 0, refused = 0;
  for (const auto& answers : seen) {
    for (const Seen& s : answers) {
      EXPECT_EQ(
          count(fmt::format("SELECT count(*) FROM order_receipts WHERE customer_id = {} "
                            "AND idempotency_key = '{}' AND outcome = '{}'",
                            s.customer, s.key, s.placed.out_of_stock ? "out_of_stock" : "placed")),
          1)
          << s.key;
      if (s.placed.out_of_stock) {
        ++refused;
        continue;
      }
      ++placed;
      for (const auto& l : s.placed.order.lines) {
        taken[l.sku_id] += l.quantity;
        EXPECT_EQ(l.unit_price_cents, 100) << s.key;
      }
    }
  }
  EXPECT_GT(refused, 0) << "the race never ran out of stock: make it tighter";
  EXPECT_EQ(count("SELECT count(*) FROM orders"), placed);
  for (int sku = 1; sku <= kSkus; ++sku) {
    EXPECT_GE(available(sku), 0);
    EXPECT_EQ(available(sku), kInitial + restocked[sku] - taken[sku]) << "sku " << sku;
  }
  if (GetParam() == Engine::sqlite) {
    EXPECT_EQ(intake_.decided_ahead(), 0u);
  } else {
    EXPECT_GT(intake_.decided_ahead(), 0u) << "no batch was decided ahead";
    EXPECT_GT(intake_.decided_ahead_missed(), 0u) << "no batch met a moved row";
  }
  expect_invariants_hold();
}

// Seed 002's duplicate submissions with replay memory: groups of clients send the same key
// and cart at once, over a few hot SKUs (so that carts combine and run out of stock). Each
// key runs once in the process; every other request of it waits for that answer or finds it
// in memory, and gets exactly that answer.
TEST_P(IntakeTest, DuplicateSubmissionsRunOnceAndTheRestAreAnsweredFromMemoryRace) {
  constexpr int kSkus = 3, kInitial = 60, kThreads = 12, kGroup = 4, kRounds = 25;
  for (int sku = 1; sku <= kSkus; ++sku) stock(sku, kInitial);
  IntakeOptions options;
  options.replay_memory = std::chrono::seconds(30);
  Intake memory(*db_, options);
  // answers[round][thread]
  std::vector<std::vector<std::optional<Result<Placed>>>> answers(
      kRounds, std::vector<std::optional<Result<Placed>>>(kThreads));
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // One cart per group and round, the same for every member of the group.
        std::mt19937 rng(static_cast<unsigned>(round * 7919 + t / kGroup));
        std::vector<CartLine> lines;
        for (int k = 0, n = std::uniform_int_distribution<int>(1, kSkus)(rng); k < n; ++k)
          lines.push_back({std::uniform_int_distribution<int>(1, kSkus)(rng),
                           std::uniform_int_distribution<int>(1, 2)(rng)});
        start.arrive_and_wait();
        answers[round][t] = place(fmt::format("dup{}-{}", round, t / kGroup), lines, 7, &memory);
      }
    });
  }
  for (auto& th : threads) th.join();
  int decided = 0, placed = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int g = 0; g < kThreads / kGroup; ++g) {
      SCOPED_TRACE(fmt::format("round {} group {}", round, g));
      const Placed* first = nullptr;
      int fresh = 0;
      for (int t = g * kGroup; t < (g + 1) * kGroup; ++t) {
        const Result<Placed>& r = *answers[round][t];
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        fresh += r->replayed ? 0 : 1;
        if (!first) first = &*r;
        EXPECT_EQ(r->out_of_stock, first->out_of_stock);
        EXPECT_EQ(r->order.order_id, first->order.order_id);
        EXPECT_EQ(r->order.created_at, first->order.created_at);
        EXPECT_EQ(r->shortages.size(), first->shortages.size());
      }
      EXPECT_EQ(fresh, 1) << "one request of the key decided it";
      ++decided;
      placed += first->out_of_stock ? 0 : 1;
    }
  }
  EXPECT_GT(placed, 0);
  EXPECT_LT(placed, decided) << "the race never ran out of stock: make it tighter";
  EXPECT_EQ(count("SELECT count(*) FROM orders"), placed);
  EXPECT_EQ(count("SELECT count(*) FROM order_receipts"), decided);
  EXPECT_EQ(memory.replays_from_memory(), static_cast<std::uint64_t>(kRounds * kThreads - decided))
      << "a duplicate read its receipt instead of waiting for its key's answer";
  expect_invariants_hold();
}

// Many clients over SKUs no two of them share: no cart collides, yet once four or more carts
// of the warehouse are in flight the next ones are combined (onceorder/core/cart_lanes.hpp), and
// every one of them is placed with its own lines and deductions.
TEST_P(IntakeTest, DisjointCartsOfACrowdedWarehouseAreCombinedRace) {
  place_disjoint_carts(intake_, 16, 15, 4);
  EXPECT_EQ(intake_.lane_collisions(), 0u);
  // SQLite has one lane for all and never asks CartLanes.
  if (GetParam() == Engine::sqlite) {
    EXPECT_EQ(intake_.lane_crowdings(), 0u);
  } else {
    EXPECT_GT(intake_.lane_crowdings(), 0u);
    EXPECT_GT(intake_.combining().largest, 1u) << "no two disjoint carts were ever combined";
  }
  expect_invariants_hold();
}

// A batch opens the next one behind its COMMIT (Intake::open_next_batch): every batch waits a
// moment before its first statement (a statement hook), so that the members of the batch
// before it, answered meanwhile, queue again before this batch's write has run. Every opening is
// taken by the batch it was made for (a batch that sent anything else first, other keys or other
// rows, would have it discarded), and every order is placed with its own lines and deductions.
// SQLite never opens one.
TEST_P(IntakeTest, ABatchOpensTheNextOneBehindItsCommitRace) {
  store::DatabaseOptions options{.pool_size = 8};
  options.statement_hook = [](std::string_view statement) {
    if (statement == "in_insert_receipts_lock_stock")
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  auto db = tdb_.open(options, false);
  Intake intake(*db);
  place_disjoint_carts(intake, 12, 10, 3);
  const store::StoreMetrics& m = db->metrics();
  if (GetParam() == Engine::sqlite) {
    EXPECT_EQ(m.openings_taken.load(), 0u);
  } else {
    EXPECT_GT(m.openings_taken.load(), 0u) << "no batch was opened by the one before";
    EXPECT_EQ(m.openings_discarded.load(), 0u) << "a batch sent something else first";
  }
  expect_invariants_hold();
}

// A batch hands back the requests whose carts touch a row another transaction holds (here a
// session that keeps taking one hot row for a moment, as another process's lone placements
// do). Each queues in its lane again before it runs alone: one that ran alone was handed back
// 1 + Intake::kLaneRetries times, so fewer ran alone than were handed back (before, every
// one did, and a request running alone held its first rows while it waited for the rest, so
// that the next batch handed back every cart touching them: a convoy). Every answer stays
// exact and nothing is taken twice.
TEST_P(IntakeTest, HandedBackPlacementsQueueInTheirLaneAgainRace) {
  if (GetParam() != Engine::postgres) GTEST_SKIP() << "no row locks on this engine";
  constexpr int kSkus = 10, kInitial = 1000000, kThreads = 12, kEach = 25, kRounds = 10;
  for (int sku = 1; sku <= kSkus; ++sku) stock(sku, kInitial);
  std::atomic<bool> done{false};
  std::thread holder([&] {
    RawPg pg(tdb_.url());
    std::mt19937 rng(11);
    while (!done.load()) {
      pg.exec("BEGIN");
      pg.exec(fmt::format("SELECT 1 FROM stock WHERE warehouse_id = 1 AND sku_id = {} FOR UPDATE",
                          std::uniform_int_distribution<int>(1, kSkus)(rng)));
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      pg.exec("COMMIT");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::map<std::int64_t, std::int64_t> taken;
  std::mutex taken_mu;
  int placed = 0;
  for (int round = 0; round < kRounds && intake_.held_back() == 0; ++round) {
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(round * 7919 + t * 104729 + 5));
        start.arrive_and_wait();
        for (int i = 0; i < kEach; ++i) {
          auto r = place(fmt::format("h{}-{}-{}", round, t, i), random_cart(rng, kSkus), 100 + t);
          ASSERT_TRUE(r.ok()) << r.status().to_string();
          ASSERT_FALSE(r->out_of_stock);
          std::lock_guard lock(taken_mu);
          ++placed;
          for (const auto& l : r->order.lines) taken[l.sku_id] += l.quantity;
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  done = true;
  holder.join();
  ASSERT_GT(intake_.held_back(), 0u) << "no batch ever met the held row: make it hotter";
  // Before, every request handed back ran alone: as many as were handed back.
  EXPECT_LT(intake_.ran_alone(), intake_.held_back());
  EXPECT_LE(intake_.ran_alone() * (1 + Intake::kLaneRetries), intake_.held_back());
  EXPECT_EQ(count("SELECT count(*) FROM orders"), placed);
  for (int sku = 1; sku <= kSkus; ++sku)
    EXPECT_EQ(kInitial - available(sku), taken[sku]) << "sku " << sku;
  expect_invariants_hold();
}

INSTANTIATE_TEST_SUITE_P(Engines, IntakeTest, ::testing::ValuesIn(engines_under_test()),
                         engine_param_name);

}  // namespace
}  // namespace onceorder::testing
