-- The audit row is written in the transaction of its action's effect (API.md "The audit trail"),
-- before the answer exists, so `status` may be null (no answer was given: the process ended first),
-- and `outcome` says what became of the action.
ALTER TABLE operator_actions ALTER COLUMN status DROP NOT NULL;
ALTER TABLE operator_actions ADD COLUMN outcome text NOT NULL DEFAULT 'applied'
  CHECK (outcome IN ('applied', 'unchanged', 'refused', 'failed'));
UPDATE operator_actions
   SET outcome = CASE WHEN status >= 500 THEN 'failed' ELSE 'refused' END
 WHERE status >= 400;
