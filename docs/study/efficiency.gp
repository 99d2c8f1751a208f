# treefarm bench: drawn in this directory with
#   gnuplot -e "set terminal png size 994,520; set output 'efficiency.png'" efficiency.gp
set title "fork7: efficiency = throughput / bound of the policy's port model\nbars: mean over compute sizes; whiskers: lowest to highest run" noenhanced
set xlabel "policy"
set ylabel "efficiency (%)"
set style data histograms
set style fill solid 0.9 border -1
set datafile missing "?"
set key outside right top vertical Left reverse noenhanced
set grid ytics
set xtics nomirror noenhanced
set style histogram errorbars gap 1 lw 1
set xtics rotate by 30 right
set yrange [0:115]
plot 'efficiency.dat' using 2:3:4:xtic(1) title "send 2 MB" lc rgb "#1b9e77", \
     'efficiency.dat' using 5:6:7:xtic(1) title "send 5 MB" lc rgb "#d95f02", \
     'efficiency.dat' using 8:9:10:xtic(1) title "send 10 MB" lc rgb "#7570b3", \
     100 with lines dt 2 lw 2 lc rgb "black" title "bound"
