#!/usr/bin/env bash
# Where a request's time goes, as CPU per request: PostgreSQL (every backend), `onceorder
# serve` and the load generator, for document numbers through HTTP (wrk, the shared doc.lua)
# next to the raw one-statement SQL (pgbench, gapless1.sql) on the same database server. CPU
# per request barely depends on how busy the machine is, so it compares runs a rate cannot
# (docs/BENCHMARKS.md, "The cheap path"). Also prints the average combined batch.
# Run inside: C=16 S=64 pg_virtualenv -t -o fsync=on bash bench/cpu-per-request.sh build/onceorder
# S scopes (64), C connections (16), T seconds per run (8), R rounds (2).
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; dir=$(dirname "$0")
C=${C:-16}; T=${T:-8}; S=${S:-64}; R=${R:-2}
# shellcheck source=bench/lib.sh
source "$dir/lib.sh" # side_by_side_start, oo_check
side_by_side_start "$BIN"
for s in $(seq 0 $((S - 1))); do curl -sf -X PUT -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' "localhost:$port/v1/scopes/HOT$s" >/dev/null; done
checkpointer=$(psql -qAtX -d bench -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")
postmaster=$(awk '{print $4}' "/proc/$checkpointer/stat")
cpu() { python3 "$dir/cpu_tree.py" "$@"; }
per() { python3 -c "print(round(($2 - $1) * 1e6 / $3))"; }
echo "form rate/s pg_us serve_us client_us"
for _ in $(seq "$R"); do
  read -r p0 s0 < <(cpu "$postmaster" "$serve_pid")
  out=$({ /usr/bin/time -f "CPU %U %S" env SCOPES="$S" wrk -t2 -c"$C" -d"${T}s" -s "$here/doc.lua" "http://127.0.0.1:$port"; } 2>&1)
  read -r p1 s1 < <(cpu "$postmaster" "$serve_pid")
  n=$(awk '/requests in/ {print $1}' <<<"$out"); lg=$(awk '/^CPU/ {print $2 + $3}' <<<"$out")
  echo "http $((n / T)) $(per "$p0" "$p1" "$n") $(per "$s0" "$s1" "$n") $(per 0 "$lg" "$n")"
  read -r p0 < <(cpu "$postmaster")
  out=$({ /usr/bin/time -f "CPU %U %S" pgbench -n -f "$here/gapless1.sql" -D nscopes="$S" -c "$C" -j 2 -T "$T" bench; } 2>&1)
  read -r p1 < <(cpu "$postmaster")
  n=$(awk '/actually processed/ {print $NF}' <<<"$out"); lg=$(awk '/^CPU/ {print $2 + $3}' <<<"$out")
  echo "raw $((n / T)) $(per "$p0" "$p1" "$n") - $(per 0 "$lg" "$n")"
done
curl -s "localhost:$port/metrics" | awk '/^onceorder_numbering_batch_size_sum/ {s = $2} /^onceorder_numbering_batch_size_count/ {c = $2} END {if (c) printf "average batch %.1f (%d runs)\n", s / c, c}'
oo_check "$BIN" postgresql:///oo
