-- Its own version so that a database holding duplicate live items (legacy data loaded
-- before it) stops here with a clear message, and can be fixed with `legacy dedup`.
-- CONCURRENTLY: schedule_items can be big by the time this runs, and a plain CREATE INDEX
-- holds off every writer for the whole build. One statement: it runs outside a transaction.
-- At most one live item per business key. A deny-list: a status added later blocks
-- duplicates until it is deliberately listed here (fail-closed).
-- onceorder: no-transaction
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS schedule_items_live ON schedule_items (site_code, order_no, lot_no) WHERE status NOT IN ('failed', 'aborted')
