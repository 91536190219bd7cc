// The audit trail's rows (table operator_actions) and the console's activity series. Plain
// data; thread-safe as values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onceorder {

// One audited request: who (principal name and role), what (`action`, e.g. `order.cancel`, on
// `target`, e.g. the order id), how it ended (the HTTP status, 0 while no answer was given, and
// the `outcome`) and a small JSON summary.
struct ActionRecord {
  std::int64_t action_id = 0;  // assigned on insert
  std::string at;              // ISO 8601 UTC, assigned on insert
  std::string principal;
  std::string role;
  std::string action;
  std::optional<std::string> target = std::nullopt;
  int status = 0;              // 0: none (stored as null)
  std::string summary = "{}";  // a JSON object
  // applied: written in the transaction of the action's effect; unchanged, refused (4xx),
  // failed (5xx): the request ended with no write of its own committed.
  std::string outcome = "applied";
};

struct ActionFilter {
  std::optional<std::string> principal = std::nullopt;
  std::optional<std::string> action = std::nullopt;
  std::int64_t before = 0;  // action_id cursor: rows below it; 0: from the newest
  int limit = 100;
};

// Per-minute counts of the database's series for the last `minutes` minutes (UTC), oldest
// first, one entry per minute (zeros included); `minutes[i]` is "YYYY-MM-DDTHH:MMZ".
struct ActivitySeries {
  std::vector<std::string> minutes;
  std::vector<std::int64_t> orders;   // orders placed (orders.created_at)
  std::vector<std::int64_t> items;    // production orders made (production_orders.created_at)
  std::vector<std::int64_t> numbers;  // document numbers issued (documents.created_at)
};

}  // namespace onceorder
