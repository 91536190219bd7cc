#include "onceorder/intake.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "onceorder/numbering.hpp"
#include "onceorder/process_identity.hpp"
#include "onceorder/receipts.hpp"
#include "onceorder/text.hpp"
#include "store/intake_store.hpp"
#include "store/receipts_store.hpp"
#include "store/stock_store.hpp"

namespace onceorder {
namespace {

using store::Connection;
using store::Then;

Status in_production(std::int64_t order_id) {
  return Status(
      Code::in_production,
      fmt::format("order {} already has a production order; it cannot be cancelled", order_id));
}

// API.md "Stock bounds" (limits.hpp): prices, stock and one adjustment.
constexpr std::int64_t kMaxPriceCents = kStockBound;
constexpr std::int64_t kMaxStock = kStockBound;
constexpr std::int64_t kMaxTotalCents = std::numeric_limits<std::int64_t>::max();

Status check_ids(std::int64_t warehouse_id, std::int64_t sku_id) {
  std::vector<FieldError> errors;
  if (warehouse_id < 1) errors.push_back({"warehouse_id", "must be an integer from 1 to 2^63-1"});
  if (sku_id < 1) errors.push_back({"sku_id", "must be an integer from 1 to 2^63-1"});
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid request", std::move(errors));
}

// An adjustment receipt's answer: "available reserved price_cents" right after it.
Result<Sku> parse_adjusted_answer(const store::StoredAnswer& stored, std::int64_t warehouse_id,
                                  std::int64_t sku_id) {
  auto v = store::answer_integers(stored.answer, 3);
  if (!v) return Status(Code::internal, "an adjustment receipt's answer is unreadable");
  return Sku{warehouse_id, sku_id, (*v)[0], (*v)[1], (*v)[2]};
}

using ReceiptKey = std::pair<std::int64_t, std::string_view>;  // (customer, idempotency key)

// A batch's first round trip: each key's first request (those `left_out` aside) in (customer,
// key) order, and the stock rows of their carts by warehouse. One home for what a batch sends
// first and what the batch before it opens for it: the two must be the same statement.
struct FirstRoundTrip {
  std::vector<std::size_t> candidates;
  std::map<ReceiptKey, std::size_t> first_use;
  std::map<std::int64_t, std::set<std::int64_t>> skus;
};

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

// At the end of a run: the opening made for its batch, rolled back unless the batch took it.
struct DiscardOpened {
  DiscardOpened(store::Database& d, std::uint64_t t) : db(d), token(t) {}
  DiscardOpened(const DiscardOpened&) = delete;
  DiscardOpened& operator=(const DiscardOpened&) = delete;
  ~DiscardOpened() {
    if (token != 0) db.discard_opened(token);
  }
  store::Database& db;
  const std::uint64_t token;
};

// Tokens of Connection::open_next, unique in the process.
std::atomic<std::uint64_t> next_opening{1};

}  // namespace

struct Intake::Job {
  const PlaceRequest* req;
  Cart cart;
  // The combiner's key it runs under (none for place_batch), and whether the cart shared a
  // stock row with a cart in flight when it came (CartLanes::Entry::collided).
  std::optional<std::string_view> lane{};
  bool collided = false;
  // A batch's leader: the opening the batch before sent for it (Connection::open_next; 0:
  // none). Written by that batch's leader before the combiner hands this batch over.
  mutable std::uint64_t opened = 0;
};

struct Intake::Answer {
  Result<Placed> placed;
  bool waiting_on_key = false;
  // `placed` is nothing yet: the request runs alone, on its own thread, so that the batch
  // need not wait for it. `held_back`: because a stock row it needs was held elsewhere.
  bool alone = false;
  bool held_back = false;
  store::CallTimes spent{};  // in the database, for this answer (its batch's, in a batch)
};

Intake::Intake(store::Database& db, IntakeOptions options)
    : db_(db),
      options_(std::move(options)),
      store_(std::make_unique<store::IntakeStore>(db.dialect())),
      stock_(std::make_unique<store::StockStore>(db.dialect())),
      recent_(options_.replay_memory, kReplayMemoryCapacity),
      combiner_(std::make_unique<Combiner<const Job*, Answer>>(
          kMaxBatch,
          [this](const Job* job, store::Clock::time_point d) {
            const DiscardOpened unused{db_, job->opened};
            // Opened by the batch before: a batch of one, whose first round trip is done.
            if (job->opened != 0) return std::move(place_jobs(std::span(&job, 1), d).front());
            return place_one(*job, d);
          },
          [this](std::span<const Job* const> batch, store::Clock::time_point d) {
            const DiscardOpened unused{db_, batch.front()->opened};
            return place_jobs(batch, d);
          })) {
  if (options_.holder.empty()) options_.holder = process_identity();
}

Intake::~Intake() {
  if (lease_) lease_->release(db_);
}

Result<int> Intake::node_id() {
  std::lock_guard lock(id_mu_);
  if (!lease_ || !lease_->valid()) {
    OO_ASSIGN_OR_RETURN(lease_, NodeLease::acquire(db_, options_.holder, options_.node_lease));
    ids_ =
        std::make_unique<IdGenerator>(lease_->node(), lease_->not_before_ms(), options_.id_clock);
  }
  return lease_->node();
}

Result<std::int64_t> Intake::next_order_id() {
  std::lock_guard lock(id_mu_);
  if (lease_ && lease_->valid() && lease_->should_renew() && !lease_->renew(db_).ok()) {
    lease_.reset();  // lost: take a new node below
  }
  if (!lease_ || !lease_->valid()) {
    OO_ASSIGN_OR_RETURN(lease_, NodeLease::acquire(db_, options_.holder, options_.node_lease));
    ids_ =
        std::make_unique<IdGenerator>(lease_->node(), lease_->not_before_ms(), options_.id_clock);
  }
  return ids_->next();
}

Result<std::int64_t> Intake::order_id_from_another_node() {
  {
    std::lock_guard lock(id_mu_);
    // Not released: another process holds that node now; it expires on its own.
    lease_.reset();
    ids_.reset();
  }
  return next_order_id();
}

namespace {

Status unknown_skus(const Cart& cart, const std::vector<store::StockRow>& rows) {
  std::vector<FieldError> unknown;
  size_t j = 0;
  for (size_t i = 0; i < cart.lines.size(); ++i) {
    if (j < rows.size() && rows[j].sku_id == cart.lines[i].sku_id) {
      ++j;
    } else {
      unknown.push_back({"lines", fmt::format("sku {} has no stock row in warehouse {}",
                                              cart.lines[i].sku_id, cart.warehouse_id)});
    }
  }
  return Status(Code::unknown_sku, "a SKU is not stocked in this warehouse; nothing was stored",
                std::move(unknown));
}

std::vector<Shortage> shortages_of(const Cart& cart, const std::vector<store::StockRow>& rows) {
  std::vector<Shortage> shortages;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].available < cart.lines[i].quantity)
      shortages.push_back({rows[i].sku_id, cart.lines[i].quantity, rows[i].available});
  }
  return shortages;
}

