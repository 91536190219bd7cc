#!/usr/bin/env bash
# Turns the result tables of docs/BENCHMARKS.md into SVG bar charts under docs/plots/. The
# numbers live in bench/plots/*.dat, copied by hand from the tables (a plot is only as current
# as its .dat file: update both together). Needs gnuplot (gnuplot-nox, in scripts/bootstrap).
# Usage: bash bench/plot.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/bench/plots out=$root/docs/plots
mkdir -p "$out"

bars() { # name heading ylabel [logy] [ref]
  local name=$1 ncol
  # Columns of the header line (the first line that is not a comment), quoted names counted once.
  ncol=$(grep -v '^#' "$src/$name.dat" | head -1 | python3 -c 'import shlex, sys; print(len(shlex.split(sys.stdin.read())))')
  gnuplot -e "data='$src/$name.dat'; out='$out/$name.svg'; heading='$2'; ylab='$3'; ncol=$ncol; logy=${4:-0}; ref=${5:-0}" \
    "$src/bars.gp"
  echo "docs/plots/$name.svg"
}

bars numbering 'Document numbers (issue 2), PostgreSQL, fsync on' 'numbers/s'
bars scheduling 'Production scheduling (issue 3): 20,000 items, one batch run' 'items/s'
bars intake 'Order intake (issue 4): K SKUs per cart, catalog, clients' 'orders/s'
bars number-combining 'Number combining: OnceOrder over HTTP / raw SQL, same run' 'ratio oo / raw' 0 1
bars order-combining 'Order combining: OnceOrder over HTTP / raw SQL, same run' 'ratio oo / raw' 0 1
bars cheap-path 'The cheap path: OnceOrder over HTTP / raw SQL, same run, quiet machine' 'ratio oo / raw' 0 1
bars collision-lanes 'Collision lanes and receipt arrays: OnceOrder over HTTP / raw SQL, same run' 'ratio oo / raw' 0 1
bars number-lanes 'One numbering lane: OnceOrder over HTTP / raw SQL, same run' 'ratio oo / raw' 0 1
bars round-trips 'Round trips out of the batches: thousands per second, 16 connections' 'thousands per second'
bars crowded 'Crowded warehouses combine: cold orders, PostgreSQL, fsync on' 'orders/s'
bars crowded-standing 'The shared script after crowded warehouses combine: OnceOrder over HTTP / raw SQL' 'ratio oo / raw' 0 1
bars wake 'Waking the next batch first: requests per second at 16 connections' 'requests/s'
bars cold-ceiling 'Cold orders at 16 connections: two batches at once for crowded carts (not kept), shared script' 'ratio oo / raw' 0 1
bars opening 'Opening the next batch behind the COMMIT: lane requests/s at 16 connections (bench/lane-duty.sh)' 'requests/s'
bars reserved-on-stock 'Reservations on the stock row: lane requests/s at 16 connections (bench/lane-duty.sh)' 'requests/s'
bars reserved-on-stock-shared 'Reservations on the stock row: the shared script, OnceOrder over HTTP / raw SQL' 'ratio oo / raw' 0 1
bars standing 'Where issue 10 stands: the shared script, OnceOrder over HTTP / raw SQL, same run' 'ratio oo / raw' 0 1
bars replay-memory 'Replays from memory: the shared script, OnceOrder over HTTP / raw SQL, memory off and on' 'ratio oo / raw' 0 1
bars batch-plans 'One plan per batch statement: PostgreSQL CPU per order batch by its size, one client' 'µs per batch'
bars batch-rows 'Batch rows as arrays: PostgreSQL CPU, jsonb against one array per column' 'µs'
bars decided-ahead 'Batches decided ahead: OnceOrder over HTTP / raw SQL, 16 connections, before and after' 'ratio oo / raw' 0 1
bars sqlite-combining 'Combining on SQLite, store path' 'requests/s (log scale)' 1
gnuplot -e "data='$src/seed002.dat'; out='$out/seed002.svg'" "$src/seed002.gp"
echo "docs/plots/seed002.svg"
bars tails 'Hand-backs queue in their lane again: hot orders, wrk p99 at 16 connections, before and after' 'ms'
bars crowded-two-lanes 'Crowded carts in two lanes (not kept): cold orders at 16 connections, fresh keys' 'ratio oo / raw' 0 1
bars allocator 'The allocator: cold orders at 16 connections, fresh keys, glibc against tcmalloc' 'ratio oo / raw' 0 1
bars order-text 'The order answer as text: cold orders at 16 connections, fresh keys' 'ratio oo / raw' 0 1
bars shared-four 'The four shared cases: OnceOrder over HTTP / raw SQL, same run, 16 connections' 'ratio oo / raw' 0 1
bars standing-head 'Where issue 10 stands: cold orders at 16 connections, fresh keys, at 6d7b773' 'ratio oo / raw' 0 1
