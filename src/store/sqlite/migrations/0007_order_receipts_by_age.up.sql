-- Receipts expire after the published retention (API.md "How long a key lives"); the
-- maintenance pass finds the old ones by age, a batch at a time.
CREATE INDEX order_receipts_by_age ON order_receipts (created_at)
