#!/usr/bin/env bash
# Where the order lane's PostgreSQL backend spends a run: on the CPU, waiting for `serve`'s next
# message, or waiting for the disk (the commit's flush). One wrk run of 5-SKU carts with fresh
# keys (bench/orders.lua) against `onceorder serve`; after 3 s, one second of the kernel's
# scheduler events (`perf record -e sched:sched_switch -e sched:sched_wakeup -a`) is split by
# bench/lane_backend.py for the busiest backend (the lane's). A backend near 100 % on the CPU
# bounds the lane by its work per order; waits say how much a shorter round trip or flush could
# still give. docs/BENCHMARKS.md, "Batch rows as arrays".
# Run inside: N=10000 C=16 pg_virtualenv -t -o fsync=on bash bench/lane-backend.sh build/onceorder
# N SKUs (10000), C connections (16), T seconds of load (8).
set -euo pipefail
BIN=$1; dir=$(dirname "$0")
N=${N:-10000}; C=${C:-16}; T=${T:-8}
# shellcheck source=bench/lib.sh
source "$dir/lib.sh" # side_by_side_start, oo_check
side_by_side_start "$BIN"
psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,$N) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,$N) g;"
NSKUS=$N K=5 DUP=0 wrk -t2 -c"$C" -d"${T}s" -s "$dir/orders.lua" "http://127.0.0.1:$port" >"$tmp/wrk.txt" &
load=$!
sleep 3
perf record -q -o "$tmp/sched.data" -e sched:sched_switch -e sched:sched_wakeup -a -- sleep 1 >/dev/null 2>&1
wait "$load"
awk '/Requests\/sec/ {print "http rate/s " int($2) " (perf running for 1 s of it)"}' "$tmp/wrk.txt"
perf script -i "$tmp/sched.data" -F comm,tid,time,event,trace 2>/dev/null | python3 "$dir/lane_backend.py"
oo_check "$BIN" postgresql:///oo
