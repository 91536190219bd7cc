-- Its own version so that a database holding duplicate live items (legacy data loaded
-- before it) stops here with a clear message, and can be fixed with `legacy dedup`.
-- At most one live item per business key. A deny-list: a status added later blocks
-- duplicates until it is deliberately listed here (fail-closed).
CREATE UNIQUE INDEX schedule_items_live ON schedule_items (site_code, order_no, lot_no)
  WHERE status NOT IN ('failed', 'aborted');
