#!/usr/bin/env bash
# Cold orders through HTTP (wrk, 5-SKU carts over 10,000 SKUs, a fresh key per request, C
# connections) while another transaction holds three stock rows for 6 s from the 3rd second
# of a 12 s run, as an operator's open transaction would: orders/s, p99 and non-2xx answers
# over the whole run. Carts that touch a held row wait for it (up to the lock timeout per
# attempt) and hold their connection meanwhile; the rest should go on.
# docs/BENCHMARKS.md, "Crowded warehouses combine".
# Run inside: pg_virtualenv -t -o fsync=on bash bench/held-stock.sh build/onceorder
set -euo pipefail
BIN=$1; dir=$(dirname "$0"); C=${C:-16}
# shellcheck source=bench/lib.sh
source "$dir/lib.sh" # side_by_side_start, oo_check
side_by_side_start "$BIN"
psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,10000) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,10000) g;"
(
  sleep 3
  psql -qX -d oo -c "BEGIN; SELECT sku_id FROM stock WHERE warehouse_id = 1 AND sku_id <= 3 FOR UPDATE; SELECT pg_sleep(6); COMMIT;" >/dev/null
) &
holder=$!
NSKUS=10000 K=5 DUP=0 wrk --latency -t2 -c"$C" -d12s -s "$dir/orders.lua" "http://127.0.0.1:$port" |
  awk '/Requests\/sec/ {r = int($2)} / 99%/ {p = $2} /Non-2xx/ {b = $NF} END {print "orders/s " r " p99 " p " non2xx " b + 0}'
wait "$holder"
oo_check "$BIN" postgresql:///oo
