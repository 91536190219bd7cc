#!/usr/bin/env bash
# Benchmark of order intake on PostgreSQL (fsync on): 1-, 5- and 20-SKU carts at 1, 4 and 16
# clients, with low contention (10000 SKUs) and high contention (10 SKUs). In the same run
# and on the same throwaway cluster, migrated by the real `onceorder migrate`:
#   statements  raw SQL, statement by statement (bench/pgbench/intake_statements.sql):
#               BEGIN; receipt; lock; order; 5 statements per line; receipt; COMMIT
#   function    raw SQL, the whole transaction in one round trip: SELECT bench_place_order(…)
#               (bench/pgbench/intake_function.sql; the PL/pgSQL function is created below)
#   store       OnceOrder's Intake::place in-process (bench_intake --mode store)
#   http        the same through the HTTP server on loopback, keep-alive, POST /v1/orders
#               (bench_intake --mode http)
# Every order takes K distinct SKUs of warehouse 1, quantity 1, with a fresh key; every case
# starts from empty intake tables and restored stock. A 20-SKU cart cannot be made of 10
# distinct SKUs: its high-contention case uses a 20-SKU catalog (every order locks every row).
# The summary gives store/best and http/best, best = the faster of the two raw forms;
# goals: store ≥ 0.8, http ≥ 0.6.
#
# Usage: bench/run-intake.sh [OUTPUT]   (default bench/results/intake-latest.txt)
# Environment:
#   BENCH_SECONDS=10            duration of each case (5 halves the ≈ 12 min run)
#   BENCH_SKUS="1 5 20"         SKUs per cart
#   BENCH_CLIENTS="1 4 16"      client counts
#   BENCH_CATALOGS="10000 10"   catalog sizes (low, high contention); each must have no
#                               prime factors but 2 and 5 (the pgbench SKU stride needs it)
#   BENCH_CASES="statements function store http"   which forms to run
#   BENCH_QUIET_WAIT, BENCH_TRIES   see bench/lib.sh: each case waits for a quiet machine
#                               and is run again if a foreign compiler, test or server ran
#   BENCH_LOG_DIR               if set, each case's raw output is kept there
#   BENCH_PGBENCH_OPTS          extra pgbench options (e.g. "-P 1" for per-second progress)
#   ONCEORDER_BUILD_DIR         build directory holding onceorder and bench_intake (default
#                               build-intake, else build-bench, else build); a Release build:
#                               cmake -S . -B build-intake -G Ninja -DCMAKE_BUILD_TYPE=Release
#                               -DONCEORDER_BENCH=ON && ninja -C build-intake onceorder bench_intake
set -euo pipefail

self=$(readlink -f "$0")
root=$(dirname "$(dirname "$self")")
if [[ -n "${1:-}" ]]; then out=$(realpath -m "$1"); else out=$root/bench/results/intake-latest.txt; fi
cd "$root"

# Re-run inside a throwaway PostgreSQL cluster with fsync ON (pg_virtualenv turns it off
# unless told otherwise); -t keeps the cluster in a temporary directory.
if [[ -z "${ONCEORDER_INTAKE_IN_PG:-}" ]]; then
  export ONCEORDER_INTAKE_IN_PG=1 LC_ALL=C.UTF-8
  exec pg_virtualenv -t -o fsync=on -o synchronous_commit=on "$self" "$out"
fi

secs=${BENCH_SECONDS:-10}
read -r -a sku_counts <<<"${BENCH_SKUS:-1 5 20}"
read -r -a client_counts <<<"${BENCH_CLIENTS:-1 4 16}"
read -r -a catalogs <<<"${BENCH_CATALOGS:-10000 10}"
read -r -a cases <<<"${BENCH_CASES:-statements function store http}"
if [[ -n "${ONCEORDER_BUILD_DIR:-}" ]]; then
  build=$ONCEORDER_BUILD_DIR
elif [[ -x build-intake/bench_intake ]]; then
  build=build-intake
elif [[ -x build-bench/bench_intake ]]; then
  build=build-bench
else
  build=build
