-- As 0014, for production orders.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS production_orders_by_time ON production_orders (created_at)
