// Order intake (seeds 004, 002): all-or-nothing carts, replayable decisions, stock that
// never goes negative, and order ids that never repeat.
//
// Placing an order is one transaction: the idempotency receipt is inserted first (a
// concurrent request with the same key waits on it), every stock row of the cart is then
// locked in (warehouse, sku) order, and only when all are read is the decision made:
// out of stock commits the receipt alone; otherwise the order, its lines, one reservation
// per line, the deductions, the ledger entries, one source order per line and the
// receipt commit together. A lock timeout or deadlock is never a decision: the whole
// transaction is rolled back and re-run, then `busy`.
//
// Placements that queue behind one another are combined (onceorder/core/combiner.hpp), in the lane
// onceorder/core/cart_lanes.hpp picks: a cart that shares a stock row with one in flight, or that
// finds its warehouse crowded, joins its warehouse's lane, any other the lane of its
// (warehouse, lowest SKU). The first of
// a lane runs alone at once; those that queued meanwhile run as one transaction
// (place_batch), each decided in arrival order on the stock the ones before it left, with one
// commit for all.
//
// Thread-safety: an Intake is safe to use from many threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "onceorder/core/cart.hpp"
#include "onceorder/core/cart_lanes.hpp"
#include "onceorder/core/combiner.hpp"
#include "onceorder/core/counters.hpp"
#include "onceorder/core/id_generator.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/order_types.hpp"
#include "onceorder/core/principal.hpp"
#include "onceorder/core/recent_answers.hpp"
#include "onceorder/service/node_lease.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

struct PlaceRequest {
  std::int64_t customer_id = 0;
  std::int64_t warehouse_id = 0;
  std::vector<CartLine> lines;
  std::string idempotency_key;
  std::string principal{kInProcessPrincipal};  // recorded with the order
};

struct Placed {
  bool out_of_stock = false;
  Order order;                      // when placed (as it was placed, also on replay)
  std::vector<Shortage> shortages;  // when out of stock
  bool replayed = false;
};

// How a placement that reached the transaction ended (what /metrics counts): placed, out
// of stock (stored), replayed (a stored answer, either kind), busy, request_in_progress, or
// refused (unknown_sku, idempotency_key_reused, a total past 64 bits, any other error).
enum class OrderOutcome { placed, out_of_stock, replayed, busy, in_progress, refused, count_ };
inline constexpr std::array<const char*, 6> kOrderOutcomeNames{"placed", "out_of_stock", "replayed",
                                                               "busy",   "in_progress",  "refused"};

struct IntakeOptions {
  std::string holder;  // process identity for the node-id lease; generated if empty
  std::chrono::milliseconds node_lease{60000};
  int max_attempts = 3;
  // How long a placement's decision is remembered in this process
  // (onceorder/core/recent_answers.hpp): a request with its key in that time is answered from
  // memory as a replay, and one that comes while a request with its key runs here waits for that
  // one's answer. 0: never (each replay reads its receipt; a concurrent one waits on the receipt
  // row in the database). `serve --replay-memory`; keep it at most the receipt retention.
  std::chrono::milliseconds replay_memory{0};
  // Test seam: called after the deductions were written, before commit.
  std::function<Status()> fault_after_deduction;
  // Test seam: an order id to use instead of the generator's next one (a collision planted
  // by a test, as two processes holding one node id would make it).
  std::function<std::optional<std::int64_t>()> fault_order_id;
  // Test seam: the clock order ids are made from (IdGenerator's; empty: the system's), for a
  // clock that moved back. Combines as usual.
  IdGenerator::MsClock id_clock;
  // While either seam is set, nothing is combined (place_batch too runs one at a time): the
  // seams are written for one placement per transaction.
};

namespace store {
class IntakeStore;
class StockStore;
struct StockRow;
}  // namespace store

class Intake {
 public:
  Intake(store::Database& db, IntakeOptions options = {});
  ~Intake();

  // Errors: invalid_request, missing_idempotency_key, idempotency_key_reused, unknown_sku,
  // request_in_progress, busy, unavailable (no node id / clock behind). Combined with other
  // placements of the same lane when they queue (see above).
  Result<Placed> place(const PlaceRequest& request, store::Clock::time_point deadline);

