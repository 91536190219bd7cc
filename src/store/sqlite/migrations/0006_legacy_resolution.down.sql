DROP INDEX legacy_items_pending;
ALTER TABLE legacy_items DROP COLUMN resolved_at;
ALTER TABLE legacy_items DROP COLUMN resolution;
