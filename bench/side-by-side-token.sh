#!/usr/bin/env bash
# The shared side-by-side driver (../shared/bench/side-by-side.sh: OnceOrder over HTTP with wrk
# next to the raw SQL of the same work with pgbench, one PostgreSQL with fsync on), the same
# cases and scripts, with the one thing `serve` now needs: a token. The server gets a tokens
# file with one admin token (`onceorder token new`), and every wrk request carries it
# (bench/with-token.lua around the shared doc.lua and order.lua). The scopes' max is raised
# first and only 2xx answers count, so that no refusal counts as work. A binary from before tokens
# were required (it has no `token new`) runs without one, as the shared driver runs it.
# Run inside: pg_virtualenv -t -o fsync=on bash bench/side-by-side-token.sh BIN
set -euo pipefail
BIN=$1; here=$(cd "$(dirname "$0")" && pwd); base=${BENCH_DIR:-$here/../../shared/bench}
T=${T:-10}; C=${C:-16}
createdb bench; psql -qX -d bench -f "$base/schema.sql" >/dev/null
createdb oo
tmp=$(mktemp -d)
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
tokens=()
if made=$("$BIN" token new admin bench 2>/dev/null); then
  ONCEORDER_TOKEN=$(sed -n 's/^token: //p' <<<"$made"); export ONCEORDER_TOKEN
  (umask 077 && sed -n 's/^line: //p' <<<"$made" >"$tmp/tokens")
  tokens=(--tokens "$tmp/tokens")
fi
"$BIN" serve --db postgresql:///oo --listen 127.0.0.1:$port --pool-size ${POOL:-16} "${tokens[@]}" >"$tmp/serve.log" 2>&1 &
spid=$!; trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.2; done
curl -sf localhost:$port/readyz >/dev/null || { cat "$tmp/serve.log" >&2; exit 1; }
psql -qX -d oo -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,10000) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,10000) g;"
# The default max of a scope is 9999: a hot scope served faster than 1,000/s runs out within
# the run and the rest would be 409 scope_exhausted. Raised first, as side-by-side-numbers.sh.
auth=()
[[ -n ${ONCEORDER_TOKEN:-} ]] && auth=(-H "Authorization: Bearer $ONCEORDER_TOKEN")
for s in $(seq 0 63); do
  curl -sf -X PUT "${auth[@]}" -H 'Content-Type: application/json' -d '{"width":9,"max":999999999}' \
    "localhost:$port/v1/scopes/HOT$s" >/dev/null
done
tps() { pgbench -n "$@" -T "$T" bench 2>/dev/null | awk '/^tps/ {print int($3)}'; }
# Requests/s of 2xx answers only: a refusal must never count as work done.
rps() {
  WRK_SCRIPT=$1 wrk -t2 -c"$C" -d"${T}s" -s "$here/with-token.lua" "http://127.0.0.1:$port" 2>/dev/null |
    awk '/Requests\/sec/ {r=$2} /Non-2xx/ {bad=$NF} /requests in/ {n=$1} END {printf "%d\n", (n > 0 ? r * (n - bad) / n : 0)}'
}
echo "case clients raw oo ratio"
for s in 1 64; do
  raw=$(tps -f "$base/gapless1.sql" -D nscopes=$s -c "$C" -j 2)
  oo=$(SCOPES=$s rps "$base/doc.lua")
  echo "numbers-${s}scopes $C $raw $oo $(python3 -c "print(round($oo/$raw,2))")"
done
for nskus in 10000 10; do
  raw=$(tps -f "$base/order5f.sql" -D nskus=$nskus -c "$C" -j 2)
  oo=$(NSKUS=$nskus K=5 rps "$base/order.lua")
  echo "order5-${nskus}skus $C $raw $oo $(python3 -c "print(round($oo/$raw,2))")"
done
if "$BIN" check --db postgresql:///oo >"$tmp/check.out" 2>&1; then echo "check ok"; else echo "check FAILED"; grep -v "^ok" "$tmp/check.out"; fi
