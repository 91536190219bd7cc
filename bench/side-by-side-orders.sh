#!/usr/bin/env bash
# The order cases of the shared side-by-side driver (/work/shared/bench/side-by-side.sh, its
# README): OnceOrder over HTTP (wrk, order.lua: 5-SKU carts) next to the raw one-call SQL
# (pgbench, order5f.sql), one PostgreSQL with fsync on, in one run. One change from the shared
# script: wrk reports p99 and non-2xx answers. docs/BENCHMARKS.md, "Order combining".
# Run inside: C=16 pg_virtualenv -t -o fsync=on bash bench/side-by-side-orders.sh build/onceorder
# BENCH_DIR holds the shared driver's order.lua, order5f.sql and schema.sql; SKUSET="10" runs one case.
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; base=$here
T=${T:-10}; C=${C:-16}
createdb bench; psql -qX -d bench -f "$base/schema.sql" >/dev/null
createdb oo
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$BIN" serve --db postgresql:///oo --listen 127.0.0.1:$port --pool-size ${POOL:-16} > "$(mktemp)" 2>&1 &
spid=$!; trap 'kill $spid 2>/dev/null' EXIT
for i in $(seq 50); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.2; done
psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,10000) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,10000) g;"
tps() { pgbench -n "$@" -T $T bench 2>/dev/null | awk '/^tps/ {print int($3)}'; }
rps() { wrk --latency -t2 -c$C -d${T}s -s "$@" http://127.0.0.1:$port 2>/dev/null | awk '/Requests\/sec/ {r=int($2)} / 99%/ {p=$2} /Non-2xx/ {b=$NF} END {print r, p, b+0}'; }
echo "case clients raw oo ratio p99 non2xx"
for nskus in ${SKUSET:-10000 10}; do
  raw=$(tps -f "$base/order5f.sql" -D nskus=$nskus -c $C -j 2)
  read -r oo p99 bad < <(NSKUS=$nskus K=5 rps "$here/order.lua")
  echo "order5-${nskus}skus $C $raw $oo $(python3 -c "print(round($oo/$raw,2))") p99=$p99 non2xx=$bad"
done
curl -s localhost:$port/metrics | grep '^onceorder_order_batch_size' || true
"$BIN" check --db postgresql:///oo >/dev/null && echo "check ok" || echo "check FAILED"
