-- The operator's word on a legacy row the old system had in flight at the cutover (made or
-- not made): `legacy dedup --apply` refuses to move a `processing` row without it, so that
-- OnceOrder never makes again what the old system may have made. The index keeps the
-- "no candidate while its legacy history is staged" test cheap (empty after the cutover).
ALTER TABLE legacy_items
  ADD COLUMN resolution text CHECK (resolution IN ('made', 'not_made')),
  ADD COLUMN resolved_at timestamptz;
CREATE INDEX legacy_items_pending ON legacy_items (site_code, order_no, lot_no) WHERE moved_at IS NULL;
