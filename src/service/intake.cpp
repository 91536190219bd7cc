#include "onceorder/service/intake.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "onceorder/core/invariant.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/core/process_identity.hpp"
#include "onceorder/service/numbering.hpp"
#include "service/placement.hpp"
#include "store/intake_store.hpp"
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

constexpr std::int64_t kMaxTotalCents = std::numeric_limits<std::int64_t>::max();

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

}  // namespace

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

namespace placement {

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

// A lone placement's replay: its key's receipt, read.
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

Result<Placed> replay(const Cart& decided_for, const Placed& decided, const Cart& cart) {
  if (decided_for.warehouse_id != cart.warehouse_id || decided_for.text() != cart.text()) {
    return Status(Code::idempotency_key_reused,
                  "this Idempotency-Key was used for a different order");
  }
  Placed again = decided;
  again.replayed = true;
  return again;
}

}  // namespace placement

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
  if (entered.kind == Kind::remembered) {
    OO_INVARIANT(entered.decision.has_value(), "a remembered answer without its decision");
    return finish(
        Answer{placement::replay(entered.decision->cart, entered.decision->placed, job.cart),
               false},
        false);
  }
  if (entered.kind == Kind::gave_up)  // the request with its key here is still running
    return finish(Answer{Status(Code::busy, "waited on its key"), true}, true);
  std::optional<Answer> answer;
  try {
    answer.emplace(combines() ? place_in_lane(job, deadline) : place_one(job, deadline));
  } catch (...) {
    // A broken invariant: the key leaves as after any failure, with no decision, so that
    // the next request with it is not left waiting on this one.
    (void)recent_.leave(key, entered, std::nullopt);
    throw;
  }
  record_phases(job.cart.lines.size(), answer->spent, store::Clock::now() - started);
  // Only its own decision: a replay's receipt may be older than the memory's time.
  std::optional<Remembered> decision;
  if (options_.replay_memory.count() > 0 && answer->placed.ok() && !answer->placed->replayed)
    decision.emplace(Remembered{job.cart, *answer->placed});
  return finish(std::move(*answer), recent_.leave(key, entered, std::move(decision)));
}

Intake::Answer Intake::place_in_lane(Job& job, store::Clock::time_point deadline) {
  // Correctness never depends on the lane (onceorder/core/cart_lanes.hpp). Where the database
  // has one writer (SQLite), every placement waits for every other: one lane.
  std::optional<CartLanes::Entry> entry;
  if (!store_->one_writer()) entry.emplace(cart_lanes_.enter(job.cart));
  const std::string_view lane = entry ? std::string_view(entry->lane()) : std::string_view();
  job.lane = lane;
  job.collided = entry && entry->collided();
  store::CallTimes spent;
  std::optional<Answer> answer = combiner_->run(lane, &job, deadline);
  if (answer) spent += answer->spent;
  if (answer && answer->held_back) lock_waits_.fetch_add(1, std::memory_order_relaxed);
  // Handed back for a held row, a request queues in its lane again before it runs alone:
  // the holder is usually a placement that ends within milliseconds, while a request that
  // runs alone holds its first rows as it waits for the rest, so that the lane's next batch
  // hands back every cart that touches them in turn, a convoy of lone placements.
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
  if (!answer) {
    return Answer{Status(Code::busy,
                         "the request waited for its stock until its deadline; nothing "
                         "was written, retry the request"),
                  false};
  }
  answer->spent = spent;
  return std::move(*answer);
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
    if (!*inserted) return placement::replay(*store_, c, req, cart);
    // 2. Every stock row of the cart, locked in (warehouse, sku) order, before deciding.
    OO_ASSIGN_OR_RETURN(auto rows, store_->lock_stock(c, cart));
    if (rows.size() != cart.lines.size()) return placement::unknown_skus(cart, rows);
    // 3. The decision, on data read under lock.
    std::vector<Shortage> shortages = placement::shortages_of(cart, rows);
    if (!shortages.empty()) {
      if (remember)
        for (const store::StockRow& row : rows) left[{cart.warehouse_id, row.sku_id}] = row;
      OO_RETURN_IF_ERROR(
          store_->record_out_of_stock(c, req.customer_id, req.idempotency_key, shortages, last));
      return Placed{true, {}, std::move(shortages), false};
    }
    OO_ASSIGN_OR_RETURN(Order order, placement::make_order(order_id, req, cart, rows));
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

}  // namespace onceorder
