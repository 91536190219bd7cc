-- Order-intake baseline (a): OnceOrder's placement transaction (src/service/intake.cpp +
-- src/store/postgres/intake_sql.cpp) as plain SQL, statement by statement, one round trip
-- per statement: BEGIN; the receipt; every stock row of the cart locked in sku order and
-- the availability checked; the order; per line (in the cart's line order) the deduction
-- (which returns the price, and counts the quantity as reserved), the line, the ledger entry
-- and the source order; the receipt marked placed; COMMIT. 5 + 5·K round trips for a K-SKU cart.
-- Order ids come from the sequence bench_order_seq, numbers from bench_order_no (both
-- created by bench/run-intake.sh).
--
-- Variables: -D k=K (SKUs per cart, 1..20), -D catalog=S (SKUs 1..S of warehouse 1).
-- The K distinct SKUs: sku_i = 1 + (start + i·step) % S for i = 0..K-1, with a random
-- start and a random step coprime to 10 (10·q + 1, 3, 7 or 9); that step is coprime to S
-- (so the SKUs are distinct for K ≤ S) when S has no prime factors but 2 and 5, like the
-- catalogs the script uses (10, 20, 10000). Customer = client_id + 1, a fresh random key.
\set start random(0, :catalog - 1)
\set d random(0, 3)
\set step 10 * random(0, :catalog / 10 - 1) + 1 + 2 * :d + 2 * (:d / 2)
\set key random(1, 999999999999999)
\set s1 1 + (:start + 0 * :step) % :catalog
\set s2 1 + (:start + 1 * :step) % :catalog
\set s3 1 + (:start + 2 * :step) % :catalog
\set s4 1 + (:start + 3 * :step) % :catalog
\set s5 1 + (:start + 4 * :step) % :catalog
\set s6 1 + (:start + 5 * :step) % :catalog
\set s7 1 + (:start + 6 * :step) % :catalog
\set s8 1 + (:start + 7 * :step) % :catalog
\set s9 1 + (:start + 8 * :step) % :catalog
\set s10 1 + (:start + 9 * :step) % :catalog
\set s11 1 + (:start + 10 * :step) % :catalog
\set s12 1 + (:start + 11 * :step) % :catalog
\set s13 1 + (:start + 12 * :step) % :catalog
\set s14 1 + (:start + 13 * :step) % :catalog
\set s15 1 + (:start + 14 * :step) % :catalog
\set s16 1 + (:start + 15 * :step) % :catalog
\set s17 1 + (:start + 16 * :step) % :catalog
\set s18 1 + (:start + 17 * :step) % :catalog
\set s19 1 + (:start + 18 * :step) % :catalog
\set s20 1 + (:start + 19 * :step) % :catalog
BEGIN;
INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized,
                            normalization)
 SELECT :client_id + 1, 'pg-' || :client_id || '-' || :key, 1,
        string_agg(s || 'x1', ',' ORDER BY s), 1
 FROM (SELECT 1 + (:start + i * :step) % :catalog AS s
       FROM generate_series(0, :k - 1) AS i) AS cart
 ON CONFLICT DO NOTHING RETURNING 1 AS inserted \gset
WITH l AS (
  SELECT sku_id, available, price_cents FROM stock
  WHERE warehouse_id = 1 AND sku_id = ANY (ARRAY(
    SELECT 1 + (:start + i * :step) % :catalog FROM generate_series(0, :k - 1) AS i))
  ORDER BY sku_id FOR UPDATE)
SELECT count(*) AS locked, coalesce(bool_and(available >= 1), false)::int AS ok,
       coalesce(sum(price_cents), 0) AS total
FROM l \gset
\if :ok
INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
 SELECT n, bench_order_no(n), :client_id + 1, 1, 'placed', :total, 'bench'
 FROM nextval('bench_order_seq') AS n
 RETURNING order_id AS oid, order_no AS ono,
   to_char(created_at AT TIME ZONE 'UTC', E'YYYY-MM-DD"T"HH24\x3AMI\x3ASS.MS"Z"') AS created \gset
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s1 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 1, :s1, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s1, -1, 'reservation', :oid, 1);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '1', 1);
\if :k >= 2
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s2 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 2, :s2, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s2, -1, 'reservation', :oid, 2);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '2', 1);
\endif
\if :k >= 3
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s3 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 3, :s3, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s3, -1, 'reservation', :oid, 3);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '3', 1);
\endif
\if :k >= 4
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s4 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 4, :s4, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s4, -1, 'reservation', :oid, 4);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '4', 1);
\endif
\if :k >= 5
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s5 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 5, :s5, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s5, -1, 'reservation', :oid, 5);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '5', 1);
\endif
\if :k >= 6
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s6 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 6, :s6, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s6, -1, 'reservation', :oid, 6);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '6', 1);
\endif
\if :k >= 7
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s7 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 7, :s7, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s7, -1, 'reservation', :oid, 7);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '7', 1);
\endif
\if :k >= 8
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s8 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 8, :s8, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s8, -1, 'reservation', :oid, 8);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '8', 1);
\endif
\if :k >= 9
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s9 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 9, :s9, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s9, -1, 'reservation', :oid, 9);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '9', 1);
\endif
\if :k >= 10
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s10 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 10, :s10, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s10, -1, 'reservation', :oid, 10);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '10', 1);
\endif
\if :k >= 11
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s11 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 11, :s11, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s11, -1, 'reservation', :oid, 11);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '11', 1);
\endif
\if :k >= 12
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s12 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 12, :s12, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s12, -1, 'reservation', :oid, 12);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '12', 1);
\endif
\if :k >= 13
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s13 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 13, :s13, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s13, -1, 'reservation', :oid, 13);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '13', 1);
\endif
\if :k >= 14
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s14 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 14, :s14, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s14, -1, 'reservation', :oid, 14);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '14', 1);
\endif
\if :k >= 15
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s15 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 15, :s15, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s15, -1, 'reservation', :oid, 15);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '15', 1);
\endif
\if :k >= 16
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s16 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 16, :s16, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s16, -1, 'reservation', :oid, 16);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '16', 1);
\endif
\if :k >= 17
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s17 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 17, :s17, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s17, -1, 'reservation', :oid, 17);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '17', 1);
\endif
\if :k >= 18
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s18 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 18, :s18, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s18, -1, 'reservation', :oid, 18);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '18', 1);
\endif
\if :k >= 19
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s19 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 19, :s19, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s19, -1, 'reservation', :oid, 19);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '19', 1);
\endif
\if :k >= 20
UPDATE stock SET available = available - 1, reserved = reserved + 1, updated_at = now()
 WHERE warehouse_id = 1 AND sku_id = :s20 AND available >= 1 RETURNING price_cents AS p \gset
INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
 VALUES (:oid, 20, :s20, 1, :p);
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
 VALUES (1, :s20, -1, 'reservation', :oid, 20);
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
 VALUES ('W1', :ono, '20', 1);
\endif
UPDATE order_receipts SET outcome = 'placed', order_id = :oid
 WHERE customer_id = :client_id + 1 AND idempotency_key = 'pg-' || :client_id || '-' || :key;
\else
UPDATE order_receipts SET outcome = 'out_of_stock', shortages = 'bench'
 WHERE customer_id = :client_id + 1 AND idempotency_key = 'pg-' || :client_id || '-' || :key;
\endif
COMMIT;
