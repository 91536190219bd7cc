-- SQLite: node-id leases.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: in_lease_candidate
SELECT node_id, lease_until_ms, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
FROM id_nodes
WHERE lease_until_ms < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
ORDER BY lease_until_ms, node_id
LIMIT 1;

-- name: in_lease_take
UPDATE id_nodes
SET holder = ?2, lease_until_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ?3
WHERE node_id = ?1 AND lease_until_ms = ?4
RETURNING lease_until_ms;

-- name: in_lease_renew
UPDATE id_nodes
SET lease_until_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ?3
WHERE node_id = ?1 AND holder = ?2 AND lease_until_ms = ?4 AND lease_until_ms > CAST((julianday('now')
    - 2440587.5) * 86400000 AS INTEGER)
RETURNING lease_until_ms, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER);

-- name: in_lease_release
UPDATE id_nodes
SET lease_until_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
WHERE node_id = ?1 AND holder = ?2;

-- name: leader_take
INSERT INTO leader_leases (name, holder, lease_until_ms, term)
VALUES (?1, ?2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ?3, 1)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms,
    term = leader_leases.term + 1
WHERE leader_leases.lease_until_ms < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
RETURNING lease_until_ms, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), term;

-- name: leader_renew
UPDATE leader_leases
SET lease_until_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + ?3
WHERE name = ?1 AND holder = ?2 AND term = ?4 AND lease_until_ms >= CAST((julianday('now') -
    2440587.5) * 86400000 AS INTEGER)
RETURNING lease_until_ms, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER);

-- name: leader_release
UPDATE leader_leases
SET lease_until_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - 1
WHERE name = ?1 AND holder = ?2 AND term = ?3;
