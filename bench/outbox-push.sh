#!/usr/bin/env bash
# Pushing a backlog: N events pending for one endpoint, delivered to a local receiver
# (bench_outbox_receiver: 200 at once, counts distinct Idempotency-Keys), timed until all are
# delivered, with `serve --delivery-workers W` for each W in WORKERS. Baseline in the same
# run: the raw-SQL outbox worker (bench_outbox raw-worker, W threads) over `outbox_copy`, a
# copy of the same events: per batch of 32, BEGIN; SELECT … ORDER BY id LIMIT 32 FOR UPDATE
# SKIP LOCKED; POST each; UPDATE … SET sent_at = now(); COMMIT. Both sides send a batch's POSTs
# at once, a connection each, with OnceOrder's own sender and the same signed requests, so the
# difference is the outbox's database work. One PostgreSQL with fsync on.
# docs/BENCHMARKS.md, "The outbox: feed, push and lag".
#
# OnceOrder's time runs from just before `PUT /v1/endpoints/NAME {"after": "0"}` (the events
# exist already, so the endpoint starts with all of them behind it) until the receiver has all
# N and the endpoint has nothing pending or sending (bench/outbox_push_time.py). The raw
# worker's time runs from its start until its last COMMIT. Between cases the endpoint is
# deleted (its deliveries with it) and the tables vacuumed and analyzed; `serve` runs only
# during OnceOrder's cases.
# Run inside: pg_virtualenv -t -o fsync=on bash bench/outbox-push.sh BUILD/onceorder [OUT]
# N events (default 20000), WORKERS (default "1 2"), ROUNDS (default 2), HISTORY (0 or 1, see
# below), each case under bench/lib.sh's quietly (BENCH_QUIET_WAIT, BENCH_TRIES).
set -euo pipefail
BIN=$(realpath "$1"); out=${2:-/dev/stdout}
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-20000}; ROUNDS=${ROUNDS:-2}; WORKERS=${WORKERS:-1 2}
HISTORY=${HISTORY:-0}
createdb oo
tmp=$(mktemp -d)
trap 'serve_stop; receiver_stop; rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
# shellcheck source=bench/outbox-lib.sh
source "$here/outbox-lib.sh"
serve_start "$BIN" postgresql:///oo --delivery-workers 0
stock_seed oo
events=$(fill_events oo "$N")
serve_stop
# HISTORY=1: a history first, as a live system has: one untimed push of the same events to
# endpoint `history`, whose delivered rows stay, then VACUUM ANALYZE. The claim's plan
# follows the statistics of `deliveries`: without a history every case starts from an empty
# table's, with one from a table of delivered rows.
if ((HISTORY)); then
  serve_start "$BIN" postgresql:///oo --delivery-workers 1
  receiver_start
  python3 "$here/outbox_push_time.py" "$port" "$rport" history "$events" "$secret" 3600 >/dev/null
  receiver_stop
  serve_stop
  psql -qX -d oo -c 'VACUUM ANALYZE'
fi
echo "# outbox push: $events events, one endpoint (every type), batch 32, history $HISTORY, $(date -u +%FT%TZ), $(nproc) cores" >"$out"

case_raw() { # W
  outbox_copy oo
  receiver_start
  raw_line=$("$bench_build/bench_outbox" raw-worker --db dbname=oo --url "http://127.0.0.1:$rport/hook" --secret "$secret" --workers "$1")
  got=$(receiver_stat unique)
  receiver_stop
  left=$(psql -qAtX -d oo -c 'SELECT count(*) FROM outbox_copy WHERE sent_at IS NULL')
  ((got == events && left == 0)) || { echo "raw worker: received $got of $events, $left unsent" >&2; exit 1; }
  raw=$(sed -n 's/.*\brate=\([0-9]*\).*/\1/p' <<<"$raw_line")
}

case_oo() { # W NAME
  serve_start "$BIN" postgresql:///oo --delivery-workers "$1"
  receiver_start
  secs=$(python3 "$here/outbox_push_time.py" "$port" "$rport" "$2" "$events" "$secret" 3600 | sed 's/seconds=//')
  sends=$(receiver_stat requests)
  receiver_stop
  curl -sf -X DELETE "localhost:$port/v1/endpoints/$2" >/dev/null
  serve_stop
  psql -qX -d oo -c 'VACUUM ANALYZE deliveries' -c 'VACUUM ANALYZE endpoints'
  oo=$(python3 -c "print(round($events / $secs))")
}

echo "round workers side raw_events_s oo_events_s ratio oo_seconds oo_posts noise sync_us load1" >>"$out"
for r in $(seq "$ROUNDS"); do
  for w in $WORKERS; do
    quietly case_raw "$w"
    raw_noise=$noise raw_sync=$sync_us
    echo "$r $w raw $raw - - - - $raw_noise $raw_sync $(loadavg)" >>"$out"
    quietly case_oo "$w" "bench-r$r-w$w"
    echo "$r $w onceorder $raw $oo $(ratio "$oo" "$raw") $secs $sends $noise $sync_us $(loadavg)" >>"$out"
  done
done
echo "# raw (last): $raw_line" >>"$out"
oo_check "$BIN" postgresql:///oo >>"$out"
