-- Scheduling baseline: the per-item work of Scheduler::process_run as one statement, one
-- round trip, one commit per item. Claims one `wait` item of the run (FOR UPDATE SKIP
-- LOCKED), marks it success, takes the next number of the site's scope 'PO-<site>' (the
-- upsert of num_insert_issued in src/store/postgres/numbering_sql.cpp, creating the scope
-- with width 9 / max 999999999 like the standard production step), inserts the document
-- and the production order (quantity from the source order).
-- Variables: -D run=RUN_ID (a run in status 'running' with its items in 'wait').
WITH item AS (
  SELECT item_id FROM schedule_items
  WHERE run_id = :run AND status = 'wait'
  ORDER BY item_id LIMIT 1 FOR UPDATE SKIP LOCKED),
done AS (
  UPDATE schedule_items i SET status = 'success', attempt = i.attempt + 1, owner = 'pgbench',
    lease_until = NULL, updated_at = now()
  FROM item WHERE i.item_id = item.item_id
  RETURNING i.item_id, i.site_code, i.order_no, i.lot_no),
c AS (
  INSERT INTO doc_scopes AS s (scope, width, radix, max_value, last_value)
  SELECT 'PO-' || site_code, 9, 10, 999999999, 1 FROM done
  ON CONFLICT (scope) DO UPDATE SET last_value = s.last_value + 1
  WHERE s.last_value < s.max_value
  RETURNING s.scope, s.last_value, s.width, s.radix),
doc AS (
  INSERT INTO documents AS d (scope, value, number, origin, scheme, title, principal)
  SELECT c.scope, c.last_value, oo_format_number(c.last_value, c.radix, c.width), 'issued',
    'r' || c.radix || 'w' || c.width,
    'production ' || done.site_code || '/' || done.order_no || '/' || done.lot_no, 'bench'
  FROM c, done
  RETURNING d.scope, d.value, d.number)
INSERT INTO production_orders (site_code, order_no, lot_no, item_id, quantity,
                               document_scope, document_value, document_number)
SELECT done.site_code, done.order_no, done.lot_no, done.item_id, so.quantity,
  doc.scope, doc.value, doc.number
FROM done
JOIN source_orders so USING (site_code, order_no, lot_no)
CROSS JOIN doc
RETURNING item_id;
