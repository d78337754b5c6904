#!/bin/sh
# CTest cases of the comparison workbench (examples/CMakeLists.txt registers them):
#   compare-test.sh help  BIN
#   compare-test.sh heap  BIN DIR
#   compare-test.sh sweep BIN DIR SWEEP_SCRIPT
#   compare-test.sh program BIN DIR PROGRAM
# Each exits 0 when every check holds, else prints what failed and exits 1.
set -eu
case_=$1
bin=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

# The value of CSV column `name` in the row whose model is `model` and h is `h`.
csv_value() { # file model h name
    awk -F, -v model="$2" -v h="$3" -v name="$4" '
        NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
        $col["model"] == model && $col["h"] + 0 == h + 0 { print $col[name]; found = 1; exit }
        END { if (!found) exit 1 }' "$1"
}

case "$case_" in
help)
    # --help exits 0 and mentions every option the parser knows; an unknown option exits 2
    # with a one-line hint
    "$bin" --help > help.txt || fail "--help exited $?"
    [ -s help.txt ] || fail "--help printed nothing"
    options=$("$bin" --list-options)
    [ -n "$options" ] || fail "--list-options printed nothing"
    n=0
    for o in $options; do
        grep -q -e "$o\\b" help.txt || fail "--help does not mention $o"
        n=$((n + 1))
    done
    status=0
    "$bin" --no-such-option > out.txt 2> err.txt || status=$?
    [ "$status" -eq 2 ] || fail "an unknown option exited $status, not 2"
    [ "$(wc -l < err.txt)" -eq 1 ] || fail "an unknown option printed $(wc -l < err.txt) lines, not one"
    grep -q -- "--help" err.txt || fail "the hint does not point to --help"
    echo "help: all $n options documented; unknown option: exit 2, '$(cat err.txt)'"
    ;;
