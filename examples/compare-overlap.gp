# The PEG paper's figure 24 from a pegplus-compare sweep: median total overlap volume per run,
# with Q1-Q3 error bars (the authors' quartiles), against the step size h, log y, one colour
# per model. Every run (seed) is one point, spread a little along h so they do not hide each
# other; runs that crashed before the end are drawn hollow.
#
# Data: compare-sweep.sh writes DIR/overlap-MODEL.dat with columns
#   1 x (h plus a small offset)  2 h  3 median  4 Q1  5 Q3  6 crashed (0/1)  7 seed
# Run:  gnuplot -e "dir='OUT/plot'; models='ode quick standard peg'" compare-overlap.gp
# Writes dir/fig24-overlap.png and dir/fig24-overlap.svg.

if (!exists("dir")) dir = "."
if (!exists("models")) models = "ode quick standard peg"
# log axes cannot show 0: a run whose overlap is exactly 0 is drawn at this floor
if (!exists("zero_floor")) zero_floor = 1e-17
lift(v) = v > zero_floor ? v : zero_floor

set title "Pouring, 3D: total overlap volume per step (median, Q1-Q3 per run)"
set xlabel "time step h (s)"
set ylabel sprintf("total overlap volume (m^3); 0 drawn at %.0e", zero_floor)
set logscale y
set format y "10^{%L}"
set grid
set key outside right top
set xrange [0:*]
set offsets graph 0.02, graph 0.02, 0, 0

do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1200,700 enhanced font ",11"
        set output dir."/fig24-overlap.png"
    } else {
        set terminal svg size 1200,700 enhanced font ",11"
        set output dir."/fig24-overlap.svg"
    }
    plot for [i = 1:words(models)] dir."/overlap-".word(models, i).".dat" \
             using 1:($6 == 0 ? lift($3) : 1/0):(lift($4)):(lift($5)) \
             with yerrorbars pt 7 ps 0.6 lc i title word(models, i), \
         for [i = 1:words(models)] dir."/overlap-".word(models, i).".dat" \
             using 1:($6 == 1 ? lift($3) : 1/0):(lift($4)):(lift($5)) \
             with yerrorbars pt 6 ps 0.8 lc i title word(models, i)." (crashed)"
    unset output
}
