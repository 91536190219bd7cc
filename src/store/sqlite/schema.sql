-- SQLite: what the migration runner (store/migrate.cpp) asks of the schema.
-- Named statements (store/sql_catalog.hpp).

-- name: migrate_has_table
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations';
