-- PostgreSQL's migration 28 adds oo_assert_unmoved, the SQLSTATE a batch decided ahead raises;
-- SQLite never decides a batch ahead. The version is kept so that both engines count their
-- schema alike.
SELECT 1;
