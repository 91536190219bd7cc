#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "onceorder/core/invariant.hpp"
#include "service/placement.hpp"
#include "store/intake_store.hpp"

namespace onceorder {
// Named, not anonymous: Intake::PlacementBatch's members have these types.
namespace placement {

using ReceiptKey = std::pair<std::int64_t, std::string_view>;  // (customer, idempotency key)

// A batch's first round trip: each key's first request (those `left_out` aside) in (customer,
// key) order, and the stock rows of their carts by warehouse. One home for what a batch sends
// first and what the batch before it opens for it: the two must be the same statement.
struct FirstRoundTrip {
  std::vector<std::size_t> candidates;
  std::map<ReceiptKey, std::size_t> first_use;
  std::map<std::int64_t, std::set<std::int64_t>> skus;
};

// How one attempt at a batch's transaction ended, when it did not fail. Every ending but
// `committed` rolls the attempt back, and the batch runs again (PlacementBatch::run).
enum class BatchEnd {
  committed,     // every request decided, the write carried the COMMIT
  refused,       // a request was refused by its own cart: again without it
  held,          // new carts touch rows another transaction holds: again without them
  decide_again,  // decided ahead on remembered rows that moved: again on locked rows
};

}  // namespace placement

namespace {

using placement::BatchEnd;
using placement::FirstRoundTrip;
using placement::ReceiptKey;

using store::Connection;
using store::Then;

template <class Job, class LeftOut>
FirstRoundTrip first_round_trip(std::span<const Job* const> jobs, LeftOut left_out) {
  FirstRoundTrip o;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (left_out(i)) continue;
    const PlaceRequest& r = *jobs[i]->req;
    if (o.first_use.emplace(ReceiptKey{r.customer_id, r.idempotency_key}, i).second)
      o.candidates.push_back(i);
  }
  // In (customer, key) order: two batches wait for each other's keys in one order.
  std::sort(o.candidates.begin(), o.candidates.end(), [&](std::size_t a, std::size_t b) {
    return ReceiptKey{jobs[a]->req->customer_id, jobs[a]->req->idempotency_key} <
           ReceiptKey{jobs[b]->req->customer_id, jobs[b]->req->idempotency_key};
  });
  // The stock rows of every candidate's cart, by warehouse (a replay's are locked too, and
  // left alone).
  for (std::size_t i : o.candidates)
    for (const CartLine& l : jobs[i]->cart.lines)
      o.skus[jobs[i]->cart.warehouse_id].insert(l.sku_id);
  return o;
}

template <class Job>
std::vector<store::NewOrderReceipt> receipts_of(std::span<const Job* const> jobs,
                                                std::span<const std::size_t> which) {
  std::vector<store::NewOrderReceipt> rows;
  for (std::size_t i : which)
    rows.push_back({jobs[i]->req->customer_id, jobs[i]->req->idempotency_key, &jobs[i]->cart});
  return rows;
}

Cart stock_of(std::int64_t warehouse, const std::set<std::int64_t>& ids_of) {
  Cart all{warehouse, {}};
  for (std::int64_t sku : ids_of) all.lines.push_back({sku, 0});
  return all;
}

// Tokens of Connection::open_next, unique in the process.
std::atomic<std::uint64_t> next_opening{1};

}  // namespace

bool Intake::known_rows(std::int64_t warehouse, const std::set<std::int64_t>& skus,
                        std::vector<store::StockRow>& rows) {
  rows.clear();
  std::lock_guard lock(known_mu_);
  for (std::int64_t sku : skus) {
    auto it = known_.find({warehouse, sku});
    if (it == known_.end()) return false;
    rows.push_back({sku, it->second.available, it->second.price_cents});
  }
  return true;
}

void Intake::remember_rows(const RowsByKey& rows) {
  if (!store_->decides_ahead() || rows.empty()) return;
  std::lock_guard lock(known_mu_);
  if (known_.size() + rows.size() > kMaxKnownRows) known_.clear();
  for (const auto& [row, stock] : rows) known_[row] = KnownRow{stock.available, stock.price_cents};
}