heap)
    # The heap from its settled state (every model starts at rest, no overlap), 0.02 s:
    # stock ODE's soft contacts sink by more than 1 mm within two steps, PEG stays below 1e-9 m
    dir=$3
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin" --scene heap --models ode,quick,standard,peg --h 0.01,0.005 --seconds 0.02 \
        --friction-directions 4 --lcp-budget 0 --csv "$dir/heap.csv" --json "$dir/heap.json" \
        --series "$dir/heap-series.csv" --figures "$dir/fig" --trajectory "$dir/traj" \
        > "$dir/table.txt" 2> "$dir/progress.txt" || fail "pegplus-compare exited $? ($(tail -n 3 "$dir/progress.txt"))"
    cat "$dir/table.txt"
    [ "$(grep -c '^heap ' "$dir/table.txt")" -eq 8 ] || fail "the table has not 8 heap rows"
    [ "$(wc -l < "$dir/heap.csv")" -eq 9 ] || fail "heap.csv has not a header and 8 rows"
    for h in 0.01 0.005; do
        ode=$(csv_value "$dir/heap.csv" ode $h max_penetration) || fail "no ode row at h=$h"
        peg=$(csv_value "$dir/heap.csv" peg $h max_penetration) || fail "no peg row at h=$h"
        for m in ode quick standard peg; do
            s=$(csv_value "$dir/heap.csv" $m $h status)
            [ "$s" = ok ] || fail "$m h=$h: status $s"
        done
        awk -v v="$ode" 'BEGIN { exit !(v > 1e-3) }' || fail "stock ODE's worst penetration at h=$h is $ode m, not > 1e-3 m"
        awk -v v="$peg" 'BEGIN { exit !(v < 1e-9) }' || fail "PEG's worst penetration at h=$h is $peg m, not < 1e-9 m"
        echo "h=$h: stock ODE worst penetration $ode m, PEG $peg m"
    done
    # the JSON has the same 8 runs, the same values
    [ "$(grep -c '"model"' "$dir/heap.json")" -eq 8 ] || fail "heap.json has not 8 runs"
    # figures: PNG (magic) and SVG, against time (one per h and metric) and against h
    for f in heap-h0.01-penetration heap-h0.005-penetration heap-h0.01-energy heap-vs-h-penetration heap-vs-h-time; do
        [ -s "$dir/fig/$f.png" ] || fail "$f.png missing or empty"
        [ -s "$dir/fig/$f.svg" ] || fail "$f.svg missing or empty"
        [ "$(head -c 8 "$dir/fig/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f.png is not a PNG"
        grep -q '<svg' "$dir/fig/$f.svg" || fail "$f.svg is not an SVG"
    done
    # one curve per model in every figure against time
    for m in ode quick standard peg; do
        grep -q "title '$m'" "$dir/fig/figures.gp" || fail "no curve for $m in figures.gp"
    done
    for m in ode quick standard peg; do
        for h in 0.01 0.005; do
            [ -s "$dir/traj/heap-$m-h$h.pptraj" ] || fail "trajectory heap-$m-h$h.pptraj missing"
        done
    done
    # the series: a row per step and run, and the state before the first step
    [ "$(wc -l < "$dir/heap-series.csv")" -eq $((1 + 4 * 3 + 4 * 5)) ] || fail "heap-series.csv has not 33 lines"
    ;;
sweep)
    # 3 scenes x 4 models x 3 h through GNU parallel, merged into one summary of 36 rows
    dir=$3
    sweep=$4
    command -v parallel > /dev/null 2>&1 || fail "GNU parallel is not installed (cmake/install-deps.sh installs it)"
    rm -rf "$dir"
    bash "$sweep" --bin "$bin" --scenes "cradle incline column" -m "ode quick standard peg" \
        -H "0.01 0.005 0.0025" -t 0.05 -j 2 -o "$dir" > "$dir.log" 2>&1 || { cat "$dir.log"; fail "compare-sweep exited $?"; }
    cat "$dir.log"
    grep -q "GNU parallel" "$dir.log" || fail "the sweep did not run with GNU parallel"
    [ "$(wc -l < "$dir/jobs.txt")" -eq 36 ] || fail "jobs.txt has not 36 lines"
    [ "$(ls "$dir"/runs/*.csv | wc -l)" -eq 36 ] || fail "not 36 run files"
    [ "$(wc -l < "$dir/summary.csv")" -eq 37 ] || fail "summary.csv has not a header and 36 rows"
    rows=$(awk -F, 'NR > 1 { print $1 "," $2 "," $3 }' "$dir/summary.csv" | sort -u | wc -l)
    [ "$rows" -eq 36 ] || fail "summary.csv has $rows distinct (scene, model, h), not 36"
    [ "$(awk -F, 'NR > 1 && $9 == "ok"' "$dir/summary.csv" | wc -l)" -eq 36 ] || fail "not every run is ok"
    for s in cradle incline column; do
        [ -s "$dir/figures/$s-vs-h-penetration.png" ] || fail "$s-vs-h-penetration.png missing"
    done
    # the Slurm job array: one task per job line
    bash "$sweep" --bin "$bin" --scenes "cradle incline column" -m "ode quick standard peg" \
        -H "0.01 0.005 0.0025" -t 0.05 --slurm -o "$dir-slurm" > /dev/null || fail "--slurm exited $?"
    grep -q '^#SBATCH --array=1-36$' "$dir-slurm/sweep.slurm" || fail "sweep.slurm is not a 36-task array"
    bash -n "$dir-slurm/sweep.slurm" || fail "sweep.slurm is not valid bash"
    echo "sweep: 36 runs merged into $dir/summary.csv"
    ;;
program)
    # an unchanged ODE program (no pegplus header) under ode, standard and peg through
    # pegplus-run: three rows, every step run and none refused; its own loop (ODE's soft
    # contacts) sinks by more than 1 mm, PEG's rigid contacts stay below 1e-9 m
    dir=$3
    program=$4
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin" --program "$program 400 hard" --models ode,standard,peg --csv "$dir/program.csv" \
        > "$dir/table.txt" 2> "$dir/progress.txt" || fail "pegplus-compare exited $?"
    [ "$(wc -l < "$dir/program.csv")" -eq 4 ] || fail "program.csv has not a header and 3 rows"
    for m in ode standard peg; do
        st=$(awk -F, -v m=$m 'NR > 1 && $2 == m { print $9 }' "$dir/program.csv")
        [ "$st" = ok ] || fail "$m: status '$st'"
        steps=$(awk -F, -v m=$m 'NR > 1 && $2 == m { print $8 }' "$dir/program.csv")
        [ "$steps" -eq 400 ] || fail "$m: $steps steps, not 400"
    done
    ode=$(awk -F, 'NR > 1 && $2 == "ode" { print $10 }' "$dir/program.csv")
    peg=$(awk -F, 'NR > 1 && $2 == "peg" { print $10 }' "$dir/program.csv")
    awk -v v="$ode" 'BEGIN { exit !(v > 1e-3) }' || fail "stock ODE's worst penetration $ode m is not > 1e-3"
    awk -v v="$peg" 'BEGIN { exit !(v < 1e-9) }' || fail "PEG's worst penetration $peg m is not < 1e-9"
    echo "program: ode $ode m, peg $peg m"
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
