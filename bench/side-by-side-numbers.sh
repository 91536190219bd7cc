#!/usr/bin/env bash
# The document-number cases of the shared side-by-side driver (/work/shared/bench/side-by-side.sh,
# its README): OnceOrder over HTTP (wrk) next to the raw one-statement SQL (pgbench), one
# PostgreSQL with fsync on, in one run. Two changes from the shared script: every scope's max is
# raised first (the default 9999 runs out within a 10 s hot-scope run, after which wrk counts
# 409 answers), and wrk reports p99 and non-2xx answers. docs/BENCHMARKS.md, "Number combining".
# Run inside: C=16 pg_virtualenv -t -o fsync=on bash bench/side-by-side-numbers.sh build/onceorder
# BENCH_DIR holds the shared driver's doc.lua, gapless1.sql and schema.sql; SCOPESET="64" runs one case.
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; base=$here
T=${T:-10}; C=${C:-16}
createdb bench; psql -qX -d bench -f "$base/schema.sql" >/dev/null
createdb oo
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$BIN" serve --db postgresql:///oo --listen 127.0.0.1:$port --pool-size ${POOL:-16} > "$(mktemp)" 2>&1 &
spid=$!; trap 'kill $spid 2>/dev/null' EXIT
for i in $(seq 50); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.2; done
# The default scope max is 9999: a hot scope at >1,000/s runs out within 10 s and the rest
# of the run would count 409 scope_exhausted answers. Raise it first.
for s in $(seq 0 63); do curl -sf -X PUT -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' localhost:$port/v1/scopes/HOT$s >/dev/null; done
tps() { pgbench -n "$@" -T $T bench 2>/dev/null | awk '/^tps/ {print int($3)}'; }
rps() { wrk --latency -t2 -c$C -d${T}s -s "$@" http://127.0.0.1:$port 2>/dev/null | awk '/Requests\/sec/ {r=int($2)} / 99%/ {p=$2} /Non-2xx/ {b=$NF} END {print r, p, b+0}'; }
echo "case clients raw oo ratio p99 non2xx"
for s in ${SCOPESET:-1 64}; do
  raw=$(tps -f "$base/gapless1.sql" -D nscopes=$s -c $C -j 2)
  read -r oo p99 bad < <(SCOPES=$s rps "$here/doc.lua")
  echo "numbers-${s}scopes $C $raw $oo $(python3 -c "print(round($oo/$raw,2))") p99=$p99 non2xx=$bad"
done
"$BIN" check --db postgresql:///oo >/dev/null && echo "check ok" || echo "check FAILED"
