// Receipts (order_receipts, document_receipts, and request_receipts for source orders, manual
// runs and stock adjustments) remember the answer to an Idempotency-Key so that a retry gets
// the same answer. They live for a published retention (API.md "How long a
// key lives"); after it they are deleted and the key means a new request. Receipts are
// processing state (a replay cache), not business data: orders and documents stay.
//
// Thread-safety: stateless; safe from any thread and from several processes at once.
#pragma once

#include <chrono>
#include <cstdint>

#include "onceorder/store/store.hpp"

namespace onceorder {

// The default retention, published in API.md.
inline constexpr std::chrono::milliseconds kDefaultReceiptRetention{30LL * 24 * 3600 * 1000};

struct ExpiredReceipts {
  std::int64_t order_receipts = 0;
  std::int64_t document_receipts = 0;
  std::int64_t request_receipts = 0;  // source orders, manual runs, stock adjustments
  bool complete = true;               // false: the deadline came first; the next pass goes on
};

// Deletes the receipts created longer than `retention` ago, `batch` per transaction (short
// transactions: intake and numbering go on meanwhile), until none is left or `deadline`.
Result<ExpiredReceipts> expire_receipts(store::Database& db, std::chrono::milliseconds retention,
                                        store::Clock::time_point deadline, int batch = 1000);

// A keyed request's transaction that gave up as `busy` after a statement waited too long on
// its key (another request's transaction holds it): request_in_progress, as orders answer.
// Any other status is returned as is.
Status in_progress_if_waited(Status st, bool waited_on_key);

}  // namespace onceorder
