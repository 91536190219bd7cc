-- Seed 002, "Redis分布式锁" (-D unique=false, a database without the receipts' unique key)
-- and "Redis锁 + 唯一索引" (-D unique=true): take the lock in its own round trip (SET NX EX),
-- place the order in its own transaction, release the lock (compare-and-delete), as the
-- seed's createOrder does. A request that finds the lock held is refused ("正在处理中"); the
-- client retries once after :retry ms with the same key, as a client retrying an "in
-- progress" answer does, and gives up if the lock is still held (counted in seed002_refused).
-- Variables: -D k=K, -D catalog=S, -D dup=P, -D ttl=MS (lock expiry), -D retry=MS,
-- -D unique=true|false.
SELECT k AS key, o AS owner, coalesce(seed002_lock(k, o, :ttl), 0) AS got
FROM (SELECT seed002_key(:dup) AS k, md5(random()::text) AS o) AS s \gset
\if :got = 0
\sleep :retry ms
SELECT coalesce(seed002_lock(:key, :owner, :ttl), 0) AS got \gset
\endif
\if :got = 1
SELECT seed002_place(:key, :k, :catalog, :unique);
SELECT seed002_unlock(:key, :owner);
\else
INSERT INTO seed002_refused (key) VALUES (:key);
\endif
