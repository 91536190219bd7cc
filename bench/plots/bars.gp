# Clustered bar chart of one table: the first column names the case (x axis), every other
# column is one series, its header the legend. Called by bench/plot.sh with
#   gnuplot -e "data='X.dat'; out='Y.svg'; heading='...'; ylab='...'; ncol=N; logy=0; ref=0"
# ref > 0 draws a dashed line at that value (e.g. ratio 1 = as fast as raw SQL).
set terminal svg size 960,440 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output out
set title heading
set ylabel ylab
set datafile missing '-'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside top center horizontal noenhanced
set xtics rotate by 30 right noenhanced nomirror
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*] }
if (ref > 0) { set arrow from graph 0, first ref to graph 1, first ref nohead dt 2 lw 1.5 lc rgb '#555555' front }
plot for [i=2:ncol] data using i:xtic(1) title columnheader(i)