// The order `cart` makes at the locked rows' prices (rows in cart order).
Result<Order> make_order(std::int64_t order_id, const PlaceRequest& req, const Cart& cart,
                         const std::vector<store::StockRow>& rows) {
  Order order{order_id, order_number(order_id), "placed", req.customer_id, cart.warehouse_id, {}, 0,
              "",       req.principal};
  for (size_t i = 0; i < rows.size(); ++i) {
    order.lines.push_back(
        {static_cast<int>(i + 1), rows[i].sku_id, cart.lines[i].quantity, rows[i].price_cents});
    // Prices up to 10^12 times quantities up to 10^6 over 20 lines do not fit in 64
    // bits: refuse (rolling everything back) rather than store a wrapped total.
    std::int64_t line_total = 0;
    if (__builtin_mul_overflow(rows[i].price_cents, cart.lines[i].quantity, &line_total) ||
        __builtin_add_overflow(order.total_cents, line_total, &order.total_cents)) {
      return Status(
          Code::invalid_request, "the order total does not fit in 64 bits; nothing was stored",
          {FieldError{"lines", fmt::format("the total would exceed {} cents", kMaxTotalCents)}});
    }
  }
  return order;
}

// The answer a stored receipt gives a request with the same key: its first decision, or
// idempotency_key_reused for another cart. Other errors fail the transaction.
Result<Placed> replay(std::optional<store::StoredReceipt>& stored, const Cart& cart) {
  if (!stored) return Status(Code::retry_transaction, "receipt vanished");
  const store::OrderReceipt& receipt = stored->receipt;
  if (!receipt.is_for(cart)) {
    return Status(Code::idempotency_key_reused,
                  "this Idempotency-Key was used for a different order");
  }
  if (receipt.outcome == "out_of_stock") return Placed{true, {}, receipt.shortages, true};
  if (!stored->order) return Status(Code::internal, "a placed receipt without its order");
  Order order = *stored->order;
  order.status = "placed";  // replay the first answer, whatever happened since
  return Placed{false, std::move(order), {}, true};
}

Result<Placed> replay(store::IntakeStore& store, Connection& c, const PlaceRequest& req,
                      const Cart& cart) {
  OO_ASSIGN_OR_RETURN(auto receipt, store.find_receipt(c, req.customer_id, req.idempotency_key));
  std::optional<store::StoredReceipt> stored;
  if (receipt) {
    std::optional<Order> order;
    if (receipt->outcome != "out_of_stock" && receipt->is_for(cart)) {
      OO_ASSIGN_OR_RETURN(order, store.get_order(c, receipt->order_id));
    }
    stored.emplace(store::StoredReceipt{std::move(*receipt), std::move(order)});
  }
  return replay(stored, cart);
}

// The answer a decision made in this process (`decided`, for `decided_for`) gives a later
// request with its key: as its stored receipt would (replay() above).
Result<Placed> replay(const Cart& decided_for, const Placed& decided, const Cart& cart) {
  if (decided_for.warehouse_id != cart.warehouse_id || decided_for.text() != cart.text()) {
    return Status(Code::idempotency_key_reused,
                  "this Idempotency-Key was used for a different order");
  }
  Placed again = decided;
  again.replayed = true;
  return again;
}

}  // namespace

Result<Intake::Job> Intake::validate(const PlaceRequest& req) const {
  if (req.idempotency_key.empty()) {
    return Status(Code::missing_idempotency_key, "POST /v1/orders needs an Idempotency-Key header");
  }
  std::vector<FieldError> errors;
  if (!is_valid_idempotency_key(req.idempotency_key))
    errors.push_back({"Idempotency-Key",
                      fmt::format("must be 1–{} printable ASCII characters", kMaxIdempotencyKey)});
  if (req.customer_id < 1) errors.push_back({"customer_id", "must be an integer from 1 to 2^63-1"});
  auto cart = normalize_cart(req.warehouse_id, req.lines);
  if (!cart.ok())
    errors.insert(errors.end(), cart.status().fields().begin(), cart.status().fields().end());
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  return Job{&req, std::move(*cart)};
}

