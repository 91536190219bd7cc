#!/usr/bin/env bash
# Seed 002's table ("方案 | 平均耗时 | 99% 分位耗时 | QPS"), reproduced on PostgreSQL with fsync on:
# order placement under concurrent clients, DUP % of the requests sent as groups of 4 with
# the same key at the same time, in these designs (docs/BENCHMARKS.md, "Seed 002's table"):
#   index       no lock; the receipt's unique key decides, a duplicate waits for the first
#               request's commit and answers with its order (pgbench, seed002_index.sql)
#   lock        a lock in front (its own round trip, SET NX EX TTL_MS, released after the
#               commit) and NO unique key on the receipts: look up, place, insert the receipt
#   both        the same lock in front of the index design
#   lock-short, both-short   the same with a lock TTL (SHORT_TTL_MS) shorter than a slow
#               transaction: the lock is gone before the commit, as after an expiry during a
#               pause or a lock-server fail-over
#   oo          OnceOrder itself: wrk against `onceorder serve`, the same carts and duplicates
# Same schema for all: `onceorder migrate`, 10,000 SKUs, 5-SKU carts, the same placement work.
# Reported per design: average and p99 latency, throughput, orders, duplicate orders (orders
# beyond one per key) and the result of `onceorder check` on the database it wrote.
#
# Run inside: C=16 pg_virtualenv -t -o fsync=on bash bench/seed002-table.sh build/onceorder
# Environment: T=10 (s per row), C=16 (clients), RUNS=2 (passes; the second runs the rows in
# reverse order), ROWS="index lock both lock-short both-short oo", DUP=20 (%), K=5 (SKUs per
# cart), NSKUS=10000, TTL_MS=3000 (the seed's 3 s), SHORT_TTL_MS=2, RETRY_MS=5 (a refused
# request is retried once after this), POOL=16 (serve's pool).
set -euo pipefail
BIN=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
T=${T:-10} C=${C:-16} RUNS=${RUNS:-2} DUP=${DUP:-20} K=${K:-5} NSKUS=${NSKUS:-10000}
TTL_MS=${TTL_MS:-3000} SHORT_TTL_MS=${SHORT_TTL_MS:-2} RETRY_MS=${RETRY_MS:-5}
read -r -a rows <<<"${ROWS:-index lock both lock-short both-short oo}"
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }

if [[ "$(sql -c 'SHOW fsync')" != on ]]; then
  echo "seed002-table: fsync is off; run inside pg_virtualenv -t -o fsync=on" >&2
  exit 1
fi
tmp=$(mktemp -d)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh" # serve_start, serve_stop, oo_check, sync_write_us
trap 'serve_stop; rm -rf "$tmp"' EXIT

# One migrated and stocked template; every row and pass gets a fresh copy of it.
createdb seed002_base
"$BIN" migrate --db postgresql:///seed002_base >/dev/null
sql -d seed002_base -c "
  INSERT INTO stock (warehouse_id, sku_id, available, price_cents)
    SELECT 1, g, 1000000000, 100 FROM generate_series(1, $NSKUS) g;
  INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason)
    SELECT 1, g, 1000000000, 'initial', 'bench' FROM generate_series(1, $NSKUS) g;"

fresh_db() { # name design
  createdb -T seed002_base "$1"
  [[ $2 == oo ]] && return 0
  sql -d "$1" -f "$root/bench/pgbench/seed002_setup.sql"
  if [[ $2 == lock || $2 == lock-short ]]; then
    # The lock-alone design has no unique key on the receipts; the lookup still has an index.
    sql -d "$1" -c "ALTER TABLE order_receipts DROP CONSTRAINT order_receipts_pkey;
                    CREATE INDEX order_receipts_key ON order_receipts (customer_id, idempotency_key);"
  fi
  sql -d "$1" -c 'VACUUM ANALYZE'
}

# to_ms VALUE: wrk prints durations as 812.00us, 3.21ms or 1.02s.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.2f", n }'; }

run_pgbench() { # design db: sets avg p99 tput requests
  local design=$1 db=$2 script=lock unique=false ttl=$TTL_MS log=$tmp/pgbench.out
  case $design in
    index) script=index ;;
    both) unique=true ;;
    lock-short) ttl=$SHORT_TTL_MS ;;
    both-short) unique=true ttl=$SHORT_TTL_MS ;;
  esac
  rm -f "$tmp"/txlog*
  if ! pgbench -n -M prepared -c "$C" -j 2 -T "$T" -D k="$K" -D catalog="$NSKUS" -D dup="$DUP" \
    -D ttl="$ttl" -D retry="$RETRY_MS" -D unique="$unique" -l --log-prefix="$tmp/txlog" \
    -f "$root/bench/pgbench/seed002_$script.sql" "$db" >"$log" 2>&1; then
    cat "$log" >&2
    echo "seed002-table: pgbench failed for $design" >&2
    return 1
  fi
  tput=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$log")
  # Per-transaction log: the third field is the latency in µs.
  read -r requests avg p99 < <(cat "$tmp"/txlog* | awk '{ print $3 }' | sort -n | awk '
    { v[NR] = $1; s += $1 }
    END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%d %.2f %.2f\n", NR, s / NR / 1000, v[i] / 1000 }')
}

