-- The console's per-minute charts (GET /v1/stats/activity) count the rows of the last minutes
-- by created_at: a range over these indexes, never a scan of the table.
CREATE INDEX orders_by_time ON orders (created_at)
