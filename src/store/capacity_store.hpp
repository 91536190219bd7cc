// What the operations monitor reads for the capacity alerts (OPERATIONS.md, "Alerts"): the
// document scopes nearest their `max`, and, on PostgreSQL, the synchronous standbys the primary
// streams to. Each is one small read; neither takes a lock.
//
// Thread-safety: stateless; each call uses only the connection it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onceorder/store/store.hpp"

namespace onceorder::store {

struct ScopeFill {
  std::string scope;
  std::int64_t last_value = 0;
  std::int64_t max_value = 0;
};

// The `limit` scopes with the largest share of their numbers issued (last_value / max_value),
// fullest first, ties by name.
Result<std::vector<ScopeFill>> fullest_scopes(Connection& c, int limit);

struct SyncStandbys {
  std::int64_t in_sync = 0;  // standbys whose sync_state is sync or quorum
  bool named = false;        // synchronous_standby_names is set
};

// PostgreSQL's pg_stat_replication as this role sees it. None on SQLite, and where the role
// may not read the standbys' state (neither a superuser nor in pg_read_all_stats): a count it
// cannot see would read as none.
Result<std::optional<SyncStandbys>> sync_standbys(Connection& c);

}  // namespace onceorder::store
