#!/usr/bin/env bash
# compare-sweep (examples/compare-sweep.sh) — sweeps of pegplus-compare runs, one process and one
# CSV per run, in two kinds:
#
# A. Any scenes (--scenes): scenes x models x h, each run one pegplus-compare command, written
#    to a job list DIR/jobs.txt (one command a line), then run locally with GNU parallel (else
#    xargs -P), or (--slurm) written as a Slurm job-array script DIR/sweep.slurm for a cluster;
#    then merged by `pegplus-compare --merge` (compare-merge) into DIR/summary.csv,
#    DIR/summary.json, the table DIR/summary.txt and figures against h in DIR/figures.
#
#   compare-sweep --scenes "heap column cradle" -m "ode quick standard peg" -H "0.01 0.005" \
#                 -t 0.5 -o sweep-out            # runs here (GNU parallel), then merges
#   compare-sweep --scenes ... --slurm -o sweep-out   # writes sweep-out/jobs.txt and
#                 # sweep-out/sweep.slurm; on the cluster: sbatch sweep-out/sweep.slurm, then
#   compare-sweep --merge-only -o sweep-out        # the summary and figures
#
#   --scenes LIST        scene names or scene files (pegplus-compare --list-scenes), quoted list
#   -m, -H, -t, -j, -B, -o, -b, --mu, --force as below (-t: default each scene's own length;
#                        -B: pegplus-compare --budget, default none)
#   --seed S             seed of the random scenes (default 1)
#   --extra "ARGS"       more pegplus-compare options for every run (e.g. "--friction-directions 4")
#   --jobs-only          write DIR/jobs.txt and stop
#   --slurm              write DIR/jobs.txt and DIR/sweep.slurm (an array of one task per line;
#                        --slurm-opts "..." adds #SBATCH lines' options, e.g. "--partition=short
#                        --time=01:00:00") and stop
#   --merge-only         merge DIR/runs/*.csv into the summary and figures
#
# B. The PEG paper's pouring experiment (PEG Sec. 6, the paper's figure 24;
# docs/references.md) as a sweep of pegplus-compare --model runs:
# models x step sizes h x seeds, one process and one CSV file per run, spread over the cores
# with GNU parallel when it is installed, else xargs -P; then one merged CSV, a summary table
# and the figures (gnuplot, when installed).
#
# Usage: examples/compare-sweep.sh [options]
#   -b, --bin PATH       pegplus-compare (default: $PEGPLUS_COMPARE, build/examples/pegplus-compare
#                        next to this script's checkout, or pegplus-compare on PATH)
#   -o, --out DIR        output directory (default: compare-out)
#   -m, --models LIST    models, quoted list (default: "ode quick standard peg"; also
#                        standard-lin and peg-lin: without the ST96 re-linearisation)
#   -H, --hs LIST        step sizes (default: 0.001 0.002 ... 0.016)
#   -s, --seeds N        seeds 1..N (default: 10)
#   -t, --seconds S      simulated seconds per run (default: 5)
#   -j, --jobs N         runs at a time (default: the number of cores)
#   -B, --budget S       wall-clock seconds of stepping per run before it is cut short
#                        (status time_budget; default: 1800)
#   -S, --scene NAME     pour3d (random hulls, default) or pour3d-icosahedra
#       --mu MU          friction coefficient (default: 0, as in the paper)
#   -q, --quick          a small sweep: h in {0.004, 0.008, 0.016}, 2 seeds, 2 s, budget 120 s
#                        (options after --quick override it)
#       --force          rerun runs whose CSV already exists (default: keep them: a sweep
#                        that was stopped resumes where it was)
#   -p, --plot-only      only merge, summarise and plot what is in DIR
#   -h, --help
#
# Output, in DIR:
#   runs/*.csv, runs/*.log   one row (with header) and the stderr of every run
#   compare.csv              every row, one header
#   summary.txt              per model and h: runs, crashed, medians over the runs of the run
#                            median / Q1 / Q3 overlap, worst overlap of any step, share of steps
#                            with I/X sets, median time per step, PEG time over standard
#   plot/overlap-MODEL.dat, plot/time-MODEL.dat           the figures' data
#   plot/fig24-overlap.{png,svg}, plot/time-per-step.{png,svg}   (compare-overlap.gp,
#                                                                 compare-time.gp)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${PEGPLUS_COMPARE:-}
out=compare-out
models="ode quick standard peg"
hs="0.001 0.002 0.003 0.004 0.005 0.006 0.007 0.008 0.009 0.010 0.011 0.012 0.013 0.014 0.015 0.016"
seeds=10
seconds=5
jobs=$(nproc 2>/dev/null || echo 2)
budget=1800
scene=pour3d
mu=0
force=0
plot_only=0
scenes=""
seed=1
extra=""
jobs_only=0
slurm=0
slurm_opts=""
merge_only=0
seconds_given=0
budget_given=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        -b|--bin) bin=$2; shift ;;
        -o|--out) out=$2; shift ;;
        -m|--models) models=$2; shift ;;
        -H|--hs) hs=$2; shift ;;
        -s|--seeds) seeds=$2; shift ;;
        -t|--seconds) seconds=$2; seconds_given=1; shift ;;
        -j|--jobs) jobs=$2; shift ;;
        -B|--budget) budget=$2; budget_given=1; shift ;;
        --scenes) scenes=$2; shift ;;
        --seed) seed=$2; shift ;;
        --extra) extra=$2; shift ;;
        --jobs-only) jobs_only=1 ;;
        --slurm) slurm=1 ;;
        --slurm-opts) slurm_opts=$2; shift ;;
        --merge-only) merge_only=1 ;;
        -S|--scene) scene=$2; shift ;;
        --mu) mu=$2; shift ;;
        -q|--quick) hs="0.004 0.008 0.016"; seeds=2; seconds=2; budget=120 ;;
        --force) force=1 ;;
        -p|--plot-only) plot_only=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "compare-sweep.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done

