-- PostgreSQL: the invariant queries: each returns one text column per violation.
-- Named statements (store/sql_catalog.hpp); each invariant's id and promise are in
-- store/invariants_sql.cpp.

-- Text both engines read the same way (`||` concatenates on both); only the catalog (I10),
-- "now" (I8) and string aggregation (I6, I12) differ.
-- WATERMARK: the live index's watermark when it protects new rows only (migrate
-- --live-index=new-rows-only), NULL for the full index; read from the index itself, which is
-- the one record of its mode. Duplicates all of whose items lie at or below it are the ones
-- the operator chose to leave alone: not violations, but counted apart (inv_i1_accepted).
-- name: inv_i1
SELECT 'key ' || site_code || '/' || order_no || '/' || lot_no || ' has ' || count(*) ||
    ' live items'
FROM schedule_items
WHERE status NOT IN ('failed', 'aborted')
GROUP BY site_code, order_no, lot_no
HAVING count(*) > 1 AND max(item_id) > coalesce((
  SELECT CAST(substring(pg_get_indexdef(to_regclass('schedule_items_live')) FROM 'item_id > (\d+)')
      AS bigint)
), -1);

-- I1's duplicates at or below the watermark: reported, not violations.
-- name: inv_i1_accepted
SELECT 'key ' || site_code || '/' || order_no || '/' || lot_no || ' has ' || count(*) ||
    ' live items, all at or below the new-rows-only watermark ' || (
  SELECT CAST(substring(pg_get_indexdef(to_regclass('schedule_items_live')) FROM 'item_id > (\d+)')
      AS bigint)
)
FROM schedule_items
WHERE status NOT IN ('failed', 'aborted')
GROUP BY site_code, order_no, lot_no
HAVING count(*) > 1 AND max(item_id) <= (
  SELECT CAST(substring(pg_get_indexdef(to_regclass('schedule_items_live')) FROM 'item_id > (\d+)')
      AS bigint)
);

-- name: inv_i2
SELECT 'item ' || i.item_id || ' is ' || i.status || ' but run ' || i.run_id || ' is ' || r.status
FROM schedule_items i
JOIN schedule_runs r ON r.run_id = i.run_id
WHERE i.status IN ('wait', 'processing') AND r.status NOT IN ('creating', 'running');

-- name: inv_i3
SELECT 'success item ' || i.item_id || ' has no production order'
FROM schedule_items i
WHERE i.status = 'success' AND NOT EXISTS (SELECT 1 FROM production_orders p WHERE p.item_id =
    i.item_id) AND NOT EXISTS (
  SELECT 1
  FROM schedule_runs r
  WHERE r.run_id = i.run_id AND r.kind = 'legacy'
)
UNION ALL
SELECT 'production order ' || p.site_code || '/' || p.order_no || '/' || p.lot_no ||
    ' belongs to item ' || p.item_id || ' which is ' || coalesce(i.status, 'missing')
FROM production_orders p
LEFT JOIN schedule_items i ON i.item_id = p.item_id
WHERE i.status IS NULL OR i.status <> 'success' OR i.site_code <> p.site_code OR i.order_no <>
    p.order_no OR i.lot_no <> p.lot_no;

-- A reservation is a line of a placed order: its stock row counts it in `reserved`, and the
-- ledger holds one `reservation` entry for it and, once the order is cancelled, one `release`.
-- name: inv_i4
SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || ': available ' || s.available ||
    ' but its ledger sums to ' || coalesce(l.total, 0)
FROM stock s
LEFT JOIN (
  SELECT warehouse_id, sku_id, sum(delta) AS total
  FROM stock_ledger
  GROUP BY warehouse_id, sku_id
) l ON l.warehouse_id = s.warehouse_id AND l.sku_id = s.sku_id
WHERE s.available <> coalesce(l.total, 0)
UNION ALL
SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || ': reserved ' || s.reserved ||
    ' but its placed orders hold ' || coalesce(r.q, 0)
FROM stock s
LEFT JOIN (
  SELECT o.warehouse_id, ol.sku_id, sum(ol.quantity) AS q
  FROM orders o
  JOIN order_lines ol ON ol.order_id = o.order_id
  WHERE o.status = 'placed'
  GROUP BY o.warehouse_id, ol.sku_id
) r ON r.warehouse_id = s.warehouse_id AND r.sku_id = s.sku_id
WHERE s.reserved <> coalesce(r.q, 0)
UNION ALL
SELECT 'stock ' || s.warehouse_id || '/' || s.sku_id || ': available + reserved = ' || (s.available
    + s.reserved) || ' but initial + adjustments = ' || coalesce(a.total, 0)
