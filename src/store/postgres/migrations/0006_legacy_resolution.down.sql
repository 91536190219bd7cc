DROP INDEX legacy_items_pending;
ALTER TABLE legacy_items DROP COLUMN resolved_at, DROP COLUMN resolution;
