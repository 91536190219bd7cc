-- A customer's orders, newest first (GET /v1/orders for a customer token), without a scan of
-- everyone's.
CREATE INDEX orders_by_customer ON orders (customer_id, order_id)
