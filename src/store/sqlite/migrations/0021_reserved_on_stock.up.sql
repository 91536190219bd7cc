-- PostgreSQL's migration 21 says why: reservations are the lines of placed orders, counted on
-- their stock rows.
ALTER TABLE stock ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0);
UPDATE stock SET reserved = coalesce((SELECT sum(r.quantity) FROM reservations r
  WHERE r.warehouse_id = stock.warehouse_id AND r.sku_id = stock.sku_id
  AND r.status = 'active'), 0);
DROP TABLE reservations;
