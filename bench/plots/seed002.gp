# Seed 002's table next to the measurement here (bench/plots/seed002.dat): four panels,
# average latency, p99 and throughput, each with the seed's figure and ours per design, and
# the duplicate orders left in the database (the seed reports none per design).
# Called by bench/plot.sh: gnuplot -e "data='seed002.dat'; out='seed002.svg'" seed002.gp
set terminal svg size 1400,460 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output out
set datafile missing '-'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by 30 right noenhanced nomirror
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set yrange [0:*]
set key top left noenhanced
set multiplot layout 1,4 title "Seed 002's table: order placement with duplicates (seed: MySQL + Redis; here: PostgreSQL 15, fsync on)"
set title 'average latency'
set ylabel 'ms'
plot data using 2:xtic(1) title 'seed 002', '' using 3 title 'measured here'
set title '99th percentile latency'
set key off
plot data using 4:xtic(1) title 'seed 002', '' using 5 title 'measured here'
set title 'throughput'
set ylabel 'requests/s'
plot data using 6:xtic(1) title 'seed 002', '' using 7 title 'measured here'
set title 'duplicate orders in the database'
set ylabel 'orders beyond one per key'
plot data using 8:xtic(1) title 'measured here' lc 2
unset multiplot