FROM stock s
LEFT JOIN (
  SELECT warehouse_id, sku_id, sum(delta) AS total
  FROM stock_ledger
  WHERE kind IN ('initial', 'adjustment')
  GROUP BY warehouse_id, sku_id
) a ON a.warehouse_id = s.warehouse_id AND a.sku_id = s.sku_id
WHERE s.available + s.reserved <> coalesce(a.total, 0)
UNION ALL
SELECT 'stock ' || warehouse_id || '/' || sku_id || ' is negative'
FROM stock
WHERE available < 0 OR reserved < 0;

-- Per order line, the ledger's reservation and release entries that match it (its warehouse,
-- SKU and quantity): one reservation, and one release exactly when the order is cancelled.
-- An entry that matches no line is reported on its own.
-- name: inv_i5
SELECT 'order ' || o.order_id || ' is ' || o.status || ' but line ' || ol.line_no || ' has ' ||
    coalesce(e.r, 0) || ' reservation and ' || coalesce(e.f, 0) || ' release entries'
FROM orders o
JOIN order_lines ol ON ol.order_id = o.order_id
LEFT JOIN (
  SELECT g.order_id, g.line_no, g.warehouse_id, g.sku_id,
      sum(CASE WHEN g.kind = 'reservation' THEN -g.delta ELSE 0 END) AS rq,
      sum(CASE WHEN g.kind = 'release' THEN g.delta ELSE 0 END) AS fq,
      sum(CASE WHEN g.kind = 'reservation' THEN 1 ELSE 0 END) AS r,
      sum(CASE WHEN g.kind = 'release' THEN 1 ELSE 0 END) AS f
  FROM stock_ledger g
  WHERE g.kind IN ('reservation', 'release')
  GROUP BY g.order_id, g.line_no, g.warehouse_id, g.sku_id
) e ON e.order_id = ol.order_id AND e.line_no = ol.line_no AND e.warehouse_id = o.warehouse_id AND
    e.sku_id = ol.sku_id
WHERE coalesce(e.r, 0) <> 1 OR e.rq <> ol.quantity OR coalesce(e.f,
    0) <> CASE o.status WHEN 'placed' THEN 0 ELSE 1 END OR (e.f = 1 AND e.fq <> ol.quantity)
UNION ALL
SELECT 'ledger entry ' || g.entry_id || ' (' || g.kind || ') is for no line of an order: order ' ||
    coalesce(g.order_id, 0) || ' line ' || coalesce(g.line_no,
    0) || ', stock ' || g.warehouse_id || '/' || g.sku_id
FROM stock_ledger g
WHERE g.kind IN ('reservation', 'release') AND NOT EXISTS (
  SELECT 1
  FROM orders o
  JOIN order_lines ol ON ol.order_id = o.order_id
  WHERE ol.order_id = g.order_id AND ol.line_no = g.line_no AND o.warehouse_id = g.warehouse_id AND
      ol.sku_id = g.sku_id
);

-- LINES: the order's lines as a receipt stores them ("101x3,202x1"), per engine.
-- name: inv_i6
SELECT 'receipt ' || r.customer_id || '/' || r.idempotency_key ||
    ' is placed but its order differs from the request'
FROM order_receipts r
JOIN orders o ON o.order_id = r.order_id
WHERE r.outcome = 'placed' AND (o.warehouse_id <> r.warehouse_id OR o.customer_id <> r.customer_id
    OR r.normalized <> (
  SELECT string_agg(sku_id || 'x' || quantity, ',' ORDER BY sku_id) FROM order_lines WHERE order_id
      = r.order_id
))
UNION ALL
SELECT 'receipt ' || customer_id || '/' || idempotency_key || ' is ' || coalesce(outcome,
    'undecided') || ' with order ' || coalesce(order_id, 0)
FROM order_receipts
WHERE outcome IS NULL OR (outcome = 'placed' AND order_id IS NULL) OR (outcome = 'out_of_stock' AND
    order_id IS NOT NULL);

-- name: inv_i7
SELECT 'scope ' || d.scope || ': issued value ' || d.value || ' has no value ' || (d.value - 1) ||
    ' before it'