  // Places `requests` in one transaction, each answered exactly as `place` would have
  // answered it had they run one at a time in this order: replays of receipts stored before
  // or by an earlier request of the batch, idempotency_key_reused, placed or out_of_stock on
  // the stock the earlier ones left, unknown_sku, a total that does not fit. Invalid requests
  // get their validation error and take no part. Receipts are inserted in (customer, key)
  // order, stock rows locked once, in (warehouse, sku) order; on PostgreSQL the batch sends
  // a constant number of statements, whatever its size. If the transaction fails as `busy`,
  // every request gets that answer (or request_in_progress, as `place`); if it fails for any
  // other reason (an order id taken, a constraint), each request runs alone instead, so one
  // bad request cannot sink the others. `place` calls it for what queued; tests call it to
  // force a batch.
  std::vector<Result<Placed>> place_batch(std::span<const PlaceRequest> requests,
                                          store::Clock::time_point deadline);

  // The most placements one combined transaction takes, and how often a request a batch
  // handed back for a held stock row queues in its lane again before it runs alone (limits.hpp).
  static constexpr std::size_t kMaxBatch = kMaxCombinedBatch;
  static constexpr int kLaneRetries = onceorder::kLaneRetries;
  // The most decisions remembered for replays (IntakeOptions::replay_memory), the oldest
  // forgotten first: at a few hundred bytes each, some tens of MB at most.
  static constexpr std::size_t kReplayMemoryCapacity = 32768;
  // That memory, per (customer, idempotency key): a decision's cart and its answer
  // (public for bench/recent_answers_bench.cpp, which measures what it costs).
  struct Remembered {
    Cart cart;
    Placed placed;
  };
  using KeyOf = std::pair<std::int64_t, std::string>;
  using ReplayMemory = RecentAnswers<KeyOf, Remembered>;
  // How many requests `place`'s runs carried so far (a lone request is a batch of 1; one
  // handed back and queued again is carried again).
  CombinerStats combining() const;
  // Placements whose cart shared a stock row with one in flight (onceorder/core/cart_lanes.hpp).
  std::uint64_t lane_collisions() const { return cart_lanes_.collisions(); }
  // Placements that shared no row but found their warehouse crowded (the same header).
  std::uint64_t lane_crowdings() const { return cart_lanes_.crowdings(); }
  // Times a placement left a combined batch because another transaction held a stock row
  // its cart needs (or because another request of its key did): under `place` it queues in
  // its lane again, up to kLaneRetries times, and then runs alone, counted each time.
  std::uint64_t held_back() const { return held_back_.load(std::memory_order_relaxed); }
  // Placements that found a stock row or their key held by another transaction (their batch's
  // SKIP LOCKED skipped it) and so waited for it: each counted once, however often it was
  // handed back. Seed 002's lock-wait rate is this over the placements.
  std::uint64_t lock_waits() const { return lock_waits_.load(std::memory_order_relaxed); }
  // Placements that, handed back that often, ran alone.
  std::uint64_t ran_alone() const { return ran_alone_.load(std::memory_order_relaxed); }
  // Batches decided ahead, on the stock rows as this process's placements last left them, in one
  // round trip (PostgreSQL); and those decided again as usual because a row or key had moved
  // or because a request was refused (a refusal stands only on locked rows).
  std::uint64_t decided_ahead() const { return decided_ahead_.load(std::memory_order_relaxed); }
  std::uint64_t decided_ahead_missed() const {
    return decided_ahead_missed_.load(std::memory_order_relaxed);
  }
  const IntakeOptions& options() const { return options_; }
  Result<Order> get_order(std::int64_t order_id, store::Clock::time_point deadline);
  // Idempotent; in_production once any line has a production order.
  Result<Order> cancel(std::int64_t order_id, store::Clock::time_point deadline);

  // The node id this process issues order ids with (leased on first use).
  Result<int> node_id();
  // Times the order-number backstop (the unique keys of orders) fired and the placement
  // was retried with a fresh id from another node: each one is an alarm.
  std::uint64_t id_collisions() const { return id_collisions_.load(); }
  // Seed 004's breakdown of where a placement's time went, by cart size
  // (onceorder_order_phase_seconds): lock wait (database calls that may wait for another
  // transaction's locks, store::CallTimes), the other round trips, and the rest (validation,
  // queueing to combine, building the answer). A batch's database time is each of its
  // placements': each waited for all of it.
  static constexpr std::array<const char*, 3> kPhaseNames{"lock_wait", "round_trips", "other"};
  static constexpr std::array<const char*, 4> kCartSizeNames{"1", "2-5", "6-10", "11-20"};
  using PhaseHistograms =
      std::array<std::array<DurationHistogram, kCartSizeNames.size()>, kPhaseNames.size()>;
  const PhaseHistograms& phases() const { return phases_; }
  // Replays answered from this process's memory (IntakeOptions::replay_memory).
  std::uint64_t replays_from_memory() const { return recent_.remembered_answers(); }
  // Placements by outcome, counted once each however they were batched (validation errors,
  // answered before any transaction, are not counted).
  std::array<std::uint64_t, OutcomeCounters<OrderOutcome>::kSize> outcomes() const {
    return outcomes_.snapshot();
  }

