# gnuplot script for `make bench`: p99 closed-loop latency and burst
# deliveries/s against N, one line per system. Reads DIR/plot-SYSTEM.dat
# written by `navsync-bench report DIR`. Usage: gnuplot -e "dir='bench/results'" bench/plot.gp
if (!exists("dir")) dir = "bench/results"
set terminal pngcairo size 1200,480 font "sans,10"
set output dir."/fanout.png"
set multiplot layout 1,2 title "navsync fan-out vs Redis pub/sub, NATS and a one-write-per-event floor (medians of runs)"
systems = "navsync redis nats floor"
set logscale x
set xrange [70:14000]
set xtics (100, 1000, 5000, 10000)
set xlabel "watchers (N)"
set grid
set key top left
set style data linespoints

set title "closed loop: actor's change to the last watcher, p99"
set ylabel "p99 latency (ms)"
set logscale y
plot for [s in systems] (system("test -s ".dir."/plot-".s.".dat && echo y") eq "y" ? dir."/plot-".s.".dat" : "/dev/null") \
     using 1:2 title s lw 2 pt 7

set title "burst: K changes back to back, deliveries per second"
set key top right
set ylabel "deliveries/s"
unset logscale y
set yrange [0:*]
set format y "%.1s%c"
plot for [s in systems] (system("test -s ".dir."/plot-".s.".dat && echo y") eq "y" ? dir."/plot-".s.".dat" : "/dev/null") \
     using 1:3 title s lw 2 pt 7
unset multiplot
