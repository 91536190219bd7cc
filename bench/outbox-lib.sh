# shellcheck shell=bash disable=SC2034,SC2154 # sets and uses the callers' variables
# Shared by bench/outbox-feed.sh, bench/outbox-push.sh and bench/outbox-lag.sh (sourced, not
# run; inside the benchmark's PostgreSQL cluster, after bench/lib.sh). Needs $BIN, $tmp and
# $here (the bench directory); the bench programs are looked up next to $BIN
# (a -DONCEORDER_BENCH=ON build) unless BENCH_BUILD says where.
bench_build=${BENCH_BUILD:-$(dirname "$BIN")}
secret=bench-outbox-secret-0123456789

# stock_seed DB: warehouse 1 with 10,000 SKUs of endless stock, as the side-by-side scripts.
stock_seed() {
  psql -qX -d "$1" -c "INSERT INTO stock (warehouse_id, sku_id, available, price_cents) SELECT 1, g, 1000000000, 100 FROM generate_series(1,10000) g; INSERT INTO stock_ledger (warehouse_id, sku_id, delta, kind, reason) SELECT 1, g, 1000000000, 'initial', 'perf' FROM generate_series(1,10000) g;"
}

# place_orders SECONDS [C]: wrk placing 5-SKU carts of 10,000 SKUs with fresh keys at
# C connections (default 16) against the server on $port; prints "rps non2xx".
place_orders() {
  NSKUS=10000 K=5 DUP=0 wrk -t2 -c"${2:-16}" -d"$1"s -s "$here/orders.lua" "http://127.0.0.1:$port" 2>/dev/null |
    awk '/Requests\/sec/ {r=int($2)} /Non-2xx/ {b=$NF} END {print r, b+0}'
}

# fill_events DB N: places orders through OnceOrder's API (the server on $port) until the
# events table holds at least N events; prints how many it holds. Real placements, so the
# events are what production writes (order.placed with 5 lines each) and check passes.
fill_events() {
  local db=$1 n=$2 wrk_pid have=0
  NSKUS=10000 K=5 DUP=0 wrk -t2 -c16 -d3600s -s "$here/orders.lua" "http://127.0.0.1:$port" >/dev/null 2>&1 &
  wrk_pid=$!
  while ((have < n)); do
    sleep 0.5
    have=$(psql -qAtX -d "$db" -c 'SELECT count(*) FROM events')
    kill -0 "$wrk_pid" 2>/dev/null || { echo "fill_events: wrk ended early" >&2; return 1; }
  done
  kill "$wrk_pid"
  wait "$wrk_pid" 2>/dev/null || true
  psql -qX -d "$db" -c 'VACUUM ANALYZE' >/dev/null
  psql -qAtX -d "$db" -c 'SELECT count(*) FROM events'
}

# outbox_copy DB: the raw-SQL baseline's outbox, a table as a hand-written outbox keeps one:
# id, type, key, occurred_at and the JSON payload stored with the row, sent_at NULL, with
# the events' own bytes (from the view event_feed), so both sides send and read the same data.
outbox_copy() {
  psql -qX -d "$1" -c "SET client_min_messages TO warning; DROP TABLE IF EXISTS outbox_copy; CREATE TABLE outbox_copy AS SELECT event_id AS id, type, key, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS occurred_at, data::jsonb AS data, NULL::timestamptz AS sent_at FROM event_feed; ALTER TABLE outbox_copy ADD PRIMARY KEY (id); CREATE INDEX outbox_copy_unsent ON outbox_copy (id) WHERE sent_at IS NULL;" -c 'VACUUM ANALYZE outbox_copy'
}

# receiver_start: bench_outbox_receiver on a free loopback port; sets $rport and $rcv_pid.
receiver_start() {
  "$bench_build/bench_outbox_receiver" >"$tmp/rcv.port" &
  rcv_pid=$!
  for _ in $(seq 50); do
    rport=$(head -1 "$tmp/rcv.port" 2>/dev/null || true)
    [[ -n $rport ]] && return 0
    sleep 0.1
  done
  echo "receiver_start: no port" >&2
  return 1
}
receiver_stop() {
  if [[ -n "${rcv_pid:-}" ]]; then
    kill "$rcv_pid" 2>/dev/null || true
    wait "$rcv_pid" 2>/dev/null || true
    rcv_pid=
  fi
}
# receiver_stat NAME: one value of the receiver's /stats (its lag quantiles over $total
# events when set, those not received counting as the longest).
receiver_stat() { curl -s "localhost:$rport/stats?total=${total:-0}" | awk -v k="$1" '$1 == k {print $2}'; }

loadavg() { cut -d' ' -f1 /proc/loadavg; }

# ratio A B: A / B to two places.
ratio() { python3 -c "print(round($1 / $2, 2))"; }