FROM documents d
WHERE d.origin = 'issued' AND d.value > 1 AND NOT EXISTS (
  SELECT 1
  FROM documents p
  WHERE p.scope = d.scope AND p.value = d.value - 1
)
UNION ALL
SELECT 'scope ' || s.scope || ': counter at ' || s.last_value || ' but largest document value is '
    || COALESCE((SELECT max(value) FROM documents d WHERE d.scope = s.scope), 0)
FROM doc_scopes s
WHERE s.last_value <> COALESCE((SELECT max(value) FROM documents d WHERE d.scope = s.scope), 0);

-- A processing item without a lease would never be reaped: as bad as an expired one.
-- name: inv_i8
SELECT 'item ' || item_id || ' is processing with ' || CASE WHEN lease_until IS NULL THEN 'no lease'
    ELSE 'a lease that expired at ' || lease_until END
FROM schedule_items
WHERE status = 'processing' AND (lease_until IS NULL OR lease_until < now());

-- Cancel is all or nothing: a cancelled source order is never produced nor live, and an
-- order's source orders are cancelled exactly when the order is.
-- name: inv_i9
SELECT 'cancelled source order ' || s.site_code || '/' || s.order_no || '/' || s.lot_no ||
    ' has a production order'
FROM source_orders s
WHERE s.cancelled_at IS NOT NULL AND EXISTS (
  SELECT 1
  FROM production_orders p
  WHERE p.site_code = s.site_code AND p.order_no = s.order_no AND p.lot_no = s.lot_no
)
UNION ALL
SELECT 'cancelled source order ' || s.site_code || '/' || s.order_no || '/' || s.lot_no ||
    ' has item ' || i.item_id || ' in ' || i.status
FROM source_orders s
JOIN schedule_items i ON i.site_code = s.site_code AND i.order_no = s.order_no AND i.lot_no =
    s.lot_no
WHERE s.cancelled_at IS NOT NULL AND i.status IN ('success', 'wait', 'processing')
UNION ALL
SELECT 'order ' || o.order_id || ' is ' || o.status || ' but its source order ' || s.site_code ||
    '/' || s.order_no || '/' || s.lot_no || CASE WHEN s.cancelled_at IS NULL THEN
    ' is not cancelled' ELSE ' is cancelled' END
FROM orders o
JOIN order_lines ol ON ol.order_id = o.order_id
JOIN source_orders s ON s.site_code = 'W' || o.warehouse_id AND s.order_no = o.order_no AND s.lot_no
    = CAST(ol.line_no AS TEXT)
WHERE (o.status = 'cancelled') <> (s.cancelled_at IS NOT NULL);

-- PostgreSQL: constraints by definition (and name where the design names them), validated
-- (not NOT VALID) and with a valid index; the live index with its exact columns and predicate.
-- name: inv_i10
WITH e(since, tbl, name, def) AS (
  VALUES (4, 'orders', NULL, 'UNIQUE (order_no)'), (2, 'production_orders', NULL,
      'PRIMARY KEY (site_code, order_no, lot_no)'), (2, 'production_orders', NULL,
      'UNIQUE (item_id)'), (1, 'documents', NULL, 'PRIMARY KEY (scope, value)'), (1, 'doc_scopes',
      NULL, 'CHECK (((last_value >= 0) AND (last_value <= max_value)))'), (4, 'stock', NULL,
      'CHECK ((available >= 0))'), (4, 'order_receipts', NULL,
      'PRIMARY KEY (customer_id, idempotency_key)'), (1, 'document_receipts', NULL,
      'PRIMARY KEY (scope, idempotency_key)'), (10, 'request_receipts', NULL,
      'PRIMARY KEY (route, scope, idempotency_key)'), (12, 'leader_leases', NULL,
      'PRIMARY KEY (name)'), (21, 'stock', NULL, 'CHECK ((reserved >= 0))'), (22, 'events', NULL,
      'UNIQUE (type, key)'), (5, 'production_orders', 'production_orders_live_source',
      'FOREIGN KEY (site_code, order_no, lot_no, source_live) REFERENCES source_orders(site_code, order_no, lot_no, live)%'),
      (5, 'source_orders', 'source_orders_live_key', 'UNIQUE %'), (5, 'production_orders',
      'production_orders_source_live_check', 'CHECK %')
)
SELECT e.tbl || ': constraint ' || coalesce(e.name, e.def) || ' is missing or not validated'
FROM e
WHERE e.since <= (SELECT coalesce(max(version), 0) FROM schema_migrations) AND NOT EXISTS (
  SELECT 1
  FROM pg_constraint c
  WHERE c.conrelid = to_regclass(e.tbl) AND (e.name IS NULL OR c.conname = e.name) AND
      pg_get_constraintdef(c.oid) LIKE e.def AND c.convalidated AND (c.conindid = 0 OR EXISTS (
    SELECT 1 FROM pg_index x WHERE x.indexrelid = c.conindid AND x.indisvalid AND x.indisready
  ))
)
UNION ALL
SELECT
    'schedule_items: unique index schedule_items_live (site_code, order_no, lot_no) WHERE status NOT IN (''failed'', ''aborted'') [AND item_id > watermark] is missing, invalid or differs'