void Intake::open_next_batch(Connection& c, std::string_view lane, std::vector<const Job*>& next) {
  c.open_next([this, lane, &next](const Connection::SendOpening& send) {
    // Not carts that collided: the opening would lock their rows while this batch is still
    // being answered, where requests handed back to run alone, and lone carts of other lanes,
    // find them held. They are taken at the end of this run instead.
    next = combiner_->claim_next(lane, [](std::span<const Job* const> would) {
      return std::none_of(would.begin(), would.end(), [](const Job* j) { return j->collided; });
    });
    if (next.empty()) return;
    const std::span<const Job* const> jobs(next);
    const FirstRoundTrip first = first_round_trip(jobs, [](std::size_t) { return false; });
    if (first.skus.size() != 1) return;  // it locks its stock in a statement of its own
    const auto& [warehouse, ids_of] = *first.skus.begin();
    store_->open_receipts_and_lock(send, next_opening.fetch_add(1, std::memory_order_relaxed),
                                   receipts_of(jobs, first.candidates),
                                   stock_of(warehouse, ids_of));
  });
}

// A batch of placements in one transaction (Intake::place_batch's and the combiner's): each
// request decided in arrival order on the stock the ones before it left, with one commit for
// all. An attempt (step) ends in a BatchEnd; those that roll back leave what the next
// attempt needs to know in the members below (who was refused, who was handed back, whether
// deciding ahead missed), and the batch runs again, each time with fewer requests taking part.
class Intake::PlacementBatch {
 public:
  PlacementBatch(Intake& intake, std::span<const Job* const> jobs, std::vector<std::int64_t> ids)
      : in_(intake),
        jobs_(jobs),
        n_(jobs.size()),
        ids_(std::move(ids)),
        refused_(n_),
        handed_back_(n_, false),
        waiting_(n_, false) {}

  // The transaction, run again after every attempt that rolled back on purpose; the answers
  // in `jobs` order.
  std::vector<Answer> run(store::Clock::time_point deadline);

 private:
  using Key = ReceiptKey;

  Result<std::vector<Result<Placed>>> transact(const store::TxOptions& tx);
  // One attempt in `c`'s transaction: how it ended, or the transaction's own failure.
  Result<BatchEnd> step(Connection& c);
  void plan();
  Result<std::vector<bool>> insert(Connection& c, std::span<const store::NewOrderReceipt> rows);
  Status insert_receipts(Connection& c);
  Status replay_stored(Connection& c);
  Status lock_free_stock(Connection& c);
  void take(std::int64_t warehouse, const store::FreeStock& stock);
  bool hand_back_held();
  std::optional<BatchEnd> decide();
  void check_decided() const;
  Result<BatchEnd> write(Connection& c);
  std::vector<Result<Placed>> answers();
  bool taking_part(std::size_t i) const { return !refused_[i] && !handed_back_[i]; }

  Intake& in_;
  const std::span<const Job* const> jobs_;
  const std::size_t n_;
  // One id per request, as a lone placement takes one whether or not it places.
  const std::vector<std::int64_t> ids_;

  // Kept across attempts.
  // Requests refused by their own cart (unknown_sku, a total that does not fit) store
  // nothing, not even their receipt: once one is found, the batch runs again without it.
  // Only the first refusal in arrival order is kept per run: the decisions before it are
  // final, those after it were made as if it had taken its receipt (a later request with
  // its key followed it) and are not (a total is only checked when the stock suffices).
  std::vector<std::optional<Status>> refused_;
  // A batch never waits for a stock row (SKIP LOCKED): the requests whose new carts touch a
  // row another transaction holds (with every request of their keys) leave the batch, which
  // runs again without them, and each runs alone on its own thread, waiting for its own
  // rows (Answer::alone). The batch's other members need not wait for a row they never use.
  std::vector<bool> handed_back_;
  std::vector<bool> waiting_;  // timed out on a receipt another transaction holds
  // After a timeout on a held key, one statement per receipt: the request that waited
  // (request_in_progress) is then known, not guessed.
  bool receipts_one_by_one_ = false;
  // Decided ahead (one round trip: no receipts and stock round trip before the write) where
  // every stock row the batch needs is known as this process's placements last left it; after
  // a miss (a row moved, a key stored already, a refusal) the batch runs again the usual way.
  bool missed_ahead_ = false;
  // How the last attempt ended when it rolled back on purpose (none: committed or failed).
  std::optional<BatchEnd> rolled_back_;
  RowsByKey settled_;  // the rows as the committed attempt left them
  // This batch's successors in its lane, and the opening sent for them behind this batch's
  // COMMIT (0: none) by the attempt that committed.
  std::vector<const Job*> next_;
  std::uint64_t opened_next_ = 0;