Result<Placed> Intake::finish(Answer answer, bool key_shared) {
  const Status& st = answer.placed.status();
  if (!answer.placed.ok() && st.code() == Code::busy && (answer.waiting_on_key || key_shared)) {
    outcomes_.add(OrderOutcome::in_progress);
    return Status(Code::request_in_progress,
                  "another request with this Idempotency-Key is still being processed; retry it");
  }
  // Here every placement passes exactly once, alone or batched: the one place to count it.
  if (answer.placed.ok()) {
    outcomes_.add(answer.placed->replayed       ? OrderOutcome::replayed
                  : answer.placed->out_of_stock ? OrderOutcome::out_of_stock
                                                : OrderOutcome::placed);
  } else {
    outcomes_.add(st.code() == Code::busy ? OrderOutcome::busy : OrderOutcome::refused);
  }
  return std::move(answer.placed);
}

CombinerStats Intake::combining() const { return combiner_->stats(); }

void Intake::record_phases(std::size_t lines, const store::CallTimes& spent,
                           store::Clock::duration total) {
  const std::size_t size = lines <= 1 ? 0 : lines <= 5 ? 1 : lines <= 10 ? 2 : 3;
  const auto waiting = std::min(spent.waiting, total);
  const auto trips = std::min(spent.in_calls - spent.waiting, total - waiting);
  phases_[0][size].observe(waiting);
  phases_[1][size].observe(trips);
  phases_[2][size].observe(total - waiting - trips);
}

Result<Placed> Intake::place(const PlaceRequest& req, store::Clock::time_point deadline) {
  const auto started = store::Clock::now();
  OO_ASSIGN_OR_RETURN(Job job, validate(req));
  const KeyOf key{req.customer_id, req.idempotency_key};
  // Read before the request runs: a connection found dead while it runs makes its own
  // decision doubtful too.
  const std::uint64_t generation = db_.metrics().connections_dropped.load();
  const auto entered = recent_.enter(key, generation, deadline);
  using Kind = decltype(entered)::Kind;
  if (entered.kind == Kind::remembered)
    return finish(Answer{replay(entered.decision->cart, entered.decision->placed, job.cart), false},
                  false);
  if (entered.kind == Kind::gave_up)  // the request with its key here is still running
    return finish(Answer{Status(Code::busy, "waited on its key"), true}, true);
  std::optional<Answer> answer;
  if (combines()) {
    // Correctness never depends on the lane (onceorder/cart_lanes.hpp). Where the database
    // has one writer (SQLite), every placement waits for every other: one lane.
    std::optional<CartLanes::Entry> entry;
    if (!store_->one_writer()) entry.emplace(cart_lanes_.enter(job.cart));
    const std::string_view lane = entry ? std::string_view(entry->lane()) : std::string_view();
    job.lane = lane;
    job.collided = entry && entry->collided();
    store::CallTimes spent;
    answer = combiner_->run(lane, &job, deadline);
    if (answer) spent += answer->spent;
    if (answer && answer->held_back) lock_waits_.fetch_add(1, std::memory_order_relaxed);
    // Handed back for a held row, a request queues in its lane again before it runs alone:
    // the holder is usually a placement that ends within milliseconds, while a request that
    // runs alone holds its first rows as it waits for the rest, so that the lane's next batch
    // hands back every cart that touches them in turn, a convoy of lone placements
    // (docs/BENCHMARKS.md, "Tails: wrk's p99 and the server's").
    for (int again = 0; again < kLaneRetries && answer && answer->held_back; ++again) {
      job.opened = 0;  // the opening sent for it, if any, was its batch's
      answer = combiner_->run(lane, &job, deadline);
      if (answer) spent += answer->spent;
    }
    if (answer && answer->held_back) ran_alone_.fetch_add(1, std::memory_order_relaxed);
    if (answer && answer->alone) {
      answer = place_one(job, deadline);
      spent += answer->spent;
    }
    if (answer) answer->spent = spent;
    if (!answer) {
      answer.emplace(Answer{Status(Code::busy,
                                   "the request waited for its stock until its deadline; nothing "
                                   "was written, retry the request"),
                            false});
    }
  } else {
    answer.emplace(place_one(job, deadline));
  }
  record_phases(job.cart.lines.size(), answer->spent, store::Clock::now() - started);
  // Only its own decision: a replay's receipt may be older than the memory's time.
  std::optional<Remembered> decision;
  if (options_.replay_memory.count() > 0 && answer->placed.ok() && !answer->placed->replayed)
    decision.emplace(Remembered{job.cart, *answer->placed});
  return finish(std::move(*answer), recent_.leave(key, entered, std::move(decision)));
}

