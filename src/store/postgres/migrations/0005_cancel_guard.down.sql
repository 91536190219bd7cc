DROP FUNCTION oo_assert(boolean, text);
ALTER TABLE production_orders DROP CONSTRAINT production_orders_live_source;
ALTER TABLE production_orders DROP COLUMN source_live;
ALTER TABLE source_orders DROP CONSTRAINT source_orders_live_key;
ALTER TABLE source_orders DROP COLUMN live;
