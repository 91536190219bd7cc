#!/usr/bin/env bash
# Benchmark of document-number allocation on PostgreSQL (fsync on), one hot scope and
# 64 scopes, at 1, 4 and 16 clients. In the same run and on the same throwaway cluster,
# migrated by the real `onceorder migrate`:
#   statements  raw SQL, statement by statement (BEGIN; UPDATE … RETURNING; INSERT; COMMIT)
#   cte         raw SQL, the same work as OnceOrder's one-statement CTE (num_insert_issued)
#   gappy       raw SQL, nextval() + INSERT: the gap-allowing ceiling
#   store       OnceOrder's Numbering service in-process (bench_numbering --mode=store)
#   http        the same through the HTTP server on loopback (bench_numbering --mode=http)
# Every case uses the scopes bench-1..N (width 9, max 999999999) and starts from empty
# tables and zeroed counters. A summary gives store/best and http/best, where best is the
# faster of the two gapless raw forms (statements, cte); goals: store ≥ 0.8, http ≥ 0.6.
# Then, outside PostgreSQL, the store path on SQLite (fresh file per case).
# Each case waits for a quiet machine and is repeated if a foreign compiler, test or
# server ran during it (bench/lib.sh; BENCH_QUIET_WAIT, BENCH_TRIES).
#
# Usage: bench/run-numbering.sh [OUTPUT]   (default bench/results/numbering-latest.txt)
# Environment:
#   BENCH_SECONDS=10             duration of each case
#   BENCH_CLIENTS="1 4 16"       client counts
#   BENCH_SCOPES="1 64"          scope counts
#   BENCH_SQLITE_CLIENTS="1 4"   client counts of the SQLite cases ("" skips them)
#   ONCEORDER_BUILD_DIR          build directory holding onceorder and bench_numbering
#                                (default build-bench if it exists, else build); a Release
#                                build: cmake -S . -B build-bench -G Ninja
#                                -DCMAKE_BUILD_TYPE=Release -DONCEORDER_BENCH=ON && ninja -C build-bench
#                                onceorder bench_numbering
set -euo pipefail

self=$(readlink -f "$0")
root=$(dirname "$(dirname "$self")")
if [[ -n "${1:-}" ]]; then out=$(realpath -m "$1"); else out=$root/bench/results/numbering-latest.txt; fi
cd "$root"

# Re-run inside a throwaway PostgreSQL cluster with fsync ON (pg_virtualenv turns it off
# unless told otherwise); -t keeps the cluster in a temporary directory.
if [[ -z "${ONCEORDER_BENCH_IN_PG:-}" ]]; then
  export ONCEORDER_BENCH_IN_PG=1 LC_ALL=C.UTF-8
  exec pg_virtualenv -t -o fsync=on -o synchronous_commit=on "$self" "$out"
fi

secs=${BENCH_SECONDS:-10}
read -r -a client_counts <<<"${BENCH_CLIENTS:-1 4 16}"
read -r -a scope_counts <<<"${BENCH_SCOPES:-1 64}"
read -r -a sqlite_clients <<<"${BENCH_SQLITE_CLIENTS-1 4}"
if [[ -n "${ONCEORDER_BUILD_DIR:-}" ]]; then
  build=$ONCEORDER_BUILD_DIR
elif [[ -x build-bench/bench_numbering ]]; then
  build=build-bench
else
  build=build
fi
bin=${ONCEORDER_BIN:-$build/onceorder}
driver=$build/bench_numbering
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }

export ONCEORDER_DB="postgresql:///$PGDATABASE"

for exe in "$bin" "$driver"; do
  if [[ ! -x "$exe" ]]; then
    echo "run-numbering: $exe not found; build onceorder and bench_numbering first (cmake -DONCEORDER_BENCH=ON)" >&2
    exit 1
  fi
done

# --- schema: the real migrations ----------------------------------------------------------
migrated=$("$bin" migrate --db "$ONCEORDER_DB" 2>&1) || {
  echo "$migrated" >&2
  echo "run-numbering: '$bin migrate' failed" >&2
  exit 1
}
for t in doc_scopes documents document_receipts production_orders; do
  if ! sql -c "SELECT 1 FROM $t LIMIT 0" >/dev/null; then
    echo "run-numbering: '$bin migrate' did not create $t" >&2
    exit 1
  fi
done
max_scopes=1
for n in "${scope_counts[@]}"; do ((n > max_scopes)) && max_scopes=$n; done
# The same scopes the C++ driver configures (bench-1..N, width 9, max 999999999).
sql <<SQL
INSERT INTO doc_scopes (scope, width, radix, max_value)
  SELECT 'bench-' || i, 9, 10, 999999999 FROM generate_series(1, $max_scopes) AS i
  ON CONFLICT (scope) DO UPDATE SET width = excluded.width, radix = excluded.radix,
    max_value = excluded.max_value;
