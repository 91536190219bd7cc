-- The candidate view holds a key by the live-item index's rule. The index `schedule_items_live`
-- releases a key only for 'failed' and 'aborted' (a deny-list, fail-closed); a view listing the
-- statuses that hold it ('wait', 'processing') would leave an item of a status added later out of
-- both of its columns while the index still counts it, and a run would skip its order as
-- `max_attempts_reached`. Here `has_live` is every item the index counts but a success: a new
-- status holds the key and says `in_progress`.
DROP VIEW schedule_key_facts;
CREATE VIEW schedule_key_facts AS
SELECT so.site_code, so.order_no, so.lot_no,
  so.cancelled_at IS NOT NULL AS cancelled,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'success') AS has_success,
  EXISTS (SELECT 1 FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no
          AND i.status NOT IN ('failed', 'aborted') AND i.status <> 'success') AS has_live,
  (SELECT count(*) FROM schedule_items i WHERE i.site_code = so.site_code
          AND i.order_no = so.order_no AND i.lot_no = so.lot_no AND i.status = 'failed') - so.requeued_failures AS failed,
  EXISTS (SELECT 1 FROM legacy_items l WHERE l.site_code = so.site_code
          AND l.order_no = so.order_no AND l.lot_no = so.lot_no AND l.moved_at IS NULL) AS legacy_pending
FROM source_orders so;
