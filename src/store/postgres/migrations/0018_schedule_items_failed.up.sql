-- The orders that reached the attempt limit (GET /v1/schedule/exhausted) are read over the
-- failed items only, by key, and a key's last failure is the index's last entry for it.
-- onceorder: no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS schedule_items_failed ON schedule_items (site_code, order_no, lot_no, item_id) WHERE status = 'failed'