WHERE 3 <= (SELECT coalesce(max(version), 0) FROM schema_migrations) AND NOT EXISTS (
  SELECT 1
  FROM pg_index x
  WHERE x.indexrelid = to_regclass('schedule_items_live') AND x.indrelid = to_regclass('schedule_items')
      AND x.indisunique AND x.indisvalid AND x.indisready AND (pg_get_indexdef(x.indexrelid) LIKE
      '% USING btree (site_code, order_no, lot_no) WHERE (status <> ALL (ARRAY[''failed''::text, ''aborted''::text]))'
      OR pg_get_indexdef(x.indexrelid) LIKE
      '% USING btree (site_code, order_no, lot_no) WHERE ((status <> ALL (ARRAY[''failed''::text, ''aborted''::text])) AND (item_id > %))')
)
UNION ALL
SELECT 'function oo_assert(boolean, text) is missing'
WHERE 5 <= (SELECT coalesce(max(version), 0) FROM schema_migrations) AND to_regprocedure('oo_assert(boolean, text)')
    IS NULL
UNION ALL
SELECT 'function oo_assert_unmoved(boolean, text) is missing'
WHERE 28 <= (SELECT coalesce(max(version), 0) FROM schema_migrations) AND
    to_regprocedure('oo_assert_unmoved(boolean, text)') IS NULL
UNION ALL
SELECT 'schedule_items: trigger ' || t.name || ' is missing or disabled'
FROM (
  VALUES ('schedule_items_event_insert'), ('schedule_items_event_update')
) AS t(name)
WHERE 13 <= (SELECT coalesce(max(version), 0) FROM schema_migrations) AND NOT EXISTS (
  SELECT 1
  FROM pg_trigger g
  WHERE g.tgrelid = to_regclass('schedule_items') AND g.tgname = t.name AND g.tgenabled <> 'D'
)
UNION ALL
SELECT t.tbl || ': trigger ' || t.name || ' is missing or disabled'
FROM (
  VALUES ('orders', 'events_order_placed'), ('orders', 'events_order_cancelled'), ('production_orders',
      'events_production_order'), ('documents', 'events_document_issued'), ('schedule_runs',
      'events_run_finished')
) AS t(tbl, name)
WHERE 22 <= (SELECT coalesce(max(version), 0) FROM schema_migrations) AND NOT EXISTS (
  SELECT 1
  FROM pg_trigger g
  WHERE g.tgrelid = to_regclass(t.tbl) AND g.tgname = t.name AND g.tgenabled <> 'D'
)
UNION ALL
SELECT 'index ' || c.relname ||
    ' is INVALID (a concurrent build is running or failed): `onceorder legacy dedup` if duplicates blocked it, then `onceorder migrate` drops and rebuilds it'
FROM pg_index x
JOIN pg_class c ON c.oid = x.indexrelid
WHERE c.relnamespace = to_regnamespace(current_schema()) AND NOT (x.indisvalid AND x.indisready);

-- One source order per order line, with the line's quantity, and none beyond the lines.
-- name: inv_i11
SELECT 'order ' || o.order_id || ' line ' || ol.line_no || ' has no source order W' ||
    o.warehouse_id || '/' || o.order_no || '/' || ol.line_no || ' for ' || ol.quantity
FROM orders o
JOIN order_lines ol ON ol.order_id = o.order_id
WHERE NOT EXISTS (
  SELECT 1
  FROM source_orders s
  WHERE s.site_code = 'W' || o.warehouse_id AND s.order_no = o.order_no AND s.lot_no = CAST(ol.line_no
      AS TEXT) AND s.quantity = ol.quantity
)
UNION ALL
SELECT 'source order ' || s.site_code || '/' || s.order_no || '/' || s.lot_no ||
    ' is not a line of order ' || o.order_id
