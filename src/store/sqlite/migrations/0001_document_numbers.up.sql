-- Document numbers (seed 003): one counter row per scope, taken and used in the
-- transaction that inserts the document; (scope, value) unique as the backstop.
-- Timestamps are ISO 8601 UTC text with milliseconds.
CREATE TABLE doc_scopes (
  scope      TEXT PRIMARY KEY CHECK (length(scope) BETWEEN 1 AND 64 AND scope NOT GLOB '*[^A-Za-z0-9._-]*'),
  width      INTEGER NOT NULL DEFAULT 4 CHECK (width BETWEEN 1 AND 18),
  radix      INTEGER NOT NULL DEFAULT 10 CHECK (radix BETWEEN 2 AND 36),
  max_value  INTEGER NOT NULL DEFAULT 9999 CHECK (max_value >= 1),
  last_value INTEGER NOT NULL DEFAULT 0 CHECK (last_value >= 0 AND last_value <= max_value),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

CREATE TABLE documents (
  scope      TEXT NOT NULL REFERENCES doc_scopes (scope),
  value      INTEGER NOT NULL CHECK (value >= 1),
  number     TEXT NOT NULL,
  origin     TEXT NOT NULL CHECK (origin IN ('issued', 'legacy')),
  scheme     TEXT NOT NULL,
  title      TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (scope, value)
) STRICT;

CREATE TABLE document_receipts (
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  title           TEXT NOT NULL,
  value           INTEGER NOT NULL,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (scope, idempotency_key),
  FOREIGN KEY (scope, value) REFERENCES documents (scope, value)
) STRICT;
