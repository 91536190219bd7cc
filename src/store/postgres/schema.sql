-- PostgreSQL: what the migration runner (store/migrate.cpp) asks of the schema.
-- Named statements (store/sql_catalog.hpp).

-- name: migrate_has_table
SELECT count(*)
FROM pg_tables
WHERE schemaname = current_schema() AND tablename = 'schema_migrations';
