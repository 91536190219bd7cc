// The `onceorder` subcommands that do one job each over an open database. Each returns the
// process exit code: 0 done, 1 `check` found violations, 2 an error (printed on stderr).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "onceorder/core/status.hpp"
#include "onceorder/service/scheduling.hpp"
#include "onceorder/store/store.hpp"

namespace onceorder::cli {

int fail(const Status& st);

int check(store::Database& db, bool json);
int import_documents(store::Database& db, const std::string& scope, const std::string& scheme,
                     bool dry_run, const std::string& file);
// One batch run now, with progress (items done / total, rate) on the terminal.
int schedule_batch(store::Database& db, const SchedulerOptions& options);
int schedule_reap(store::Database& db, const SchedulerOptions& options);
// Re-queues the orders given as SITE ORDER LOT triples that reached --max-attempts, or shows
// what it would with `dry_run`; with no orders, lists those at the limit.
int schedule_requeue(store::Database& db, const SchedulerOptions& options,
                     const std::vector<std::string>& parts, bool dry_run);
int import_items(store::Database& db, const std::string& file);
int dedup(store::Database& db, bool apply);
// One receipt-expiry pass now (the leader of `serve` runs it on its own schedule).
int expire_receipts(store::Database& db, std::chrono::milliseconds retention);
// The operator's word (made / not made) on legacy rows the old system had in flight.
int resolve(store::Database& db, const std::string& file);

// The whole file, or an error naming it.
Result<std::string> read_file(const std::string& path);

}  // namespace onceorder::cli
