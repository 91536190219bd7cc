-- A customer's orders, newest first (GET /v1/orders for a customer token), without a scan of
-- everyone's. Built concurrently: orders is big by now and intake must go on.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_customer ON orders (customer_id, order_id)