case "$seeds" in ''|*[!0-9]*) echo "compare-sweep.sh: --seeds needs a number" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "compare-sweep.sh: --jobs needs a number >= 1" >&2; exit 2 ;; esac

find_bin() {
    if [ -z "$bin" ]; then
        for candidate in "$here/pegplus-compare" "$here/../build/examples/pegplus-compare" "$(command -v pegplus-compare || true)"; do
            if [ -n "$candidate" ] && [ -x "$candidate" ]; then bin=$candidate; break; fi
        done
    fi
    if [ -z "$bin" ] || [ ! -x "$bin" ]; then
        echo "compare-sweep: pegplus-compare not found; build it (cmake --build build --target pegplus-compare) or pass --bin" >&2
        exit 1
    fi
    bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
}

# ----------------------------------------------------------- A. any scenes: job list

# One shell word, quoted for the job list (paths with spaces survive).
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

if [ -n "$scenes" ] || [ "$merge_only" = 1 ]; then
    mkdir -p "$out/runs"
    out=$(cd "$out" && pwd)
    find_bin
    if [ "$merge_only" = 0 ]; then
        jobs_file="$out/jobs.txt"
        : > "$jobs_file"
        count=0
        for scene in ${scenes//,/ }; do
            label=$(basename "$scene" .json)
            for model in ${models//,/ }; do
                for h in ${hs//,/ }; do
                    f="$out/runs/$label-$model-h$h.csv"
                    if [ "$force" = 0 ] && [ -s "$f" ] && [ "$slurm" = 0 ] && [ "$jobs_only" = 0 ]; then continue; fi
                    line="$(quote "$bin") --scene $(quote "$scene") --models $model --h $h --seed $seed"
                    [ "$seconds_given" = 1 ] && line="$line --seconds $seconds"
                    [ "$budget_given" = 1 ] && line="$line --budget $budget"
                    [ "$mu" != 0 ] && line="$line --mu $mu"
                    [ -n "$extra" ] && line="$line $extra"
                    # written to a temporary name and renamed: an interrupted run is redone
                    line="$line --quiet --csv $(quote "$f.tmp") 2> $(quote "$f.log") && mv $(quote "$f.tmp") $(quote "$f")"
                    echo "$line" >> "$jobs_file"
                    count=$((count + 1))
                done
            done
        done
        echo "compare-sweep: $count runs in $jobs_file"
        if [ "$slurm" = 1 ]; then
            script="$out/sweep.slurm"
            {
                echo "#!/bin/bash"
                echo "# Slurm job array written by compare-sweep: task i runs line i of $jobs_file."
                echo "# Submit with: sbatch $script ; when every task has ended: compare-sweep --merge-only -o $out"
                echo "#SBATCH --job-name=pegplus-sweep"
                echo "#SBATCH --array=1-$count"
                echo "#SBATCH --cpus-per-task=1"
                echo "#SBATCH --output=$out/runs/slurm-%A_%a.out"
                for o in $slurm_opts; do echo "#SBATCH $o"; done
                echo "set -eu"
                echo "line=\$(sed -n \"\${SLURM_ARRAY_TASK_ID}p\" $(quote "$jobs_file"))"
                echo "exec bash -c \"\$line\""
            } > "$script"
            chmod +x "$script"
            echo "compare-sweep: Slurm job array in $script (sbatch $script; then compare-sweep --merge-only -o $out)"
            exit 0
        fi
        [ "$jobs_only" = 1 ] && exit 0
        start=$(date +%s)
        if [ "$count" -gt 0 ]; then
            if command -v parallel > /dev/null 2>&1 && parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
                echo "compare-sweep: running on $jobs cores with GNU parallel"
                if [ -t 2 ]; then bar=--bar; else bar=""; fi
                parallel --will-cite -j "$jobs" $bar --joblog "$out/joblog.txt" < "$jobs_file" || true
            else
                echo "compare-sweep: running on $jobs cores with xargs -P (GNU parallel not installed)"
                tr '\n' '\0' < "$jobs_file" | xargs -0 -P "$jobs" -n 1 bash -c || true
            fi
        fi
        echo "compare-sweep: runs done in $(( $(date +%s) - start )) s"
    fi
    shopt -s nullglob
    files=("$out"/runs/*.csv)
    shopt -u nullglob
    if [ ${#files[@]} -eq 0 ]; then
        echo "compare-sweep: no run results in $out/runs" >&2
        exit 1
    fi
    status=0
    "$bin" --merge --csv "$out/summary.csv" --json "$out/summary.json" --figures "$out/figures" "${files[@]}" \
        > "$out/summary.txt" || status=$?
    cat "$out/summary.txt"
    echo "compare-sweep: ${#files[@]} run files merged: $out/summary.csv, summary.json, summary.txt, figures/"
    exit $status
fi

# ------------------------------------------------------------- B. the pouring experiment

mkdir -p "$out/runs" "$out/plot"
out=$(cd "$out" && pwd)

# ------------------------------------------------------------------------ the runs

if [ "$plot_only" = 0 ]; then
    find_bin

    # one line per run still to do: model h seed
    todo="$out/todo.txt"
    : > "$todo"
    total=0
    for model in $models; do
        for h in $hs; do
            for ((seed = 1; seed <= seeds; ++seed)); do
                f="$out/runs/$scene-$model-h$h-s$seed.csv"
                if [ "$force" = 1 ] || [ ! -s "$f" ]; then
                    echo "$model $h $seed" >> "$todo"
                    total=$((total + 1))
                fi
            done
        done
    done

    # One run: its own CSV (written to a temporary name first, so an interrupted run is redone),
    # then one line "model h seed status" on stdout for the progress display.
    run_one() {
        local model=$1 h=$2 seed=$3
        local f="$SWEEP_OUT/runs/$SWEEP_SCENE-$model-h$h-s$seed.csv"
        rm -f "$f.tmp"
        if "$SWEEP_BIN" --model "$model" --h "$h" --seed "$seed" --seconds "$SWEEP_SECONDS" \
                --scene "$SWEEP_SCENE" --mu "$SWEEP_MU" --budget "$SWEEP_BUDGET" --quiet \
                --csv "$f.tmp" > /dev/null 2> "$f.log"; then
            mv "$f.tmp" "$f"
            echo "$model $h $seed $(tail -n 1 "$f" | cut -d, -f12)"
        else
            echo "$model $h $seed program-error(see ${f##*/}.log)"
        fi
    }
    export -f run_one
    export SWEEP_OUT="$out" SWEEP_BIN="$bin" SWEEP_SECONDS="$seconds" SWEEP_SCENE="$scene" \
           SWEEP_MU="$mu" SWEEP_BUDGET="$budget"

    if command -v parallel > /dev/null 2>&1 && parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
        engine="GNU parallel"
        launch() { parallel --will-cite -j "$jobs" --colsep ' ' run_one '{1}' '{2}' '{3}' < "$todo"; }
    else
        engine="xargs -P"
        launch() { xargs -P "$jobs" -L 1 bash -c 'run_one "$@"' _ < "$todo"; }
    fi
    echo "compare-sweep.sh: $total runs to do ($scene, $seconds s each, models: $models; h: $hs;" \
         "seeds 1..$seeds) on $jobs cores with $engine; results in $out"
    start=$(date +%s)
    done_count=0
    failed=0
    if [ "$total" -gt 0 ]; then
        while read -r model h seed status; do
            done_count=$((done_count + 1))
            case "$status" in ok|time_budget) ;; *) failed=$((failed + 1)) ;; esac
            now=$(date +%s)
            elapsed=$((now - start))
            eta=$(( elapsed * (total - done_count) / done_count ))
            if [ -t 1 ]; then
                printf '\r[%d/%d] %ds elapsed, ~%ds left, %d crashed | last: %s h=%s seed=%s %s\033[K' \
                    "$done_count" "$total" "$elapsed" "$eta" "$failed" "$model" "$h" "$seed" "$status"
            else
                printf '[%d/%d] %ds: %s h=%s seed=%s %s\n' "$done_count" "$total" "$elapsed" "$model" "$h" "$seed" "$status"
            fi
        done < <(launch)
        [ -t 1 ] && echo
    fi
    echo "compare-sweep.sh: runs done in $(( $(date +%s) - start )) s"