CREATE TABLE IF NOT EXISTS bench_gappy (scope text, value bigint, title text);
CREATE SEQUENCE IF NOT EXISTS bench_gappy_seq;
SQL

# Empty tables and zeroed counters before every case. production_orders references
# documents, so it goes too (named, not left to CASCADE's discretion).
reset() {
  sql <<'SQL'
TRUNCATE production_orders, document_receipts, documents CASCADE;
UPDATE doc_scopes SET last_value = 0;
TRUNCATE bench_gappy;
ALTER SEQUENCE bench_gappy_seq RESTART;
VACUUM ANALYZE doc_scopes;
CHECKPOINT;
SQL
}

# Every issued value 1..last_value exists exactly once per scope (I7) after a gapless run.
check_gapless() {
  local bad
  bad=$(sql -c "SELECT count(*) FROM doc_scopes s WHERE s.scope LIKE 'bench-%' AND
    (s.last_value, s.last_value) <> (SELECT count(*), coalesce(max(value), 0)
                                     FROM documents d WHERE d.scope = s.scope)")
  if [[ "$bad" == 0 ]]; then echo gapless; else echo "GAPS($bad)"; fi
}

# --- report header ---------------------------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh" # quietly, sync_write_us, $datadir
table=$tmp/table
{
  echo "# OnceOrder document-number allocation, PostgreSQL"
  echo "# date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "# commit:   $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree modified)'), binaries $build ($(grep -s '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" | cut -d= -f2))"
  echo "# machine:  $(nproc) cores, $(uname -sr), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# server:   $(sql -c 'SHOW server_version'), fsync=$(sql -c 'SHOW fsync'), synchronous_commit=$(sql -c 'SHOW synchronous_commit'), wal_sync_method=$(sql -c 'SHOW wal_sync_method'), local socket, data on $(stat -f -c %T "$datadir")"
  echo "# schema:   $migrated"
  echo "# disk:     synchronous 8 kB write $(sync_write_us) us at start (a commit waits for one)"
  echo "# run:      ${secs} s per case, pgbench -M prepared -n -j min(clients,2); scopes bench-1..N, width 9"
  echo "# check:    gapless = every scope holds exactly the values 1..last_value"
  echo "# noise:    samples (every 0.5 s) with a foreign compiler/test/server running; 0 = clean."
  echo "#           A noisy case is run again (BENCH_TRIES=${BENCH_TRIES:-3}); sync_us: 8 kB O_DSYNC write before it"
  echo
  printf '%-12s %6s %7s %10s %9s  %-16s %7s %5s\n' case scopes clients tps lat_ms check sync_us noise
} >"$table"
cat "$table"
row() { printf '%-12s %6s %7s %10s %9s  %-16s %7s %5s\n' "$@" | tee -a "$table"; }

if [[ "$(sql -c 'SHOW fsync')" != on ]]; then
  echo "run-numbering: fsync is off; numbers would not be comparable" >&2
  exit 1
fi

# --- raw SQL baselines (pgbench) ---------------------------------------------------------
pgbench_run() { # case scopes clients seconds
  local name=$1 scopes=$2 clients=$3 seconds=$4 log=$tmp/pgbench.log
  local threads=$((clients < 2 ? clients : 2))
  reset
  if ! pgbench -M prepared -n -c "$clients" -j "$threads" -T "$seconds" -D scopes="$scopes" \
    -f "bench/pgbench/$name.sql" >"$log" 2>&1; then
    cat "$log" >&2
    echo "run-numbering: pgbench failed for $name scopes=$scopes clients=$clients" >&2
    exit 1
  fi
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$log")
  lat=$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' "$log")
  [[ -n "$tps" ]] || {
    cat "$log" >&2
    echo "run-numbering: pgbench printed no tps" >&2
    exit 1
  }
  printf -v tps '%.0f' "$tps"
}

# --- C++ driver (OnceOrder's own code path) ---------------------------------------------
# bench_numbering --db URL --mode=store|http --clients=N --scopes=N --seconds=S prints
# tps=<number>: the Numbering service directly (store) or through the HTTP server
# in-process on loopback, keep-alive (http). It configures bench-1..N itself.
driver_run() { # mode scopes clients seconds [db]
  local mode=$1 scopes=$2 clients=$3 seconds=$4 db=${5:-$ONCEORDER_DB} log=$tmp/driver.log
  local status=0
  "$driver" --db "$db" --mode="$mode" --clients="$clients" --scopes="$scopes" \
    --seconds="$seconds" >"$log" 2>&1 || status=$?
  tps=$(grep -o 'tps=[0-9.]*' "$log" | tail -1 | cut -d= -f2 || true)
  # Exit status 1 with a tps= line: some requests failed (counted, reported in the row).
  failed=$(grep -o 'failed=[0-9]*' "$log" | tail -1 | cut -d= -f2 || true)
  if [[ -z "$tps" ]] || ((status != 0 && status != 1)); then
    grep -v ' http method=' "$log" | tail -20 >&2
    echo "run-numbering: bench_numbering failed for $mode scopes=$scopes clients=$clients" >&2
    exit 1
  fi
  if ((${failed:-0} > 0)); then
    grep -v ' http method=' "$log" | grep -m3 'failed' >&2 || true
  fi
  printf -v tps '%.0f' "$tps"
  lat=$(awk -v c="$clients" -v t="$tps" 'BEGIN { printf "%.3f", (t > 0 ? c * 1000 / t : 0) }')
}
failed_note() { ((${failed:-0} == 0)) || echo ",failed=$failed"; }

declare -A result
# Warm up caches and the WAL once; not reported.
pgbench_run cte 1 1 2
reset
driver_run store 1 1 2

pg_case() { # name scopes clients
  pgbench_run "$1" "$2" "$3" "$secs"
  check=-
  [[ "$1" == gappy ]] || check=$(check_gapless)
}
driver_case() { # mode scopes clients
  reset
  driver_run "$1" "$2" "$3" "$secs"
  check=$(check_gapless)$(failed_note)
}
for scopes in "${scope_counts[@]}"; do
  for clients in "${client_counts[@]}"; do
    for name in statements cte gappy; do
      quietly pg_case "$name" "$scopes" "$clients"
      row "$name" "$scopes" "$clients" "$tps" "$lat" "$check" "$sync_us" "$noise"
      result[$name,$scopes,$clients]=$tps
    done
    for mode in store http; do
      quietly driver_case "$mode" "$scopes" "$clients"
      row "$mode" "$scopes" "$clients" "$tps" "$lat" "$check" "$sync_us" "$noise"
      result[$mode,$scopes,$clients]=$tps
    done
  done
done
echo "# disk:     synchronous 8 kB write $(sync_write_us) us at end, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$table"

# --- summary: OnceOrder against the faster gapless raw form --------------------------------
{
  echo
  echo "# best = max(statements, cte); goals: store/best >= 0.80, http/best >= 0.60"
  printf '%6s %7s %10s %8s %8s %8s %8s %10s %9s  %s\n' scopes clients statements cte gappy \
    store http store/best http/best goals
} | tee -a "$table"
for scopes in "${scope_counts[@]}"; do
  for clients in "${client_counts[@]}"; do
    st=${result[statements,$scopes,$clients]} cte=${result[cte,$scopes,$clients]}
    gp=${result[gappy,$scopes,$clients]} so=${result[store,$scopes,$clients]}
    ht=${result[http,$scopes,$clients]}
    awk -v sc="$scopes" -v cl="$clients" -v st="$st" -v cte="$cte" -v gp="$gp" -v so="$so" \
      -v ht="$ht" 'BEGIN {
        best = st > cte ? st : cte; rs = so / best; rh = ht / best
        verdict = (rs >= 0.8 ? "store ok" : "STORE MISSED") ", " (rh >= 0.6 ? "http ok" : "HTTP MISSED")
        printf "%6s %7s %10s %8s %8s %8s %8s %10.3f %9.3f  %s\n", sc, cl, st, cte, gp, so, ht, rs, rh, verdict
      }' | tee -a "$table"
  done
