#include "onceorder/listings.hpp"

#include <fmt/format.h>

#include <limits>

#include "store/intake_store.hpp"
#include "store/listing_store.hpp"

namespace onceorder {
namespace {

constexpr int kMaxListLimit = 1000;

Status check_limit(int limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"limit", "must be an integer from 1 to 1000"}});
  }
  return Status();
}

}  // namespace

Result<std::vector<OrderSummary>> list_orders(store::Database& db, const OrderFilter& filter,
                                              store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(filter.limit));
  if (filter.status && *filter.status != "placed" && *filter.status != "cancelled") {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"status", "must be placed or cancelled"}});
  }
  OrderFilter f = filter;
  // Order ids are positive and below 2^63-1: "before the largest" is "no cursor", and one
  // statement shape keeps the index range scan.
  if (f.before <= 0) f.before = std::numeric_limits<std::int64_t>::max();
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<OrderSummary>>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<std::vector<OrderSummary>> {
        return listing.orders(c, f);
      });
}

Result<std::vector<OrderReceiptView>> list_order_receipts(store::Database& db,
                                                          std::int64_t order_id,
                                                          std::optional<std::int64_t> only_customer,
                                                          store::Clock::time_point deadline) {
  store::ListingStore listing(db.dialect());
  store::IntakeStore intake(db.dialect());
  return store::transact<std::vector<OrderReceiptView>>(
      db, store::read_tx(deadline),
      [&](store::Connection& c) -> Result<std::vector<OrderReceiptView>> {
        OO_ASSIGN_OR_RETURN(auto order, intake.get_order(c, order_id));
        if (!order || (only_customer && order->customer_id != *only_customer)) {
          return Status(Code::not_found, fmt::format("order {} does not exist", order_id));
        }
        // Receipts are keyed by customer first: the order's customer bounds the search.
        return listing.order_receipts(c, order->customer_id, order_id);
      });
}

Result<std::vector<Sku>> list_skus(store::Database& db, std::int64_t warehouse_id,
                                   std::int64_t after_sku, int limit,
                                   store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<Sku>>(db, store::read_tx(deadline),
                                           [&](store::Connection& c) -> Result<std::vector<Sku>> {
                                             return listing.skus(c, warehouse_id, after_sku, limit);
                                           });
}

Result<std::vector<ClaimView>> list_claims(store::Database& db, std::chrono::milliseconds within,
                                           std::int64_t after_item, int limit,
                                           store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  if (within.count() < 0) {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"within", "must not be negative"}});
  }
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<ClaimView>>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<std::vector<ClaimView>> {
        return listing.claims(c, within.count(), after_item, limit);
      });
}

Result<std::vector<ScopeAudit>> list_scopes(store::Database& db, std::string_view after, int limit,
                                            store::Clock::time_point deadline) {
  OO_RETURN_IF_ERROR(check_limit(limit));
  store::ListingStore listing(db.dialect());
  return store::transact<std::vector<ScopeAudit>>(
      db, store::read_tx(deadline), [&](store::Connection& c) -> Result<std::vector<ScopeAudit>> {
        return listing.scopes(c, after, limit);
      });
}

}  // namespace onceorder