FROM orders o
JOIN source_orders s ON s.site_code = 'W' || o.warehouse_id AND s.order_no = o.order_no
WHERE NOT EXISTS (
  SELECT 1
  FROM order_lines ol
  WHERE ol.order_id = o.order_id AND s.lot_no = CAST(ol.line_no AS TEXT)
);

-- DIGITS: the 13 Crockford base-32 digits of o.order_id (order_number in id_generator.cpp).
-- name: inv_i12
SELECT 'order ' || o.order_id || ' has number ' || o.order_no || ', not O-' || (
  SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
      CAST((o.order_id >> (5 * (12 - g.i))) & 31 AS INTEGER) + 1, 1), '' ORDER BY g.i)
  FROM generate_series(0, 12) AS g(i)
)
FROM orders o
WHERE o.order_no <> 'O-' || (
  SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
      CAST((o.order_id >> (5 * (12 - g.i))) & 31 AS INTEGER) + 1, 1), '' ORDER BY g.i)
  FROM generate_series(0, 12) AS g(i)
);

-- name: inv_i13
SELECT 'production order ' || p.site_code || '/' || p.order_no || '/' || p.lot_no || ' is for ' ||
    p.quantity || ' but its source order is for ' || coalesce(CAST(s.quantity AS TEXT),
    'nothing (missing)')
FROM production_orders p
LEFT JOIN source_orders s ON s.site_code = p.site_code AND s.order_no = p.order_no AND s.lot_no =
    p.lot_no
WHERE s.quantity IS NULL OR s.quantity <> p.quantity;

-- name: inv_i14
SELECT 'production order ' || p.site_code || '/' || p.order_no || '/' || p.lot_no ||
    ' has document ' || p.document_scope || '/' || p.document_value || ' numbered ' ||
    p.document_number || CASE WHEN d.number IS NULL THEN ', which does not exist' WHEN d.number <>
    p.document_number THEN ', which is numbered ' || d.number ELSE ', not one of scope PO-' ||
    p.site_code END
FROM production_orders p
LEFT JOIN documents d ON d.scope = p.document_scope AND d.value = p.document_value
WHERE p.document_scope <> 'PO-' || p.site_code OR d.number IS NULL OR d.number <> p.document_number
UNION ALL
SELECT 'document ' || document_scope || '/' || document_value || ' belongs to ' || count(*) ||
    ' production orders'
FROM production_orders
GROUP BY document_scope, document_value
HAVING count(*) > 1;

-- name: inv_i15
SELECT 'document receipt ' || r.scope || '/' || r.idempotency_key || ' for title "' || r.title ||
    '" points at value ' || r.value || CASE WHEN d.title IS NULL THEN ', which does not exist' ELSE
    ' titled "' || d.title || '"' END
FROM document_receipts r
LEFT JOIN documents d ON d.scope = r.scope AND d.value = r.value
WHERE d.title IS NULL OR d.title <> r.title;

-- A receipt without its answer is a key committed apart from its effect; a run receipt
-- without a manual run replays a run the request never made.
-- name: inv_i16
SELECT r.route || ' receipt ' || r.idempotency_key || CASE WHEN r.scope = '' THEN '' ELSE ' of ' ||
    r.scope END || CASE WHEN r.answer IS NULL THEN ' has no answer' WHEN r.run_id IS NULL THEN
    ' points at no run' ELSE ' points at run ' || r.run_id || ', which is not a manual run' END
FROM request_receipts r
LEFT JOIN schedule_runs s ON s.run_id = r.run_id
WHERE r.answer IS NULL OR (r.route = 'schedule_run' AND (s.kind IS NULL OR s.kind <> 'manual'));

-- An item's history agrees with its state: its last event (schedule_item_events, migration 19)
-- records the status and attempt the item has now. A statement that changed an item without
-- its event (a trigger dropped or bypassed, an event deleted) leaves the last event behind.
-- Items from before migration 19 got an `imported` event from it, so none is exempt.
-- name: inv_i17
SELECT 'item ' || i.item_id || ' is ' || i.status || ' (attempt ' || i.attempt ||
    ') but its last event is ' || coalesce(e.kind || ' (' || e.status || ', attempt ' || e.attempt
    || ')', 'missing')
FROM schedule_items i
LEFT JOIN schedule_item_events e ON e.event_id = (
  SELECT max(x.event_id)
  FROM schedule_item_events x
  WHERE x.item_id = i.item_id
)
WHERE e.event_id IS NULL OR e.status <> i.status OR e.attempt <> i.attempt;

