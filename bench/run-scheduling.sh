#!/usr/bin/env bash
# Benchmark of production scheduling on PostgreSQL (fsync on): processing a batch run of
# M items at one site, each item creating a production order with a gapless number from
# the site's scope 'PO-<site>' in the transaction that marks it success. For 1, 4 and 16
# workers, in the same run and on the same throwaway cluster (real `onceorder migrate`):
#   store     OnceOrder's Scheduler::process_run (bench_scheduling), claim batch B
#   baseline  the same per-item work as raw SQL in one statement and one commit per item
#             (bench/pgbench/schedule_item.sql), pgbench with as many clients as workers,
#             -t = items/clients so that it processes every item
# Both start from the same state: the history of one earlier, finished run (BENCH_HISTORY
# success items at site H0, VACUUM ANALYZEd, so that the planner's statistics look like a
# database in use: few `wait` items), then the same source orders (ORD00000001.. at site
# S1) and one batch run over them, not analyzed (as when a run starts in production;
# autovacuum is off so that no ANALYZE lands in the middle of a case). The store imports
# and creates its run through the Scheduler API; the baseline's run (kind 'batch', status
# 'running') and wait items are made in SQL. Only the processing is timed:
# items/s = items / elapsed. Goal: store/baseline >= 0.8.
#
# Schema variants: `shipped` is exactly what `onceorder migrate` creates; `wait-index` adds
# one partial index on the wait items of a run (a proposal, see docs/BENCHMARKS.md). On the
# shipped schema the claim `WHERE run_id = $1 AND status = 'wait' ORDER BY item_id LIMIT n`
# walks past every finished item of the run (or sorts every waiting one) on each claim, so
# a one-item-per-claim baseline there is quadratic in the run's size: a strawman. The
# default cases therefore measure the baseline with the index, OnceOrder both as shipped
# and with the index. Then, outside PostgreSQL, the store path on SQLite (fresh file).
# Each case waits for a quiet machine and is repeated if a foreign compiler, test or
# server ran during it (bench/lib.sh; BENCH_QUIET_WAIT, BENCH_TRIES).
#
# Usage: bench/run-scheduling.sh [OUTPUT]   (default bench/results/scheduling-latest.txt)
# Environment:
#   BENCH_ITEMS=20000            items per case
#   BENCH_HISTORY=BENCH_ITEMS    success items of the earlier run seeded before each case
#   BENCH_WORKERS="1 4 16"       worker (= pgbench client) counts
#   BENCH_CLAIM_BATCH=16         items claimed and completed per store transaction
#   BENCH_CASES="store:shipped baseline:shipped store:wait-index baseline:wait-index"
#                                path:schema pairs, run in this order for each worker count
#   BENCH_SQLITE_WORKERS="1"     worker counts of the SQLite cases ("" skips them)
#   BENCH_BREAKDOWN=1            also load pg_stat_statements and time WAL I/O, and print
#                                where each case's time went on the server (statement
#                                execution and planning, commits, WAL flushes). It costs
#                                some throughput: use it to explain, not for the ratios.
#   BENCH_ITEM_EVENTS=on         off: the item-event triggers (migration 13) disabled during the
#                                cases, to measure what the events cost (docs/BENCHMARKS.md,
#                                "Item events"); enabled again, and the missing events written
#                                as `imported`, before the final check
#   ONCEORDER_BUILD_DIR          build directory holding onceorder and bench_scheduling
#                                (default build-bench if it exists, else build), configured
#                                with -DONCEORDER_BENCH=ON
set -euo pipefail

self=$(readlink -f "$0")
root=$(dirname "$(dirname "$self")")
if [[ -n "${1:-}" ]]; then out=$(realpath -m "$1"); else out=$root/bench/results/scheduling-latest.txt; fi
cd "$root"

if [[ -z "${ONCEORDER_BENCH_IN_PG:-}" ]]; then
  export ONCEORDER_BENCH_IN_PG=1 LC_ALL=C.UTF-8
  extra=()
  if [[ -n "${BENCH_BREAKDOWN:-}" ]]; then
    extra=(-o shared_preload_libraries=pg_stat_statements -o pg_stat_statements.track_planning=on
      -o pg_stat_statements.track_utility=off -o track_wal_io_timing=on)
  fi
  exec pg_virtualenv -t -o fsync=on -o synchronous_commit=on -o autovacuum=off "${extra[@]}" \
    "$self" "$out"