Intake::Answer Intake::place_one(const Job& job, store::Clock::time_point deadline) {
  const PlaceRequest& req = *job.req;
  const Cart& cart = job.cart;
  auto first_id = next_order_id();
  if (!first_id.ok()) return Answer{first_id.status(), false};
  std::int64_t order_id = *first_id;
  if (options_.fault_order_id)
    if (auto planted = options_.fault_order_id()) order_id = *planted;
  const Then last = options_.fault_after_deduction ? Then::stay : Then::commit;
  bool waiting_on_key = false;
  bool id_taken = false;
  // The cart's stock rows as this placement leaves them: what a lane's next batch decided
  // ahead expects of them (remember_rows), which it would otherwise find moved.
  RowsByKey left;
  const bool remember = store_->decides_ahead() && !options_.fault_after_deduction;
  const auto attempt = [&](Connection& c) -> Result<Placed> {
    left.clear();
    // 1. The receipt first: a concurrent request with this key waits here.
    auto inserted = store_->insert_receipt(c, req.customer_id, req.idempotency_key, cart);
    waiting_on_key = !inserted.ok() && inserted.status().code() == Code::lock_timeout;
    if (!inserted.ok()) return inserted.status();
    if (!*inserted) return replay(*store_, c, req, cart);
    // 2. Every stock row of the cart, locked in (warehouse, sku) order, before deciding.
    OO_ASSIGN_OR_RETURN(auto rows, store_->lock_stock(c, cart));
    if (rows.size() != cart.lines.size()) return unknown_skus(cart, rows);
    // 3. The decision, on data read under lock.
    std::vector<Shortage> shortages = shortages_of(cart, rows);
    if (!shortages.empty()) {
      if (remember)
        for (const store::StockRow& row : rows) left[{cart.warehouse_id, row.sku_id}] = row;
      OO_RETURN_IF_ERROR(
          store_->record_out_of_stock(c, req.customer_id, req.idempotency_key, shortages, last));
      return Placed{true, {}, std::move(shortages), false};
    }
    OO_ASSIGN_OR_RETURN(Order order, make_order(order_id, req, cart, rows));
    auto created = store_->place(c, order, req.idempotency_key, last);
    id_taken = created.status().code() == Code::unique_violation;
    OO_ASSIGN_OR_RETURN(order.created_at, std::move(created));
    for (std::size_t i = 0; remember && i < rows.size(); ++i) {  // both ascending sku
      store::StockRow row = rows[i];
      row.available -= cart.lines[i].quantity;
      left[{cart.warehouse_id, row.sku_id}] = row;
    }
    if (options_.fault_after_deduction) OO_RETURN_IF_ERROR(options_.fault_after_deduction());
    return Placed{false, std::move(order), {}, false};
  };
  store::CallTimes spent;
  store::TxOptions tx{deadline, options_.max_attempts, store::TxMode::write};
  tx.spent = &spent;
  auto placed = store::transact<Placed>(db_, tx, attempt);
  // Seed 002's backstop: the order id (and so its number) existed already — two processes
  // on one node id, or a clock that went back. Never a 500: the whole placement again with
  // an id from another node (taken outside the transaction: SQLite has one writer), and an
  // alarm in the log and the metrics.
  for (int retry = 0; retry < 2 && id_taken; ++retry) {
    id_collisions_.fetch_add(1);
    spdlog::error(
        "msg=\"order id collision: the unique order number backstop fired; retrying with a "
        "fresh id\" order_id={} error=\"{}\"",
        order_id, placed.status().message());
    auto fresh = order_id_from_another_node();
    if (!fresh.ok()) return Answer{fresh.status(), waiting_on_key, false, false, spent};
    order_id = *fresh;
    id_taken = false;
    placed = store::transact<Placed>(db_, tx, attempt);
  }
  if (placed.ok()) remember_rows(left);
  return Answer{std::move(placed), waiting_on_key, false, false, spent};
}

std::vector<Result<Placed>> Intake::place_batch(std::span<const PlaceRequest> reqs,
                                                store::Clock::time_point deadline) {
  std::vector<Result<Placed>> out(reqs.size(), Status(Code::internal, "not placed"));
  std::vector<Job> jobs;
  std::vector<std::size_t> at;  // the request each job is
  jobs.reserve(reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    auto job = validate(reqs[i]);
    if (!job.ok()) {
      out[i] = job.status();
      continue;
    }
    jobs.push_back(std::move(*job));
    at.push_back(i);
  }
  // Counted as running, neither answered from memory nor waiting (two requests of this
  // batch may share a key), nor remembered.
  std::vector<const Job*> ptrs;
  std::vector<ReplayMemory::Entered> entered;
  for (const Job& j : jobs) {
    entered.push_back(recent_.run_now({j.req->customer_id, j.req->idempotency_key}));
    ptrs.push_back(&j);
  }
  std::vector<Answer> answers;
  if (combines()) {
    answers = place_jobs(ptrs, deadline);
    for (std::size_t k = 0; k < answers.size(); ++k)
      if (answers[k].alone) answers[k] = place_one(*ptrs[k], deadline);
  } else {
    for (const Job* j : ptrs) answers.push_back(place_one(*j, deadline));
  }
  for (std::size_t k = 0; k < jobs.size(); ++k)
    out[at[k]] = finish(
        std::move(answers[k]),
        recent_.leave({jobs[k].req->customer_id, jobs[k].req->idempotency_key}, entered[k], {}));
  return out;
}

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
    // find them held (docs/BENCHMARKS.md, "Opening the next batch"). They are taken at the
    // end of this run, as ever.
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