  // One attempt's, made again by each.
  std::vector<std::optional<Result<Placed>>> decided_;
  // Each key's first request in the batch takes part (a candidate); a later one with that
  // key follows it (`first_`) if it inserted the receipt (`fresh_`), else replays too.
  std::vector<std::optional<std::size_t>> first_;
  std::vector<bool> fresh_;
  FirstRoundTrip trip_;
  RowsByKey left_;                                        // the rows as decided so far
  std::set<std::pair<std::int64_t, std::int64_t>> held_;  // rows another transaction holds
  std::vector<store::StockRow> known_;                    // ascending sku, when ahead_
  bool ahead_ = false;
  // A batch of one warehouse (a lane's) locks its stock rows in its receipts' round trip.
  bool with_stock_ = false;
  std::vector<std::optional<Order>> orders_;
};

std::vector<Intake::Answer> Intake::place_jobs(std::span<const Job* const> jobs,
                                               store::Clock::time_point deadline) {
  // One id per request, as a lone placement takes one whether or not it places; taken
  // outside the transaction (SQLite has one writer).
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto id = next_order_id();
    if (!id.ok()) {
      std::vector<Answer> out;
      for (std::size_t k = 0; k < jobs.size(); ++k) out.push_back(Answer{id.status(), false});
      return out;
    }
    ids.push_back(*id);
  }
  PlacementBatch batch(*this, jobs, std::move(ids));
  return batch.run(deadline);
}

std::vector<Intake::Answer> Intake::PlacementBatch::run(store::Clock::time_point deadline) {
  store::CallTimes spent;
  store::TxOptions tx{deadline, in_.options_.max_attempts, store::TxMode::write};
  tx.spent = &spent;
  tx.opened = jobs_.front()->opened;  // sent behind the batch before this one, if any
  auto decided = transact(tx);
  tx.opened = 0;
  // A refusal is not contention: run again (each time with one refused request more, so
  // at most n times), not counted against the transaction's attempts. So is a request
  // handed back for a held row: each run has one request fewer.
  for (std::size_t rerun = 0; rerun <= n_ && !decided.ok() && rolled_back_; ++rerun) {
    if (*rolled_back_ == BatchEnd::decide_again) {
      missed_ahead_ = true;
      in_.decided_ahead_missed_.fetch_add(1, std::memory_order_relaxed);
    }
    decided = transact(tx);
  }
  std::vector<Answer> out;
  out.reserve(n_);
  if (decided.ok()) {
    in_.remember_rows(settled_);
    // Committed: the next batch finds its first round trip's answer waiting.
    if (opened_next_ != 0) next_.front()->opened = opened_next_;
    for (std::size_t i = 0; i < n_; ++i)
      out.push_back(
          Answer{std::move((*decided)[i]), waiting_[i], handed_back_[i], handed_back_[i], spent});
    return out;
  }
  // Busy stays busy (each alone would have met the same contention). Unavailable stays too:
  // transact replays a batch lost before its COMMIT went out, so the batch may have committed,
  // and a request run again could be answered what is not so (busy, "nothing was written",
  // once its deadline has passed); its retry with the same key settles it. Anything else may
  // be one request's own trouble (an order id taken, a constraint): each runs alone.
  const Code code = decided.status().code();
  const bool stays = code == Code::busy || code == Code::unavailable;
  for (std::size_t i = 0; i < n_; ++i) {
    out.push_back(stays && !handed_back_[i]
                      ? Answer{decided.status(), waiting_[i], false, false, spent}
                      : Answer{decided.status(), false, true, handed_back_[i], spent});
  }
  return out;
}

