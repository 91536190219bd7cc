DROP TABLE legacy_items;
DROP TABLE production_orders;
DROP TABLE schedule_items;
DROP TABLE schedule_runs;
DROP TABLE source_orders;
