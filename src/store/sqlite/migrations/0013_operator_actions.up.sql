-- The audit trail (API.md "The audit trail"): one row per audited request, written by the
-- HTTP layer right after the handler's own transaction (http/api.cpp).
CREATE TABLE operator_actions (
  action_id INTEGER PRIMARY KEY AUTOINCREMENT,
  at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  principal TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),
  role      TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),
  action    TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
  target    TEXT,
  status    INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
  summary   TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX operator_actions_by_age ON operator_actions (at);