std::vector<Intake::Answer> Intake::place_jobs(std::span<const Job* const> jobs,
                                               store::Clock::time_point deadline) {
  const std::size_t n = jobs.size();
  std::vector<Answer> out;
  // One id per request, as a lone placement takes one whether or not it places; taken
  // outside the transaction (SQLite has one writer).
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < n; ++i) {
    auto id = next_order_id();
    if (!id.ok()) {
      for (std::size_t k = 0; k < n; ++k) out.push_back(Answer{id.status(), false});
      return out;
    }
    ids.push_back(*id);
  }
  // Requests refused by their own cart (unknown_sku, a total that does not fit) store
  // nothing, not even their receipt: once one is found, the batch runs again without it.
  // Only the first refusal in arrival order is kept per run: the decisions before it are
  // final, those after it were made as if it had taken its receipt (a later request with
  // its key followed it) and are not (a total is only checked when the stock suffices).
  std::vector<std::optional<Status>> refused(n);
  bool more_refused = false;
  // A batch never waits for a stock row (SKIP LOCKED): the requests whose new carts touch a
  // row another transaction holds (with every request of their keys) leave the batch, which
  // runs again without them, and each runs alone on its own thread, waiting for its own
  // rows (Answer::alone). The batch's other members need not wait for a row they never use.
  std::vector<bool> held_back(n, false);
  bool more_held = false;
  std::vector<bool> waiting(n, false);
  bool receipts_one_by_one = false;
  // Decided ahead (one round trip: no receipts and stock round trip before the write) where
  // every stock row the batch needs is known as this process's placements last left it; after
  // a miss (a row moved, a key stored already, a refusal) the batch runs again the usual way.
  bool missed_ahead = false;
  bool missed_now = false;
  RowsByKey settled;  // the rows as the committed attempt left them

  using Key = ReceiptKey;
  // This batch's successors in its lane, and the opening sent for them behind this batch's
  // COMMIT (0: none) by the attempt that committed.
  std::vector<const Job*> next;
  std::uint64_t opened_next = 0;
  const auto attempt = [&](Connection& c) -> Result<std::vector<Result<Placed>>> {
    more_refused = false;
    more_held = false;
    missed_now = false;
    opened_next = 0;
    std::fill(waiting.begin(), waiting.end(), false);
    OO_RETURN_IF_ERROR(store_->plan_for_batch(c));
    std::vector<std::optional<Result<Placed>>> decided(n);
    // 1. Receipts. Each key's first request in the batch takes part (`candidate`); a later
    // one with that key follows it (`first`) if it inserted the receipt, else replays too.
    std::vector<std::optional<std::size_t>> first(n);
    std::vector<bool> fresh(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      if (refused[i]) decided[i].emplace(*refused[i]);
      if (held_back[i]) decided[i].emplace(Status(Code::busy, "handed back to run alone"));
    }
    FirstRoundTrip trip = first_round_trip(
        jobs, [&](std::size_t i) { return refused[i].has_value() || held_back[i]; });
    const std::vector<std::size_t>& candidates = trip.candidates;
    const std::map<Key, std::size_t>& first_use = trip.first_use;
    std::map<std::int64_t, std::set<std::int64_t>>& skus = trip.skus;
    RowsByKey left;
    std::set<std::pair<std::int64_t, std::int64_t>> held;  // rows another transaction holds
    std::size_t taking = 0;  // requests taking part: neither refused nor handed back
    for (std::size_t i = 0; i < n; ++i) taking += !refused[i] && !held_back[i];
    // Decided ahead only with every key once (a key's later request follows what its first
    // one's receipt says) and every row known.
    std::vector<store::StockRow> known;  // ascending sku
    const bool ahead = !missed_ahead && jobs.front()->opened == 0 && store_->decides_ahead() &&
                       skus.size() == 1 && candidates.size() == taking &&
                       known_rows(skus.begin()->first, skus.begin()->second, known);
    if (ahead) {
      for (std::size_t i : candidates) fresh[i] = true;
      for (const store::StockRow& row : known) left[{skus.begin()->first, row.sku_id}] = row;
    }
    const auto take = [&](std::int64_t warehouse, const store::FreeStock& stock) {
      for (const auto& row : stock.locked) left[{warehouse, row.sku_id}] = row;
      for (std::int64_t sku : stock.held) held.insert({warehouse, sku});
    };
    // A batch of one warehouse (a lane's) locks its stock rows in its receipts' round trip.
    // After a timeout on a held key, one statement per receipt: the request that waited
    // (request_in_progress) is then known, not guessed.
    const bool with_stock = !receipts_one_by_one && skus.size() == 1;
    const auto insert_receipts =
        [&](std::span<const store::NewOrderReceipt> rows) -> Result<std::vector<bool>> {
      if (!with_stock) return store_->insert_receipts(c, rows);
      const auto& [warehouse, ids_of] = *skus.begin();
      OO_ASSIGN_OR_RETURN(auto both,
                          store_->insert_receipts_and_lock(c, rows, stock_of(warehouse, ids_of)));
      take(warehouse, both.stock);
      return std::move(both.fresh);
    };
    const std::size_t per_statement = receipts_one_by_one ? 1 : candidates.size();
    for (std::size_t from = 0; !ahead && from < candidates.size(); from += per_statement) {
      const std::size_t to = std::min(candidates.size(), from + per_statement);
      const std::vector<store::NewOrderReceipt> rows =
          receipts_of(jobs, std::span<const std::size_t>(candidates).subspan(from, to - from));
      auto inserted = insert_receipts(rows);
      if (!inserted.ok()) {
        if (inserted.status().code() == Code::lock_timeout) {
          for (std::size_t k = from; k < to; ++k) waiting[candidates[k]] = true;
          receipts_one_by_one = true;
        }
        return inserted.status();
      }
      for (std::size_t k = from; k < to; ++k) fresh[candidates[k]] = (*inserted)[k - from];
    }
    // Replays: every request with a key stored before the batch, read in one statement.
    std::vector<std::size_t> replaying;
    std::vector<store::ReceiptKey> stored_keys;
    std::map<Key, std::size_t> stored_at;
    for (std::size_t i = 0; i < n; ++i) {
      if (refused[i] || held_back[i]) continue;
      const PlaceRequest& r = *jobs[i]->req;
      const Key key{r.customer_id, r.idempotency_key};
      const std::size_t by = first_use.at(key);
      if (fresh[by]) {
        if (by != i) first[i] = by;
        continue;
      }
      replaying.push_back(i);
      if (stored_at.emplace(key, stored_keys.size()).second)
        stored_keys.push_back({r.customer_id, r.idempotency_key});
    }
    if (!replaying.empty()) {
      OO_ASSIGN_OR_RETURN(auto stored, store_->find_receipts(c, stored_keys));
      for (std::size_t i : replaying) {
        const PlaceRequest& r = *jobs[i]->req;
        auto& receipt = stored.at(stored_at.at(Key{r.customer_id, r.idempotency_key}));
        auto replayed = replay(receipt, jobs[i]->cart);
        if (!replayed.ok() && replayed.status().code() != Code::idempotency_key_reused)
          return replayed.status();
        decided[i].emplace(std::move(replayed));
      }
    }
    // 2. The stock rows of every new cart, locked once without waiting, unless they came
    // with the receipts.
    if (!ahead && !with_stock) {
      skus.clear();
      for (std::size_t i = 0; i < n; ++i)
        if (fresh[i])
          for (const CartLine& l : jobs[i]->cart.lines)
            skus[jobs[i]->cart.warehouse_id].insert(l.sku_id);
      for (const auto& [warehouse, ids_of] : skus) {
        OO_ASSIGN_OR_RETURN(auto free, store_->lock_free_stock(c, stock_of(warehouse, ids_of)));
        take(warehouse, free);
      }
    }
    // A new cart that touches a held row leaves the batch with its key's other requests.
    std::set<Key> leaving;
    for (std::size_t i = 0; i < n; ++i) {
      if (!fresh[i]) continue;
      const Cart& cart = jobs[i]->cart;
      for (const CartLine& l : cart.lines)
        if (held.contains({cart.warehouse_id, l.sku_id}))
          leaving.insert({jobs[i]->req->customer_id, jobs[i]->req->idempotency_key});
    }
    if (!leaving.empty()) {
      for (std::size_t i = 0; i < n; ++i)
        if (!refused[i] && !held_back[i] &&
            leaving.contains({jobs[i]->req->customer_id, jobs[i]->req->idempotency_key})) {
          held_back[i] = true;
          held_back_.fetch_add(1, std::memory_order_relaxed);
        }
      more_held = true;
      // Not a retryable code: transact must roll back and return (the receipts of the
      // requests handed back go with it), not pause and retry.
      return Status(Code::invalid_request, "run again without the carts of held rows");
    }
    // 3. Every decision, in arrival order, on what the earlier ones left; nothing written
    // yet, so that a refused request can still leave without a trace.
    std::vector<std::optional<Order>> orders(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!fresh[i]) continue;
      const Cart& cart = jobs[i]->cart;
      std::vector<store::StockRow> rows;
      for (const CartLine& l : cart.lines)
        if (auto it = left.find({cart.warehouse_id, l.sku_id}); it != left.end())
          rows.push_back(it->second);
      if (rows.size() != cart.lines.size() && ahead) {  // every row was known: never
        missed_now = true;
        return Status(Code::invalid_request, "decide again on the locked rows");
      }
      if (rows.size() != cart.lines.size()) {
        refused[i] = unknown_skus(cart, rows);
        more_refused = true;
        break;
      }
      std::vector<Shortage> shortages = shortages_of(cart, rows);
      if (!shortages.empty()) {
        decided[i].emplace(Placed{true, {}, std::move(shortages), false});
        continue;
      }
      auto order = make_order(ids[i], *jobs[i]->req, cart, rows);
      if (!order.ok() && ahead) {
        // A refusal (a total that overflows) stands only on locked rows: nothing checks the
        // remembered prices it was made on unless something is written.
        missed_now = true;
        return Status(Code::invalid_request, "decide again on the locked rows");
      }
      if (!order.ok()) {
        refused[i] = order.status();
        more_refused = true;
        break;
      }
      for (const CartLine& l : cart.lines)
        left[{cart.warehouse_id, l.sku_id}].available -= l.quantity;
      orders[i].emplace(std::move(*order));
    }
    // Not a retryable code: transact must roll back and return, not pause and retry.
    if (more_refused) return Status(Code::invalid_request, "run again without the refused");
    // 4. Every write in one statement, which carries the COMMIT.
    std::vector<store::BatchOutcome> writes;
    std::vector<std::size_t> written;
    for (std::size_t i = 0; i < n; ++i) {
      if (!fresh[i]) continue;
      const PlaceRequest& r = *jobs[i]->req;
      if (orders[i]) {
        writes.push_back({r.customer_id, r.idempotency_key, &*orders[i], nullptr, &jobs[i]->cart});
      } else {
        writes.push_back({r.customer_id, r.idempotency_key, nullptr, &decided[i]->value().shortages,
                          &jobs[i]->cart});
      }
      written.push_back(i);
    }
    if (!writes.empty()) {
      if (jobs.front()->lane) open_next_batch(c, *jobs.front()->lane, next);
      std::optional<store::DecidedOn> decided_on;
      if (ahead) decided_on.emplace(store::DecidedOn{skus.begin()->first, known});
      auto created =
          store_->write_outcomes(c, writes, Then::commit, decided_on ? &*decided_on : nullptr);
      if (ahead && created.status().code() == Code::retry_transaction) {
        missed_now = true;
        // Not a retryable code: transact must roll back and return, not pause and retry.
        return Status(Code::invalid_request, "decide again on the locked rows");
      }
      if (!created.ok()) return created.status();
      if (ahead) decided_ahead_.fetch_add(1, std::memory_order_relaxed);
      opened_next = c.opened_for();
      for (std::size_t k = 0; k < written.size(); ++k) {
        const std::size_t i = written[k];
        if (!orders[i]) continue;
        orders[i]->created_at = std::move((*created)[k]);
        decided[i].emplace(Placed{false, std::move(*orders[i]), {}, false});
      }
    }
    // 5. A key inserted earlier in the batch: that request's first decision, replayed.
    for (std::size_t i = 0; i < n; ++i)
      if (first[i])
        decided[i].emplace(
            replay(jobs[*first[i]]->cart, decided[*first[i]]->value(), jobs[i]->cart));
    settled = std::move(left);
    std::vector<Result<Placed>> answers;
    for (auto& d : decided) answers.push_back(std::move(*d));
    return answers;
  };
  store::CallTimes spent;
  store::TxOptions tx{deadline, options_.max_attempts, store::TxMode::write};
  tx.spent = &spent;
  tx.opened = jobs.front()->opened;  // sent behind the batch before this one, if any
  auto decided = store::transact<std::vector<Result<Placed>>>(db_, tx, attempt);
  tx.opened = 0;
  // A refusal is not contention: run again (each time with one refused request more, so
  // at most n times), not counted against the transaction's attempts.
  // So is a request handed back for a held row: each run has one request fewer.
  for (std::size_t rerun = 0;
       rerun <= n && !decided.ok() && (more_refused || more_held || (missed_now && !missed_ahead));
       ++rerun) {
    if (missed_now) {
      missed_ahead = true;
      decided_ahead_missed_.fetch_add(1, std::memory_order_relaxed);
    }
    decided = store::transact<std::vector<Result<Placed>>>(db_, tx, attempt);
  }
  if (decided.ok()) remember_rows(settled);
  // Committed: the next batch finds its first round trip's answer waiting.
  if (decided.ok() && opened_next != 0) next.front()->opened = opened_next;
  if (decided.ok()) {
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(
          Answer{std::move((*decided)[i]), waiting[i], held_back[i], held_back[i], spent});
    return out;
  }
  const bool busy = decided.status().code() == Code::busy;
  for (std::size_t i = 0; i < n; ++i) {
    // Busy stays busy (each alone would have met the same contention); anything else may be
    // one request's own trouble (an order id taken, a constraint): each runs alone.
    out.push_back(busy && !held_back[i]
                      ? Answer{decided.status(), waiting[i], false, false, spent}
                      : Answer{decided.status(), false, true, held_back[i], spent});
  }
  return out;
}

