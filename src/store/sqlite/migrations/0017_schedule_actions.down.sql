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
CREATE TABLE request_receipts_next (
  route           TEXT NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment')),
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request         TEXT NOT NULL,
  answer          TEXT,
  run_id          INTEGER REFERENCES schedule_runs (run_id),
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (route, scope, idempotency_key),
  CHECK (run_id IS NULL OR route = 'schedule_run')
) STRICT;
INSERT INTO request_receipts_next SELECT route, scope, idempotency_key, request, answer, run_id,
  created_at FROM request_receipts WHERE route <> 'schedule_requeue';
DROP TABLE request_receipts;
ALTER TABLE request_receipts_next RENAME TO request_receipts;
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
ALTER TABLE schedule_runs DROP COLUMN stop_requested_at;
ALTER TABLE source_orders DROP COLUMN requeued_at;
ALTER TABLE source_orders DROP COLUMN requeued_failures;
