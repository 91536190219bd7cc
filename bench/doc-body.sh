#!/usr/bin/env bash
# What a document's body costs a number (issue 47, seed 003): the shared driver's numbers case
# (1 and 64 scopes, C connections) with a title only (its doc.lua) and with a header and 20
# lines (bench/doc-body.lua), alternated in one run against one `serve`; 2xx answers a second.
# Run inside: pg_virtualenv -t -o fsync=on bash bench/doc-body.sh BIN
set -euo pipefail
BIN=$1; here=$(cd "$(dirname "$0")" && pwd); base=${BENCH_DIR:-$here/../../shared/bench}
T=${T:-10}; C=${C:-16}; ROUNDS=${ROUNDS:-2}
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
for s in $(seq 0 63); do  # the default max (9999) would run out within a run
  curl -sf -X PUT -H "Authorization: Bearer $ONCEORDER_TOKEN" -H 'Content-Type: application/json' \
    -d '{"width":9,"max":999999999}' "localhost:$port/v1/scopes/HOT$s" >/dev/null
done
rps() {
  WRK_SCRIPT=$1 wrk -t2 -c"$C" -d"${T}s" -s "$here/with-token.lua" "http://127.0.0.1:$port" 2>/dev/null |
    awk '/Requests\/sec/ {r=$2} /Non-2xx/ {bad=$NF} /requests in/ {n=$1} END {printf "%d\n", (n > 0 ? r * (n - bad) / n : 0)}'
}
echo "round case clients title_only with_20_lines ratio"
for round in $(seq "$ROUNDS"); do
  for s in 1 64; do
    plain=$(SCOPES=$s rps "$base/doc.lua")
    bodied=$(SCOPES=$s rps "$here/doc-body.lua")
    echo "$round numbers-${s}scopes $C $plain $bodied $(python3 -c "print(round($bodied/$plain,2))")"
  done
done
psql -qXtA -d oo -c "SELECT count(*) AS lines_stored FROM document_lines"
if "$BIN" check --db postgresql:///oo >"$tmp/check.out" 2>&1; then echo "check ok"; else echo "check FAILED"; fi
