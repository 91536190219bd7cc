-- Production scheduling (seed 000). Business data (source_orders) and processing state
-- (schedule_items) are different facts in different tables.
CREATE TABLE source_orders (
  site_code  TEXT NOT NULL,
  order_no   TEXT NOT NULL,
  lot_no     TEXT NOT NULL,
  quantity   INTEGER NOT NULL CHECK (quantity > 0),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (site_code, order_no, lot_no)
) STRICT;

CREATE TABLE schedule_runs (
  run_id       INTEGER PRIMARY KEY AUTOINCREMENT,
  kind         TEXT NOT NULL CHECK (kind IN ('batch', 'manual', 'legacy')),
  status       TEXT NOT NULL CHECK (status IN ('creating', 'running', 'done', 'error')),
  owner        TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  error        TEXT,
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at  TEXT
) STRICT;
CREATE INDEX schedule_runs_live ON schedule_runs (status) WHERE status IN ('creating', 'running');

CREATE TABLE schedule_items (
  item_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id      INTEGER NOT NULL REFERENCES schedule_runs (run_id),
  site_code   TEXT NOT NULL,
  order_no    TEXT NOT NULL,
  lot_no      TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  attempt     INTEGER NOT NULL DEFAULT 0,
  owner       TEXT,
  lease_until TEXT,
  error       TEXT,
  created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  FOREIGN KEY (site_code, order_no, lot_no) REFERENCES source_orders (site_code, order_no, lot_no)
) STRICT;
CREATE INDEX schedule_items_by_key ON schedule_items (site_code, order_no, lot_no, status);
CREATE INDEX schedule_items_by_run ON schedule_items (run_id, status);
CREATE INDEX schedule_items_processing ON schedule_items (lease_until) WHERE status = 'processing';

CREATE TABLE production_orders (
  site_code       TEXT NOT NULL,
  order_no        TEXT NOT NULL,
  lot_no          TEXT NOT NULL,
  item_id         INTEGER NOT NULL UNIQUE REFERENCES schedule_items (item_id),
  quantity        INTEGER NOT NULL,
  document_scope  TEXT NOT NULL,
  document_value  INTEGER NOT NULL,
  document_number TEXT NOT NULL,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (site_code, order_no, lot_no),
  FOREIGN KEY (document_scope, document_value) REFERENCES documents (scope, value)
) STRICT;

-- Legacy items wait here until `onceorder legacy dedup --apply` moves them.
CREATE TABLE legacy_items (
  legacy_id  INTEGER PRIMARY KEY AUTOINCREMENT,
  line_no    INTEGER NOT NULL,
  site_code  TEXT NOT NULL,
  order_no   TEXT NOT NULL,
  lot_no     TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('wait', 'processing', 'success', 'failed', 'aborted')),
  created_at TEXT NOT NULL,
  run_id     TEXT,
  moved_at   TEXT,
  item_id    INTEGER
) STRICT;
