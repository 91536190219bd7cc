-- A cancelled source order never has a production order. SQLite has one writer at a time,
-- so triggers that read the other table are enough to make it a rule of the database.
CREATE TRIGGER production_orders_live_source BEFORE INSERT ON production_orders
WHEN NOT EXISTS (SELECT 1 FROM source_orders so WHERE so.site_code = NEW.site_code
                 AND so.order_no = NEW.order_no AND so.lot_no = NEW.lot_no
                 AND so.cancelled_at IS NULL)
BEGIN
  SELECT RAISE(ABORT, 'production order for a cancelled or unknown source order');
END;
CREATE TRIGGER source_orders_cancel_unproduced BEFORE UPDATE OF cancelled_at ON source_orders
WHEN NEW.cancelled_at IS NOT NULL AND EXISTS (SELECT 1 FROM production_orders p
     WHERE p.site_code = NEW.site_code AND p.order_no = NEW.order_no AND p.lot_no = NEW.lot_no)
BEGIN
  SELECT RAISE(ABORT, 'a source order with a production order cannot be cancelled');
END;
