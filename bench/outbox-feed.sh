#!/usr/bin/env bash
# Reading the whole outbox feed: OnceOrder's GET /v1/events?limit=1000 (bench_outbox feed,
# one keep-alive connection, following next_after) next to the raw-SQL outbox read of the same
# rows from a hand-written outbox table (outbox-lib.sh's outbox_copy: the payload stored in the
# row; bench_outbox raw-feed: `id > $1 ORDER BY id LIMIT 1000` with libpq), in
# one run, one PostgreSQL with fsync on. The events are made by placing orders through
# OnceOrder's API until there are N (wrk, 5-SKU carts, fresh keys): real placements, so the table is what
# production writes and `onceorder check` passes at the end. docs/BENCHMARKS.md, "The outbox:
# feed, push and lag".
# Run inside: pg_virtualenv -t -o fsync=on bash bench/outbox-feed.sh BUILD/onceorder [OUT]
# N events (default 100000), ROUNDS alternations raw/OnceOrder (default 3), each case under
# bench/lib.sh's quietly (BENCH_QUIET_WAIT, BENCH_TRIES).
set -euo pipefail
BIN=$(realpath "$1"); out=${2:-/dev/stdout}
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-100000}; ROUNDS=${ROUNDS:-3}; LIMIT=${LIMIT:-1000}
createdb oo
tmp=$(mktemp -d)
trap 'serve_stop; rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
# shellcheck source=bench/outbox-lib.sh
source "$here/outbox-lib.sh"
# No delivery worker: nothing but the reads runs during the timed cases.
serve_start "$BIN" postgresql:///oo --delivery-workers 0
stock_seed oo
events=$(fill_events oo "$N")
outbox_copy oo
echo "# outbox feed: $events events ($(psql -qAtX -d oo -c "SELECT string_agg(type || ' ' || n, ', ') FROM (SELECT type, count(*) n FROM events GROUP BY 1 ORDER BY 1) s")), limit $LIMIT, $(date -u +%FT%TZ), $(nproc) cores" >"$out"
# Warm: both reads once, untimed, so that neither pays for the first read of the table.
"$bench_build/bench_outbox" raw-feed --db dbname=oo --limit "$LIMIT" >/dev/null
"$bench_build/bench_outbox" feed --port "$port" --limit "$LIMIT" >/dev/null

case_raw() { raw_line=$("$bench_build/bench_outbox" raw-feed --db dbname=oo --limit "$LIMIT"); }
case_oo() { oo_line=$("$bench_build/bench_outbox" feed --port "$port" --limit "$LIMIT"); }
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

echo "round raw_events_s oo_events_s ratio raw_events oo_events oo_client_cpu_s noise sync_us load1" >>"$out"
for r in $(seq "$ROUNDS"); do
  quietly case_raw
  raw_noise=$noise
  quietly case_oo
  raw=$(field rate "$raw_line") oo=$(field rate "$oo_line")
  for got in "$(field events "$raw_line")" "$(field events "$oo_line")"; do
    ((got == events)) || { echo "read $got events of $events" >&2; exit 1; }
  done
  echo "$r $raw $oo $(ratio "$oo" "$raw") $(field events "$raw_line") $(field events "$oo_line") $(field client_cpu_s "$oo_line") $raw_noise/$noise $sync_us $(loadavg)" >>"$out"
done
{
  echo "# raw: $raw_line"
  echo "# oo:  $oo_line"
  oo_check "$BIN" postgresql:///oo
} >>"$out"
