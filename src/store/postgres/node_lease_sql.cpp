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
  };
  return sql;
}

}  // namespace onceorder::store::postgres
