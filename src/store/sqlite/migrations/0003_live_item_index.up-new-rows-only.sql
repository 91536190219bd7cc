-- The seed's ENABLE NOVALIDATE (`migrate --live-index=new-rows-only`): rows above the
-- watermark are held to the rule, older rows (and their duplicates) are left as they are.
-- The watermark lives in the index's text, where invariants I1 and I10 read it.
CREATE UNIQUE INDEX schedule_items_live ON schedule_items (site_code, order_no, lot_no) WHERE status NOT IN ('failed', 'aborted') AND item_id > {watermark}
