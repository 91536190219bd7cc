// The audit trail of operator actions (API.md "The audit trail") and the per-minute activity
// counts of the console's charts. The HTTP layer sets each audited request's row on its thread
// (store::AuditInTransaction), so the request's first committed write transaction carries it,
// and writes the answer into it afterwards (finish_action); a request that committed nothing
// leaves its row through record_action (http/api.cpp).
//
// Thread-safety: stateless; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>

#include "onceorder/core/audit_types.hpp"
#include "onceorder/core/limits.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder {

// Inserts `action` (its action_id and `at` are assigned) in a transaction of its own; the
// new action_id.
Result<std::int64_t> record_action(store::Database& db, const ActionRecord& action,
                                   store::Clock::time_point deadline);

// Writes the answer (status, target, summary) into the row `action.action_id`, in a
// transaction of its own.
Status finish_action(store::Database& db, const ActionRecord& action,
                     store::Clock::time_point deadline);

// Audited actions newest first (action_id below `filter.before`, or from the newest when 0),
// `filter.limit` (1–1000) at most.
Result<std::vector<ActionRecord>> list_actions(store::Database& db, const ActionFilter& filter,
                                               store::Clock::time_point deadline);

// The per-minute counts of orders placed, production orders made and numbers issued for the
// `minutes` (1–1440) UTC minutes that end with the one holding `now`, oldest first, zeros for
// minutes without rows. One read transaction; each series a range over its created_at index.
Result<ActivitySeries> activity(store::Database& db, int minutes,
                                std::chrono::system_clock::time_point now,
                                store::Clock::time_point deadline);

// The UTC minute of `t` as "YYYY-MM-DDTHH:MM".
std::string utc_minute(std::chrono::system_clock::time_point t);

}  // namespace onceorder
