-- The outbox (docs/EVENTS.md): one row per fact a receiver outside OnceOrder acts on, written
-- by triggers in the statement that writes the fact, so that no path can forget it and no
-- event exists without its committed fact. Statement-level triggers over transition tables,
-- as the item events (migration 19): one INSERT … SELECT per statement, so a batch of orders
-- or documents stays one statement.
--
-- An event row is thin: its position, type, key, time and `ref` (the fact's row: an order id,
-- a production order's item id, a run id, or a document's value with its scope). Its `data`,
-- what a receiver acts on, is built from the fact when it is read (the view event_feed): the facts are never changed afterwards in what data holds, so every read gives the
-- same bytes, and building the JSON, most of an event's cost, stays off the statement that
-- writes the fact.
--
-- The feed's order is (tx, event_id): `tx` is the writing transaction's id, and a reader only
-- returns events whose transaction is below the oldest transaction still running
-- (oo_event_horizon), so an event that commits late is never passed over by a reader that
-- already went beyond a higher event_id (the outbox bug a plain `event_id > cursor` has).
-- Transactions are cluster-wide: one that pg_stat_activity shows in another database cannot
-- write these events and is left out; one it cannot place (another role's, without
-- pg_read_all_stats; a prepared transaction) holds the horizon, to be safe.
-- `oo_event_shift()` keeps `tx` growing across a dump and restore into a new cluster, whose
-- transaction ids start again low: `onceorder migrate` replaces it with a larger constant when it
-- must (store/migrate.cpp). A constant function, folded into every plan, rather than a per-event
-- lookup of a settings row.
-- UNIQUE (type, key): a fact has one event; a second would make its statement fail.
LOCK TABLE orders, production_orders, documents, schedule_runs IN SHARE ROW EXCLUSIVE MODE;
CREATE FUNCTION oo_event_shift() RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT 0::bigint $$;
CREATE FUNCTION oo_event_tx() RETURNS bigint LANGUAGE sql VOLATILE AS
$$ SELECT pg_current_xact_id()::text::bigint + oo_event_shift() $$;
CREATE FUNCTION oo_event_horizon() RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT min(x)::text::bigint FROM pg_snapshot_xip(s) x
     WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                       WHERE a.backend_xid = xid(x) AND a.datname IS DISTINCT FROM current_database())),
    pg_snapshot_xmax(s)::text::bigint) + oo_event_shift()
  FROM pg_current_snapshot() s
$$;

CREATE TABLE events (
  event_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tx          bigint NOT NULL DEFAULT oo_event_tx(),
  type        text NOT NULL CHECK (type IN ('order.placed', 'order.cancelled',
                'production_order.created', 'document.issued', 'run.finished')),
  key         text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  ref         bigint NOT NULL,
  ref_scope   text NOT NULL DEFAULT '',
  UNIQUE (type, key)
);
CREATE INDEX events_feed ON events (tx, event_id);

