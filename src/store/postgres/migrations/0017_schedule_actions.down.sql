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
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed') AS failed,
  EXISTS (SELECT 1 FROM legacy_items l WHERE l.site_code = so.site_code
          AND l.order_no = so.order_no AND l.lot_no = so.lot_no AND l.moved_at IS NULL) AS legacy_pending
FROM source_orders so;
DELETE FROM request_receipts WHERE route = 'schedule_requeue';
ALTER TABLE request_receipts DROP CONSTRAINT request_receipts_route_check,
  ADD CONSTRAINT request_receipts_route_check
  CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment'));
ALTER TABLE schedule_runs DROP COLUMN stop_requested_at;
ALTER TABLE source_orders DROP COLUMN requeued_at, DROP COLUMN requeued_failures;
