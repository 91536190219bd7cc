-- Seed 002's three designs on OnceOrder's own schema (run after `onceorder migrate`), used by
-- bench/seed002-table.sh through seed002_index.sql and seed002_lock.sql.
--
-- A placement is the same work as OnceOrder's (bench/run-intake.sh's bench_place_order):
-- receipt, K stock rows locked in SKU order, order, lines, deductions (counted as reserved), ledger
-- entries, source orders, receipt marked placed. Order numbers are 'O-' + the 13 Crockford
-- base-32 digits of the id, as OnceOrder writes them (invariant I12), so `onceorder check`
-- judges these databases exactly as it judges OnceOrder's.

CREATE SEQUENCE seed002_order_seq;
-- Keys: a share of the requests are duplicates. Every 4 consecutive draws from seed002_dup
-- share one key: they come from different clients within the same instant, which is the
-- seed's incident (the same order key submitted several times at once).
CREATE SEQUENCE seed002_dup;
CREATE SEQUENCE seed002_uniq;

CREATE FUNCTION seed002_key(p_dup_pct int) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN random() * 100 < p_dup_pct THEN 'dup-' || nextval('seed002_dup') / 4
              ELSE 'u-' || nextval('seed002_uniq') END
$$;

-- The lock service. Redis' SET key value NX EX ttl, and its compare-and-delete release
-- script, as an UNLOGGED table: like Redis it writes no WAL, so taking or releasing a lock
-- does not wait for a flush (a commit that wrote no WAL is not flushed), but it is its own
-- round trip before and after the order's transaction, as a separate lock service is.
CREATE UNLOGGED TABLE seed002_locks (
  key        text PRIMARY KEY,
  owner      text NOT NULL,
  expires_at timestamptz NOT NULL
);
-- 1 when taken, NULL when someone else holds an unexpired lock (SET NX failed).
CREATE FUNCTION seed002_lock(p_key text, p_owner text, p_ttl_ms int) RETURNS int
LANGUAGE sql VOLATILE AS $$
  INSERT INTO seed002_locks AS l VALUES (p_key, p_owner, clock_timestamp() + p_ttl_ms * interval '1 ms')
  ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    WHERE l.expires_at < clock_timestamp()
  RETURNING 1
$$;
-- Deletes the lock only if it is still ours (it may have expired and been taken since).
CREATE FUNCTION seed002_unlock(p_key text, p_owner text) RETURNS int LANGUAGE sql VOLATILE AS $$
  WITH d AS (DELETE FROM seed002_locks WHERE key = p_key AND owner = p_owner RETURNING 1)
  SELECT count(*)::int FROM d
$$;
-- Requests refused because the lock was held (the seed's OrderDuplicateException, "in
-- progress"): counted, not stored as orders.
CREATE UNLOGGED TABLE seed002_refused (key text NOT NULL, at timestamptz NOT NULL DEFAULT now());

-- The placement. p_unique: the receipt's primary key (customer, key) decides — insert the
-- receipt first, ON CONFLICT DO NOTHING; a duplicate waits for the first request's commit
-- and then answers with its stored order (OnceOrder's way). Without it (the lock-alone
-- design, whose database has no unique key on receipts): look for an existing receipt,
-- place the order, then insert the receipt — correct only while the lock in front holds.
CREATE FUNCTION seed002_place(p_key text, p_k int, p_catalog bigint, p_unique boolean)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_cart bigint[];
  v_skus bigint[];
  v_prices bigint[];
  v_id bigint;
  v_no text;
  v_n int;
  v_norm text;
BEGIN
  -- The cart follows from the key, so every duplicate of a request is the same request.
  SELECT array_agg(s ORDER BY s) INTO v_cart
  FROM (SELECT 1 + (abs(hashtext(p_key)::bigint) + i * 2003) % p_catalog AS s
        FROM generate_series(0, p_k - 1) AS i) AS c;
  SELECT string_agg(s || 'x1', ',' ORDER BY s) INTO v_norm FROM unnest(v_cart) AS s;
  IF p_unique THEN
    INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized, normalization)
    VALUES (1, p_key, 1, v_norm, 1) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      SELECT order_id INTO v_id FROM order_receipts WHERE customer_id = 1 AND idempotency_key = p_key;
      RETURN 'replay ' || v_id;
    END IF;
  ELSE
    SELECT order_id INTO v_id FROM order_receipts
    WHERE customer_id = 1 AND idempotency_key = p_key LIMIT 1;
    IF FOUND THEN
      RETURN 'replay ' || v_id;
    END IF;
  END IF;
  SELECT array_agg(sku_id ORDER BY sku_id), array_agg(price_cents ORDER BY sku_id)
  INTO v_skus, v_prices
  FROM (SELECT sku_id, price_cents FROM stock
        WHERE warehouse_id = 1 AND sku_id = ANY (v_cart) ORDER BY sku_id FOR UPDATE) AS l;
  v_id := nextval('seed002_order_seq');
  SELECT 'O-' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                                   ((v_id >> (5 * (12 - i))) & 31)::int + 1, 1), '' ORDER BY i)
  INTO v_no FROM generate_series(0, 12) AS i;
  INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
  VALUES (v_id, v_no, 1, 1, 'placed', (SELECT sum(p) FROM unnest(v_prices) AS p), 'bench');
  INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
  SELECT v_id, t.n, t.sku, 1, t.price FROM unnest(v_skus, v_prices) WITH ORDINALITY AS t(sku, price, n);
  UPDATE stock AS s SET available = s.available - 1, reserved = s.reserved + 1, updated_at = now()
  FROM unnest(v_skus) AS t(sku) WHERE s.warehouse_id = 1 AND s.sku_id = t.sku AND s.available >= 1;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  IF v_n <> p_k THEN
    RAISE EXCEPTION 'a locked stock row did not take its deduction';
  END IF;
  INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
  SELECT 1, t.sku, -1, 'reservation', v_id, t.n FROM unnest(v_skus) WITH ORDINALITY AS t(sku, n);
  INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT 'W1', v_no, t.n::text, 1 FROM unnest(v_skus) WITH ORDINALITY AS t(sku, n);
  IF p_unique THEN
    UPDATE order_receipts SET outcome = 'placed', order_id = v_id
    WHERE customer_id = 1 AND idempotency_key = p_key;
  ELSE
    INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized,
                                normalization, outcome, order_id)
    VALUES (1, p_key, 1, v_norm, 1, 'placed', v_id);
  END IF;
  RETURN 'placed ' || v_id;
END
$fn$;
