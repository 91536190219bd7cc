DROP TRIGGER schedule_items_event_update;
DROP TRIGGER schedule_items_event_insert;
DROP TABLE schedule_item_events;