-- name: inv_i18
WITH f(k) AS (SELECT CAST(order_id AS TEXT) FROM orders), e(k, n) AS (
  SELECT key, count(*)
  FROM events
  WHERE type = 'order.placed'
  GROUP BY key
)
SELECT CASE WHEN e.k IS NULL THEN 'order ' || f.k || ' has no order.placed event' WHEN f.k IS NULL
    THEN 'order.placed event for ' || e.k || ' has no order' ELSE 'order.placed event for ' || e.k
    || ' is written ' || e.n || ' times' END
FROM f
FULL JOIN e ON e.k = f.k
WHERE e.k IS NULL OR f.k IS NULL OR e.n > 1;

-- name: inv_i19
WITH f(k) AS (SELECT CAST(order_id AS TEXT) FROM orders WHERE status = 'cancelled'), e(k, n) AS (
  SELECT key, count(*)
  FROM events
  WHERE type = 'order.cancelled'
  GROUP BY key
)
SELECT CASE WHEN e.k IS NULL THEN 'cancelled order ' || f.k || ' has no order.cancelled event' WHEN
    f.k IS NULL THEN 'order.cancelled event for ' || e.k || ' has no cancelled order' ELSE
    'order.cancelled event for ' || e.k || ' is written ' || e.n || ' times' END
FROM f
FULL JOIN e ON e.k = f.k
WHERE e.k IS NULL OR f.k IS NULL OR e.n > 1;

-- name: inv_i20
WITH f(k) AS (
  SELECT site_code || '/' || order_no || '/' || lot_no
  FROM production_orders
), e(k, n) AS (
  SELECT key, count(*)
  FROM events
  WHERE type = 'production_order.created'
  GROUP BY key
)
SELECT CASE WHEN e.k IS NULL THEN 'production order ' || f.k ||
    ' has no production_order.created event' WHEN f.k IS NULL THEN
    'production_order.created event for ' || e.k || ' has no production order' ELSE
    'production_order.created event for ' || e.k || ' is written ' || e.n || ' times' END
FROM f
FULL JOIN e ON e.k = f.k
WHERE e.k IS NULL OR f.k IS NULL OR e.n > 1;

-- name: inv_i21
WITH f(k) AS (SELECT scope || '/' || number FROM documents WHERE origin = 'issued'), e(k, n) AS (
  SELECT key, count(*)
  FROM events
  WHERE type = 'document.issued'
  GROUP BY key
)
SELECT CASE WHEN e.k IS NULL THEN 'issued document ' || f.k || ' has no document.issued event' WHEN
    f.k IS NULL THEN 'document.issued event for ' || e.k || ' has no issued document' ELSE
    'document.issued event for ' || e.k || ' is written ' || e.n || ' times' END
FROM f
FULL JOIN e ON e.k = f.k
WHERE e.k IS NULL OR f.k IS NULL OR e.n > 1;

-- name: inv_i22
WITH f(k) AS (
  SELECT CAST(run_id AS TEXT)
  FROM schedule_runs
  WHERE status IN ('done', 'error') AND kind <> 'legacy'
), e(k, n) AS (
  SELECT key, count(*)
  FROM events
  WHERE type = 'run.finished'
  GROUP BY key
)
SELECT CASE WHEN e.k IS NULL THEN 'finished run ' || f.k || ' has no run.finished event' WHEN f.k IS
    NULL THEN 'run.finished event for ' || e.k || ' has no finished run' ELSE
    'run.finished event for ' || e.k || ' is written ' || e.n || ' times' END
FROM f
FULL JOIN e ON e.k = f.k
WHERE e.k IS NULL OR f.k IS NULL OR e.n > 1;

-- I23: an endpoint gets a key's events in feed order. A delivery is claimed only while every
-- earlier delivery of its (endpoint, key) is delivered, so the delivered ones of a key are
-- always a prefix of its deliveries in feed order (ev_tx, event_id).
-- name: inv_i23
SELECT 'endpoint ' || d.endpoint || ': event ' || d.event_id || ' (' || d.key ||
    ') was delivered while the earlier event ' || p.event_id || ' of its key is ' || p.status
FROM deliveries d
JOIN deliveries p ON p.endpoint = d.endpoint AND p.key = d.key AND p.status <> 'delivered' AND (p.ev_tx
    < d.ev_tx OR (p.ev_tx = d.ev_tx AND p.event_id < d.event_id))
WHERE d.status = 'delivered';
