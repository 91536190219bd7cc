-- A cancelled source order never has a production order, enforced by the database and not
-- only by the order of statements (a worker completing an item while the order is being
-- cancelled). `live` mirrors `cancelled_at`; a production order must reference a live
-- source order, and a source order with a production order cannot stop being live.
-- PostgreSQL's foreign-key checks lock and re-check the referenced row, so the race is
-- closed whichever transaction comes first.
ALTER TABLE source_orders ADD COLUMN live boolean GENERATED ALWAYS AS (cancelled_at IS NULL) STORED;
ALTER TABLE source_orders ADD CONSTRAINT source_orders_live_key UNIQUE (site_code, order_no, lot_no, live);
ALTER TABLE production_orders ADD COLUMN source_live boolean NOT NULL DEFAULT true
  CONSTRAINT production_orders_source_live_check CHECK (source_live);
ALTER TABLE production_orders ADD CONSTRAINT production_orders_live_source
  FOREIGN KEY (site_code, order_no, lot_no, source_live)
  REFERENCES source_orders (site_code, order_no, lot_no, live);

-- Raises inside the statement (so a pipelined COMMIT becomes a rollback) when a guard
-- that must hold does not: a check made after COMMIT was sent would check nothing.
CREATE FUNCTION oo_assert(ok boolean, message text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'OO001', MESSAGE = message;
  END IF;
  RETURN true;
END $$;
