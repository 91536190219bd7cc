#!/usr/bin/env bash
# How busy a combining lane is: one wrk run against `onceorder serve` (PostgreSQL, fsync on),
# then, from /metrics before and after, the requests and batches per second, the average
# batch, its average time, and the share of the run during which a batch was running (the
# batch seconds over the run's seconds). A share near 1 with an idle CPU says the lane's own
# latency is the bound: what a batch waits for (round trips, the commit flush), not CPU.
# docs/BENCHMARKS.md, "Round trips out of the batches".
# Run inside: C=16 pg_virtualenv -t -o fsync=on bash bench/lane-duty.sh build/onceorder
# FORM=numbers (S scopes, 64; the shared doc.lua) or FORM=orders (5-SKU carts over N SKUs, 10;
# bench/orders.lua with a fresh key per request). C connections (16), T seconds (10).
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; dir=$(dirname "$0")
C=${C:-16}; T=${T:-10}; S=${S:-64}; N=${N:-10}; FORM=${FORM:-numbers}
# shellcheck source=bench/lib.sh
source "$dir/lib.sh" # side_by_side_start, oo_check
side_by_side_start "$BIN"
if [[ $FORM == orders ]]; then
  psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,$N) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,$N) g;"
  metric=onceorder_order_batch
  load() { NSKUS=$N K=5 DUP=0 wrk --latency -t2 -c"$C" -d"${T}s" -s "$dir/orders.lua" "http://127.0.0.1:$port"; }
else
  for s in $(seq 0 $((S - 1))); do curl -sf -X PUT -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' "localhost:$port/v1/scopes/HOT$s" >/dev/null; done
  metric=onceorder_numbering_batch
  load() { SCOPES=$S WRK_SCRIPT="$here/doc.lua" wrk --latency -t2 -c"$C" -d"${T}s" -s "$(dirname "$0")/with-token.lua" "http://127.0.0.1:$port"; }
fi
# requests (sum of batch sizes), batches, batch seconds
sample() {
  curl -s "localhost:$port/metrics" | awk -v m="$metric" '
    $1 == m "_size_sum" {r = $2} $1 == m "_size_count" {b = $2} $1 == m "_duration_seconds_sum" {s = $2}
    END {print r + 0, b + 0, s + 0}'
}
read -r r0 b0 s0 < <(sample)
out=$(load)
read -r r1 b1 s1 < <(sample)
awk '/Requests\/sec/ {print "http rate/s " int($2)} / 99%/ {print "p99 " $2}' <<<"$out"
python3 - "$T" "$r0" "$b0" "$s0" "$r1" "$b1" "$s1" <<'EOF'
import sys
t, r0, b0, s0, r1, b1, s1 = map(float, sys.argv[1:])
r, b, s = r1 - r0, b1 - b0, s1 - s0
print(f"lane requests/s {r / t:.0f} batches/s {b / t:.0f} average batch {r / max(b, 1):.1f} "
      f"batch time {s / max(b, 1) * 1e6:.0f} us busy {s / t:.2f}")
EOF
oo_check "$BIN" postgresql:///oo
