#!/bin/sh
# An unchanged ODE program (examples/ode_programs) under pegplus-run (docs/drop-in.md).
#
#   run_program.sh <pegplus-run script> <program> <model> <max penetration, m> <scratch dir>
#                  [program arguments...]
#
# model ode: the program's stdout under `pegplus-run --model ode` is byte-identical to its
# stdout without pegplus-run, the summary counts its steps, and --quiet silences the summary.
# model standard|peg: every step ran (the summary's steps = the program's, refused=0); the
# deepest overlap the summary saw over the run and the one dCollide finds at the end are below
# the bound, no body's bounding box reaches below the ground by more than the bound; no energy
# was gained (final kinetic + potential <= initial) and the bodies have come to rest (final
# kinetic energy < 1e-6 J); with `churn`, the body made after a destroy rests on the ground.
set -eu
run=$1 program=$2 model=$3 bound=$4 scratch=$5
shift 5
mkdir -p "$scratch"
name=$(basename "$program")-$model${2:+-$2}
out=$scratch/$name.out err=$scratch/$name.err

fail() { echo "FAIL ($name): $*" >&2; cat "$err" >&2; exit 1; }

value() { awk -v k="$1" '$1 == k { print $2 }' "$out"; }
summary() { sed -n 's/.*pegplus-run: .*\<'"$1"'=\([^ ]*\).*/\1/p' "$err" | tail -1; }

sh "$run" --model "$model" -- "$program" "$@" > "$out" 2> "$err" || fail "the program failed"
summary_line=$(grep 'pegplus-run: model=' "$err" || true)
[ -n "$summary_line" ] || fail "no summary on stderr"
echo "$summary_line"
steps=$(value steps)
[ "$(summary steps)" = "$steps" ] || fail "summary steps $(summary steps), program steps $steps"

if [ "$model" = ode ]; then
    "$program" "$@" > "$scratch/$name.plain" 2>/dev/null || fail "the program failed without pegplus-run"
    cmp "$scratch/$name.plain" "$out" || fail "output differs from the plain run"
    sh "$run" --model ode --quiet -- "$program" "$@" > /dev/null 2> "$scratch/$name.quiet"
    ! grep -q 'pegplus-run:' "$scratch/$name.quiet" || fail "--quiet printed a summary"
    echo "$name: byte-identical to the plain run ($(wc -l < "$out") lines)"
    exit 0
fi

[ "$(summary refused)" = 0 ] || fail "steps refused: $(summary refused)"
awk -v worst="$(summary worst_penetration)" -v depth="$(value max_depth)" \
    -v lowest="$(value lowest_point)" -v e0="$(value energy_initial)" \
    -v e1="$(value energy_final)" -v ke="$(value kinetic_energy_final)" -v bound="$bound" \
    -v name="$name" -v churn="$(value churn_lowest)" 'BEGIN {
    printf "%s: worst penetration %.3g m, final dCollide depth %.3g m, lowest point %.3g m, " \
           "energy %.6f -> %.6f J, final kinetic energy %.3g J\n", name, worst, depth, lowest,
           e0, e1, ke
    bad = 0
    if (!(worst + 0 < bound)) { print "worst penetration above " bound; bad = 1 }
    if (!(depth + 0 < bound)) { print "final overlap above " bound; bad = 1 }
    if (!(lowest + 0 > -bound)) { print "a body below the ground by more than " bound; bad = 1 }
    if (!(e1 + 0 <= e0 + 0)) { print "energy gained"; bad = 1 }
    if (!(ke + 0 < 1e-6)) { print "not at rest"; bad = 1 }
    # the body made after a destroy rests on the ground (its own shape, not the old one)
    if (churn != "") {
        printf "%s: the new body rests %.3g m above the ground\n", name, churn
        if (!(churn + 0 < bound && churn + 0 > -bound)) { print "new body not on the ground"; bad = 1 }
    }
    exit bad
}' || fail "physics check failed"
