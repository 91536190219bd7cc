-- The console's per-minute charts (GET /v1/stats/activity) count the rows of the last minutes
-- by created_at: a range over these indexes, never a scan of the table. Built concurrently:
-- orders, production orders and documents are the big tables, and their writers must go on.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_time ON orders (created_at)
