-- Receipts of the other creating requests (API.md "Idempotency-Key on the other creating
-- POSTs"): one table for the three routes, scoped per route and `scope` ('' for source orders
-- and runs, '<warehouse>/<sku>' for adjustments). The row is inserted first (a concurrent
-- request with the key waits on it) and its `answer` written by the transaction that makes
-- the effect; a run's receipt points at its run. A new table: no writer to spare from a
-- plain index build.
CREATE TABLE request_receipts (
  route           text NOT NULL CHECK (route IN ('source_orders', 'schedule_run', 'stock_adjustment')),
  scope           text NOT NULL,
  idempotency_key text NOT NULL,
  request         text NOT NULL,
  answer          text,
  run_id          bigint REFERENCES schedule_runs (run_id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (route, scope, idempotency_key),
  CHECK (run_id IS NULL OR route = 'schedule_run')
);
CREATE INDEX request_receipts_by_age ON request_receipts (created_at);