Result<Order> Intake::get_order(std::int64_t order_id, store::Clock::time_point deadline) {
  return store::transact<Order>(
      db_, {deadline, 3, store::TxMode::read}, [&](Connection& c) -> Result<Order> {
        OO_ASSIGN_OR_RETURN(auto order, store_->get_order(c, order_id));
        if (!order)
          return Status(Code::not_found, fmt::format("order {} does not exist", order_id));
        return std::move(*order);
      });
}

Result<Order> Intake::cancel(std::int64_t order_id, store::Clock::time_point deadline) {
  return store::transact<Order>(
      db_, {deadline, options_.max_attempts, store::TxMode::write},
      [&](Connection& c) -> Result<Order> {
        OO_ASSIGN_OR_RETURN(auto head, store_->lock_order(c, order_id));
        if (!head) return Status(Code::not_found, fmt::format("order {} does not exist", order_id));
        if (head->status == "placed") {
          const std::string site = warehouse_site(head->warehouse_id);
          const std::string_view no = head->order_no;
          // Decide on locked rows: the source orders first (a worker producing one holds it
          // shared until it commits, and item creation shares it too), then look for
          // production orders with a fresh statement that sees whatever committed meanwhile.
          OO_RETURN_IF_ERROR(store_->lock_sources(c, site, no).status());
          OO_ASSIGN_OR_RETURN(auto made, store_->count_production(c, site, no));
          if (made > 0) return in_production(order_id);
          // The database refuses to cancel a source order that has a production order (a
          // foreign key on PostgreSQL, a trigger on SQLite): the same answer if it ever fires.
          Status cancelled = store_->cancel_sources(c, site, no);
          if (cancelled.code() == Code::reference_violation) return in_production(order_id);
          OO_RETURN_IF_ERROR(cancelled);
          OO_RETURN_IF_ERROR(store_->abort_items(c, site, no).status());
          OO_ASSIGN_OR_RETURN(auto released, store_->lock_reserved_stock(c, order_id, *head));
          for (const auto& r : released) {
            OO_RETURN_IF_ERROR(store_->restore_stock(c, r));
            OO_RETURN_IF_ERROR(
                stock_->add_ledger_entry(c, {r.warehouse_id, r.sku_id, r.quantity, "release",
                                             "order cancelled", order_id, r.line_no}));
          }
          OO_RETURN_IF_ERROR(store_->mark_cancelled(c, order_id));
        }
        OO_ASSIGN_OR_RETURN(auto order, store_->get_order(c, order_id));
        return std::move(*order);
      });
}

