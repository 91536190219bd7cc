-- The audit row is written in the transaction of its action's effect (API.md "The audit trail"),
-- before the answer exists, so `status` may be null (no answer was given: the process ended first),
-- and `outcome` says what became of the action. SQLite cannot drop a NOT NULL: the table is rebuilt
-- (it is small, and written only by audited requests).
CREATE TABLE operator_actions_next (
  action_id INTEGER PRIMARY KEY AUTOINCREMENT,
  at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  principal TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),
  role      TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),
  action    TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
  target    TEXT,
  status    INTEGER  CHECK (status BETWEEN 100 AND 599),
  summary   TEXT NOT NULL DEFAULT '{}',
  outcome   TEXT NOT NULL DEFAULT 'applied' CHECK (outcome IN ('applied', 'unchanged', 'refused', 'failed'))
) STRICT;
INSERT INTO operator_actions_next (action_id, at, principal, role, action, target, status, summary, outcome) SELECT action_id, at, principal, role, action, target, status, summary, CASE WHEN status >= 500 THEN 'failed' WHEN status >= 400 THEN 'refused' ELSE 'applied' END FROM operator_actions;
DROP TABLE operator_actions;
ALTER TABLE operator_actions_next RENAME TO operator_actions;
CREATE INDEX operator_actions_by_age ON operator_actions (at);
