#!/usr/bin/env bash
# A hot scope through HTTP (wrk, the shared driver's doc.lua, 16 connections) whose counter
# another transaction holds for 200 ms in the middle of the run, as a production run or a
# `configure` does: numbers/s in the 2 s before the hold and in the 4 s from 1 s after it.
# A server that recovers shows the same rate after as before. docs/BENCHMARKS.md,
# "Refusals and handed-back requests".
# Run inside: pg_virtualenv -t -o fsync=on bash bench/held-counter.sh build/onceorder
set -euo pipefail
BIN=$1; here=${BENCH_DIR:-/work/shared/bench}; C=${C:-16}
createdb oo
tmp=$(mktemp -d)
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh" # serve_start, serve_stop, oo_check
trap 'serve_stop; rm -rf "$tmp"' EXIT
serve_start "$BIN" postgresql:///oo
curl -sf -X PUT -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' \
  "localhost:$port/v1/scopes/HOT0" >/dev/null
last() { psql -qAtX -d oo -c "SELECT last_value FROM doc_scopes WHERE scope = 'HOT0'"; }
SCOPES=1 WRK_SCRIPT="$here/doc.lua" wrk -t2 -c"$C" -d8s -s "$(dirname "$0")/with-token.lua" "http://127.0.0.1:$port" >/dev/null &
wrk_pid=$!
sleep 2
before=$(last)
psql -qAtX -d oo -c "BEGIN; SELECT 1 FROM doc_scopes WHERE scope = 'HOT0' FOR UPDATE; SELECT pg_sleep(0.2); COMMIT" >/dev/null
sleep 1
from=$(last)
sleep 4
to=$(last)
wait "$wrk_pid" || true
echo "before the hold $((before / 2))/s; after it $(((to - from) / 4))/s"
oo_check "$BIN" postgresql:///oo