Result<std::vector<Result<Placed>>> Intake::PlacementBatch::transact(const store::TxOptions& tx) {
  using Answers = std::vector<Result<Placed>>;
  return store::transact<Answers>(in_.db_, tx, [this](Connection& c) -> Result<Answers> {
    OO_ASSIGN_OR_RETURN(const BatchEnd end, step(c));
    if (end == BatchEnd::committed) return answers();
    // transact rolls the attempt back and returns at once. run() reads rolled_back_, not
    // this status, which no request is answered with: should the runs run out with it,
    // every request runs alone, as after any failure but busy.
    rolled_back_ = end;
    return Status(Code::rolled_back, "the batch rolled back to run again");
  });
}

Result<BatchEnd> Intake::PlacementBatch::step(Connection& c) {
  rolled_back_.reset();
  opened_next_ = 0;
  std::fill(waiting_.begin(), waiting_.end(), false);
  OO_RETURN_IF_ERROR(in_.store_->plan_for_batch(c));
  plan();
  // 1. Receipts, unless decided ahead; then the replays of keys stored before the batch.
  if (!ahead_) OO_RETURN_IF_ERROR(insert_receipts(c));
  OO_RETURN_IF_ERROR(replay_stored(c));
  // 2. The stock rows of every new cart, locked once without waiting, unless they came
  // with the receipts.
  if (!ahead_ && !with_stock_) OO_RETURN_IF_ERROR(lock_free_stock(c));
  if (hand_back_held()) return BatchEnd::held;
  // 3. Every decision, in arrival order, on what the earlier ones left; nothing written
  // yet, so that a refused request can still leave without a trace.
  if (const std::optional<BatchEnd> end = decide()) return *end;
  check_decided();
  // 4. Every write in one statement, which carries the COMMIT.
  return write(c);
}

void Intake::PlacementBatch::plan() {
  decided_.assign(n_, std::nullopt);
  first_.assign(n_, std::nullopt);
  fresh_.assign(n_, false);
  std::size_t taking = 0;  // requests taking part: neither refused nor handed back
  for (std::size_t i = 0; i < n_; ++i) {
    if (refused_[i]) decided_[i].emplace(*refused_[i]);
    if (handed_back_[i]) decided_[i].emplace(Status(Code::busy, "handed back to run alone"));
    taking += taking_part(i);
  }
  trip_ = first_round_trip(jobs_, [this](std::size_t i) { return !taking_part(i); });
  left_.clear();
  held_.clear();
  const auto& skus = trip_.skus;
  // Decided ahead only with every key once (a key's later request follows what its first
  // one's receipt says) and every row known.
  ahead_ = !missed_ahead_ && jobs_.front()->opened == 0 && in_.store_->decides_ahead() &&
           skus.size() == 1 && trip_.candidates.size() == taking &&
           in_.known_rows(skus.begin()->first, skus.begin()->second, known_);
  if (ahead_) {
    for (std::size_t i : trip_.candidates) fresh_[i] = true;
    for (const store::StockRow& row : known_) left_[{skus.begin()->first, row.sku_id}] = row;
  }
  with_stock_ = !receipts_one_by_one_ && skus.size() == 1;
}

void Intake::PlacementBatch::take(std::int64_t warehouse, const store::FreeStock& stock) {
  for (const auto& row : stock.locked) left_[{warehouse, row.sku_id}] = row;
  for (std::int64_t sku : stock.held) held_.insert({warehouse, sku});
}

Result<std::vector<bool>> Intake::PlacementBatch::insert(
    Connection& c, std::span<const store::NewOrderReceipt> rows) {
  if (!with_stock_) return in_.store_->insert_receipts(c, rows);
  const auto& [warehouse, ids_of] = *trip_.skus.begin();
  OO_ASSIGN_OR_RETURN(auto both,
                      in_.store_->insert_receipts_and_lock(c, rows, stock_of(warehouse, ids_of)));
  take(warehouse, both.stock);
  return std::move(both.fresh);
}

