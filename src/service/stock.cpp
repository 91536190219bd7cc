#include "onceorder/service/stock.hpp"

#include <fmt/format.h>

#include "onceorder/core/limits.hpp"
#include "onceorder/core/text.hpp"
#include "onceorder/service/numbering.hpp"
#include "onceorder/service/receipts.hpp"
#include "store/receipts_store.hpp"
#include "store/stock_store.hpp"

namespace onceorder {
namespace {

using store::Connection;

// API.md "Stock bounds" (limits.hpp): prices, stock and one adjustment.
constexpr std::int64_t kMaxPriceCents = kStockBound;
constexpr std::int64_t kMaxStock = kStockBound;

Status check_sku_ids(std::int64_t warehouse_id, std::int64_t sku_id) {
  std::vector<FieldError> errors;
  if (warehouse_id < 1) errors.push_back({"warehouse_id", "must be an integer from 1 to 2^63-1"});
  if (sku_id < 1) errors.push_back({"sku_id", "must be an integer from 1 to 2^63-1"});
  if (errors.empty()) return Status::Ok();
  return Status(Code::invalid_request, "invalid request", std::move(errors));
}

Status check_adjustment(const AdjustRequest& req) {
  std::vector<FieldError> errors = check_sku_ids(req.warehouse_id, req.sku_id).fields();
  if (req.idempotency_key && !is_valid_idempotency_key(*req.idempotency_key))
    errors.push_back({"Idempotency-Key",
                      fmt::format("must be 1–{} printable ASCII characters", kMaxIdempotencyKey)});
  if (req.delta == 0 || req.delta < -kMaxStock || req.delta > kMaxStock)
    errors.push_back(
        {"delta", fmt::format("must be a non-zero integer within ±10^{}", kStockBoundPower)});
  if (req.reason.empty() || req.reason.size() > 200)
    errors.push_back({"reason", "must be 1–200 characters"});
  else if (auto problem = text_problem(req.reason))
    errors.push_back({"reason", std::move(*problem)});
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  return Status::Ok();
}

// An adjustment receipt's answer: "available reserved price_cents" right after it.
Result<Sku> parse_adjusted_answer(const store::StoredAnswer& stored, std::int64_t warehouse_id,
                                  std::int64_t sku_id) {
  auto v = store::answer_integers(stored.answer, 3);
  if (!v) return Status(Code::internal, "an adjustment receipt's answer is unreadable");
  return Sku{warehouse_id, sku_id, (*v)[0], (*v)[1], (*v)[2]};
}

}  // namespace

Stock::Stock(store::Database& db, int max_attempts)
    : db_(db),
      max_attempts_(max_attempts),
      stock_(std::make_unique<store::StockStore>(db.dialect())) {}

Stock::~Stock() = default;

Result<Stock::PutSku> Stock::put_sku(std::int64_t warehouse_id, std::int64_t sku_id,
                                     std::int64_t price_cents,
                                     std::optional<std::int64_t> available,
                                     store::Clock::time_point deadline) {
  Status ids = check_sku_ids(warehouse_id, sku_id);
  std::vector<FieldError> errors = ids.fields();
  if (price_cents < 0 || price_cents > kMaxPriceCents)
    errors.push_back(
        {"price_cents", fmt::format("must be an integer from 0 to 10^{}", kStockBoundPower)});
  if (available && (*available < 0 || *available > kMaxStock))
    errors.push_back(
        {"available", fmt::format("must be an integer from 0 to 10^{}", kStockBoundPower)});
  if (!errors.empty()) return Status(Code::invalid_request, "invalid request", std::move(errors));
  return store::transact<PutSku>(
      db_, {deadline, max_attempts_, store::TxMode::write}, [&](Connection& c) -> Result<PutSku> {
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

Result<Sku> Stock::adjust(std::int64_t warehouse_id, std::int64_t sku_id, std::int64_t delta,
                          const std::string& reason, store::Clock::time_point deadline) {
  OO_ASSIGN_OR_RETURN(
      auto adjusted,
      adjust(AdjustRequest{warehouse_id, sku_id, delta, reason, std::nullopt}, deadline));
  return std::move(adjusted.sku);
}

Result<Adjusted> Stock::adjust(const AdjustRequest& req, store::Clock::time_point deadline) {
  const std::int64_t warehouse_id = req.warehouse_id;
  const std::int64_t sku_id = req.sku_id;
  const std::int64_t delta = req.delta;
  const std::string& reason = req.reason;
  OO_RETURN_IF_ERROR(check_adjustment(req));
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
      db_, {deadline, max_attempts_, store::TxMode::write}, [&](Connection& c) -> Result<Adjusted> {
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

Result<Sku> Stock::get_sku(std::int64_t warehouse_id, std::int64_t sku_id,
                           store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_sku_ids(warehouse_id, sku_id));
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
