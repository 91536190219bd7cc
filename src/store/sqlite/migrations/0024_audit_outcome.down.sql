CREATE TABLE operator_actions_prev (
  action_id INTEGER PRIMARY KEY AUTOINCREMENT,
  at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  principal TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),
  role      TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),
  action    TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
  target    TEXT,
  status    INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
  summary   TEXT NOT NULL DEFAULT '{}'
) STRICT;
INSERT INTO operator_actions_prev (action_id, at, principal, role, action, target, status, summary) SELECT action_id, at, principal, role, action, target, coalesce(status, 500), summary FROM operator_actions;
DROP TABLE operator_actions;
ALTER TABLE operator_actions_prev RENAME TO operator_actions;
CREATE INDEX operator_actions_by_age ON operator_actions (at);
