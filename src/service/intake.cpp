#include "onceorder/intake.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <random>

#include "onceorder/numbering.hpp"
#include "onceorder/text.hpp"
#include "store/intake_store.hpp"

namespace onceorder {
namespace {

using store::Connection;
using store::Then;

std::string shortages_text(const std::vector<Shortage>& s) {
  std::string out;
  for (const auto& x : s) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}:{}", x.sku_id, x.requested, x.available);
  }
  return out;
}

std::vector<Shortage> parse_shortages(const std::string& text) {
  std::vector<Shortage> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    Shortage s;
    if (std::sscanf(text.substr(pos, end - pos).c_str(), "%ld:%ld:%ld", &s.sku_id, &s.requested,
                    &s.available) == 3) {
      out.push_back(s);
    }
    pos = end + 1;
  }
  return out;
}

std::string make_holder() {
  char host[128] = {0};
  gethostname(host, sizeof(host) - 1);
  return fmt::format("{}:{}:{:08x}", host, getpid(),
                     static_cast<std::uint32_t>(std::mt19937(std::random_device{}())()));
}

Status in_production(std::int64_t order_id) {
  return Status(
      Code::in_production,
      fmt::format("order {} already has a production order; it cannot be cancelled", order_id));
}

// API.md "Stock bounds": prices, stock and one adjustment are at most 10^12.
constexpr std::int64_t kMaxPriceCents = 1'000'000'000'000;
constexpr std::int64_t kMaxStock = 1'000'000'000'000;
constexpr std::int64_t kMaxTotalCents = std::numeric_limits<std::int64_t>::max();

Status check_ids(std::int64_t warehouse_id, std::int64_t sku_id) {
  std::vector<FieldError> errors;
  if (warehouse_id < 1) errors.push_back({"warehouse_id", "must be an integer from 1 to 2^63-1"});
  if (sku_id < 1) errors.push_back({"sku_id", "must be an integer from 1 to 2^63-1"});
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid request", std::move(errors));
}

}  // namespace

Intake::Intake(store::Database& db, IntakeOptions options)
    : db_(db),
      options_(std::move(options)),
      store_(std::make_unique<store::IntakeStore>(db.dialect())) {
  if (options_.holder.empty()) options_.holder = make_holder();
}

Intake::~Intake() {
  if (lease_) lease_->release(db_);
}

