-- The operator's actions on scheduling (API.md "Console actions"). A re-queue gives an order
-- that reached the attempt limit a fresh budget without deleting its failed items:
-- `requeued_failures` is how many of its failed items no longer count, and the view's
-- `failed` subtracts it, so that every candidate statement keeps reading one column. A stop
-- request is a mark on the run that the process running it reads at its next batch
-- boundary (whichever process that is). A re-queue's Idempotency-Key receipt is a route of
-- request_receipts of its own.
ALTER TABLE source_orders ADD COLUMN requeued_failures INTEGER NOT NULL DEFAULT 0 CHECK (requeued_failures >= 0);
ALTER TABLE source_orders ADD COLUMN requeued_at TEXT;
ALTER TABLE schedule_runs ADD COLUMN stop_requested_at TEXT;
-- SQLite cannot change a CHECK: the receipts table is rebuilt with the new route.
CREATE TABLE request_receipts_next (
  route           TEXT NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment', 'schedule_requeue')),
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
  created_at FROM request_receipts;
DROP TABLE request_receipts;
ALTER TABLE request_receipts_next RENAME TO request_receipts;
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
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
