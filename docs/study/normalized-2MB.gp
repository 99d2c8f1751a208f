# treefarm bench: drawn in this directory with
#   gnuplot -e "set terminal png size 1298,520; set output 'normalized-2MB.png'" normalized-2MB.gp
set title "fork7: execution time normalized to root-computes, send 2 MB" noenhanced
set xlabel "compute size (units per task)"
set ylabel "makespan / root-computes' makespan"
set style data histograms
set style fill solid 0.9 border -1
set datafile missing "?"
set key outside right top vertical Left reverse noenhanced
set grid ytics
set xtics nomirror noenhanced
set style histogram clustered gap 1
set yrange [0:*]
plot 'normalized-2MB.dat' using 2:xtic(1) title columnheader(2) lc rgb "#1b9e77", \
     'normalized-2MB.dat' using 3:xtic(1) title columnheader(3) lc rgb "#d95f02", \
     'normalized-2MB.dat' using 4:xtic(1) title columnheader(4) lc rgb "#7570b3", \
     'normalized-2MB.dat' using 5:xtic(1) title columnheader(5) lc rgb "#e7298a", \
     'normalized-2MB.dat' using 6:xtic(1) title columnheader(6) lc rgb "#66a61e", \
     'normalized-2MB.dat' using 7:xtic(1) title columnheader(7) lc rgb "#e6ab02", \
     'normalized-2MB.dat' using 8:xtic(1) title columnheader(8) lc rgb "#a6761d", \
     'normalized-2MB.dat' using 9:xtic(1) title columnheader(9) lc rgb "#666666", \
     1 with lines dt 2 lw 2 lc rgb "black" title "root-computes = 1"