Status Intake::PlacementBatch::insert_receipts(Connection& c) {
  const std::vector<std::size_t>& candidates = trip_.candidates;
  const std::size_t per_statement = receipts_one_by_one_ ? 1 : candidates.size();
  for (std::size_t from = 0; from < candidates.size(); from += per_statement) {
    const std::size_t to = std::min(candidates.size(), from + per_statement);
    const std::vector<store::NewOrderReceipt> rows =
        receipts_of(jobs_, std::span<const std::size_t>(candidates).subspan(from, to - from));
    auto inserted = insert(c, rows);
    if (!inserted.ok()) {
      if (inserted.status().code() == Code::lock_timeout) {
        for (std::size_t k = from; k < to; ++k) waiting_[candidates[k]] = true;
        receipts_one_by_one_ = true;
      }
      return inserted.status();
    }
    for (std::size_t k = from; k < to; ++k) fresh_[candidates[k]] = (*inserted)[k - from];
  }
  return Status::Ok();
}

Status Intake::PlacementBatch::replay_stored(Connection& c) {
  std::vector<std::size_t> replaying;
  std::vector<store::ReceiptKey> stored_keys;
  std::map<Key, std::size_t> stored_at;
  for (std::size_t i = 0; i < n_; ++i) {
    if (!taking_part(i)) continue;
    const PlaceRequest& r = *jobs_[i]->req;
    const Key key{r.customer_id, r.idempotency_key};
    const auto by = trip_.first_use.find(key);
    OO_INVARIANT(by != trip_.first_use.end(), "request {} of the batch has no first use", i);
    if (fresh_[by->second]) {
      if (by->second != i) first_[i] = by->second;
      continue;
    }
    replaying.push_back(i);
    if (stored_at.emplace(key, stored_keys.size()).second)
      stored_keys.push_back({r.customer_id, r.idempotency_key});
  }
  if (replaying.empty()) return Status::Ok();
  OO_ASSIGN_OR_RETURN(auto stored, in_.store_->find_receipts(c, stored_keys));
  for (std::size_t i : replaying) {
    const PlaceRequest& r = *jobs_[i]->req;
    auto& receipt = stored.at(stored_at.at(Key{r.customer_id, r.idempotency_key}));
    auto replayed = placement::replay(receipt, jobs_[i]->cart);
    if (!replayed.ok() && replayed.status().code() != Code::idempotency_key_reused)
      return replayed.status();
    decided_[i].emplace(std::move(replayed));
  }
  return Status::Ok();
}

Status Intake::PlacementBatch::lock_free_stock(Connection& c) {
  auto& skus = trip_.skus;
  skus.clear();
  for (std::size_t i = 0; i < n_; ++i)
    if (fresh_[i])
      for (const CartLine& l : jobs_[i]->cart.lines)
        skus[jobs_[i]->cart.warehouse_id].insert(l.sku_id);
  for (const auto& [warehouse, ids_of] : skus) {
    OO_ASSIGN_OR_RETURN(auto free, in_.store_->lock_free_stock(c, stock_of(warehouse, ids_of)));
    take(warehouse, free);
  }
  return Status::Ok();
}

