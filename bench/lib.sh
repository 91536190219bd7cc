# Shared by bench/run-*.sh, bench/side-by-side-*.sh and bench/seed002-table.sh (sourced, not
# run; inside the benchmark's PostgreSQL cluster). The machine is shared with people who
# compile and test: a compiler or test run next to a benchmark case moves its numbers by
# several times (CPU and, worse, fsync latency). So every try of a case
#   1. takes a machine-wide lock (flock on $BENCH_LOCK, default /tmp/onceorder-bench.lock),
#      so that two benchmark scripts never run cases at the same time;
#   2. waits (up to BENCH_QUIET_WAIT seconds, default 600) until foreign processes have
#      used less than BENCH_QUIET_CPU % of one core (default 15) for 3 seconds in a row;
#   3. runs while a sampler measures foreign CPU every 0.5 s;
#   4. is run again (up to BENCH_TRIES times, default 3) when any sample was over the limit.
# "Foreign" is measured, not guessed from names: CPU time (/proc/PID/stat) of every process
# except ours (this script's process group, our PostgreSQL postmaster and its children)
# and kernel threads. An idle PostgreSQL left running by someone else costs nothing; a
# compiler, a test run or another benchmark does. The row says how many samples were
# noisy in the kept try (0 = clean).
#
# Also: sync_write_us N, what each commit waits for: N synchronous 8 kB overwrites
# (O_DSYNC) of a preallocated file, like WAL pages, on the data directory's file system;
# prints µs per write. quietly measures it (50 writes) before each try: $sync_us.
#
# Needs: $tmp (a scratch directory), psql reaching our cluster.

datadir=$(psql -qAtX -c 'SHOW data_directory')
our_postmaster=$(head -1 "$datadir/postmaster.pid")
our_pgid=$(ps -o pgid= -p $$ | tr -d ' ')
bench_lock=${BENCH_LOCK:-/tmp/onceorder-bench.lock}

sync_write_us() {
  local n=${1:-200} probe seconds
  probe=$(mktemp -p "$(dirname "$datadir")" sync-probe.XXXXXX)
  dd if=/dev/zero of="$probe" bs=8k count="$n" conv=fsync status=none
  seconds=$(dd if=/dev/zero of="$probe" bs=8k count="$n" conv=notrunc oflag=dsync 2>&1 |
    sed -n 's/.* copied, \([0-9.]*\) s.*/\1/p')
  rm -f "$probe"
  awk -v s="$seconds" -v n="$n" 'BEGIN { printf "%.0f", s * 1e6 / n }'
}

# foreign_cpu STATE: CPU time (in clock ticks) used by foreign processes since the last
# call with the same STATE file (0 on the first call).
foreign_cpu() {
  local state=$1
  # One line per process; the command name may hold spaces and ')', so the fields are
  # taken after the last ") ". Processes that end meanwhile are simply missing (cat fails
  # on them: not an error here, also under `set -o pipefail`).
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pg="$our_pgid" -v pm="$our_postmaster" \
    -v prevf="$state" -v nextf="$state.next" '
    BEGIN { while ((getline l < prevf) > 0) { split(l, a, " "); prev[a[1]] = a[2]; have = 1 } }
    {
      pid = $1; r = $0; sub(/^.*\) /, "", r); split(r, f, " ")
      # f[2] ppid, f[3] process group, f[12] utime, f[13] stime
      if (f[3] == pg || pid == pm || f[2] == pm || f[2] == 2 || pid == 2) next
      t = f[12] + f[13]
      print pid, t > nextf
      if (have) sum += (pid in prev) ? t - prev[pid] : t
    }
    END { print sum + 0 }'
  mv -f "$state.next" "$state" 2>/dev/null || : >"$state"
}

# Over the limit: more than BENCH_QUIET_CPU % of one core during `seconds`.
cpu_noisy() { # ticks seconds
  awk -v t="$1" -v s="$2" -v hz="$(getconf CLK_TCK)" -v lim="${BENCH_QUIET_CPU:-15}" \
    'BEGIN { exit !(t * 100 / hz / s > lim) }'
}

quiet_wait() {
  local waited=0 calm=0 limit=${BENCH_QUIET_WAIT:-600} state=$tmp/cpu.wait
  rm -f "$state"
  foreign_cpu "$state" >/dev/null
  while ((calm < 3 && waited < limit)); do
    sleep 1
    waited=$((waited + 1))
    if cpu_noisy "$(foreign_cpu "$state")" 1; then calm=0; else calm=$((calm + 1)); fi
  done
  ((waited <= 3)) || echo "  (waited ${waited}s for a quiet machine)" >&2
}

noise_watch_start() {
  : >"$tmp/noise"
  (
    set +e
    state=$tmp/cpu.watch
    rm -f "$state"
    foreign_cpu "$state" >/dev/null
    parent=$$
    # Ends with the benchmark even when it exits without noise_watch_stop (a failure).
    while kill -0 "$parent" 2>/dev/null && [[ -d $tmp ]]; do
      sleep 0.5
      t=$(foreign_cpu "$state")
      if cpu_noisy "$t" 0.5; then echo "$t" >>"$tmp/noise"; fi
    done
  ) &
  noise_pid=$!
}

noise_watch_stop() {
  kill "$noise_pid" 2>/dev/null || true
  wait "$noise_pid" 2>/dev/null || true
  noise=$(wc -l <"$tmp/noise")
}