CREATE FUNCTION oo_js(v text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(to_json(v)::text, 'null') $$;
CREATE FUNCTION oo_utc(t timestamptz) RETURNS text LANGUAGE sql STABLE AS
$$ SELECT coalesce('"' || to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') $$;

-- Each event type's data, compact JSON text, from its fact (NULL when the fact is gone: I18–I22).
-- The events as a reader outside OnceOrder sees them (the feed's rows with their data).
CREATE VIEW event_feed AS
SELECT e.event_id, e.tx, e.type, e.key, e.occurred_at,
       coalesce(CASE e.type WHEN 'order.placed' THEN (SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) || ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id || ',"total_cents":' || xo.total_cents || ',"lines":[' || coalesce((SELECT string_agg('{"line_no":' || xl.line_no || ',"sku_id":' || xl.sku_id || ',"quantity":' || xl.quantity || ',"unit_price_cents":' || xl.unit_price_cents || '}', ',' ORDER BY xl.line_no) FROM order_lines xl WHERE xl.order_id = xo.order_id), '') || ']}' FROM orders xo WHERE xo.order_id = e.ref) WHEN 'order.cancelled' THEN (SELECT '{"order_id":"' || xo.order_id || '","order_no":' || oo_js(xo.order_no) || ',"customer_id":' || xo.customer_id || ',"warehouse_id":' || xo.warehouse_id || '}' FROM orders xo WHERE xo.order_id = e.ref) WHEN 'production_order.created' THEN (SELECT '{"site_code":' || oo_js(xp.site_code) || ',"order_no":' || oo_js(xp.order_no) || ',"lot_no":' || oo_js(xp.lot_no) || ',"quantity":' || xp.quantity || ',"document_scope":' || oo_js(xp.document_scope) || ',"document_number":' || oo_js(xp.document_number) || ',"run_id":' || coalesce(xi.run_id::text, 'null') || ',"item_id":' || xp.item_id || '}' FROM production_orders xp LEFT JOIN schedule_items xi ON xi.item_id = xp.item_id WHERE xp.item_id = e.ref) WHEN 'document.issued' THEN (SELECT '{"scope":' || oo_js(xd.scope) || ',"value":' || xd.value || ',"number":' || oo_js(xd.number) || ',"title":' || oo_js(xd.title) || '}' FROM documents xd WHERE xd.scope = e.ref_scope AND xd.value = e.ref) WHEN 'run.finished' THEN (SELECT '{"run_id":' || xr.run_id || ',"kind":' || oo_js(xr.kind) || ',"status":' || oo_js(xr.status) || ',"error":' || oo_js(xr.error) || ',"created_at":' || oo_utc(xr.created_at) || '}' FROM schedule_runs xr WHERE xr.run_id = e.ref) END, 'null') AS data
FROM events e;

-- Facts made before this migration get their events now, in the order they happened.
INSERT INTO events (type, key, occurred_at, ref, ref_scope)
SELECT type, key, at, ref, ref_scope FROM (
  SELECT 'order.placed' AS type, o.order_id::text AS key, o.created_at AS at, o.order_id AS ref,
         '' AS ref_scope FROM orders o
  UNION ALL SELECT 'order.cancelled', o.order_id::text, coalesce(o.cancelled_at, o.created_at),
         o.order_id, '' FROM orders o WHERE o.status = 'cancelled'
  UNION ALL SELECT 'production_order.created', p.site_code || '/' || p.order_no || '/' || p.lot_no,
         p.created_at, p.item_id, '' FROM production_orders p
  UNION ALL SELECT 'document.issued', d.scope || '/' || d.number, d.created_at, d.value, d.scope
    FROM documents d WHERE d.origin = 'issued'
  UNION ALL SELECT 'run.finished', r.run_id::text, coalesce(r.finished_at, r.created_at),
         r.run_id, '' FROM schedule_runs r WHERE r.status IN ('done', 'error') AND r.kind <> 'legacy') f
ORDER BY at, type, key;

CREATE FUNCTION oo_events_order_placed() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'order.placed',
         n.order_id::text, n.created_at, n.order_id
  FROM oo_new_orders n ORDER BY n.order_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_order_placed AFTER INSERT ON orders
  REFERENCING NEW TABLE AS oo_new_orders FOR EACH STATEMENT EXECUTE FUNCTION oo_events_order_placed();

CREATE FUNCTION oo_events_order_cancelled() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'order.cancelled',
         n.order_id::text, coalesce(n.cancelled_at, now()), n.order_id
  FROM oo_new_orders n JOIN oo_old_orders o ON o.order_id = n.order_id
  WHERE n.status = 'cancelled' AND o.status <> 'cancelled' ORDER BY n.order_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_order_cancelled AFTER UPDATE ON orders
  REFERENCING OLD TABLE AS oo_old_orders NEW TABLE AS oo_new_orders
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_order_cancelled();

CREATE FUNCTION oo_events_production_order() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'production_order.created',
         p.site_code || '/' || p.order_no || '/' || p.lot_no, p.created_at, p.item_id
  FROM oo_new_production p ORDER BY p.item_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_production_order AFTER INSERT ON production_orders
  REFERENCING NEW TABLE AS oo_new_production
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_production_order();

-- Legacy documents are imported history, not numbers OnceOrder issued, and a legacy run is
-- the record of an old system's items (inserted finished): neither has an event.
CREATE FUNCTION oo_events_document_issued() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref, ref_scope)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'document.issued',
         d.scope || '/' || d.number, d.created_at, d.value, d.scope
  FROM oo_new_documents d WHERE d.origin = 'issued' ORDER BY d.scope, d.value;
  RETURN NULL;
END $$;
CREATE TRIGGER events_document_issued AFTER INSERT ON documents
  REFERENCING NEW TABLE AS oo_new_documents
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_document_issued();

CREATE FUNCTION oo_events_run_finished() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
BEGIN
  INSERT INTO events (tx, type, key, occurred_at, ref)
  SELECT pg_current_xact_id()::text::bigint + oo_event_shift(), 'run.finished',
         n.run_id::text, coalesce(n.finished_at, now()), n.run_id
  FROM oo_new_runs n JOIN oo_old_runs o ON o.run_id = n.run_id
  WHERE n.status IN ('done', 'error') AND o.status NOT IN ('done', 'error')
    AND n.kind <> 'legacy' ORDER BY n.run_id;
  RETURN NULL;
END $$;
CREATE TRIGGER events_run_finished AFTER UPDATE ON schedule_runs
  REFERENCING OLD TABLE AS oo_old_runs NEW TABLE AS oo_new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION oo_events_run_finished();
