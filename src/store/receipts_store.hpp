// SQL for receipts: expiry of every kind, and the receipts of the creating requests other than
// orders and documents (request_receipts). One engine-neutral class over a per-engine set of
// statements (store/<engine>/receipts.sql). Methods run in the caller's transaction.
//
// Thread-safety: immutable after construction; the Connection passed in is the caller's.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct ReceiptsSql {
  // (retention ms, batch) → one row per receipt deleted, at most `batch`, oldest first.
  store::Statement expire_order;
  store::Statement expire_document;
  store::Statement expire_request;
  // (route, scope, key, request) → a row when inserted (answer pending); none when the key
  // has a receipt. On PostgreSQL a concurrent insert of the key is waited for.
  store::Statement claim_request;
  // (route, scope, key) → request, answer, run_id.
  store::Statement find_request;
  // (route, scope, key, answer, run_id or NULL).
  store::Statement answer_request;
};

enum class ReceiptKind { order, document, request };

// The routes whose receipts live in request_receipts (their text in the `route` column).
enum class RequestRoute { source_orders, schedule_run, stock_adjustment, schedule_requeue };
std::string_view to_string(RequestRoute route);

// Where a key of a request receipt lives: its route and, within it, its scope.
struct RequestKey {
  RequestRoute route;
  std::string scope;  // '' when the route is one scope
  std::string idempotency_key;
};

// A stored request receipt's answer (route-specific text) and run.
struct StoredAnswer {
  std::string answer;
  std::optional<std::int64_t> run_id;
};

// The integers of an answer written as decimal integers separated by single spaces: nullopt
// unless it holds exactly `count` of them.
std::optional<std::vector<std::int64_t>> answer_integers(std::string_view text, size_t count);

class ReceiptsStore {
 public:
  explicit ReceiptsStore(const Dialect& dialect);

  // Deletes at most `batch` receipts of `kind` created longer than `retention` ago, oldest
  // first: how many.
  Result<std::int64_t> expire(store::Connection& c, ReceiptKind kind,
                              std::chrono::milliseconds retention, int batch);

  // The first step of a keyed request's transaction. nullopt: the receipt is now inserted,
  // its answer pending; the caller makes the effect and calls `answer` before it commits.
  // A value: the key was used before for the same normalized `request`: its stored answer.
  // idempotency_key_reused when it was used for another request. A key a concurrent
  // transaction holds is waited for (PostgreSQL; lock_timeout when the wait is too long).
  Result<std::optional<StoredAnswer>> begin(store::Connection& c, const RequestKey& key,
                                            std::string_view request);
  Status answer(store::Connection& c, const RequestKey& key, std::string_view answer,
                std::optional<std::int64_t> run_id = std::nullopt);

 private:
  const ReceiptsSql& sql_;
};

}  // namespace onceorder::store
