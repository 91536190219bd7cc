-- PostgreSQL's migration 22 says what the outbox is (docs/EVENTS.md): thin event rows written
-- by triggers with their facts, and the view event_feed that adds each event's data, built from
-- its fact when read. SQLite has one writer at a time: a transaction that writes an event holds
-- the write lock until it commits, so event_id order is commit order and `tx` is always 0.
-- Row-level triggers. The data builders are this engine's JSON functions; the shapes are
-- PostgreSQL's.
CREATE TABLE events (
  event_id    INTEGER PRIMARY KEY AUTOINCREMENT,
  tx          INTEGER NOT NULL DEFAULT 0,
  type        TEXT NOT NULL CHECK (type IN ('order.placed', 'order.cancelled',
                'production_order.created', 'document.issued', 'run.finished')),
  key         TEXT NOT NULL,
  occurred_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ref         INTEGER NOT NULL,
  ref_scope   TEXT NOT NULL DEFAULT '',
  UNIQUE (type, key)
) STRICT;
CREATE INDEX events_feed ON events (tx, event_id);
CREATE VIEW event_feed AS
SELECT e.event_id, e.tx, e.type, e.key, e.occurred_at,
       coalesce(CASE e.type WHEN 'order.placed' THEN (SELECT json_object('order_id', CAST(o.order_id AS TEXT), 'order_no', o.order_no, 'customer_id', o.customer_id, 'warehouse_id', o.warehouse_id, 'total_cents', o.total_cents, 'lines', (SELECT json_group_array(json(x)) FROM (SELECT json_object('line_no', l.line_no, 'sku_id', l.sku_id, 'quantity', l.quantity, 'unit_price_cents', l.unit_price_cents) AS x FROM order_lines l WHERE l.order_id = o.order_id ORDER BY l.line_no))) FROM orders o WHERE o.order_id = e.ref) WHEN 'order.cancelled' THEN (SELECT json_object('order_id', CAST(o.order_id AS TEXT), 'order_no', o.order_no, 'customer_id', o.customer_id, 'warehouse_id', o.warehouse_id) FROM orders o WHERE o.order_id = e.ref) WHEN 'production_order.created' THEN (SELECT json_object('site_code', p.site_code, 'order_no', p.order_no, 'lot_no', p.lot_no, 'quantity', p.quantity, 'document_scope', p.document_scope, 'document_number', p.document_number, 'run_id', i.run_id, 'item_id', p.item_id) FROM production_orders p LEFT JOIN schedule_items i ON i.item_id = p.item_id WHERE p.item_id = e.ref) WHEN 'document.issued' THEN (SELECT json_object('scope', d.scope, 'value', d.value, 'number', d.number, 'title', d.title) FROM documents d WHERE d.scope = e.ref_scope AND d.value = e.ref) WHEN 'run.finished' THEN (SELECT json_object('run_id', r.run_id, 'kind', r.kind, 'status', r.status, 'error', r.error, 'created_at', r.created_at) FROM schedule_runs r WHERE r.run_id = e.ref) END, 'null') AS data
FROM events e;

INSERT INTO events (type, key, occurred_at, ref, ref_scope)
SELECT type, key, at, ref, ref_scope FROM (
  SELECT 'order.placed' AS type, CAST(o.order_id AS TEXT) AS key, o.created_at AS at,
         o.order_id AS ref, '' AS ref_scope FROM orders o
  UNION ALL SELECT 'order.cancelled', CAST(o.order_id AS TEXT), coalesce(o.cancelled_at, o.created_at),
         o.order_id, '' FROM orders o WHERE o.status = 'cancelled'
  UNION ALL SELECT 'production_order.created', p.site_code || '/' || p.order_no || '/' || p.lot_no,
         p.created_at, p.item_id, '' FROM production_orders p
  UNION ALL SELECT 'document.issued', d.scope || '/' || d.number, d.created_at, d.value, d.scope
    FROM documents d WHERE d.origin = 'issued'
  UNION ALL SELECT 'run.finished', CAST(r.run_id AS TEXT), coalesce(r.finished_at, r.created_at),
         r.run_id, '' FROM schedule_runs r WHERE r.status IN ('done', 'error') AND r.kind <> 'legacy')
ORDER BY at, type, key;

CREATE TRIGGER events_order_placed AFTER INSERT ON orders
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('order.placed', CAST(NEW.order_id AS TEXT), NEW.created_at, NEW.order_id);
END;
CREATE TRIGGER events_order_cancelled AFTER UPDATE OF status ON orders
WHEN NEW.status = 'cancelled' AND OLD.status <> 'cancelled'
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('order.cancelled', CAST(NEW.order_id AS TEXT), coalesce(NEW.cancelled_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
          NEW.order_id);
END;
CREATE TRIGGER events_production_order AFTER INSERT ON production_orders
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('production_order.created', NEW.site_code || '/' || NEW.order_no || '/' || NEW.lot_no,
          NEW.created_at, NEW.item_id);
END;
CREATE TRIGGER events_document_issued AFTER INSERT ON documents WHEN NEW.origin = 'issued'
BEGIN
  INSERT INTO events (type, key, occurred_at, ref, ref_scope)
  VALUES ('document.issued', NEW.scope || '/' || NEW.number, NEW.created_at, NEW.value, NEW.scope);
END;
CREATE TRIGGER events_run_finished AFTER UPDATE OF status ON schedule_runs
WHEN NEW.status IN ('done', 'error') AND OLD.status NOT IN ('done', 'error') AND NEW.kind <> 'legacy'
BEGIN
  INSERT INTO events (type, key, occurred_at, ref)
  VALUES ('run.finished', CAST(NEW.run_id AS TEXT), coalesce(NEW.finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
          NEW.run_id);
END;
