-- Seed 002, "无锁（仅唯一索引）": no lock; the receipt's unique key decides (OnceOrder's
-- design). One round trip: the placement function in its implicit transaction.
-- Variables: -D k=K, -D catalog=S, -D dup=P (percent of requests in duplicate groups).
SELECT seed002_place(seed002_key(:dup), :k, :catalog, true);
