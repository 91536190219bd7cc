-- Per-item history (issue 11, "timeline"): one row per change of an item's status or attempt,
-- written by triggers, so that every statement that changes an item (claims, fences, fails,
-- the reaper, cancel, a run's end, legacy moves) writes its event in the same statement
-- without knowing about it, and none can forget. Items are never deleted (DESIGN.md rule 9),
-- so there is no foreign key: it would cost a look-up per event. `kind` is derived from the
-- change: created (a new wait item), imported (an item inserted in another status, a legacy
-- move, or one that existed before this migration), claimed, produced, failed, released (the
-- reaper's `lease expired`), aborted, resolved (an item of a legacy run settled by `legacy
-- resolve`). `status` and `attempt` are the item's after the change: invariant I17 checks
-- that an item's last event agrees with it. Existing items get one `imported` event, at
-- their last update. `event_id` is the rowid, not AUTOINCREMENT: events are not deleted, so
-- ids only grow, and AUTOINCREMENT would update sqlite_sequence for every event.
CREATE TABLE schedule_item_events (
  event_id    INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('created', 'imported', 'claimed', 'produced', 'failed',
                                            'released', 'aborted', 'resolved')),
  status      TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  owner       TEXT,
  lease_until TEXT,
  detail      TEXT,
  at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE INDEX schedule_item_events_by_item ON schedule_item_events (item_id, event_id);
INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail, at)
  SELECT item_id, 'imported', status, attempt, owner, lease_until, error, updated_at
  FROM schedule_items ORDER BY item_id;
CREATE TRIGGER schedule_items_event_insert AFTER INSERT ON schedule_items
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  VALUES (NEW.item_id, CASE WHEN NEW.status = 'wait' THEN 'created' ELSE 'imported' END,
          NEW.status, NEW.attempt, NEW.owner, NEW.lease_until, NEW.error);
END;
CREATE TRIGGER schedule_items_event_update AFTER UPDATE OF status, attempt ON schedule_items
WHEN OLD.status IS NOT NEW.status OR OLD.attempt IS NOT NEW.attempt
BEGIN
  INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until, detail)
  VALUES (NEW.item_id, CASE
            WHEN NEW.status = 'processing' THEN 'claimed'
            WHEN NEW.status = 'aborted' THEN 'aborted'
            WHEN EXISTS (SELECT 1 FROM schedule_runs r WHERE r.run_id = NEW.run_id
                         AND r.kind = 'legacy') THEN 'resolved'
            WHEN NEW.status = 'success' THEN 'produced'
            WHEN NEW.error = 'lease expired' THEN 'released'
            ELSE 'failed' END,
          NEW.status, NEW.attempt, NEW.owner, NEW.lease_until, NEW.error);
END;