fi
bin=${ONCEORDER_BIN:-$build/onceorder}
driver=$build/bench_intake
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }
export ONCEORDER_DB="postgresql:///$PGDATABASE"
readonly stock=100000000000 # 10^11 per SKU: never runs out

for exe in "$bin" "$driver"; do
  if [[ ! -x "$exe" ]]; then
    echo "run-intake: $exe not found; build onceorder and bench_intake first (cmake -DONCEORDER_BENCH=ON)" >&2
    exit 1
  fi
done
if [[ "$(sql -c 'SHOW fsync')" != on ]]; then
  echo "run-intake: fsync is off; numbers would not be comparable" >&2
  exit 1
fi

# --- schema: the real migrations, then the baselines' sequence and function ----------------
migrated=$("$bin" migrate --db "$ONCEORDER_DB" 2>&1) || {
  echo "$migrated" >&2
  echo "run-intake: '$bin migrate' failed" >&2
  exit 1
}
for t in stock stock_ledger orders order_lines order_receipts source_orders; do
  if ! sql -c "SELECT 1 FROM $t LIMIT 0" >/dev/null; then
    echo "run-intake: '$bin migrate' did not create $t" >&2
    exit 1
  fi
done

sql <<'SQL'
CREATE SEQUENCE IF NOT EXISTS bench_order_seq;
-- OnceOrder's order number: 'O-' + the 13 Crockford base-32 digits of the id (invariant
-- I12), so that the final `onceorder check` holds for the baselines' orders too.
CREATE OR REPLACE FUNCTION bench_order_no(p_id bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT 'O-' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                                   ((p_id >> (5 * (12 - i))) & 31)::int + 1, 1), '' ORDER BY i)
  FROM generate_series(0, 12) AS i
$fn$;
-- The whole placement in one round trip: the same statements as OnceOrder's path (receipt,
-- lock ORDER BY sku_id FOR UPDATE, decision, then the placement set-based like in_place_all).
CREATE OR REPLACE FUNCTION bench_place_order(p_customer bigint, p_key text, p_warehouse bigint,
                                             p_start bigint, p_step bigint, p_catalog bigint,
                                             p_k int) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_cart bigint[];
  v_skus bigint[];
  v_avail bigint[];
  v_prices bigint[];
  v_total bigint;
  v_id bigint;
  v_no text;
  v_created text;
  v_n int;
BEGIN
  SELECT array_agg(s ORDER BY s) INTO v_cart
  FROM (SELECT 1 + (p_start + i * p_step) % p_catalog AS s
        FROM generate_series(0, p_k - 1) AS i) AS c;
  -- 1. The receipt first.
  INSERT INTO order_receipts (customer_id, idempotency_key, warehouse_id, normalized,
                              normalization)
  VALUES (p_customer, p_key, p_warehouse,
          (SELECT string_agg(s || 'x1', ',' ORDER BY s) FROM unnest(v_cart) AS s), 1)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'idempotency key % was used before', p_key;
  END IF;
  -- 2. Every stock row of the cart, locked in sku order.
  SELECT array_agg(sku_id ORDER BY sku_id), array_agg(available ORDER BY sku_id),
         array_agg(price_cents ORDER BY sku_id)
  INTO v_skus, v_avail, v_prices
  FROM (SELECT sku_id, available, price_cents FROM stock
        WHERE warehouse_id = p_warehouse AND sku_id = ANY (v_cart)
        ORDER BY sku_id FOR UPDATE) AS l;
  IF coalesce(cardinality(v_skus), 0) <> p_k THEN
    RAISE EXCEPTION 'unknown sku in %', v_cart;
  END IF;
  -- 3. The decision.
  IF EXISTS (SELECT 1 FROM unnest(v_avail) AS a WHERE a < 1) THEN
    UPDATE order_receipts SET outcome = 'out_of_stock', shortages = 'bench'
    WHERE customer_id = p_customer AND idempotency_key = p_key;
    RETURN 'out_of_stock';
  END IF;
  v_id := nextval('bench_order_seq');
  v_no := bench_order_no(v_id);
  SELECT sum(p) INTO v_total FROM unnest(v_prices) AS p;
  INSERT INTO orders (order_id, order_no, customer_id, warehouse_id, status, total_cents, principal)
  VALUES (v_id, v_no, p_customer, p_warehouse, 'placed', v_total, 'bench')
  RETURNING to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  INTO v_created;
  INSERT INTO order_lines (order_id, line_no, sku_id, quantity, unit_price_cents)
  SELECT v_id, t.n, t.sku, 1, t.price
  FROM unnest(v_skus, v_prices) WITH ORDINALITY AS t(sku, price, n);
  UPDATE stock AS s SET available = s.available - 1, reserved = s.reserved + 1, updated_at = now()
  FROM unnest(v_skus) AS t(sku)
  WHERE s.warehouse_id = p_warehouse AND s.sku_id = t.sku AND s.available >= 1;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  IF v_n <> p_k THEN
    RAISE EXCEPTION 'a locked stock row did not take its deduction';
  END IF;
  INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, order_id, line_no)
  SELECT p_warehouse, t.sku, -1, 'reservation', v_id, t.n
  FROM unnest(v_skus) WITH ORDINALITY AS t(sku, n);
  INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT 'W' || p_warehouse, v_no, t.n::text, 1
  FROM unnest(v_skus) WITH ORDINALITY AS t(sku, n);
  UPDATE order_receipts SET outcome = 'placed', order_id = v_id
  WHERE customer_id = p_customer AND idempotency_key = p_key;
  RETURN v_no || ' ' || v_created;
