DROP TRIGGER schedule_items_event_update ON schedule_items;
DROP TRIGGER schedule_items_event_insert ON schedule_items;
DROP FUNCTION oo_item_events_updated();
DROP FUNCTION oo_item_events_inserted();
DROP TABLE schedule_item_events;
