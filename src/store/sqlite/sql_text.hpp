// Pieces of SQLite text that many statements share, spelled once.
#pragma once

// A time as the API's ISO 8601 UTC text with milliseconds ("2026-12-01T10:20:01.123Z"),
// the form every timestamp column holds: `modifiers` are strftime's time value and
// modifiers, e.g. "'now'" or "'now', '-5 seconds'".
#define OO_SQLITE_TIME(modifiers) "strftime('%Y-%m-%dT%H:%M:%fZ', " modifiers ")"
#define OO_SQLITE_NOW OO_SQLITE_TIME("'now'")
