#!/usr/bin/env bash
# Delivery lag under load: wrk places orders (bench/orders.lua: 5-SKU carts of 10,000 SKUs,
# fresh keys, C connections) for T seconds while one endpoint receives every order.placed
# (bench_outbox_receiver, which records now − occurred_at for each event's first arrival);
# the same placement without an endpoint next to it, alternating, each case on a fresh
# database with `serve --delivery-workers $WORKERS`. Reports the placement rate of
# both, the lag's p50/p99/max (the receiver's, after the backlog left at wrk's end is
# delivered) and the bounds `onceorder_delivery_latency_seconds` gives for p50/p99. One
# PostgreSQL with fsync on. docs/BENCHMARKS.md, "The outbox: feed, push and lag".
# occurred_at is an order's created_at, its transaction's start: the lag includes the
# placement's own transaction and commit, the wait for the feed's horizon, the dispatch, the
# claim and the POST.
# Run inside: pg_virtualenv -t -o fsync=on bash bench/outbox-lag.sh BUILD/onceorder [OUT]
# WARM seconds of untimed placements first (default 5, see case_lag), T seconds (default 20),
# C connections (default 16), ROUNDS (default 2), WORKERS (serve's --delivery-workers, default
# 1), each case under bench/lib.sh's quietly (BENCH_QUIET_WAIT, BENCH_TRIES).
set -euo pipefail
BIN=$(realpath "$1"); out=${2:-/dev/stdout}
here=$(cd "$(dirname "$0")" && pwd)
T=${T:-20}; C=${C:-16}; ROUNDS=${ROUNDS:-2}; WARM=${WARM:-5}
MODES="none endpoint"; WORKERS=${WORKERS:-1}
tmp=$(mktemp -d)
trap 'serve_stop; receiver_stop; rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
# shellcheck source=bench/outbox-lib.sh
source "$here/outbox-lib.sh"
echo "# outbox lag: wrk ${T}s at $C connections, $WORKERS delivery workers, one endpoint of order.placed, $(date -u +%FT%TZ), $(nproc) cores" >"$out"

# The delivery-latency histogram as "le count" lines (cumulative), and from two such
# snapshots the bound within which fraction P of the observations in between lie.
latency_buckets() {
  curl -s "localhost:$port/metrics" | awk '/^onceorder_delivery_latency_seconds_bucket/ {
    match($0, /le="[^"]*"/); print substr($0, RSTART + 4, RLENGTH - 5), $NF }'
}
metric_quantile() { # P BEFORE AFTER (files)
  paste "$2" "$3" | awk -v p="$1" '{ le[NR] = $1; c[NR] = $4 - $2 }
    END { for (i = 1; i <= NR; i++) if (c[NR] && c[i] >= p * c[NR]) { print "<=" le[i]; exit } print "?" }'
}
placed() { psql -qAtX -d "$1" -c "SELECT count(*) FROM events WHERE type = 'order.placed'"; }

# Waits up to DRAIN seconds (default 120) until the receiver has every order.placed of
# database $1 after the first $2 (those placed before its last reset); false if it has not.
drain() {
  local want got
  want=$(($(placed "$1") - $2))
  for _ in $(seq $((${DRAIN:-120} * 5))); do
    got=$(receiver_stat unique)
    ((got >= want)) && return 0
    sleep 0.2
  done
  echo "drain: the receiver has $got of $want" >&2
  return 1
}

# A fresh database, then WARM seconds of untimed placements (delivered, when there is an
# endpoint) and VACUUM ANALYZE: the timed phase meets tables with statistics, as a live
# system's are, not empty ones (the claim's plan follows them).
case_lag() { # MODE DB
  dropdb --if-exists "$2" 2>/dev/null; createdb "$2" # a noisy try runs again
  serve_start "$BIN" "postgresql:///$2" --delivery-workers "$WORKERS"
  stock_seed "$2"
  p50=- p99=- pmax=- m50=- m99=- behind=-
  if [[ $1 != none ]]; then
    receiver_start
    curl -sf -X PUT "localhost:$port/v1/endpoints/lag" -H 'Content-Type: application/json' \
      -d "{\"url\":\"http://127.0.0.1:$rport/hook\",\"secret\":\"$secret\",\"types\":[\"order.placed\"]}" >/dev/null
  fi
  place_orders "$WARM" "$C" >/dev/null
  [[ $1 == none ]] || drain "$2" 0 || echo "  (the warm-up was not delivered in time)" >&2
  psql -qX -d "$2" -c 'VACUUM ANALYZE'
  local base
  base=$(placed "$2")
  [[ $1 == none ]] || { latency_buckets >"$tmp/lat.before"; curl -s "localhost:$rport/reset" >/dev/null; }
  read -r rps bad < <(place_orders "$T" "$C")
  if [[ $1 != none ]]; then
    local total
    total=$(($(placed "$2") - base))
    behind=$((total - $(receiver_stat unique)))
    # Events still not delivered after DRAIN seconds count as lagging longer than any
    # delivered one: a quantile among them reads "inf".
    drain "$2" "$base" || true
    p50=$(total=$total receiver_stat lag_p50_ms) p99=$(total=$total receiver_stat lag_p99_ms)
    pmax=$(total=$total receiver_stat lag_max_ms)
    latency_buckets >"$tmp/lat.after"
    m50=$(metric_quantile 0.5 "$tmp/lat.before" "$tmp/lat.after")
    m99=$(metric_quantile 0.99 "$tmp/lat.before" "$tmp/lat.after")
    receiver_stop
  fi
  serve_stop
}

echo "round mode orders_s non2xx lag_p50_ms lag_p99_ms lag_max_ms metric_p50_s metric_p99_s behind_at_end noise sync_us load1" >>"$out"
for r in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    db=oo_${mode}_$r
    quietly case_lag "$mode" "$db"
    echo "$r $mode $rps $bad $p50 $p99 $pmax $m50 $m99 $behind $noise $sync_us $(loadavg)" >>"$out"
    oo_check "$BIN" "postgresql:///$db" >>"$out"
  done
done