run_oo() { # db: sets avg p99 tput requests bad
  local out=$tmp/wrk.out
  serve_start "$BIN" "postgresql:///$1"
  NSKUS=$NSKUS K=$K DUP=$DUP wrk --latency -t2 -c"$C" -d"${T}s" -s "$root/bench/orders.lua" \
    "http://127.0.0.1:$port" >"$out" 2>&1
  serve_stop
  tput=$(awk '/Requests\/sec/ { print $2 }' "$out")
  requests=$(awk '/requests in/ { print $1 }' "$out")
  avg=$(to_ms "$(awk '$1 == "Latency" { print $2; exit }' "$out")")
  p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
  bad=$(awk '/Non-2xx/ { print $NF }' "$out")
}

# Per database: orders, keys that got an order, duplicate orders (orders beyond one per key),
# requests refused by the lock after their retry.
db_counts() { # db design
  local refused="0"
  [[ $2 == oo ]] || refused="(SELECT count(*) FROM seed002_refused)"
  sql -d "$1" -F ' ' -c "
    WITH n AS (SELECT (SELECT count(*) FROM orders) AS orders,
                      (SELECT count(DISTINCT idempotency_key) FROM order_receipts
                        WHERE outcome = 'placed') AS keys)
    SELECT orders, keys, orders - keys, $refused FROM n"
}

echo "# seed 002's table: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo ' (modified)')"
echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), PostgreSQL $(sql -c 'SHOW server_version'), fsync=$(sql -c 'SHOW fsync'), 8 kB O_DSYNC write $(sync_write_us 100) us"
echo "# T=${T}s C=$C K=$K NSKUS=$NSKUS DUP=$DUP% (groups of 4) TTL_MS=$TTL_MS SHORT_TTL_MS=$SHORT_TTL_MS RETRY_MS=$RETRY_MS"
printf '%-4s %-11s %8s %8s %8s %9s %8s %6s %6s %8s  %s\n' run design avg_ms p99_ms per_s requests orders keys dups refused check
failed=0
results=$tmp/results
for ((run = 1; run <= RUNS; run++)); do
  order=("${rows[@]}")
  if ((run % 2 == 0)); then
    order=()
    for ((i = ${#rows[@]} - 1; i >= 0; i--)); do order+=("${rows[i]}"); done
  fi
  for design in "${order[@]}"; do
    db=s002_${design//-/_}_$run
    fresh_db "$db" "$design"
    sql -c CHECKPOINT
    bad=0
    if [[ $design == oo ]]; then run_oo "$db"; else run_pgbench "$design" "$db"; fi
    read -r orders keys dups refused < <(db_counts "$db" "$design")
    ((bad == 0)) || refused="$refused+${bad}non2xx"
    # The lock-alone databases lack the receipts' key on purpose: check reports that (I10)
    # and is shown, but only the other designs must be clean.
    verdict=$(oo_check "$BIN" "postgresql:///$db" 2>&1) || {
      if [[ $design != lock && $design != lock-short ]]; then failed=1; fi
    }
    summary=$(head -1 <<<"$verdict" | sed 's/ (.*//; s/ (exit.*//')
    [[ $summary == "check ok" ]] || summary="FAIL:$(grep -o '^  FAIL I[0-9]*' <<<"$verdict" | awk '{ printf "%s%s", sep, $2; sep = "," }')"
    printf '%-4s %-11s %8s %8s %8.0f %9s %8s %6s %6s %8s  %s\n' "$run" "$design" "$avg" "$p99" "$tput" \
      "$requests" "$orders" "$keys" "$dups" "$refused" "$summary" | tee -a "$results"
    [[ $summary == "check ok" ]] || sed 's/^/     /' <<<"$verdict" | head -12
    dropdb "$db"
  done
done
echo "# load average at end $(cut -d' ' -f1-3 /proc/loadavg)"
if ((failed)); then
  echo "seed002-table: onceorder check FAILED on a database that must be clean" >&2
  exit 1
fi
echo "every index/both/oo database: check ok"
