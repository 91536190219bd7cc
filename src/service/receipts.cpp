#include "onceorder/service/receipts.hpp"

#include "store/receipts_store.hpp"

namespace onceorder {
namespace {

// Batches of one kind until a batch comes back short (none left) or the deadline passes.
Result<bool> expire_kind(store::Database& db, store::ReceiptKind kind,
                         std::chrono::milliseconds retention, store::Clock::time_point deadline,
                         int batch, std::int64_t& deleted) {
  store::ReceiptsStore receipts(db.dialect());
  while (store::Clock::now() < deadline) {
    OO_ASSIGN_OR_RETURN(auto n, store::transact<std::int64_t>(
                                    db, store::TxOptions{deadline, 3, store::TxMode::write},
                                    [&](store::Connection& c) -> Result<std::int64_t> {
                                      return receipts.expire(c, kind, retention, batch);
                                    }));
    deleted += n;
    if (n < batch) return true;
  }
  return false;
}

}  // namespace

Result<ExpiredReceipts> expire_receipts(store::Database& db, std::chrono::milliseconds retention,
                                        store::Clock::time_point deadline, int batch) {
  if (retention.count() < 0 || batch < 1)
    return Status(Code::invalid_request, "receipt retention must be >= 0 and batch >= 1");
  ExpiredReceipts out;
  OO_ASSIGN_OR_RETURN(bool orders_done, expire_kind(db, store::ReceiptKind::order, retention,
                                                    deadline, batch, out.order_receipts));
  OO_ASSIGN_OR_RETURN(bool documents_done, expire_kind(db, store::ReceiptKind::document, retention,
                                                       deadline, batch, out.document_receipts));
  OO_ASSIGN_OR_RETURN(bool requests_done, expire_kind(db, store::ReceiptKind::request, retention,
                                                      deadline, batch, out.request_receipts));
  out.complete = orders_done && documents_done && requests_done;
  return out;
}

Status in_progress_if_waited(Status st, bool waited_on_key) {
  if (st.code() != Code::busy || !waited_on_key) return st;
  return Status(Code::request_in_progress,
                "another request with this Idempotency-Key is still being processed; retry it");
}

}  // namespace onceorder
