ALTER FUNCTION oo_item_events_updated() RESET jit;
ALTER FUNCTION oo_item_events_inserted() RESET jit;
