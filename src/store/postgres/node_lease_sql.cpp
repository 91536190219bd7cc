#include "store/node_lease_store.hpp"

namespace onceorder::store::postgres {

// The database's clock in Unix milliseconds: every process measures leases by it. The
// wall clock at each statement, not the transaction's start (now()).
#define OO_PG_NOW_MS "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

const NodeLeaseSql& node_lease_sql() {
  static const NodeLeaseSql sql{
      .candidate = {"in_lease_candidate",
                    "SELECT node_id, lease_until_ms, " OO_PG_NOW_MS
                    " FROM id_nodes WHERE lease_until_ms < " OO_PG_NOW_MS
                    " ORDER BY lease_until_ms, node_id LIMIT 1 FOR UPDATE SKIP LOCKED"},
      .take = {"in_lease_take", "UPDATE id_nodes SET holder = $2, lease_until_ms = " OO_PG_NOW_MS
                                " + $3::bigint WHERE node_id = $1 AND lease_until_ms = $4 "
                                "RETURNING lease_until_ms"},
      .renew = {"in_lease_renew",
                "UPDATE id_nodes SET lease_until_ms = " OO_PG_NOW_MS
                " + $3::bigint WHERE node_id = $1 AND holder = $2 AND lease_until_ms = $4 AND "
                "lease_until_ms > " OO_PG_NOW_MS " RETURNING lease_until_ms, " OO_PG_NOW_MS},
      .release = {"in_lease_release", "UPDATE id_nodes SET lease_until_ms = " OO_PG_NOW_MS
                                      " WHERE node_id = $1 AND holder = $2"},
      // ON CONFLICT re-reads a row another candidate changed meanwhile: the loser of a race
      // for an expired lease finds it in force and gets no row.
      .leader_take = {"leader_take",
                      "INSERT INTO leader_leases (name, holder, lease_until_ms, term) VALUES ($1, "
                      "$2, " OO_PG_NOW_MS " + $3::bigint, 1) ON CONFLICT (name) DO UPDATE SET "
                      "holder = excluded.holder, lease_until_ms = excluded.lease_until_ms, term = "
                      "leader_leases.term + 1 WHERE leader_leases.lease_until_ms < " OO_PG_NOW_MS
                      " RETURNING lease_until_ms, " OO_PG_NOW_MS ", term"},
      .leader_renew = {"leader_renew",
                       "UPDATE leader_leases SET lease_until_ms = " OO_PG_NOW_MS
                       " + $3::bigint WHERE name = $1 AND holder = $2 AND term = $4 AND "
                       "lease_until_ms >= " OO_PG_NOW_MS
                       " RETURNING lease_until_ms, " OO_PG_NOW_MS},
      .leader_release = {"leader_release", "UPDATE leader_leases SET lease_until_ms = " OO_PG_NOW_MS
                                           " - 1 WHERE name = $1 AND holder = $2 AND term = $3"},
  };
  return sql;
}

}  // namespace onceorder::store::postgres
