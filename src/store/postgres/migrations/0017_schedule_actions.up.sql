-- The operator's actions on scheduling (API.md "Console actions"). A re-queue gives an order
-- that reached the attempt limit a fresh budget without deleting its failed items:
-- `requeued_failures` is how many of its failed items no longer count, and the view's
-- `failed` subtracts it, so that every candidate statement keeps reading one column. A stop
-- request is a mark on the run that the process running it reads at its next batch
-- boundary (whichever process that is). A re-queue's Idempotency-Key receipt is a route of
-- request_receipts of its own.
ALTER TABLE source_orders
  ADD COLUMN requeued_failures bigint NOT NULL DEFAULT 0 CHECK (requeued_failures >= 0),
  ADD COLUMN requeued_at timestamptz;
ALTER TABLE schedule_runs ADD COLUMN stop_requested_at timestamptz;
ALTER TABLE request_receipts DROP CONSTRAINT request_receipts_route_check,
  ADD CONSTRAINT request_receipts_route_check
  CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment', 'schedule_requeue'));
DROP VIEW schedule_key_facts;
CREATE VIEW schedule_key_facts AS
SELECT so.site_code, so.order_no, so.lot_no,
  so.cancelled_at IS NOT NULL AS cancelled,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'success') AS has_success,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no
          AND i.status IN ('wait', 'processing')) AS has_live,
  (SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed') - so.requeued_failures AS failed,
  EXISTS (SELECT 1 FROM legacy_items l WHERE l.site_code = so.site_code
          AND l.order_no = so.order_no AND l.lot_no = so.lot_no AND l.moved_at IS NULL) AS legacy_pending
FROM source_orders so;
