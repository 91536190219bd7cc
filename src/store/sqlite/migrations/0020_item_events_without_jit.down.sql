-- PostgreSQL's migration 20 turns JIT off in its event triggers; SQLite has no JIT. The
-- version is kept so that both engines count their schema alike.
SELECT 1;