Result<int> Intake::node_id() {
  std::lock_guard lock(id_mu_);
  if (!lease_ || !lease_->valid()) {
    OO_ASSIGN_OR_RETURN(lease_, NodeLease::acquire(db_, options_.holder, options_.node_lease));
    ids_ = std::make_unique<IdGenerator>(lease_->node(), lease_->not_before_ms());
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
    ids_ = std::make_unique<IdGenerator>(lease_->node(), lease_->not_before_ms());
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

Result<Placed> Intake::place(const PlaceRequest& req, store::Clock::time_point deadline) {
  if (req.idempotency_key.empty()) {
    return Status(Code::missing_idempotency_key, "POST /v1/orders needs an Idempotency-Key header");
  }
  std::vector<FieldError> errors;
  if (!is_valid_idempotency_key(req.idempotency_key))
    errors.push_back({"Idempotency-Key", "must be 1–255 printable ASCII characters"});
  if (req.customer_id < 1) errors.push_back({"customer_id", "must be an integer from 1 to 2^63-1"});
  auto cart = normalize_cart(req.warehouse_id, req.lines);
  if (!cart.ok())
    errors.insert(errors.end(), cart.status().fields().begin(), cart.status().fields().end());
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));

  OO_ASSIGN_OR_RETURN(std::int64_t order_id, next_order_id());
  if (options_.fault_order_id)
    if (auto planted = options_.fault_order_id()) order_id = *planted;
  const auto key = std::make_pair(req.customer_id, req.idempotency_key);
  {
    std::lock_guard lock(keys_mu_);
    ++keys_in_flight_[key];
  }
  const auto leave = [&] {
    std::lock_guard lock(keys_mu_);
    const bool shared = keys_in_flight_[key] > 1;
    if (--keys_in_flight_[key] == 0) keys_in_flight_.erase(key);
    return shared;
  };
  const Then last = options_.fault_after_deduction ? Then::stay : Then::commit;
  bool waiting_on_key = false;
  bool id_taken = false;
  const auto attempt = [&](Connection& c) -> Result<Placed> {
    // 1. The receipt first: a concurrent request with this key waits here.
    auto inserted = store_->insert_receipt(c, req.customer_id, req.idempotency_key, *cart);
    waiting_on_key = !inserted.ok() && inserted.status().code() == Code::lock_timeout;
    if (!inserted.ok()) return inserted.status();
    if (!*inserted) {
      OO_ASSIGN_OR_RETURN(auto receipt,
                          store_->find_receipt(c, req.customer_id, req.idempotency_key));
      if (!receipt) return Status(Code::retry_transaction, "receipt vanished");
      if (receipt->normalized != cart->text() || receipt->warehouse_id != cart->warehouse_id ||
          receipt->version != kNormalizationVersion) {
        return Status(Code::idempotency_key_reused,
                      "this Idempotency-Key was used for a different order");
      }
      if (receipt->outcome == "out_of_stock")
        return Placed{true, {}, parse_shortages(receipt->shortages), true};
      OO_ASSIGN_OR_RETURN(auto order, store_->get_order(c, receipt->order_id));
      if (!order) return Status(Code::internal, "a placed receipt without its order");
      order->status = "placed";  // replay the first answer, whatever happened since
      return Placed{false, std::move(*order), {}, true};
    }
    // 2. Every stock row of the cart, locked in (warehouse, sku) order, before deciding.
    OO_ASSIGN_OR_RETURN(auto rows, store_->lock_stock(c, *cart));
    if (rows.size() != cart->lines.size()) {
      std::vector<FieldError> unknown;
      size_t j = 0;
      for (size_t i = 0; i < cart->lines.size(); ++i) {
        if (j < rows.size() && rows[j].sku_id == cart->lines[i].sku_id) {
          ++j;
        } else {
          unknown.push_back({"lines", fmt::format("sku {} has no stock row in warehouse {}",
                                                  cart->lines[i].sku_id, cart->warehouse_id)});
        }
      }
      return Status(Code::unknown_sku, "a SKU is not stocked in this warehouse; nothing was stored",
                    std::move(unknown));
    }
    // 3. The decision, on data read under lock.
    std::vector<Shortage> shortages;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].available < cart->lines[i].quantity)
        shortages.push_back({rows[i].sku_id, cart->lines[i].quantity, rows[i].available});
    }
    if (!shortages.empty()) {
      OO_RETURN_IF_ERROR(store_->record_out_of_stock(c, req.customer_id, req.idempotency_key,
                                                     shortages_text(shortages), last));
      return Placed{true, {}, std::move(shortages), false};
    }
    Order order{
        order_id, order_number(order_id), "placed", req.customer_id, cart->warehouse_id, {}, 0, ""};
    for (size_t i = 0; i < rows.size(); ++i) {
      order.lines.push_back(
          {static_cast<int>(i + 1), rows[i].sku_id, cart->lines[i].quantity, rows[i].price_cents});
      // Prices up to 10^12 times quantities up to 10^6 over 20 lines do not fit in 64
      // bits: refuse (rolling everything back) rather than store a wrapped total.
      std::int64_t line_total = 0;
      if (__builtin_mul_overflow(rows[i].price_cents, cart->lines[i].quantity, &line_total) ||
          __builtin_add_overflow(order.total_cents, line_total, &order.total_cents)) {
        return Status(
            Code::invalid_request, "the order total does not fit in 64 bits; nothing was stored",
            {FieldError{"lines", fmt::format("the total would exceed {} cents", kMaxTotalCents)}});
      }
    }
    auto created = store_->place(c, order, req.idempotency_key, last);
    id_taken = created.status().code() == Code::unique_violation;
    OO_ASSIGN_OR_RETURN(order.created_at, std::move(created));
    if (options_.fault_after_deduction) OO_RETURN_IF_ERROR(options_.fault_after_deduction());
    return Placed{false, std::move(order), {}, false};
  };
  const store::TxOptions tx{deadline, options_.max_attempts, store::TxMode::write};
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
    OO_ASSIGN_OR_RETURN(order_id, order_id_from_another_node());
    id_taken = false;
    placed = store::transact<Placed>(db_, tx, attempt);
  }
  const bool key_shared = leave();
  if (!placed.ok() && placed.status().code() == Code::busy && (waiting_on_key || key_shared)) {
    return Status(Code::request_in_progress,
                  "another request with this Idempotency-Key is still being processed; retry it");
  }
  return placed;
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
  const auto& sql = store_->sql();
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
          OO_RETURN_IF_ERROR(c.query(sql.lock_sources, {std::string_view(site), no}).status());
          OO_ASSIGN_OR_RETURN(auto made,
                              c.query(sql.count_production, {std::string_view(site), no}));
          if (made.at(0).i64(0) > 0) return in_production(order_id);
          // The database refuses to cancel a source order that has a production order (a
          // foreign key on PostgreSQL, a trigger on SQLite): the same answer if it ever fires.
          Status cancelled = c.query(sql.cancel_sources, {std::string_view(site), no}).status();
          if (cancelled.code() == Code::reference_violation) return in_production(order_id);
          OO_RETURN_IF_ERROR(cancelled);
          OO_RETURN_IF_ERROR(c.query(sql.abort_items, {std::string_view(site), no}).status());
          OO_RETURN_IF_ERROR(c.query(sql.lock_order_stock, {order_id}).status());
          OO_ASSIGN_OR_RETURN(auto released, c.query(sql.release, {order_id}));
          for (const auto& r : released) {
            OO_RETURN_IF_ERROR(c.query(sql.restore, {r.i64(1), r.i64(2), r.i64(3)}).status());
            OO_RETURN_IF_ERROR(
                c.query(sql.ledger, {r.i64(1), r.i64(2), r.i64(3), std::string_view("release"),
                                     std::string_view("order cancelled"), order_id, r.i64(0)})
                    .status());
          }
          OO_RETURN_IF_ERROR(c.query(sql.mark_cancelled, {order_id}).status());
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
    errors.push_back({"price_cents", "must be an integer from 0 to 10^12"});
  if (available && (*available < 0 || *available > kMaxStock))
    errors.push_back({"available", "must be an integer from 0 to 10^12"});
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  const auto& sql = store_->sql();
  return store::transact<PutSku>(
      db_, {deadline, options_.max_attempts, store::TxMode::write},
      [&](Connection& c) -> Result<PutSku> {
        const std::int64_t initial = available.value_or(0);
        OO_ASSIGN_OR_RETURN(auto created,
                            c.query(sql.insert_sku, {warehouse_id, sku_id, initial, price_cents}));
        if (!created.empty()) {
          OO_RETURN_IF_ERROR(
              c.query(sql.ledger, {warehouse_id, sku_id, initial, std::string_view("initial"),
                                   std::string_view("created"), nullptr, nullptr})
                  .status());
        } else {
          if (available) {
            return Status(
                Code::use_adjustment,
                "the SKU exists: change its stock with POST …/adjustments, not `available`");
          }
          OO_RETURN_IF_ERROR(c.query(sql.set_price, {warehouse_id, sku_id, price_cents}).status());
        }
        OO_ASSIGN_OR_RETURN(auto row, c.query(sql.get_sku, {warehouse_id, sku_id}));
        return PutSku{Sku{warehouse_id, sku_id, row.at(0).i64(0), row[0].i64(1), row[0].i64(2)},
                      !created.empty()};
      });
}

