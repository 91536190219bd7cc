-- Receipts expire after the published retention (API.md "How long a key lives"); the
-- maintenance pass finds the old ones by age, a batch at a time. Built concurrently: by the
-- time a database gets here its receipt tables can be big, and intake must go on.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS order_receipts_by_age ON order_receipts (created_at)