Result<Intake::PutSku> Intake::put_sku(std::int64_t warehouse_id, std::int64_t sku_id,
                                       std::int64_t price_cents,
                                       std::optional<std::int64_t> available,
                                       store::Clock::time_point deadline) {
  Status ids = check_ids(warehouse_id, sku_id);
  std::vector<FieldError> errors = ids.fields();
  if (price_cents < 0 || price_cents > kMaxPriceCents)
    errors.push_back(
        {"price_cents", fmt::format("must be an integer from 0 to 10^{}", kStockBoundPower)});
  if (available && (*available < 0 || *available > kMaxStock))
    errors.push_back(
        {"available", fmt::format("must be an integer from 0 to 10^{}", kStockBoundPower)});
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  return store::transact<PutSku>(
      db_, {deadline, options_.max_attempts, store::TxMode::write},
      [&](Connection& c) -> Result<PutSku> {
        const std::int64_t initial = available.value_or(0);
        OO_ASSIGN_OR_RETURN(bool created,
                            stock_->insert_sku(c, warehouse_id, sku_id, initial, price_cents));
        if (created) {
          OO_RETURN_IF_ERROR(stock_->add_ledger_entry(c, {warehouse_id, sku_id, initial, "initial",
                                                          "created", std::nullopt, std::nullopt}));
        } else {
          if (available) {
            return Status(
                Code::use_adjustment,
                "the SKU exists: change its stock with POST …/adjustments, not `available`");
          }
          OO_RETURN_IF_ERROR(stock_->set_price(c, warehouse_id, sku_id, price_cents));
        }
        OO_ASSIGN_OR_RETURN(auto sku, stock_->get_sku(c, warehouse_id, sku_id));
        if (!sku) return Status(Code::internal, "a stock row vanished inside its transaction");
        return PutSku{std::move(*sku), created};
      });
}

