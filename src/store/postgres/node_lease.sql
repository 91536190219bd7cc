-- PostgreSQL: node-id leases.
-- Named statements (store/sql_catalog.hpp); what each takes and returns is in the store
-- that runs it.

-- name: in_lease_candidate
SELECT node_id, lease_until_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
FROM id_nodes
WHERE lease_until_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
ORDER BY lease_until_ms, node_id
LIMIT 1 FOR
UPDATE SKIP LOCKED;

-- name: in_lease_take
UPDATE id_nodes
SET holder = $2, lease_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint +
    $3::bigint
WHERE node_id = $1 AND lease_until_ms = $4
RETURNING lease_until_ms;

-- name: in_lease_renew
UPDATE id_nodes
SET lease_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3::bigint
WHERE node_id = $1 AND holder = $2 AND lease_until_ms = $4 AND lease_until_ms > (extract(epoch FROM
    clock_timestamp()) * 1000)::bigint
RETURNING lease_until_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint;

-- name: in_lease_release
UPDATE id_nodes
SET lease_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
WHERE node_id = $1 AND holder = $2;

-- ON CONFLICT re-reads a row another candidate changed meanwhile: the loser of a race
-- for an expired lease finds it in force and gets no row.
-- name: leader_take
INSERT INTO leader_leases (name, holder, lease_until_ms, term)
VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3::bigint, 1)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms,
    term = leader_leases.term + 1
WHERE leader_leases.lease_until_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
RETURNING lease_until_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, term;

-- name: leader_renew
UPDATE leader_leases
SET lease_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3::bigint
WHERE name = $1 AND holder = $2 AND term = $4 AND lease_until_ms >= (extract(epoch FROM
    clock_timestamp()) * 1000)::bigint
RETURNING lease_until_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint;

-- name: leader_release
UPDATE leader_leases
SET lease_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1
WHERE name = $1 AND holder = $2 AND term = $3;