END
$fn$;
SQL

# --- the catalog: SKUs 1..max through Intake::put_sku (once; the cases reuse it) -----------
max_catalog=20
for s in "${catalogs[@]}"; do ((s > max_catalog)) && max_catalog=$s; done
"$driver" --db "$ONCEORDER_DB" --setup-only --catalog "$max_catalog" --clients 2 >/dev/null

# Empty intake tables, restored stock (with its `initial` ledger entries), before every case.
# source_orders goes with CASCADE (schedule items and production orders of this throwaway
# cluster would follow; there are none). Only the non-empty tables are analyzed: TRUNCATE
# leaves the others "never analyzed" (reltuples -1), which the planner sizes at 10 pages at
# least. ANALYZE on the emptied tables would record them as empty, and every plan cached in
# a case's first seconds (the foreign-key checks orders <- order_lines/order_receipts and
# the receipt update) would be a sequential scan of a table
# that then grows: latency rose linearly (2.7 -> 12 ms in 45 s) until autovacuum's next
# ANALYZE (naptime 1 min) invalidated the plans.
reset() {
  sql <<SQL
SET client_min_messages = warning;
TRUNCATE order_receipts, order_lines, orders, stock_ledger, source_orders CASCADE;
UPDATE stock SET available = $stock, reserved = 0, updated_at = now()
  WHERE available <> $stock OR reserved <> 0;
INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason)
  SELECT warehouse_id, sku_id, available, 'initial', 'created' FROM stock;
ALTER SEQUENCE bench_order_seq RESTART;
VACUUM ANALYZE stock, stock_ledger;
CHECKPOINT;
SQL
}

# After a case: every order complete (K lines, reserved quantities, ledger entries, source orders),
# every deduction accounted for, every receipt placed. Prints "ok(<orders>)" or what is off.
check() { # k
  sql -c "
    WITH n AS (SELECT (SELECT count(*) FROM orders) AS orders,
                      (SELECT count(*) FROM order_lines) AS lines,
                      (SELECT coalesce(sum(reserved), 0) FROM stock) AS res,
                      (SELECT count(*) FROM stock_ledger WHERE kind = 'reservation') AS ledger,
                      (SELECT count(*) FROM source_orders) AS sources,
                      (SELECT coalesce(sum($stock - available), 0) FROM stock) AS deducted,
                      (SELECT count(*) FROM order_receipts
                        WHERE outcome IS DISTINCT FROM 'placed') AS unplaced)
    SELECT CASE WHEN lines = $1 * orders AND res = lines AND ledger = lines AND sources = lines
                     AND deducted = lines AND unplaced = 0
           THEN 'ok(' || orders || ')'
           ELSE format('BAD(orders=%s lines=%s res=%s ledger=%s sources=%s deducted=%s unplaced=%s)',
                       orders, lines, res, ledger, sources, deducted, unplaced) END
    FROM n"
}

