DROP INDEX schedule_items_live;
