-- The audit trail (API.md "The audit trail"): one row per audited request, written by the
-- HTTP layer right after the handler's own transaction (http/api.cpp). Paged newest first by
-- action_id; `at` is indexed for pruning by age. A new table: a plain index build blocks no
-- writer.
CREATE TABLE operator_actions (
  action_id bigserial PRIMARY KEY,
  at        timestamptz NOT NULL DEFAULT now(),
  principal text NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),
  role      text NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),
  action    text NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
  target    text,
  status    integer NOT NULL CHECK (status BETWEEN 100 AND 599),
  summary   text NOT NULL DEFAULT '{}'
);
CREATE INDEX operator_actions_by_age ON operator_actions (at);
