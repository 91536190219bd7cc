#!/usr/bin/env bash
# Where a request's time goes, as CPU per request: PostgreSQL (every backend), `onceorder
# serve` and the load generator, for document numbers through HTTP (wrk, the shared doc.lua)
# next to the raw one-statement SQL (pgbench, gapless1.sql) on the same database server. CPU
# per request barely depends on how busy the machine is, so it compares runs a rate cannot
# (docs/BENCHMARKS.md, "The cheap path"). Also prints the average combined batch.
# Run inside: C=16 S=64 pg_virtualenv -t -o fsync=on bash bench/cpu-per-request.sh build/onceorder
# S scopes (64), C connections (16), T seconds per run (8), R rounds (2).
# FORM=orders: 5-SKU orders over N SKUs (10000) instead (bench/orders.lua next to order5f.sql).
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; dir=$(dirname "$0")
C=${C:-16}; T=${T:-8}; S=${S:-64}; R=${R:-2}
# shellcheck source=bench/lib.sh
source "$dir/lib.sh" # side_by_side_start, oo_check, our_postmaster
side_by_side_start "$BIN"
FORM=${FORM:-numbers}; N=${N:-10000}
export N C T S dir here port # for load and raw, run under /usr/bin/time
if [[ $FORM == orders ]]; then
  psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,$N) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,$N) g;"
  load() { NSKUS=$N K=5 DUP=0 wrk -t2 -c"$C" -d"${T}s" -s "$dir/orders.lua" "http://127.0.0.1:$port"; }
  raw() { pgbench -n -f "$here/order5f.sql" -D nskus="$N" -c "$C" -j 2 -T "$T" bench; }
  batch_metric=onceorder_order_batch_size
else
  load() { SCOPES=$S WRK_SCRIPT="$here/doc.lua" wrk -t2 -c"$C" -d"${T}s" -s "$(dirname "$0")/with-token.lua" "http://127.0.0.1:$port"; }
  raw() { pgbench -n -f "$here/gapless1.sql" -D nscopes="$S" -c "$C" -j 2 -T "$T" bench; }
  batch_metric=onceorder_numbering_batch_size
fi
for s in $(seq 0 $((S - 1))); do curl -sf -X PUT -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' "localhost:$port/v1/scopes/HOT$s" >/dev/null; done
cpu() { python3 "$dir/cpu_tree.py" "$@"; }
per() { python3 -c "print(round(($2 - $1) * 1e6 / $3))"; }
echo "form rate/s pg_us serve_us client_us"
for _ in $(seq "$R"); do
  read -r p0 s0 < <(cpu "$our_postmaster" "$serve_pid")
  out=$({ /usr/bin/time -f "CPU %U %S" bash -c "$(declare -f load); load"; } 2>&1)
  read -r p1 s1 < <(cpu "$our_postmaster" "$serve_pid")
  n=$(awk '/requests in/ {print $1}' <<<"$out"); lg=$(awk '/^CPU/ {print $2 + $3}' <<<"$out")
  echo "http $((n / T)) $(per "$p0" "$p1" "$n") $(per "$s0" "$s1" "$n") $(per 0 "$lg" "$n")"
  read -r p0 < <(cpu "$our_postmaster")
  out=$({ /usr/bin/time -f "CPU %U %S" bash -c "$(declare -f raw); raw"; } 2>&1)
  read -r p1 < <(cpu "$our_postmaster")
  n=$(awk '/actually processed/ {print $NF}' <<<"$out"); lg=$(awk '/^CPU/ {print $2 + $3}' <<<"$out")
  echo "raw $((n / T)) $(per "$p0" "$p1" "$n") - $(per 0 "$lg" "$n")"
done
curl -s "localhost:$port/metrics" | awk -v m="$batch_metric" '$1 == m "_sum" {s = $2} $1 == m "_count" {c = $2} END {if (c) printf "average batch %.1f (%d runs)\n", s / c, c}'
oo_check "$BIN" postgresql:///oo