bench_lock_take() {
  exec {bench_lock_fd}>>"$bench_lock"
  if ! flock -n "$bench_lock_fd"; then
    echo "  (waiting for another benchmark holding $bench_lock)" >&2
    flock "$bench_lock_fd"
  fi
}
bench_lock_release() {
  flock -u "$bench_lock_fd"
  exec {bench_lock_fd}>&-
}

# quietly CMD...: runs CMD (which sets the caller's result variables) until one try is
# clean or BENCH_TRIES are used; sets $noise and $sync_us for the kept (last) try.
quietly() {
  local try
  for ((try = 1; try <= ${BENCH_TRIES:-3}; try++)); do
    bench_lock_take
    quiet_wait
    sync_us=$(sync_write_us 50)
    noise_watch_start
    "$@"
    noise_watch_stop
    bench_lock_release
    ((noise == 0)) && return 0
    echo "  (noisy try $try of $*: $noise samples over ${BENCH_QUIET_CPU:-15} % foreign CPU)" >&2
  done
}

# --- OnceOrder's server and its check, for the side-by-side scripts --------------------------

# serve_start BIN URL [serve options...]: starts `onceorder serve` on a free loopback port
# against URL and waits until it answers /readyz; sets $port and $serve_pid. Its output goes
# to $tmp/serve.log, printed if it does not come up. Stop it with serve_stop (also from an
# EXIT trap: it is a no-op when nothing runs). The server admits one admin token, made here
# and exported as ONCEORDER_TOKEN; curl sends it ($tmp/.curlrc through CURL_HOME), and so do
# bench/orders.lua and bench/with-token.lua (which wraps another wrk script, WRK_SCRIPT).
serve_start() {
  local bin=$1 url=$2 _ made
  shift 2
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  made=$("$bin" token new admin bench)
  ONCEORDER_TOKEN=$(sed -n 's/^token: //p' <<<"$made")
  export ONCEORDER_TOKEN
  (umask 077 && sed -n 's/^line: //p' <<<"$made" >"$tmp/tokens")
  printf 'header = "Authorization: Bearer %s"\n' "$ONCEORDER_TOKEN" >"$tmp/.curlrc"
  export CURL_HOME=$tmp
  "$bin" serve --db "$url" --listen "127.0.0.1:$port" --pool-size "${POOL:-16}" --tokens "$tmp/tokens" "$@" >"$tmp/serve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 100); do
    curl -sf "localhost:$port/readyz" >/dev/null && return 0
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$tmp/serve.log" >&2
  echo "serve_start: onceorder serve did not become ready on port $port" >&2
  return 1
}
serve_stop() {
  if [[ -n "${serve_pid:-}" ]]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=
  fi
}

# side_by_side_start BIN: the shared driver's raw schema ($BENCH_DIR/schema.sql) in database
# `bench`, an empty database `oo` with `onceorder serve` on it (serve_start); both the server
# and $tmp go at exit.
side_by_side_start() {
  createdb bench
  psql -qX -d bench -f "${BENCH_DIR:-/work/shared/bench}/schema.sql" >/dev/null
  createdb oo
  tmp=$(mktemp -d)
  trap 'serve_stop; rm -rf "$tmp"' EXIT
  serve_start "$1" "postgresql:///oo${OO_URL_OPTS:-}" # OO_URL_OPTS=?pooler=transaction
}

# oo_check BIN URL: `onceorder check` against the database a benchmark used. Prints
# "check ok (N invariants)" or every failed invariant with its samples, and returns non-zero
# when any invariant is violated (or check could not run): a benchmark's numbers only count
# if what it wrote is still correct.
oo_check() {
  local bin=$1 url=$2 out rc=0
  out=$("$bin" check --db "$url" 2>&1) || rc=$?
  if ((rc == 0)); then
    echo "check ok ($(grep -c '^ok' <<<"$out") invariants, $url)"
  else
    echo "check FAILED (exit $rc, $url):"
    grep -v '^ok' <<<"$out" | sed 's/^/  /'
  fi
  return "$rc"
}

# server_buckets ROUTE: the `serve` latency histogram of ROUTE as "le count" lines (cumulative),
# read from /metrics on $port. server_quantiles BEFORE AFTER: from two such snapshots, the
# bucket bounds within which 99 % and 99.9 % of the requests in between were answered, as
# "srv_p99<=X srv_p999<=Y" (seconds). wrk's own percentiles correct for coordinated omission
# (a stall that holds every connection adds the requests a steady client would have sent), so
# the two answer different questions: docs/BENCHMARKS.md, "Tails: wrk's p99 and the server's".
server_buckets() {
  curl -s "localhost:$port/metrics" |
    awk -v r="route=\"$1\"" 'index($0, "onceorder_http_request_duration_seconds_bucket{") == 1 && index($0, r) {
      match($0, /le="[^"]*"/); print substr($0, RSTART + 4, RLENGTH - 5), $NF }'
}
server_quantiles() {
  python3 - "$1" "$2" <<'PY'
import sys
def read(s): return [(le, float(n)) for le, n in (l.split() for l in s.splitlines() if l.strip())]
before, after = dict(read(sys.argv[1])), read(sys.argv[2])
rows = [(le, n - before.get(le, 0)) for le, n in after]
total = rows[-1][1] if rows else 0
def q(p):
    return next((le for le, n in rows if total and n >= p * total), "?")
print(f"srv_p99<={q(0.99)} srv_p999<={q(0.999)}")
PY
}