fi

# --------------------------------------------------------------- merge and summarise

csv="$out/compare.csv"
shopt -s nullglob
files=("$out"/runs/*.csv)
shopt -u nullglob
if [ ${#files[@]} -eq 0 ]; then
    echo "compare-sweep.sh: no run results in $out/runs" >&2
    exit 1
fi
{
    head -n 1 "${files[0]}"
    for f in "${files[@]}"; do tail -n +2 "$f"; done | sort -t, -k1,1 -k2,2 -k3,3g -k4,4n
} > "$csv"
echo "compare-sweep.sh: ${#files[@]} runs merged into $csv"

# Plot data and summary from the merged CSV (columns looked up by name; plain POSIX awk).
# Overlap: one line per run, x = h spread by model and by seed so the points stay apart.
awk -F, -v dir="$out/plot" -v models="$models" '
NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
function isort(key, n,    i, j, t) {
    for (i = 2; i <= n; ++i) {
        t = val[key, i]
        for (j = i - 1; j >= 1 && val[key, j] + 0 > t + 0; --j) val[key, j + 1] = val[key, j]
        val[key, j + 1] = t
    }
}
function median(key, n) {
    isort(key, n)
    return n % 2 ? val[key, (n + 1) / 2] : 0.5 * (val[key, n / 2] + val[key, n / 2 + 1])
}
BEGIN {
    m = split(models, list, " ")
    for (i = 1; i <= m; ++i) {
        index_of[list[i]] = i
        printf "" > (dir "/overlap-" list[i] ".dat")
        printf "" > (dir "/time-" list[i] ".dat")
    }
}
{
    model = $c["model"]; h = $c["h"]; seed = $c["seed"]
    if (!(model in index_of)) next
    key = model SUBSEP h
    if (!(key in runs)) { keys[++nkeys] = key }
    runs[key]++
    crashed[key] += $c["crashed"]
    cut[key] += $c["status"] == "time_budget"
    if ($c["steps_run"] + 0 > 0) {
        x = h + (index_of[model] - (m + 1) / 2) * 0.00018 + ((seed % 10) - 4.5) * 0.000012
        print x, h, $c["overlap_median"], $c["overlap_q1"], $c["overlap_q3"], $c["crashed"], seed \
            >> (dir "/overlap-" model ".dat")
        n = ++count[key]
        val[key, n] = $c["us_per_step"]
        lo[key] = (n == 1 || $c["us_per_step"] + 0 < lo[key]) ? $c["us_per_step"] + 0 : lo[key]
        hi[key] = (n == 1 || $c["us_per_step"] + 0 > hi[key]) ? $c["us_per_step"] + 0 : hi[key]
        ov[key, n] = $c["overlap_median"]
        q1[key, n] = $c["overlap_q1"]
        q3[key, n] = $c["overlap_q3"]
        if (n == 1 || $c["overlap_max"] + 0 > worst[key]) worst[key] = $c["overlap_max"] + 0
        ix[key] += $c["ix_step_share"]
    }
}
END {
    for (k = 1; k <= nkeys; ++k) {
        key = keys[k]; split(key, part, SUBSEP); n = count[key] + 0
        us = n ? median(key, n) : "NA"
        if (n) {
            print part[2], us, lo[key], hi[key], n >> (dir "/time-" part[1] ".dat")
            us_of[key] = us
            for (i = 1; i <= n; ++i) val[key, i] = ov[key, i]
            om = sprintf("%.2e", median(key, n))
            for (i = 1; i <= n; ++i) val[key, i] = q1[key, i]
            oq1 = sprintf("%.2e", median(key, n))
            for (i = 1; i <= n; ++i) val[key, i] = q3[key, i]
            oq3 = sprintf("%.2e", median(key, n))
            ow = sprintf("%.2e", worst[key])
            share = sprintf("%.0f%%", 100 * ix[key] / n)
        } else om = oq1 = oq3 = ow = share = "NA"
        ratio = "-"
        ref = "standard" substr(part[1], 4)
        if (substr(part[1], 1, 3) == "peg" && n && ((ref SUBSEP part[2]) in count)) ratio = "pending"
        printf "%-12s %-6s %4d %7d %4d %10s %10s %10s %10s %6s %10s %s\n", part[1], part[2], runs[key], \
            crashed[key], cut[key], om, oq1, oq3, ow, substr(part[1], 1, 3) == "peg" ? share : "-", \
            n ? sprintf("%.1f", us) : "NA", ratio > (dir "/summary.body")
    }
    # PEG time per step over the standard model'"'"'s (peg-lin over standard-lin), per h (the
    # paper: about 2x)
    for (k = 1; k <= nkeys; ++k) {
        key = keys[k]; split(key, part, SUBSEP)
        ref = "standard" substr(part[1], 4)
        if (substr(part[1], 1, 3) != "peg" || !(key in us_of) || !((ref SUBSEP part[2]) in us_of)) continue
        printf "%s %s %.2f\n", part[1], part[2], us_of[key] / us_of[ref SUBSEP part[2]] > (dir "/ratio.body")
    }
}' "$csv"
for model in $models; do
    for kind in overlap time; do
        f="$out/plot/$kind-$model.dat"
        [ -f "$f" ] && sort -g -o "$f" "$f"
    done
done
{
    echo "Per model and h over the seeds: runs, runs crashed before the end, runs cut short by the"
    echo "time budget (their statistics cover the steps run); the medians over the"
    echo "runs of each run's median, Q1 and Q3 of the total overlap volume after every step (m^3);"
    echo "the largest total overlap after any step of any run (m^3); the mean share of steps with"
    echo "I or X sets (PEG); the median time per pp_world_step (us);"
    echo "for PEG, its time per step over the standard model's at the same h."
    echo
    printf "%-12s %-6s %4s %7s %4s %10s %10s %10s %10s %6s %10s %s\n" model h runs crashed cut median Q1 Q3 worst "I/X" "us/step" "peg/std"
    if [ -f "$out/plot/summary.body" ]; then
        sort -k1,1 -k2,2g "$out/plot/summary.body" | while read -r line; do
            set -- $line
            if [ "${12:-}" = pending ] && [ -f "$out/plot/ratio.body" ]; then
                r=$(awk -v m="$1" -v h="$2" '$1 == m && $2 == h { print $3 "x" }' "$out/plot/ratio.body")
                line="${line% pending} ${r:--}"
            fi
            echo "$line"
        done
    fi
} > "$out/summary.txt"
rm -f "$out/plot/summary.body" "$out/plot/ratio.body"
cat "$out/summary.txt"

# -------------------------------------------------------------------------- figures

if ! command -v gnuplot > /dev/null 2>&1; then
    echo "compare-sweep.sh: gnuplot is not installed, so no figures were drawn. Install it with" >&2
    echo "    apt-get install -y gnuplot-nox" >&2
    echo "then draw them from the data already written with" >&2
    echo "    $0 --plot-only --out $out --models \"$models\"" >&2
    exit 0
fi
gnuplot -e "dir='$out/plot'; models='$models'" "$here/compare-overlap.gp"
gnuplot -e "dir='$out/plot'; models='$models'" "$here/compare-time.gp"
echo "compare-sweep.sh: figures in $out/plot: fig24-overlap.png/.svg, time-per-step.png/.svg"
