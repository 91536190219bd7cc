-- Per-item history (issue 11, "timeline"): one row per change of an item's status or attempt,
-- written by triggers, so that every statement that changes an item (claims, fences, fails,
-- the reaper, cancel, a run's end, legacy moves) writes its events in the same statement
-- without knowing about it, and none can forget. Statement-level triggers over transition
-- tables: one INSERT … SELECT per statement, whatever its row count, so a batch of claims or
-- fences stays one statement and one round trip (a row-level trigger would call PL/pgSQL per
-- row). Items are never deleted (DESIGN.md rule 9), so there is no foreign key: it would add
-- a check per event. Kinds, `status` and `attempt` as on SQLite (its migration 19).
-- Existing items get one `imported` event, at their last update.
-- Writers wait from here to the commit: none may change an item between the backfill below and
-- the triggers (CREATE TRIGGER would take this lock anyway, later).
LOCK TABLE schedule_items IN SHARE ROW EXCLUSIVE MODE;
CREATE TABLE schedule_item_events (
  event_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  item_id     bigint NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('created', 'imported', 'claimed', 'produced', 'failed',
                                            'released', 'aborted', 'resolved')),
  status      text NOT NULL,
  attempt     integer NOT NULL,
  owner       text,
  lease_until timestamptz,
  detail      text,
  at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_item_events_by_item ON schedule_item_events (item_id, event_id);
INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail, at)
  SELECT item_id, 'imported', status, attempt, owner, lease_until, error, updated_at
  FROM schedule_items ORDER BY item_id;

CREATE FUNCTION oo_item_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  SELECT n.item_id, CASE WHEN n.status = 'wait' THEN 'created' ELSE 'imported' END, n.status,
         n.attempt, n.owner, n.lease_until, n.error
  FROM oo_new_items n ORDER BY n.item_id;
  RETURN NULL;
END $$;
CREATE TRIGGER schedule_items_event_insert AFTER INSERT ON schedule_items
  REFERENCING NEW TABLE AS oo_new_items FOR EACH STATEMENT EXECUTE FUNCTION oo_item_events_inserted();

CREATE FUNCTION oo_item_events_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  SELECT n.item_id, CASE
           WHEN n.status = 'processing' THEN 'claimed'
           WHEN n.status = 'aborted' THEN 'aborted'
           WHEN EXISTS (SELECT 1 FROM schedule_runs r WHERE r.run_id = n.run_id
                        AND r.kind = 'legacy') THEN 'resolved'
           WHEN n.status = 'success' THEN 'produced'
           WHEN n.error = 'lease expired' THEN 'released'
           ELSE 'failed' END,
         n.status, n.attempt, n.owner, n.lease_until, n.error
  FROM oo_new_items n JOIN oo_old_items o ON o.item_id = n.item_id
  WHERE o.status IS DISTINCT FROM n.status OR o.attempt IS DISTINCT FROM n.attempt
  ORDER BY n.item_id;
  RETURN NULL;
END $$;
CREATE TRIGGER schedule_items_event_update AFTER UPDATE ON schedule_items
  REFERENCING OLD TABLE AS oo_old_items NEW TABLE AS oo_new_items
  FOR EACH STATEMENT EXECUTE FUNCTION oo_item_events_updated();
