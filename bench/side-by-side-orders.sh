#!/usr/bin/env bash
# The order cases of the shared side-by-side driver (/work/shared/bench/side-by-side.sh, its
# README): OnceOrder over HTTP (wrk: 5-SKU carts) next to the raw one-call SQL (pgbench,
# order5f.sql), one PostgreSQL with fsync on, in one run. Two changes from the shared script:
# wrk reports p99 and non-2xx answers, next to the server's own p99 and p99.9 from /metrics,
# and its script is bench/orders.lua with DUP=0 (every request a new key): the shared
# order.lua's threads share one random seed and send the same keys, so half of its requests
# are replays. docs/BENCHMARKS.md, "Order combining".
# Run inside: C=16 pg_virtualenv -t -o fsync=on bash bench/side-by-side-orders.sh build/onceorder
# BENCH_DIR holds the shared driver's order5f.sql and schema.sql; SKUSET="10" runs one case.
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; base=$here
T=${T:-10}; C=${C:-16}
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh" # side_by_side_start, oo_check
side_by_side_start "$BIN"
psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,10000) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,10000) g;"
tps() { pgbench -n "$@" -T $T bench 2>/dev/null | awk '/^tps/ {print int($3)}'; }
rps() { wrk --latency -t2 -c$C -d${T}s -s "$@" http://127.0.0.1:$port 2>/dev/null | awk '/Requests\/sec/ {r=int($2)} / 99%/ {p=$2} /Non-2xx/ {b=$NF} END {print r, p, b+0}'; }
echo "case clients raw oo ratio p99 (wrk) server p99/p99.9 non2xx"
for nskus in ${SKUSET:-10000 10}; do
  raw=$(tps -f "$base/order5f.sql" -D nskus=$nskus -c $C -j 2)
  before=$(server_buckets /v1/orders)
  read -r oo p99 bad < <(NSKUS=$nskus K=5 DUP=0 rps "$(dirname "$0")/orders.lua")
  srv=$(server_quantiles "$before" "$(server_buckets /v1/orders)")
  echo "order5-${nskus}skus $C $raw $oo $(python3 -c "print(round($oo/$raw,2))") p99=$p99 $srv non2xx=$bad"
done
curl -s localhost:$port/metrics | grep -E '^onceorder_order_(batch_size|decided_ahead|held_back|ran_alone)' || true
# How many requests were new orders rather than replays of a key already sent (none should
# be: docs/BENCHMARKS.md, "Seed 002's table").
psql -qAtX -d oo -c "SELECT 'orders placed: ' || count(*) || ', receipts: ' || (SELECT count(*) FROM order_receipts) FROM orders"
# The numbers only count if what OnceOrder wrote is still correct: a violated invariant
# fails the run (exit status 1) after printing what is wrong.
oo_check "$BIN" postgresql:///oo
