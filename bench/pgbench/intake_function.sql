-- Order-intake baseline (b): the same transaction as intake_statements.sql in one round
-- trip: one call of the PL/pgSQL function bench_place_order (its DDL is in
-- bench/run-intake.sh; not part of the migrations), which inserts the receipt, locks the
-- cart's stock rows ORDER BY sku_id FOR UPDATE, checks availability and writes the order,
-- its lines, deductions (counted as reserved), ledger entries and source orders (set-based, like
-- OnceOrder's in_place_all CTE) and marks the receipt placed; the implicit transaction
-- commits with it.
-- Variables: -D k=K (SKUs per cart, 1..20), -D catalog=S; the SKUs as in
-- intake_statements.sql (sku_i = 1 + (start + i·step) % S, step coprime to S).
\set start random(0, :catalog - 1)
\set d random(0, 3)
\set step 10 * random(0, :catalog / 10 - 1) + 1 + 2 * :d + 2 * (:d / 2)
\set key random(1, 999999999999999)
SELECT bench_place_order(:client_id + 1, 'pg-' || :client_id || '-' || :key, 1, :start, :step,
                         :catalog, :k);
