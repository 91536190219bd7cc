#include "onceorder/service/audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <limits>
#include <unordered_map>

#include "store/audit_store.hpp"

namespace onceorder {

std::string utc_minute(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min);
}

Result<std::int64_t> record_action(store::Database& db, const ActionRecord& action,
                                   store::Clock::time_point deadline) {
  store::AuditStore audit(db.dialect());
  return store::transact<std::int64_t>(
      db, store::write_tx(deadline),
      [&](store::Connection& c) -> Result<std::int64_t> { return audit.record(c, action); });
}

Status finish_action(store::Database& db, const ActionRecord& action,
                     store::Clock::time_point deadline) {
  store::AuditStore audit(db.dialect());
  return store::transact<bool>(db, store::write_tx(deadline),
                               [&](store::Connection& c) -> Result<bool> {
                                 OO_RETURN_IF_ERROR(audit.finish(c, action));
                                 return true;
                               })
      .status();
}

Result<std::vector<ActionRecord>> list_actions(store::Database& db, const ActionFilter& filter,
                                               store::Clock::time_point deadline) {
  if (filter.limit < 1 || filter.limit > 1000) {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"limit", "must be an integer from 1 to 1000"}});
  }
  ActionFilter f = filter;
  // Ids are positive: "below the largest" is "no cursor", one statement shape for both.
  if (f.before <= 0) f.before = std::numeric_limits<std::int64_t>::max();
  store::AuditStore audit(db.dialect());
  return store::transact<std::vector<ActionRecord>>(
      db, store::read_tx(deadline),
      [&](store::Connection& c) -> Result<std::vector<ActionRecord>> { return audit.list(c, f); });
}

Result<ActivitySeries> activity(store::Database& db, int minutes,
                                std::chrono::system_clock::time_point now,
                                store::Clock::time_point deadline) {
  if (minutes < 1 || minutes > kMaxActivityMinutes) {
    return Status(Code::invalid_request, "invalid request",
                  {FieldError{"minutes", "must be an integer from 1 to 1440"}});
  }
  ActivitySeries out;
  const auto current = std::chrono::floor<std::chrono::minutes>(now);
  const auto first = current - std::chrono::minutes(minutes - 1);
  std::unordered_map<std::string, size_t> slot;
  for (int i = 0; i < minutes; ++i) {
    out.minutes.push_back(utc_minute(first + std::chrono::minutes(i)));
    slot.emplace(out.minutes.back(), static_cast<size_t>(i));
  }
  out.orders.assign(static_cast<size_t>(minutes), 0);
  out.items.assign(static_cast<size_t>(minutes), 0);
  out.numbers.assign(static_cast<size_t>(minutes), 0);
  // The lower bound in the form both engines compare (SQLite: as text; PostgreSQL: cast).
  const std::string since = out.minutes.front() + ":00.000Z";
  store::AuditStore audit(db.dialect());
  OO_RETURN_IF_ERROR(
      store::transact<bool>(
          db, store::read_tx(deadline),
          [&](store::Connection& c) -> Result<bool> {
            const std::pair<const store::Statement*, std::vector<std::int64_t>*> series[] = {
                {&audit.sql().orders_per_minute, &out.orders},
                {&audit.sql().items_per_minute, &out.items},
                {&audit.sql().numbers_per_minute, &out.numbers},
            };
            for (auto [statement, counts] : series) {
              std::fill(counts->begin(), counts->end(), 0);  // a retried transaction starts over
              OO_ASSIGN_OR_RETURN(auto rows, audit.per_minute(c, *statement, since));
              for (const auto& [minute, count] : rows) {
                // A row stamped after `now` (another node's clock ahead) has no slot: left out.
                if (auto it = slot.find(minute); it != slot.end()) (*counts)[it->second] = count;
              }
            }
            return true;
          })
          .status());
  for (std::string& m : out.minutes) m += ":00Z";
  return out;
}

}  // namespace onceorder