fi

items=${BENCH_ITEMS:-20000}
history=${BENCH_HISTORY:-$items}
batch=${BENCH_CLAIM_BATCH:-16}
read -r -a worker_counts <<<"${BENCH_WORKERS:-1 4 16}"
read -r -a cases <<<"${BENCH_CASES:-store:shipped baseline:shipped store:wait-index baseline:wait-index}"
read -r -a sqlite_workers <<<"${BENCH_SQLITE_WORKERS-1}"
if [[ -n "${ONCEORDER_BUILD_DIR:-}" ]]; then
  build=$ONCEORDER_BUILD_DIR
elif [[ -x build-bench/bench_scheduling ]]; then
  build=build-bench
else
  build=build
fi
bin=${ONCEORDER_BIN:-$build/onceorder}
driver=$build/bench_scheduling
site=S1
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }
now_ns() { date +%s%N; }

export ONCEORDER_DB="postgresql:///$PGDATABASE"
for exe in "$bin" "$driver"; do
  if [[ ! -x "$exe" ]]; then
    echo "run-scheduling: $exe not found; build onceorder and bench_scheduling first (cmake -DONCEORDER_BENCH=ON)" >&2
    exit 1
  fi
done

migrated=$("$bin" migrate --db "$ONCEORDER_DB" 2>&1) || {
  echo "$migrated" >&2
  echo "run-scheduling: '$bin migrate' failed" >&2
  exit 1
}
if [[ -n "${BENCH_BREAKDOWN:-}" ]]; then
  sql -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
fi
events=${BENCH_ITEM_EVENTS:-on}
item_event_triggers() { # ENABLE|DISABLE
  sql -c "ALTER TABLE schedule_items $1 TRIGGER schedule_items_event_insert" \
    -c "ALTER TABLE schedule_items $1 TRIGGER schedule_items_event_update"
}
if [[ $events == off ]]; then item_event_triggers DISABLE; fi
for t in source_orders schedule_runs schedule_items production_orders doc_scopes documents; do
  if ! sql -c "SELECT 1 FROM $t LIMIT 0" >/dev/null; then
    echo "run-scheduling: '$bin migrate' did not create $t" >&2
    exit 1
  fi
done

# The proposed index (variant wait-index only).
set_schema() {
  case $1 in
    shipped) sql -c 'SET client_min_messages = warning' -c 'DROP INDEX IF EXISTS bench_schedule_items_wait' ;;
    wait-index) sql -c 'SET client_min_messages = warning' -c "CREATE INDEX IF NOT EXISTS bench_schedule_items_wait
                          ON schedule_items (run_id, item_id) WHERE status = 'wait'" ;;
    *)
      echo "run-scheduling: unknown schema variant '$1'" >&2
      exit 1
      ;;
  esac
}

# Empty scheduling and numbering tables, then the history (an earlier run, done, all its
# items success), analyzed; the site's scope is created again by the first item of a case.
# The history run is a legacy import (kind 'legacy', as `onceorder legacy import-items`
# writes it): its success items have no production orders here, which only an imported run
# may have (I3), so the final `onceorder check` holds.
reset() {
  sql <<SQL
TRUNCATE production_orders, schedule_items, schedule_item_events, schedule_runs, source_orders,
  document_receipts, documents CASCADE;
DELETE FROM doc_scopes;
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT 'H0', 'ORD' || lpad(i::text, 8, '0'), 'L1', 1 + i % 100
  FROM generate_series(1, $history) AS i;
INSERT INTO schedule_runs (kind, status, owner, finished_at)
  VALUES ('legacy', 'done', 'legacy-import', now());
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status, attempt)
  SELECT (SELECT max(run_id) FROM schedule_runs), site_code, order_no, lot_no, 'success', 1
  FROM source_orders ORDER BY site_code, order_no, lot_no;