Result<Sku> Intake::adjust(std::int64_t warehouse_id, std::int64_t sku_id, std::int64_t delta,
                           const std::string& reason, store::Clock::time_point deadline) {
  OO_ASSIGN_OR_RETURN(
      auto adjusted,
      adjust(AdjustRequest{warehouse_id, sku_id, delta, reason, std::nullopt}, deadline));
  return std::move(adjusted.sku);
}

Result<Adjusted> Intake::adjust(const AdjustRequest& req, store::Clock::time_point deadline) {
  const std::int64_t warehouse_id = req.warehouse_id;
  const std::int64_t sku_id = req.sku_id;
  const std::int64_t delta = req.delta;
  const std::string& reason = req.reason;
  Status ids = check_ids(warehouse_id, sku_id);
  std::vector<FieldError> errors = ids.fields();
  if (req.idempotency_key && !is_valid_idempotency_key(*req.idempotency_key))
    errors.push_back({"Idempotency-Key",
                      fmt::format("must be 1–{} printable ASCII characters", kMaxIdempotencyKey)});
  if (delta == 0 || delta < -kMaxStock || delta > kMaxStock)
    errors.push_back(
        {"delta", fmt::format("must be a non-zero integer within ±10^{}", kStockBoundPower)});
  if (reason.empty() || reason.size() > 200)
    errors.push_back({"reason", "must be 1–200 characters"});
  else if (auto problem = text_problem(reason))
    errors.push_back({"reason", std::move(*problem)});
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  // The key's home is the SKU it adjusts: the receipt lives beside the stock row it guards
  // (one shard, the row's own lock order: receipt first, as a placement does).
  std::optional<store::RequestKey> key;
  std::string request;
  if (req.idempotency_key) {
    key = store::RequestKey{store::RequestRoute::stock_adjustment,
                            fmt::format("{}/{}", warehouse_id, sku_id), *req.idempotency_key};
    request = fmt::format("{{\"delta\":{},\"reason\":", delta);
    append_json_string(request, reason);
    request += '}';
  }
  store::ReceiptsStore receipts(db_.dialect());
  bool waited_on_key = false;
  auto adjusted = store::transact<Adjusted>(
      db_, {deadline, options_.max_attempts, store::TxMode::write},
      [&](Connection& c) -> Result<Adjusted> {
        if (key) {
          auto stored = receipts.begin(c, *key, request);
          waited_on_key = !stored.ok() && stored.status().code() == Code::lock_timeout;
          if (!stored.ok()) return stored.status();
          if (*stored) {
            OO_ASSIGN_OR_RETURN(Sku sku, parse_adjusted_answer(**stored, warehouse_id, sku_id));
            return Adjusted{std::move(sku), true};
          }
        }
        OO_ASSIGN_OR_RETURN(auto locked, stock_->lock_sku(c, warehouse_id, sku_id));
        if (!locked) {
          return Status(Code::not_found, fmt::format("sku {} has no stock row in warehouse {}",
                                                     sku_id, warehouse_id));
        }
        const std::int64_t was = *locked;
        // |delta| <= 10^12 and 0 <= available: the sum cannot wrap; the bound keeps it so.
        if (delta > 0 && was + delta > kMaxStock) {
          return Status(Code::invalid_request, "invalid request",
                        {FieldError{"delta", fmt::format("would make available {}, more than {}",
                                                         was + delta, kMaxStock)}});
        }
        if (was + delta < 0) {
          return Status(
              Code::insufficient_stock,
              fmt::format("available is {}; a delta of {} would make it negative", was, delta));
        }
        OO_RETURN_IF_ERROR(stock_->adjust(c, warehouse_id, sku_id, delta));
        OO_RETURN_IF_ERROR(stock_->add_ledger_entry(
            c, {warehouse_id, sku_id, delta, "adjustment", reason, std::nullopt, std::nullopt}));
        OO_ASSIGN_OR_RETURN(auto sku, stock_->get_sku(c, warehouse_id, sku_id));
        if (!sku) return Status(Code::internal, "a stock row vanished inside its transaction");
        if (key) {
          OO_RETURN_IF_ERROR(receipts.answer(
              c, *key, fmt::format("{} {} {}", sku->available, sku->reserved, sku->price_cents)));
        }
        return Adjusted{std::move(*sku), false};
      });
  if (!adjusted.ok()) return in_progress_if_waited(adjusted.status(), waited_on_key);
  return adjusted;
}

Result<Sku> Intake::get_sku(std::int64_t warehouse_id, std::int64_t sku_id,
                            store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_ids(warehouse_id, sku_id));
  return store::transact<Sku>(
      db_, {deadline, 3, store::TxMode::read}, [&](Connection& c) -> Result<Sku> {
        OO_ASSIGN_OR_RETURN(auto sku, stock_->get_sku(c, warehouse_id, sku_id));
        if (!sku) {
          return Status(Code::not_found, fmt::format("sku {} has no stock row in warehouse {}",
                                                     sku_id, warehouse_id));
        }
        return std::move(*sku);
      });
}

}  // namespace onceorder