Result<Sku> Intake::adjust(std::int64_t warehouse_id, std::int64_t sku_id, std::int64_t delta,
                           const std::string& reason, store::Clock::time_point deadline) {
  Status ids = check_ids(warehouse_id, sku_id);
  std::vector<FieldError> errors = ids.fields();
  if (delta == 0 || delta < -kMaxStock || delta > kMaxStock)
    errors.push_back({"delta", "must be a non-zero integer within ±10^12"});
  if (reason.empty() || reason.size() > 200)
    errors.push_back({"reason", "must be 1–200 characters"});
  else if (auto problem = text_problem(reason))
    errors.push_back({"reason", std::move(*problem)});
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  const auto& sql = store_->sql();
  return store::transact<Sku>(
      db_, {deadline, options_.max_attempts, store::TxMode::write},
      [&](Connection& c) -> Result<Sku> {
        OO_ASSIGN_OR_RETURN(auto locked, c.query(sql.lock_sku, {warehouse_id, sku_id}));
        if (locked.empty()) {
          return Status(Code::not_found, fmt::format("sku {} has no stock row in warehouse {}",
                                                     sku_id, warehouse_id));
        }
        // |delta| <= 10^12 and 0 <= available: the sum cannot wrap; the bound keeps it so.
        if (delta > 0 && locked[0].i64(0) + delta > kMaxStock) {
          return Status(Code::invalid_request, "invalid request",
                        {FieldError{"delta", fmt::format("would make available {}, more than {}",
                                                         locked[0].i64(0) + delta, kMaxStock)}});
        }
        if (locked[0].i64(0) + delta < 0) {
          return Status(Code::insufficient_stock,
                        fmt::format("available is {}; a delta of {} would make it negative",
                                    locked[0].i64(0), delta));
        }
        OO_RETURN_IF_ERROR(c.query(sql.adjust, {warehouse_id, sku_id, delta}).status());
        OO_RETURN_IF_ERROR(
            c.query(sql.ledger, {warehouse_id, sku_id, delta, std::string_view("adjustment"),
                                 std::string_view(reason), nullptr, nullptr})
                .status());
        OO_ASSIGN_OR_RETURN(auto row, c.query(sql.get_sku, {warehouse_id, sku_id}));
        return Sku{warehouse_id, sku_id, row.at(0).i64(0), row[0].i64(1), row[0].i64(2)};
      });
}

Result<Sku> Intake::get_sku(std::int64_t warehouse_id, std::int64_t sku_id,
                            store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_ids(warehouse_id, sku_id));
  const auto& sql = store_->sql();
  return store::transact<Sku>(
      db_, {deadline, 3, store::TxMode::read}, [&](Connection& c) -> Result<Sku> {
        OO_ASSIGN_OR_RETURN(auto row, c.query(sql.get_sku, {warehouse_id, sku_id}));
        if (row.empty()) {
          return Status(Code::not_found, fmt::format("sku {} has no stock row in warehouse {}",
                                                     sku_id, warehouse_id));
        }
        return Sku{warehouse_id, sku_id, row[0].i64(0), row[0].i64(1), row[0].i64(2)};
      });
}

}  // namespace onceorder
