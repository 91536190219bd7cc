#!/usr/bin/env bash
# What writing events costs a placement: the shared side-by-side driver
# (/work/shared/bench/side-by-side.sh, unchanged: document numbers on 1 and 64 scopes, 5-SKU
# orders over 10,000 and 10 SKUs, OnceOrder over HTTP / raw SQL in the same run) with a binary
# from before the outbox (BEFORE) and the current one (AFTER), alternating BEFORE, AFTER,
# BEFORE, AFTER… (ROUNDS pairs, default 2), each run in a PostgreSQL of its own with fsync on.
# Every run holds the benchmark lock of bench/lib.sh, so no other benchmark script runs a case
# meanwhile. docs/BENCHMARKS.md, "What writing an event costs a placement".
# Run: bash bench/outbox-placement-cost.sh BEFORE/onceorder AFTER/onceorder [OUT]
set -euo pipefail
before=$(realpath "$1") after=$(realpath "$2") out=${3:-/dev/stdout}
driver=${BENCH_DIR:-/work/shared/bench}/side-by-side.sh
ROUNDS=${ROUNDS:-2}
echo "# side-by-side.sh, before = $before, after = $after, $(date -u +%FT%TZ), $(nproc) cores" >"$out"
exec {lock}>>"${BENCH_LOCK:-/tmp/onceorder-bench.lock}"
for r in $(seq "$ROUNDS"); do
  for side in before after; do
    bin=$before
    [[ $side == after ]] && bin=$after
    flock "$lock"
    echo "## round $r, $side, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%TZ)" >>"$out"
    pg_virtualenv -t -o fsync=on bash "$driver" "$bin" 2>/dev/null | grep -v '^Creating\|^Dropping' >>"$out"
    flock -u "$lock"
  done
done
