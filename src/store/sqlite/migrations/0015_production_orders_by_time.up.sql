-- As 0014, for production orders.
CREATE INDEX production_orders_by_time ON production_orders (created_at)
