# Time per step against the step size h from a pegplus-compare sweep: for every model and h,
# the median over the seeds of each run's mean time of pp_world_step, with the fastest and
# slowest run as error bars, log y. (The PEG paper reports PEG at about 2x the standard model.)
#
# Data: compare-sweep.sh writes DIR/time-MODEL.dat with columns
#   1 h  2 median us/step  3 min  4 max  5 runs
# Run:  gnuplot -e "dir='OUT/plot'; models='ode quick standard peg'" compare-time.gp
# Writes dir/time-per-step.png and dir/time-per-step.svg.

if (!exists("dir")) dir = "."
if (!exists("models")) models = "ode quick standard peg"

set title "Pouring, 3D: wall time of one pp_world_step (median over seeds, min-max bars)" noenhanced
set xlabel "time step h (s)"
set ylabel "microseconds per step"
set logscale y
set format y "10^{%L}"
set grid
set key outside right top
set xrange [0:*]
set offsets graph 0.02, graph 0.02, 0, 0

do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1200,700 enhanced font ",11"
        set output dir."/time-per-step.png"
    } else {
        set terminal svg size 1200,700 enhanced font ",11"
        set output dir."/time-per-step.svg"
    }
    plot for [i = 1:words(models)] dir."/time-".word(models, i).".dat" \
             using 1:2:3:4 with yerrorlines pt 7 ps 0.7 lc i title word(models, i)
    unset output
}
