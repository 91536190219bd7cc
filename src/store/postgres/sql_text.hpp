// Pieces of PostgreSQL text that many statements share, spelled once.
#pragma once

// A timestamptz column or expression as the API's ISO 8601 UTC text with milliseconds
// ("2026-12-01T10:20:01.123Z"), the format SQLite stores (store/sqlite/sql_text.hpp).
#define OO_PG_UTC(expr) "to_char(" expr " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
