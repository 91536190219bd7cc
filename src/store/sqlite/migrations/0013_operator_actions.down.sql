DROP TABLE operator_actions