done

# --- SQLite: the store path on a fresh file per case --------------------------------------
sqlite_case() { # scopes clients
  rm -f "$tmp"/numbering.db*
  driver_run store "$1" "$2" "$secs" "sqlite:$tmp/numbering.db"
  check=-$(failed_note)
}
if ((${#sqlite_clients[@]} > 0)); then
  {
    echo
    echo "# SQLite (WAL, synchronous=FULL), store mode, fresh file per case on $(stat -f -c %T "$tmp")"
    printf '%-12s %6s %7s %10s %9s  %-16s %7s %5s\n' case scopes clients tps lat_ms check sync_us noise
  } | tee -a "$table"
  for scopes in "${scope_counts[@]}"; do
    for clients in "${sqlite_clients[@]}"; do
      quietly sqlite_case "$scopes" "$clients"
      row sqlite-store "$scopes" "$clients" "$tps" "$lat" "$check" "$sync_us" "$noise"
    done
  done
fi

# Every benchmark ends with OnceOrder's own invariant check (bench/lib.sh, oo_check) on the
# PostgreSQL database it used, which still holds the last case's data: numbers from a run
# that left a violated invariant behind do not count, so the run fails after saving them.
final_check=0
{ echo; oo_check "$bin" "$ONCEORDER_DB"; } | tee -a "$table" || final_check=1

mkdir -p "$(dirname "$out")"
cp "$table" "$out"
echo
echo "run-numbering: results written to $out"
if ((final_check != 0)); then
  echo "run-numbering: onceorder check FAILED on $ONCEORDER_DB (see above)" >&2
  exit 1
fi