bool Intake::PlacementBatch::hand_back_held() {
  // A new cart that touches a held row leaves the batch with its key's other requests.
  std::set<Key> leaving;
  for (std::size_t i = 0; i < n_; ++i) {
    if (!fresh_[i]) continue;
    const Cart& cart = jobs_[i]->cart;
    for (const CartLine& l : cart.lines)
      if (held_.contains({cart.warehouse_id, l.sku_id}))
        leaving.insert({jobs_[i]->req->customer_id, jobs_[i]->req->idempotency_key});
  }
  if (leaving.empty()) return false;
  for (std::size_t i = 0; i < n_; ++i) {
    if (taking_part(i) &&
        leaving.contains({jobs_[i]->req->customer_id, jobs_[i]->req->idempotency_key})) {
      handed_back_[i] = true;
      in_.held_back_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return true;
}

std::optional<BatchEnd> Intake::PlacementBatch::decide() {
  orders_.assign(n_, std::nullopt);
  for (std::size_t i = 0; i < n_; ++i) {
    if (!fresh_[i]) continue;
    const Cart& cart = jobs_[i]->cart;
    std::vector<store::StockRow> rows;
    for (const CartLine& l : cart.lines)
      if (auto it = left_.find({cart.warehouse_id, l.sku_id}); it != left_.end())
        rows.push_back(it->second);
    if (rows.size() != cart.lines.size() && ahead_)  // every row was known: never
      return BatchEnd::decide_again;
    if (rows.size() != cart.lines.size()) {
      refused_[i] = placement::unknown_skus(cart, rows);
      return BatchEnd::refused;
    }
    std::vector<Shortage> shortages = placement::shortages_of(cart, rows);
    if (!shortages.empty()) {
      decided_[i].emplace(Placed{true, {}, std::move(shortages), false});
      continue;
    }
    auto order = placement::make_order(ids_[i], *jobs_[i]->req, cart, rows);
    // A refusal (a total that overflows) stands only on locked rows: nothing checks the
    // remembered prices it was made on unless something is written.
    if (!order.ok() && ahead_) return BatchEnd::decide_again;
    if (!order.ok()) {
      refused_[i] = order.status();
      return BatchEnd::refused;
    }
    for (const CartLine& l : cart.lines)
      left_[{cart.warehouse_id, l.sku_id}].available -= l.quantity;
    orders_[i].emplace(std::move(*order));
  }
  return std::nullopt;
}

void Intake::PlacementBatch::check_decided() const {
  // Before anything is written: every request has its answer, or follows its key's first
  // request, whose decision is not an error (answers() replays it).
  for (std::size_t i = 0; i < n_; ++i) {
    if (!first_[i]) {
      OO_INVARIANT(orders_[i] || decided_[i], "request {} of {} has no decision", i, n_);
      continue;
    }
    const std::size_t by = *first_[i];
    OO_INVARIANT(orders_[by] || (decided_[by] && decided_[by]->ok()),
                 "request {} follows request {}, which has no decision to replay", i, by);
  }
}

Result<BatchEnd> Intake::PlacementBatch::write(Connection& c) {
  std::vector<store::BatchOutcome> writes;
  std::vector<std::size_t> written;
  for (std::size_t i = 0; i < n_; ++i) {
    if (!fresh_[i]) continue;
    const PlaceRequest& r = *jobs_[i]->req;
    if (orders_[i]) {
      writes.push_back({r.customer_id, r.idempotency_key, &*orders_[i], nullptr, &jobs_[i]->cart});
    } else {
      writes.push_back({r.customer_id, r.idempotency_key, nullptr, &decided_[i]->value().shortages,
                        &jobs_[i]->cart});
    }
    written.push_back(i);
  }
  if (writes.empty()) return BatchEnd::committed;
  if (jobs_.front()->lane) in_.open_next_batch(c, *jobs_.front()->lane, next_);
  std::optional<store::DecidedOn> decided_on;
  if (ahead_) decided_on.emplace(store::DecidedOn{trip_.skus.begin()->first, known_});
  auto created =
      in_.store_->write_outcomes(c, writes, Then::commit, decided_on ? &*decided_on : nullptr);
  if (ahead_ && created.status().code() == Code::retry_transaction) return BatchEnd::decide_again;
  if (!created.ok()) return created.status();
  if (ahead_) in_.decided_ahead_.fetch_add(1, std::memory_order_relaxed);
  opened_next_ = c.opened_for();
  for (std::size_t k = 0; k < written.size(); ++k) {
    const std::size_t i = written[k];
    if (!orders_[i]) continue;
    orders_[i]->created_at = std::move((*created)[k]);
    decided_[i].emplace(Placed{false, std::move(*orders_[i]), {}, false});
  }
  return BatchEnd::committed;
}

std::vector<Result<Placed>> Intake::PlacementBatch::answers() {
  // 5. A key inserted earlier in the batch: that request's first decision, replayed.
  for (std::size_t i = 0; i < n_; ++i)
    if (first_[i])
      decided_[i].emplace(placement::replay(jobs_[*first_[i]]->cart, decided_[*first_[i]]->value(),
                                            jobs_[i]->cart));
  settled_ = std::move(left_);
  std::vector<Result<Placed>> out;
  out.reserve(n_);
  for (auto& d : decided_) out.push_back(std::move(*d));
  return out;
}

}  // namespace onceorder