# --- report header -----------------------------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh" # quietly, sync_write_us, $datadir
table=$tmp/table
{
  echo "# OnceOrder order intake, PostgreSQL"
  echo "# date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "# commit:   $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)'), binaries $build ($(grep -s '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" | cut -d= -f2))"
  echo "# machine:  $(nproc) cores, $(uname -sr), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# server:   $(sql -c 'SHOW server_version'), fsync=$(sql -c 'SHOW fsync'), synchronous_commit=$(sql -c 'SHOW synchronous_commit'), wal_sync_method=$(sql -c 'SHOW wal_sync_method'), local socket, data on $(stat -f -c %T "$datadir")"
  echo "# schema:   $migrated"
  echo "# disk:     synchronous 8 kB write $(sync_write_us) us at start (a commit waits for one)"
  echo "# run:      ${secs} s per case, pgbench -M prepared -n -j min(clients,2); warehouse 1, stock 10^11 per SKU, quantity 1"
  echo "# check:    ok(n) = n orders, each with K lines/reserved units/ledger entries/source orders, deductions = lines, every receipt placed"
  echo "# noise:    samples (every 0.5 s) with a foreign compiler/test/server running; 0 = clean."
  echo "#           A noisy case is run again (BENCH_TRIES=${BENCH_TRIES:-3}); sync_us: 8 kB O_DSYNC write before it"
  echo
  printf '%-11s %3s %7s %7s %9s %9s  %-10s %7s %5s\n' case k catalog clients tps lat_ms check sync_us noise
} >"$table"
cat "$table"
row() { printf '%-11s %3s %7s %7s %9s %9s  %-10s %7s %5s\n' "$@" | tee -a "$table"; }

keep_log() { # case k catalog clients log
  if [[ -n "${BENCH_LOG_DIR:-}" ]]; then
    mkdir -p "$BENCH_LOG_DIR"
    cp "$5" "$BENCH_LOG_DIR/$1-k$2-s$3-c$4-$(date +%H%M%S).log"
  fi
}

# --- raw SQL baselines (pgbench) -----------------------------------------------------------
pgbench_run() { # name k catalog clients seconds
  local name=$1 k=$2 catalog=$3 clients=$4 seconds=$5 log=$tmp/pgbench.log
  local threads=$((clients < 2 ? clients : 2))
  reset
  # shellcheck disable=SC2086 # BENCH_PGBENCH_OPTS: words on purpose
  if ! pgbench -M prepared -n -c "$clients" -j "$threads" -T "$seconds" -D k="$k" \
    -D catalog="$catalog" ${BENCH_PGBENCH_OPTS:-} -f "bench/pgbench/intake_$name.sql" \
    >"$log" 2>&1; then
    cat "$log" >&2
    echo "run-intake: pgbench failed for $name k=$k catalog=$catalog clients=$clients" >&2
    exit 1
  fi
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$log")
  lat=$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' "$log")
  [[ -n "$tps" ]] || {
    cat "$log" >&2
    echo "run-intake: pgbench printed no tps" >&2
    exit 1
  }
  printf -v tps '%.0f' "$tps"
  keep_log "$name" "$k" "$catalog" "$clients" "$log"
}

# --- C++ driver (OnceOrder's own code path) ------------------------------------------------
driver_run() { # mode k catalog clients seconds
  local mode=$1 k=$2 catalog=$3 clients=$4 seconds=$5 log=$tmp/driver.log
  reset
  if ! "$driver" --db "$ONCEORDER_DB" --mode "$mode" --clients "$clients" --skus-per-cart "$k" \
    --catalog "$catalog" --seconds "$seconds" >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "run-intake: bench_intake failed for $mode k=$k catalog=$catalog clients=$clients" >&2
    exit 1
  fi
  tps=$(grep -o 'tps=[0-9.]*' "$log" | tail -1 | cut -d= -f2 || true)
  [[ -n "$tps" ]] || {
    tail -20 "$log" >&2
    echo "run-intake: bench_intake printed no tps=" >&2
    exit 1
  }
  detail="$mode k=$k catalog=$catalog clients=$clients $(grep -o 'placed=.*p99_ms=[0-9.]*' "$log")"
  printf -v tps '%.0f' "$tps"
  keep_log "$mode" "$k" "$catalog" "$clients" "$log"
  lat=$(awk -v c="$clients" -v t="$tps" 'BEGIN { printf "%.3f", (t > 0 ? c * 1000 / t : 0) }')
}

