#!/usr/bin/env bash
# What one combined order batch costs PostgreSQL, by its size: one client places batches of B
# orders (5-SKU carts over N SKUs, fresh keys) through Intake::place_batch, one after the
# other, so nothing overlaps and nothing waits for a lock; PostgreSQL's CPU (every process
# of its cluster, bench/cpu_tree.py) is read before and after each size. The line through
# the points, CPU per batch = fixed + B × per order, says what a batch costs whatever its
# size (statement start-up, round trips, the commit) and what each order adds: the trade
# between one large batch and two smaller ones side by side (docs/BENCHMARKS.md, "One plan
# per batch statement").
# Run inside: pg_virtualenv -t -o fsync=on bash bench/batch-cost.sh [BUILD_DIR]
# BUILD_DIR holds bench_intake and onceorder (default build-bench: cmake … -DONCEORDER_BENCH=ON).
# SIZES ("1 2 4 8 16 32"), N SKUs (10000), T seconds per size (6).
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-bench}
SIZES=${SIZES:-1 2 4 8 16 32}; N=${N:-10000}; T=${T:-6}
# shellcheck source=bench/lib.sh
source "$dir/lib.sh" # oo_check, our_postmaster
createdb oo
url=postgresql:///oo
"$build/bench_intake" --db "$url" --catalog "$N" --clients 2 --setup-only >/dev/null
# Warm the statements (plans, caches) before the first size counts.
"$build/bench_intake" --db "$url" --catalog "$N" --clients 1 --batch 4 --seconds 1 >/dev/null
echo "batch orders/s pg_us_per_batch pg_us_per_order"
points=()
for b in $SIZES; do
  c0=$(python3 "$dir/cpu_tree.py" "$our_postmaster")
  out=$("$build/bench_intake" --db "$url" --catalog "$N" --clients 1 --batch "$b" --seconds "$T")
  c1=$(python3 "$dir/cpu_tree.py" "$our_postmaster")
  placed=$(sed -n 's/.* placed=\([0-9]*\) .*/\1/p' <<<"$out")
  tps=$(sed -n 's/.* tps=\([0-9]*\).*/\1/p' <<<"$out")
  read -r per_batch per_order < <(python3 -c "
c = ($c1 - $c0) * 1e6; n = $placed; b = $b
print(round(c / (n / b)), round(c / n))")
  echo "$b $tps $per_batch $per_order"
  points+=("$b:$per_batch")
done
python3 - "${points[@]}" <<'EOF'
import sys
pts = [tuple(map(float, p.split(":"))) for p in sys.argv[1:]]
if len(pts) >= 2:
    n = len(pts); sx = sum(b for b, _ in pts); sy = sum(c for _, c in pts)
    sxx = sum(b * b for b, _ in pts); sxy = sum(b * c for b, c in pts)
    per = (n * sxy - sx * sy) / (n * sxx - sx * sx); fixed = (sy - per * sx) / n
    print(f"fit: {fixed:.0f} us per batch + {per:.0f} us per order")
EOF
oo_check "$build/onceorder" "$url"
