DROP TRIGGER events_run_finished;
DROP TRIGGER events_document_issued;
DROP TRIGGER events_production_order;
DROP TRIGGER events_order_cancelled;
DROP TRIGGER events_order_placed;
DROP VIEW event_feed;
DROP TABLE events;