run_case() { # name k catalog clients: sets tps, lat, checked (and detail for the driver)
  case $1 in
    statements | function) pgbench_run "$1" "$2" "$3" "$4" "$secs" ;;
    store | http) driver_run "$1" "$2" "$3" "$4" "$secs" ;;
  esac
  checked=$(check "$2")
}

declare -A result
# Warm up caches and the WAL once; not reported.
pgbench_run function 5 "$max_catalog" 2 2
driver_run store 5 "$max_catalog" 2 2
pgbench_run statements 5 "$max_catalog" 2 2

for k in "${sku_counts[@]}"; do
  for cat_asked in "${catalogs[@]}"; do
    catalog=$((cat_asked > k ? cat_asked : k))
    for clients in "${client_counts[@]}"; do
      for name in "${cases[@]}"; do
        quietly run_case "$name" "$k" "$catalog" "$clients"
        row "$name" "$k" "$catalog" "$clients" "$tps" "$lat" "$checked" "$sync_us" "$noise"
        if [[ $name == store || $name == http ]]; then echo "$detail" >>"$tmp/driver-details"; fi
        result[$name,$k,$cat_asked,$clients]=$tps
      done
    done
  done
done
echo "# disk:     synchronous 8 kB write $(sync_write_us) us at end, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$table"

# --- summary: OnceOrder against the faster raw form ----------------------------------------
{
  echo
  echo "# best = max(statements, function); goals: store/best >= 0.80, http/best >= 0.60"
  printf '%3s %7s %7s %10s %8s %6s %6s %10s %9s %13s  %s\n' k catalog clients statements \
    function store http store/best http/best function/stmts goals
} | tee -a "$table"
for k in "${sku_counts[@]}"; do
  for cat_asked in "${catalogs[@]}"; do
    catalog=$((cat_asked > k ? cat_asked : k))
    for clients in "${client_counts[@]}"; do
      st=${result[statements,$k,$cat_asked,$clients]:-0}
      fn=${result[function,$k,$cat_asked,$clients]:-0}
      so=${result[store,$k,$cat_asked,$clients]:-0}
      ht=${result[http,$k,$cat_asked,$clients]:-0}
      awk -v k="$k" -v cat="$catalog" -v cl="$clients" -v st="$st" -v fn="$fn" -v so="$so" \
        -v ht="$ht" 'BEGIN {
          best = st > fn ? st : fn
          rs = best > 0 ? so / best : 0; rh = best > 0 ? ht / best : 0
          rf = st > 0 ? fn / st : 0
          verdict = (rs >= 0.8 ? "store ok" : "STORE MISSED") ", " (rh >= 0.6 ? "http ok" : "HTTP MISSED")
          printf "%3s %7s %7s %10s %8s %6s %6s %10.2f %9.2f %13.2f  %s\n", k, cat, cl, st, fn, so,
            ht, rs, rh, rf, verdict
        }' | tee -a "$table"
    done
  done
done
{
  echo
  echo "# bench_intake details per store/http case (in table order): not placed (busy/failed), transaction re-runs, latency"
  if [[ -f "$tmp/driver-details" ]]; then cat "$tmp/driver-details"; fi
} | tee -a "$table"

# Every benchmark ends with OnceOrder's own invariant check (bench/lib.sh, oo_check) on the
# PostgreSQL database it used, which still holds the last case's data: numbers from a run
# that left a violated invariant behind do not count, so the run fails after saving them.
final_check=0
{ echo; oo_check "$bin" "$ONCEORDER_DB"; } | tee -a "$table" || final_check=1

mkdir -p "$(dirname "$out")"
cp "$table" "$out"
echo
echo "run-intake: results written to $out"
if ((final_check != 0)); then
  echo "run-intake: onceorder check FAILED on $ONCEORDER_DB (see above)" >&2
  exit 1
fi
