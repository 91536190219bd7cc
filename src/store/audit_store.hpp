// SQL for the audit trail of operator actions (table operator_actions, API.md "The audit
// trail") and for the console's per-minute activity counts: one engine-neutral class over
// per-engine statements (store/<engine>/audit.sql). Methods run inside the caller's
// transaction.
//
// Thread-safety: an AuditStore holds only its statements; share it freely, one call per
// connection at a time.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "onceorder/core/audit_types.hpp"
#include "onceorder/store/store.hpp"
#include "store/dialect.hpp"

namespace onceorder::store {

struct AuditSql {
  // (principal, role, action, target|null, status|null, summary, outcome) → action_id
  store::Statement record;
  // (action_id, status, target|null, summary): the answer of a row written with its effect.
  store::Statement finish;
  // (principal|null, action|null, before (action_id), limit) → action_id, at, principal, role,
  // action, target|null, status|null, summary, outcome; newest first, over the primary key.
  store::Statement list;
  // (since: ISO 8601 UTC text) → minute ("YYYY-MM-DDTHH:MM", UTC), count; one statement per
  // series, each a range over its created_at index (migrations 14–16).
  store::Statement orders_per_minute;
  store::Statement items_per_minute;
  store::Statement numbers_per_minute;
};

class AuditStore {
 public:
  explicit AuditStore(const Dialect& dialect);
  Result<std::int64_t> record(store::Connection& c, const ActionRecord& a);
  // Writes the answer (status, target, summary) into the row `a.action_id`.
  Status finish(store::Connection& c, const ActionRecord& a);
  Result<std::vector<ActionRecord>> list(store::Connection& c, const ActionFilter& f);
  // The minutes since `since` that have rows, with their counts (minutes without rows are
  // absent: the caller fills in the zeros).
  Result<std::vector<std::pair<std::string, std::int64_t>>> per_minute(store::Connection& c,
                                                                       const Statement& statement,
                                                                       std::string_view since);
  const AuditSql& sql() const { return sql_; }

 private:
  const AuditSql& sql_;
};

}  // namespace onceorder::store
