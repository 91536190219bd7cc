#include "store/receipts_store.hpp"

#include <charconv>

namespace onceorder::store {

std::string_view to_string(RequestRoute route) {
  switch (route) {
    case RequestRoute::source_orders:
      return "source_orders";
    case RequestRoute::schedule_run:
      return "schedule_run";
    case RequestRoute::stock_adjustment:
      return "stock_adjustment";
    case RequestRoute::schedule_requeue:
      return "schedule_requeue";
  }
  return "";
}

std::optional<std::vector<std::int64_t>> answer_integers(std::string_view text, size_t count) {
  std::vector<std::int64_t> out;
  const char* at = text.data();
  const char* end = text.data() + text.size();
  while (out.size() < count) {
    if (!out.empty()) {
      if (at == end || *at != ' ') return std::nullopt;
      ++at;
    }
    std::int64_t v = 0;
    auto [next, ec] = std::from_chars(at, end, v);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(v);
    at = next;
  }
  if (at != end) return std::nullopt;
  return out;
}

ReceiptsStore::ReceiptsStore(const Dialect& dialect) : sql_(dialect.receipts) {}

Result<std::int64_t> ReceiptsStore::expire(store::Connection& c, ReceiptKind kind,
                                           std::chrono::milliseconds retention, int batch) {
  const Statement& stmt = kind == ReceiptKind::order      ? sql_.expire_order
                          : kind == ReceiptKind::document ? sql_.expire_document
                                                          : sql_.expire_request;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(stmt, {static_cast<std::int64_t>(retention.count()),
                                                static_cast<std::int64_t>(batch)}));
  return static_cast<std::int64_t>(rows.size());
}

Result<std::optional<StoredAnswer>> ReceiptsStore::begin(store::Connection& c,
                                                         const RequestKey& key,
                                                         std::string_view request) {
  const std::string_view route = to_string(key.route);
  OO_ASSIGN_OR_RETURN(
      auto inserted, c.query(sql_.claim_request, {route, std::string_view(key.scope),
                                                  std::string_view(key.idempotency_key), request}));
  if (!inserted.empty()) return std::optional<StoredAnswer>();
  OO_ASSIGN_OR_RETURN(auto rows,
                      c.query(sql_.find_request, {route, std::string_view(key.scope),
                                                  std::string_view(key.idempotency_key)}));
  // The insert found the key committed, and receipts are deleted only by expiry: a row gone
  // since is a key that expired meanwhile; the re-run takes it as new.
  if (rows.empty()) return Status(Code::retry_transaction, "the receipt expired meanwhile");
  const Row& r = rows[0];
  if (r.text(0) != request) {
    return Status(Code::idempotency_key_reused,
                  "the Idempotency-Key was used for another request on this route");
  }
  // Written in the transaction that inserted the row: none means a bug, not a pending answer.
  if (r.is_null(1)) return Status(Code::internal, "a request receipt has no answer");
  StoredAnswer out{r.text(1), std::nullopt};
  if (!r.is_null(2)) out.run_id = r.i64(2);
  return std::optional<StoredAnswer>(std::move(out));
}

Status ReceiptsStore::answer(store::Connection& c, const RequestKey& key, std::string_view answer,
                             std::optional<std::int64_t> run_id) {
  const Param run = run_id ? Param(*run_id) : Param(nullptr);
  OO_ASSIGN_OR_RETURN(auto rows, c.query(sql_.answer_request,
                                         {to_string(key.route), std::string_view(key.scope),
                                          std::string_view(key.idempotency_key), answer, run}));
  if (rows.empty()) return Status(Code::internal, "the request receipt vanished before its answer");
  return Status::Ok();
}

}  // namespace onceorder::store
