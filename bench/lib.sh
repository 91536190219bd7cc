# Shared by bench/run-*.sh (sourced, not run). The machine is shared with people who
# compile and test: a compiler or test run next to a benchmark case moves its numbers by
# several times (CPU and, worse, fsync latency). So every case
#   1. waits (up to BENCH_QUIET_WAIT seconds, default 600 in total per case) until no
#      foreign heavy process runs: compilers, linkers, build tools, test and benchmark
#      binaries, psql/pgbench/pg_virtualenv, interpreters, and PostgreSQL servers other
#      than ours (ours and our own children are recognized by postmaster and process
#      group);
#   2. runs while a sampler looks for such processes every 0.5 s;
#   3. is run again (up to BENCH_TRIES times, default 3) when the sampler saw any.
# The row says how many samples were noisy in the kept try (0 = clean).
#
# Also: sync_write_us N, what each commit waits for: N synchronous 8 kB overwrites
# (O_DSYNC) of a preallocated file, like WAL pages, on the data directory's file system;
# prints µs per write. quietly measures it (50 writes) before each try: $sync_us.
#
# Needs: $tmp (a scratch directory), psql reaching our cluster.

quiet_re='^(cc1|cc1plus|cc1obj|lto1|as|ld|ld\.gold|ld\.lld|collect2|clang|clang\+\+|clang-[0-9]+|clang-format|clang-tidy|ninja|make|cmake|ctest|rustc|cargo|go|python|python3|node|java|pgbench|psql|initdb|pg_ctl|pg_ctlcluster|pg_virtualenv|pg_dump|pg_restore|onceorder|valgrind|[a-z0-9_]+_tests?|bench_[a-z0-9_]*)$'
datadir=$(psql -qAtX -c 'SHOW data_directory')
our_postmaster=$(head -1 "$datadir/postmaster.pid")

sync_write_us() {
  local n=${1:-200} probe seconds
  probe=$(mktemp -p "$(dirname "$datadir")" sync-probe.XXXXXX)
  dd if=/dev/zero of="$probe" bs=8k count="$n" conv=fsync status=none
  seconds=$(dd if=/dev/zero of="$probe" bs=8k count="$n" conv=notrunc oflag=dsync 2>&1 |
    sed -n 's/.* copied, \([0-9.]*\) s.*/\1/p')
  rm -f "$probe"
  awk -v s="$seconds" -v n="$n" 'BEGIN { printf "%.0f", s * 1e6 / n }'
}

# Foreign heavy processes right now (our own children are excluded by process group).
foreign_busy() {
  local mypgid
  mypgid=$(ps -o pgid= -p $$ | tr -d ' ')
  ps -eo pid=,ppid=,pgid=,comm= | quiet_re=$quiet_re awk -v pm="$our_postmaster" -v pg="$mypgid" '
    $3 == pg { next }
    $4 == "postgres" { if ($1 != pm && $2 != pm) n++; next }
    $4 ~ ENVIRON["quiet_re"] { n++ }
    END { print n + 0 }'
}

quiet_wait() {
  local waited=0 limit=${BENCH_QUIET_WAIT:-600}
  while (($(foreign_busy) > 0)) && ((waited < limit)); do
    sleep 5
    waited=$((waited + 5))
  done
  ((waited == 0)) || echo "  (waited ${waited}s for a quiet machine)" >&2
}

noise_watch_start() {
  : >"$tmp/noise"
  (
    while :; do
      n=$(foreign_busy)
      ((n == 0)) || echo "$n" >>"$tmp/noise"
      sleep 0.5
    done
  ) &
  noise_pid=$!
}

noise_watch_stop() {
  kill "$noise_pid" 2>/dev/null || true
  wait "$noise_pid" 2>/dev/null || true
  noise=$(wc -l <"$tmp/noise")
}

# quietly CMD...: runs CMD (which sets the caller's result variables) until one try is
# clean or BENCH_TRIES are used; sets $noise for the kept (last) try.
quietly() {
  local try
  for ((try = 1; try <= ${BENCH_TRIES:-3}; try++)); do
    quiet_wait
    sync_us=$(sync_write_us 50)
    noise_watch_start
    "$@"
    noise_watch_stop
    ((noise == 0)) && return 0
    echo "  (noisy try $try of $*: $noise samples with foreign activity)" >&2
  done
}
