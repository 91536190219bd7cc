#include "store/capacity_store.hpp"

namespace onceorder::store {
namespace {

// `* 1.0`: the share as a fraction, not an integer division, on both engines.
constexpr Statement kFullestPostgres{"cap_fullest_scopes",
                                     "SELECT scope, last_value, max_value FROM doc_scopes "
                                     "ORDER BY last_value * 1.0 / max_value DESC, scope LIMIT $1"};
constexpr Statement kFullestSqlite{"cap_fullest_scopes",
                                   "SELECT scope, last_value, max_value FROM doc_scopes "
                                   "ORDER BY last_value * 1.0 / max_value DESC, scope LIMIT ?1"};

constexpr Statement kSyncStandbys{
    "cap_sync_standbys",
    "SELECT count(*) FILTER (WHERE sync_state IN ('sync', 'quorum')), "
    "current_setting('synchronous_standby_names') <> '', "
    "pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') FROM pg_stat_replication"};

}  // namespace

Result<std::vector<ScopeFill>> fullest_scopes(Connection& c, int limit) {
  const Statement& stmt = c.engine() == Engine::postgres ? kFullestPostgres : kFullestSqlite;
  OO_ASSIGN_OR_RETURN(auto rows, c.query(stmt, {std::int64_t{limit}}));
  std::vector<ScopeFill> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.text(0), r.i64(1), r.i64(2)});
  return out;
}

Result<std::optional<SyncStandbys>> sync_standbys(Connection& c) {
  if (c.engine() != Engine::postgres) return std::optional<SyncStandbys>{};
  OO_ASSIGN_OR_RETURN(auto rows, c.query(kSyncStandbys, {}));
  if (rows.empty() || !rows.front().boolean(2)) return std::optional<SyncStandbys>{};
  return std::optional<SyncStandbys>{SyncStandbys{rows.front().i64(0), rows.front().boolean(1)}};
}

}  // namespace onceorder::store
