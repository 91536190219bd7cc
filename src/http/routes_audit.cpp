// The audit trail of operator actions (GET /v1/actions) and the console's per-minute activity
// (GET /v1/stats/activity): API.md "The audit trail" and "Activity per minute".
#include <fmt/format.h>

#include "http/problem.hpp"
#include "http/request_input.hpp"
#include "http/routes.hpp"
#include "onceorder/service/audit.hpp"

namespace onceorder::http {
namespace {

using json = nlohmann::json;

// Principal names and action names are short words (auth.cpp, router.cpp).
constexpr size_t kMaxFilterText = 100;

}  // namespace

Response list_actions(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  ActionFilter filter;
  filter.principal = query->string("principal", kMaxFilterText);
  filter.action = query->string("action", kMaxFilterText);
  filter.before = query->integer("after", 0, kMaxId).value_or(0);
  filter.limit = query->limit();
  if (Status st = query->finish(); !st.ok()) return problem_response(st);

  auto actions = onceorder::list_actions(s.db, filter, deadline);
  if (!actions.ok()) return problem_response(actions.status());
  json out = json::array();
  for (const ActionRecord& a : *actions) {
    auto summary = json::parse(a.summary, nullptr, /*allow_exceptions=*/false);
    out.push_back({{"action_id", a.action_id},
                   {"at", a.at},
                   {"principal", a.principal},
                   {"role", a.role},
                   {"action", a.action},
                   {"target", a.target ? json(*a.target) : json(nullptr)},
                   {"status", a.status != 0 ? json(a.status) : json(nullptr)},
                   {"outcome", a.outcome},
                   {"summary", summary.is_discarded() ? json::object() : std::move(summary)}});
  }
  const bool full = !actions->empty() && actions->size() == static_cast<size_t>(filter.limit);
  return json_response(bhttp::status::ok,
                       {{"actions", std::move(out)},
                        {"next_after", full ? json(actions->back().action_id) : json(nullptr)}});
}

Response get_activity(Services& s, const Request& req, Deadline deadline) {
  auto query = QueryReader::parse(sv(req.target()));
  if (!query.ok()) return problem_response(query.status());
  const auto minutes = query->integer("minutes", 1, kMaxActivityMinutes);
  if (Status st = query->finish(); !st.ok()) return problem_response(st);
  const int n = static_cast<int>(minutes.value_or(60));
  const auto now = std::chrono::system_clock::now();
  auto series = onceorder::activity(s.db, n, now, deadline);
  if (!series.ok()) return problem_response(series.status());
  // This process' own answers: another node's are in its own ring (and in /metrics).
  const std::vector<MinuteCounts> local = s.metrics.per_minute(n, now);
  json rows = json::array();
  for (size_t i = 0; i < series->minutes.size(); ++i) {
    rows.push_back({{"minute", series->minutes[i]},
                    {"orders", series->orders[i]},
                    {"items", series->items[i]},
                    {"numbers", series->numbers[i]},
                    {"requests", local[i].requests},
                    {"busy", local[i].busy}});
  }
  return json_response(bhttp::status::ok, {{"minutes", n}, {"series", std::move(rows)}});
}

}  // namespace onceorder::http
