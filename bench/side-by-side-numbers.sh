#!/usr/bin/env bash
# The document-number cases of the shared side-by-side driver (/work/shared/bench/side-by-side.sh,
# its README): OnceOrder over HTTP (wrk) next to the raw one-statement SQL (pgbench), one
# PostgreSQL with fsync on, in one run. Two changes from the shared script: every scope's max is
# raised first (the default 9999 runs out within a 10 s hot-scope run, after which wrk counts
# 409 answers), and wrk reports p99 and non-2xx answers, next to the server's own p99 and
# p99.9 from /metrics. docs/BENCHMARKS.md, "Number combining".
# Run inside: C=16 pg_virtualenv -t -o fsync=on bash bench/side-by-side-numbers.sh build/onceorder
# BENCH_DIR holds the shared driver's doc.lua, gapless1.sql and schema.sql; SCOPESET="64" runs one case.
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; base=$here
T=${T:-10}; C=${C:-16}
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh" # side_by_side_start, oo_check
side_by_side_start "$BIN"
# The default scope max is 9999: a hot scope at >1,000/s runs out within 10 s and the rest
# of the run would count 409 scope_exhausted answers. Raise it first.
for s in $(seq 0 63); do curl -sf -X PUT -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' localhost:$port/v1/scopes/HOT$s >/dev/null; done
tps() { pgbench -n "$@" -T $T bench 2>/dev/null | awk '/^tps/ {print int($3)}'; }
rps() { wrk --latency -t2 -c$C -d${T}s -s "$@" http://127.0.0.1:$port 2>/dev/null | awk '/Requests\/sec/ {r=int($2)} / 99%/ {p=$2} /Non-2xx/ {b=$NF} END {print r, p, b+0}'; }
echo "case clients raw oo ratio p99 (wrk) server p99/p99.9 non2xx"
for s in ${SCOPESET:-1 64}; do
  raw=$(tps -f "$base/gapless1.sql" -D nscopes=$s -c $C -j 2)
  before=$(server_buckets "/v1/scopes/{scope}/documents")
  read -r oo p99 bad < <(SCOPES=$s WRK_SCRIPT="$here/doc.lua" rps "$(dirname "$0")/with-token.lua")
  srv=$(server_quantiles "$before" "$(server_buckets "/v1/scopes/{scope}/documents")")
  echo "numbers-${s}scopes $C $raw $oo $(python3 -c "print(round($oo/$raw,2))") p99=$p99 $srv non2xx=$bad"
done
# The numbers only count if what OnceOrder wrote is still correct: a violated invariant
# fails the run (exit status 1) after printing what is wrong.
oo_check "$BIN" postgresql:///oo
