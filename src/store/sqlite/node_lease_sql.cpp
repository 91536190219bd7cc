#include "store/node_lease_store.hpp"

namespace onceorder::store::sqlite {

// The database's clock in Unix milliseconds: every process measures leases by it.
#define OO_SQLITE_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

const NodeLeaseSql& node_lease_sql() {
  static const NodeLeaseSql sql{
      .candidate = {"in_lease_candidate", "SELECT node_id, lease_until_ms, " OO_SQLITE_NOW_MS
                                          " FROM id_nodes WHERE lease_until_ms < " OO_SQLITE_NOW_MS
                                          " ORDER BY lease_until_ms, node_id LIMIT 1"},
      .take = {"in_lease_take",
               "UPDATE id_nodes SET holder = ?2, lease_until_ms = " OO_SQLITE_NOW_MS
               " + ?3 WHERE node_id = ?1 AND lease_until_ms = ?4 RETURNING "
               "lease_until_ms"},
      .renew = {"in_lease_renew",
                "UPDATE id_nodes SET lease_until_ms = " OO_SQLITE_NOW_MS
                " + ?3 WHERE node_id = ?1 AND holder = ?2 AND lease_until_ms = ?4 AND "
                "lease_until_ms > " OO_SQLITE_NOW_MS
                " RETURNING lease_until_ms, " OO_SQLITE_NOW_MS},
      .release = {"in_lease_release", "UPDATE id_nodes SET lease_until_ms = " OO_SQLITE_NOW_MS
                                      " WHERE node_id = ?1 AND holder = ?2"},
  };
  return sql;
}

}  // namespace onceorder::store::sqlite
