UPDATE operator_actions SET status = 500 WHERE status IS NULL;
ALTER TABLE operator_actions ALTER COLUMN status SET NOT NULL;
ALTER TABLE operator_actions DROP COLUMN outcome;