SQL
  sql -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
}

# The baseline's starting point: what import_source_orders + create_run(batch) leave
# behind (same keys, quantities and item order), made in SQL; not analyzed, like the
# store's.
prepare_baseline() {
  sql <<SQL
INSERT INTO source_orders (site_code, order_no, lot_no, quantity)
  SELECT '$site', 'ORD' || lpad(i::text, 8, '0'), 'L1', 1 + i % 100
  FROM generate_series(1, $items) AS i;
INSERT INTO schedule_runs (kind, status, owner) VALUES ('batch', 'running', 'pgbench');
INSERT INTO schedule_items (run_id, site_code, order_no, lot_no, status)
  SELECT (SELECT max(run_id) FROM schedule_runs), site_code, order_no, lot_no, 'wait'
  FROM source_orders WHERE site_code = '$site' ORDER BY site_code, order_no, lot_no;
SQL
  sql -c 'SELECT max(run_id) FROM schedule_runs'
}

# Every item success, one production order each, numbers 1..items without gaps.
check_done() {
  sql -c "SELECT CASE WHEN
      (SELECT count(*) FROM schedule_items WHERE site_code = '$site' AND status = 'success') = $items
      AND (SELECT count(*) FROM schedule_items WHERE status <> 'success') = 0
      AND (SELECT count(*) FROM production_orders WHERE site_code = '$site') = $items
      AND (SELECT last_value FROM doc_scopes WHERE scope = 'PO-$site') = $items
      AND (SELECT count(*) FROM documents WHERE scope = 'PO-$site') = $items
      AND (SELECT max(value) FROM documents WHERE scope = 'PO-$site') = $items
    THEN 'ok' ELSE 'INCOMPLETE' END"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh" # quietly, sync_write_us
table=$tmp/table
{
  echo "# OnceOrder production scheduling, PostgreSQL"
  echo "# date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "# commit:   $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)'), binaries $build ($(grep -s '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" | cut -d= -f2))"
  echo "# machine:  $(nproc) cores, $(uname -sr), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# server:   $(sql -c 'SHOW server_version'), fsync=$(sql -c 'SHOW fsync'), synchronous_commit=$(sql -c 'SHOW synchronous_commit'), wal_sync_method=$(sql -c 'SHOW wal_sync_method'), local socket"
  echo "# schema:   $migrated"
  echo "# disk:     synchronous 8 kB write $(sync_write_us) us at start (a commit waits for one)"
  echo "# events:   item-event triggers $events (BENCH_ITEM_EVENTS)"
  echo "# run:      $items items at site $site after a history of $history success items (analyzed), autovacuum=$(sql -c 'SHOW autovacuum')"
  echo "#           store: claim batch $batch, pool workers+2; baseline: pgbench -M prepared -n -j min(clients,2), -t items/clients"
  echo "# noise:    samples (every 0.5 s) with a foreign compiler/test/server running; 0 = clean."
  echo "#           A noisy case is run again (BENCH_TRIES=${BENCH_TRIES:-3}); sync_us: 8 kB O_DSYNC write before it"
  echo
  printf '%-10s %-9s %-7s %7s %9s %11s %7s  %-10s %7s %5s\n' schema case workers items elapsed_s items_per_s retries check sync_us noise
} >"$table"
cat "$table"
row() { printf '%-10s %-9s %-7s %7s %9s %11s %7s  %-10s %7s %5s\n' "$@" | tee -a "$table"; }

if [[ "$(sql -c 'SHOW fsync')" != on ]]; then
  echo "run-scheduling: fsync is off; numbers would not be comparable" >&2
  exit 1
fi

# The store path in two processes: set-up (import, create the run), then the timed
# processing of that run, so that server statistics can be reset in between.
store_run() { # workers [db]
  local workers=$1 db=${2:-$ONCEORDER_DB} log=$tmp/driver.log run_id
  if ! "$driver" --db "$db" --items "$items" --site "$site" --phase=setup >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "run-scheduling: bench_scheduling --phase=setup failed" >&2
    exit 1
  fi
  run_id=$(grep -o 'run=[0-9]*' "$log" | tail -1 | cut -d= -f2)
  if [[ $db == sqlite:* && $events == off ]]; then
    sqlite3 "${db#sqlite:}" 'DROP TRIGGER schedule_items_event_insert' \
      'DROP TRIGGER schedule_items_event_update'
  fi
  [[ $db == sqlite:* ]] || stats_reset
  if ! "$driver" --db "$db" --workers "$workers" --items "$items" --claim-batch "$batch" \
    --site "$site" --phase=process --run="$run_id" >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "run-scheduling: bench_scheduling failed with $workers workers" >&2
    exit 1
  fi
  ips=$(grep -o 'items_per_s=[0-9.]*' "$log" | tail -1 | cut -d= -f2)
  elapsed=$(grep -o 'elapsed_s=[0-9.]*' "$log" | tail -1 | cut -d= -f2)
  retries=$(grep -o 'retries=[0-9]*' "$log" | tail -1 | cut -d= -f2)
}

# BENCH_BREAKDOWN: server-side counters of the timed part only.
stats_reset() {
  [[ -n "${BENCH_BREAKDOWN:-}" ]] || return 0
  sql -c 'SELECT pg_stat_statements_reset()' -c "SELECT pg_stat_reset_shared('wal')" \
    -c 'SELECT pg_stat_reset()' >/dev/null
}
stats_row() { # schema path workers
  [[ -n "${BENCH_BREAKDOWN:-}" ]] || return 0
  sleep 1 # let exiting backends flush their statistics
  sql -F ' ' -c "SELECT
      round((SELECT sum(total_exec_time) FROM pg_stat_statements)::numeric / 1000, 2),
      round((SELECT sum(total_plan_time) FROM pg_stat_statements)::numeric / 1000, 2),
      (SELECT sum(calls) FROM pg_stat_statements),
      (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
      wal_sync, round(wal_sync_time::numeric / 1000, 2), round(wal_bytes / 1048576.0, 1),
      wal_fpi
    FROM pg_stat_wal" >"$tmp/stats"
  read -r exec_s plan_s calls commits syncs sync_s wal_mb fpi <"$tmp/stats"
  printf '%-10s %-9s %-7s %9s %7s %7s %8s %8s %8s %7s %7s %7s\n' "$1" "$2" "$3" "$elapsed" \
    "$exec_s" "$plan_s" "$calls" "$commits" "$syncs" "$sync_s" "$wal_mb" "$fpi" >"$tmp/breakdown.try"
}

baseline_run() { # clients
  local clients=$1 log=$tmp/pgbench.log run_id t threads start end
  threads=$((clients < 2 ? clients : 2))
  t=$(((items + clients - 1) / clients))
  run_id=$(prepare_baseline)
  stats_reset
  start=$(now_ns)
  if ! pgbench -M prepared -n -c "$clients" -j "$threads" -t "$t" -D run="$run_id" \
    -f bench/pgbench/schedule_item.sql >"$log" 2>&1; then
    cat "$log" >&2
    echo "run-scheduling: pgbench failed with $clients clients" >&2
    exit 1
  fi
  end=$(now_ns)
  elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  ips=$(awk -v n="$items" -v e="$elapsed" 'BEGIN { printf "%.0f", n / e }')
  retries=0
}

declare -A result
# Warm-up (not reported): caches, WAL, the driver's code path.
reset
items_saved=$items
items=2000
store_run 2
items=$items_saved
one_case() { # path schema workers
  set_schema "$2"
  reset
  case $1 in
    store)
      store_run "$3"
      printf -v ips '%.0f' "$ips"
      ;;
    baseline) baseline_run "$3" ;;
    *)
      echo "run-scheduling: unknown path '$1' in BENCH_CASES" >&2
      exit 1
      ;;
  esac
  check=$(check_done)
  stats_row "$2" "$1" "$3"
}
for workers in "${worker_counts[@]}"; do
  for case in "${cases[@]}"; do
    path=${case%%:*} schema=${case#*:}
    quietly one_case "$path" "$schema" "$workers"
    if [[ -f $tmp/breakdown.try ]]; then cat "$tmp/breakdown.try" >>"$tmp/breakdown"; fi
    row "$schema" "$path" "$workers" "$items" "$elapsed" "$ips" "$retries" "$check" "$sync_us" "$noise"
    result[$path,$schema,$workers]=$ips
  done
done
set_schema shipped
echo "# disk:     synchronous 8 kB write $(sync_write_us) us at end, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$table"

# Each store case against the baseline on the same schema; the shipped store also against
# the baseline with the index (the strict comparison: raw SQL at its best).
{
  echo
  echo "# goal: store/baseline >= 0.80"
  printf '%-20s %-20s %7s %9s %9s %9s  %s\n' store baseline workers store/s base/s ratio goal
} | tee -a "$table"
for workers in "${worker_counts[@]}"; do
  for sc in "${cases[@]}"; do
    [[ $sc == store:* ]] || continue
    for bc in "${cases[@]}"; do
      [[ $bc == baseline:* ]] || continue
      # Same schema, and the shipped store against every baseline.
      [[ ${sc#*:} == "${bc#*:}" || ${sc#*:} == shipped ]] || continue
      s_ips=${result[store,${sc#*:},$workers]} b_ips=${result[baseline,${bc#*:},$workers]}
      awk -v sc="$sc" -v bc="$bc" -v w="$workers" -v s="$s_ips" -v b="$b_ips" 'BEGIN {
          r = s / b
          printf "%-20s %-20s %7s %9s %9s %9.2f  %s\n", sc, bc, w, s, b, r, (r >= 0.8 ? "ok" : "MISSED")
        }' | tee -a "$table"
    done
  done
done

if [[ -n "${BENCH_BREAKDOWN:-}" ]]; then
  {
    echo
    echo "# breakdown (server side, timed part of the kept try): exec_s/plan_s = statement execution"
    echo "# and planning summed over all backends; calls = statements; commits = transactions;"
    echo "# wal_syncs/sync_s = WAL flushes and their time; fpi = full-page images in the WAL"
    printf '%-10s %-9s %-7s %9s %7s %7s %8s %8s %8s %7s %7s %7s\n' schema case workers elapsed_s \
      exec_s plan_s calls commits wal_syncs sync_s wal_MB fpi
    cat "$tmp/breakdown"
  } | tee -a "$table"
fi

sqlite_case() { # workers
  rm -f "$tmp"/scheduling.db*
  store_run "$1" "sqlite:$tmp/scheduling.db"
  printf -v ips '%.0f' "$ips"
}
if ((${#sqlite_workers[@]} > 0)); then
  {
    echo
    echo "# SQLite (WAL, synchronous=FULL), store path, fresh file per case on $(stat -f -c %T "$tmp")"
    printf '%-10s %-9s %-7s %7s %9s %11s %7s  %-10s %7s %5s\n' schema case workers items elapsed_s items_per_s retries check sync_us noise
  } | tee -a "$table"
  for workers in "${sqlite_workers[@]}"; do
    quietly sqlite_case "$workers"
    row shipped sqlite "$workers" "$items" "$elapsed" "$ips" "$retries" - "$sync_us" "$noise"
  done
fi

# Every benchmark ends with OnceOrder's own invariant check (bench/lib.sh, oo_check) on the
# PostgreSQL database it used, which still holds the last case's data: numbers from a run
# that left a violated invariant behind do not count, so the run fails after saving them.
if [[ $events == off ]]; then
  item_event_triggers ENABLE
  sql -c "INSERT INTO schedule_item_events (item_id, kind, status, attempt, owner, lease_until,
      detail, at) SELECT i.item_id, 'imported', i.status, i.attempt, i.owner, i.lease_until,
      i.error, i.updated_at FROM schedule_items i ORDER BY i.item_id"
fi
final_check=0
{ echo; oo_check "$bin" "$ONCEORDER_DB"; } | tee -a "$table" || final_check=1

mkdir -p "$(dirname "$out")"
cp "$table" "$out"
echo
echo "run-scheduling: results written to $out"
if ((final_check != 0)); then
  echo "run-scheduling: onceorder check FAILED on $ONCEORDER_DB (see above)" >&2
  exit 1
fi
