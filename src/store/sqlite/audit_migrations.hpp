// Migration 24 for SQLite (included by sqlite/migrations.cpp): the
// audit row is written in the transaction of its action's effect (API.md "The audit trail"),
// before the answer exists, so `status` may be null (no answer was given: the process ended
// first), and `outcome` says what became of the action. SQLite cannot drop a NOT NULL: the
// table is rebuilt (it is small, and written only by audited requests).
#pragma once

#include <string_view>

#include "store/sqlite/sql_text.hpp"

namespace onceorder::store::sqlite {

#define OO_AUDIT_COLUMNS(STATUS_NULL)                                                        \
  "  action_id INTEGER PRIMARY KEY AUTOINCREMENT,\n"                                         \
  "  at        TEXT NOT NULL DEFAULT (" OO_SQLITE_NOW                                        \
  "),\n"                                                                                     \
  "  principal TEXT NOT NULL CHECK (length(principal) BETWEEN 1 AND 100),\n"                 \
  "  role      TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'customer')),\n" \
  "  action    TEXT NOT NULL CHECK (length(action) BETWEEN 1 AND 64),\n"                     \
  "  target    TEXT,\n"                                                                      \
  "  status    INTEGER " STATUS_NULL                                                         \
  " CHECK (status BETWEEN 100 AND 599),\n"                                                   \
  "  summary   TEXT NOT NULL DEFAULT '{}'"

inline constexpr std::string_view kAuditOutcomeUp =
    "CREATE TABLE operator_actions_next (\n" OO_AUDIT_COLUMNS(
        "") ",\n"
            "  outcome   TEXT NOT NULL DEFAULT 'applied' CHECK (outcome IN ('applied', "
            "'unchanged', 'refused', 'failed'))\n"
            ") STRICT;\n"
            "INSERT INTO operator_actions_next (action_id, at, principal, role, action, target, "
            "status, summary, outcome) SELECT action_id, at, principal, role, action, target, "
            "status, summary, CASE WHEN status >= 500 THEN 'failed' WHEN status >= 400 THEN "
            "'refused' ELSE 'applied' END FROM operator_actions;\n"
            "DROP TABLE operator_actions;\n"
            "ALTER TABLE operator_actions_next RENAME TO operator_actions;\n"
            "CREATE INDEX operator_actions_by_age ON operator_actions (at);\n";

inline constexpr std::string_view kAuditOutcomeDown =
    "CREATE TABLE operator_actions_prev (\n" OO_AUDIT_COLUMNS(
        "NOT NULL") "\n) STRICT;\n"
                    "INSERT INTO operator_actions_prev (action_id, at, principal, role, action, "
                    "target, status, summary) SELECT action_id, at, principal, role, action, "
                    "target, coalesce(status, 500), summary FROM operator_actions;\n"
                    "DROP TABLE operator_actions;\n"
                    "ALTER TABLE operator_actions_prev RENAME TO operator_actions;\n"
                    "CREATE INDEX operator_actions_by_age ON operator_actions (at);\n";

#undef OO_AUDIT_COLUMNS

}  // namespace onceorder::store::sqlite