 private:
  struct Job;            // a validated placement
  struct Answer;         // its answer, and whether it timed out waiting on another request's key
  class PlacementBatch;  // valid placements in one transaction (place_jobs)
  Result<Job> validate(const PlaceRequest& request) const;
  bool combines() const { return !options_.fault_after_deduction && !options_.fault_order_id; }
  Result<Placed> finish(Answer answer, bool key_shared);
  // Adds a placement's phases (`spent` in the database, `total` in all) to phases_.
  void record_phases(std::size_t lines, const store::CallTimes& spent,
                     store::Clock::duration total);
  // A placement through its lane's combiner (place's path when combining).
  Answer place_in_lane(Job& job, store::Clock::time_point deadline);
  // One placement in its own transaction: the lone path, and the fallback of a batch.
  Answer place_one(const Job& job, store::Clock::time_point deadline);
  // Valid placements in one transaction (place_batch's body, and the combiner's).
  std::vector<Answer> place_jobs(std::span<const Job* const> jobs,
                                 store::Clock::time_point deadline);

  // In a batch's transaction before its write: once the write ran, the lane's next batch
  // is claimed (into `next`) and its first statement sent behind this batch's COMMIT
  // (Connection::open_next), unless it is a lone request or its carts span warehouses.
  void open_next_batch(store::Connection& c, std::string_view lane, std::vector<const Job*>& next);

  // known_ for a batch: `rows` gets the known rows of `skus` in `warehouse` (ascending sku);
  // false, and `rows` unspecified, unless every one is known.
  bool known_rows(std::int64_t warehouse, const std::set<std::int64_t>& skus,
                  std::vector<store::StockRow>& rows);
  // Stock rows by (warehouse, sku).
  using RowsByKey = std::map<std::pair<std::int64_t, std::int64_t>, store::StockRow>;
  // After a batch or a lone placement committed: its rows as it left them (PostgreSQL).
  void remember_rows(const RowsByKey& rows);

  Result<std::int64_t> next_order_id();
  // After a collision this process's node id is not its own: lease another one.
  Result<std::int64_t> order_id_from_another_node();

  store::Database& db_;
  IntakeOptions options_;
  std::unique_ptr<store::IntakeStore> store_;
  std::unique_ptr<store::StockStore> stock_;
  // The keys of the placements running in this process, and (with replay_memory) the
  // decisions made moments ago: a request that gave up while another one holds its key is
  // request_in_progress, not busy. On PostgreSQL the wait on the receipt row says so too;
  // SQLite's one write lock does not.
  ReplayMemory recent_;
  std::mutex id_mu_;
  std::unique_ptr<NodeLease> lease_;
  std::unique_ptr<IdGenerator> ids_;
  std::atomic<std::uint64_t> id_collisions_{0};
  PhaseHistograms phases_;
  std::atomic<std::uint64_t> held_back_{0};
  std::atomic<std::uint64_t> ran_alone_{0};
  std::atomic<std::uint64_t> lock_waits_{0};
  // The stock rows as this process's committed placements left them, (warehouse, sku) →
  // (available, price): a lane's next batch is decided on them without reading the rows
  // first, and the database writes it only if every row still holds those values (place_jobs).
  // A hint, never trusted: a row moved by anyone else only costs that batch a second try.
  struct KnownRow {
    std::int64_t available = 0;
    std::int64_t price_cents = 0;
  };
  std::mutex known_mu_;
  // Hashed: a batch looks up and stores a row per cart line, among up to 65,536, on every
  // placement's path.
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, KnownRow, StockRowKeyHash>
      known_;  // guarded by known_mu_
  std::atomic<std::uint64_t> decided_ahead_{0};
  std::atomic<std::uint64_t> decided_ahead_missed_{0};
  OutcomeCounters<OrderOutcome> outcomes_;
  CartLanes cart_lanes_;                                    // the combiner's lane of a cart
  std::unique_ptr<Combiner<const Job*, Answer>> combiner_;  // keyed by cart_lanes_' lanes
};

}  // namespace onceorder
