-- The seed's ENABLE NOVALIDATE: rows above the watermark are held to the rule, older rows
-- (and their duplicates) are left as they are. The watermark lives in the predicate, so the
-- index itself says which mode it is in (invariants I1 and I10 read it from the catalog).
-- onceorder: no-transaction
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS schedule_items_live ON schedule_items (site_code, order_no, lot_no) WHERE status NOT IN ('failed', 'aborted') AND item_id > {watermark}
