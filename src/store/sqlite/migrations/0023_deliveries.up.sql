-- PostgreSQL's migration 23 says what these are.
CREATE TABLE event_consumers (
  name       TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64
                                     AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  after_tx   INTEGER NOT NULL CHECK (after_tx >= 0),
  after_id   INTEGER NOT NULL CHECK (after_id >= 0),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE TABLE endpoints (
  name            TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64
                                          AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
  url             TEXT NOT NULL,
  types           TEXT NOT NULL,
  secret          TEXT NOT NULL,
  delivery        TEXT NOT NULL CHECK (delivery IN ('at_least_once', 'at_most_once')),
  max_attempts    INTEGER NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
  backoff_seconds INTEGER NOT NULL CHECK (backoff_seconds BETWEEN 1 AND 86400),
  after_tx        INTEGER NOT NULL CHECK (after_tx >= 0),
  after_id        INTEGER NOT NULL CHECK (after_id >= 0),
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE TABLE deliveries (
  endpoint     TEXT NOT NULL REFERENCES endpoints (name) ON DELETE CASCADE,
  event_id     INTEGER NOT NULL REFERENCES events (event_id),
  ev_tx        INTEGER NOT NULL,
  key          TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'dead',
                                               'in_doubt')),
  mode         TEXT CHECK (mode IN ('at_least_once', 'at_most_once')),
  attempt      INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  budget_from  INTEGER NOT NULL DEFAULT 0 CHECK (budget_from >= 0 AND budget_from <= attempt),
  owner        TEXT,
  lease_until  TEXT,
  next_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  last_error   TEXT,
  last_status  INTEGER,
  resolution   TEXT CHECK (resolution IN ('delivered', 'resend', 'redeliver')),
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  sent_at      TEXT,
  delivered_at TEXT,
  PRIMARY KEY (endpoint, event_id),
  CHECK ((status = 'sending') = (lease_until IS NOT NULL))
) STRICT;
CREATE INDEX deliveries_due ON deliveries (next_at, ev_tx, event_id) WHERE status = 'pending';
CREATE INDEX deliveries_sending ON deliveries (lease_until) WHERE status = 'sending';
CREATE INDEX deliveries_open_by_key ON deliveries (endpoint, key, ev_tx, event_id)
  WHERE status <> 'delivered';
CREATE INDEX deliveries_by_status ON deliveries (endpoint, status, event_id);
