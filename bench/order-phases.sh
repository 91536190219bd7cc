#!/usr/bin/env bash
# Seed 004's breakdown: where a placement's time goes, by cart size, for cold carts (SKUs drawn
# from 10,000) and hot ones (from 20), at C connections (16), over HTTP with the shared
# driver's order.lua. Each case's figures are the difference of `serve`'s own
# onceorder_order_phase_seconds over its run: the mean lock wait, database round trips and
# the rest per placement, in milliseconds, and the 2xx answers a second.
# Run inside: pg_virtualenv -t -o fsync=on bash bench/order-phases.sh BIN
set -euo pipefail
BIN=$1; here=$(cd "$(dirname "$0")" && pwd); base=${BENCH_DIR:-$here/../../shared/bench}
T=${T:-10}; C=${C:-16}
createdb oo
tmp=$(mktemp -d)
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
made=$("$BIN" token new admin bench)
ONCEORDER_TOKEN=$(sed -n 's/^token: //p' <<<"$made"); export ONCEORDER_TOKEN
(umask 077 && sed -n 's/^line: //p' <<<"$made" >"$tmp/tokens")
"$BIN" serve --db postgresql:///oo --listen 127.0.0.1:$port --pool-size ${POOL:-16} \
  --tokens "$tmp/tokens" >"$tmp/serve.log" 2>&1 &
spid=$!; trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.2; done
curl -sf localhost:$port/readyz >/dev/null || { cat "$tmp/serve.log" >&2; exit 1; }
psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,10000) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,10000) g;"
# The phase series as "phase lines sum count" lines.
phases() {
  curl -sf -H "Authorization: Bearer $ONCEORDER_TOKEN" localhost:$port/metrics |
    sed -n 's/^onceorder_order_phase_seconds_\(sum\|count\){phase="\([a-z_]*\)",lines="\([0-9-]*\)"} \(.*\)$/\2 \3 \1 \4/p'
}
echo "carts lines clients orders_per_s lock_wait_ms round_trips_ms other_ms"
for temp in cold:10000 hot:20; do
  for k in 1 3 8 15; do
    phases >"$tmp/before"
    rps=$(NSKUS=${temp#*:} K=$k WRK_SCRIPT="$base/order.lua" wrk -t2 -c"$C" -d"${T}s" \
      -s "$here/with-token.lua" "http://127.0.0.1:$port" 2>/dev/null |
      awk '/Requests\/sec/ {r=$2} /Non-2xx/ {bad=$NF} /requests in/ {n=$1} END {printf "%d", (n > 0 ? r * (n - bad) / n : 0)}')
    phases >"$tmp/after"
    python3 - "$tmp/before" "$tmp/after" "${temp%%:*}" "$k" "$C" "$rps" <<'EOF'
import sys
def read(path):
    out = {}
    for line in open(path):
        phase, lines, kind, value = line.split()
        out[(phase, lines, kind)] = float(value)
    return out
before, after = read(sys.argv[1]), read(sys.argv[2])
k = int(sys.argv[4])
bucket = "1" if k <= 1 else "2-5" if k <= 5 else "6-10" if k <= 10 else "11-20"
def mean(phase):
    n = after[(phase, bucket, "count")] - before.get((phase, bucket, "count"), 0)
    s = after[(phase, bucket, "sum")] - before.get((phase, bucket, "sum"), 0)
    return 1000 * s / n if n else float("nan")
print(sys.argv[3], k, sys.argv[5], sys.argv[6],
      *(f"{mean(p):.2f}" for p in ("lock_wait", "round_trips", "other")))
EOF
  done
done
if "$BIN" check --db postgresql:///oo >"$tmp/check.out" 2>&1; then echo "check ok"; else echo "check FAILED"; fi
