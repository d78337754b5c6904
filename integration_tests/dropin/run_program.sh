#!/bin/sh
# An unchanged ODE program (examples/ode_programs) under pegplus-run (docs/drop-in.md).
#
#   run_program.sh [--driven] <pegplus-run script> <program> <model> <max penetration, m>
#                  <scratch dir> [program arguments...]
#
# model ode: the program's stdout under `pegplus-run --model ode` is byte-identical to its
# stdout without pegplus-run, the summary counts its steps, and --quiet silences the summary.
# model standard|peg: every step ran (the summary's steps = the program's, refused=0); the
# deepest overlap the summary saw over the run and the one dCollide finds at the end are below
# the bound, no body's bounding box reaches below the ground by more than the bound; no energy
# was gained (final kinetic + potential <= initial) and the bodies have come to rest (final
# kinetic energy < 1e-6 J); with `churn`, the body made after a destroy rests on the ground.
# Then the run is set beside stock ODE's (the same program and arguments under
# `pegplus-run --model ode`): steps completed, worst and final penetration, energy.
#
# --driven: a scene with motors (crash.c), which is not passive: instead of "no energy gained"
# and "at rest", energy_final - energy_initial <= joint_work (the work the program measured its
# joints do: contacts add none), the car's front went past the wall's initial face
# (car_wall_gap_min < 0) and moved boxes (wall_boxes_moved >= 1); under every model, ode
# included (after the byte-for-byte comparison).
set -eu
driven=0
if [ "${1:-}" = --driven ]; then
    driven=1
    shift
fi
run=$1 program=$2 model=$3 bound=$4 scratch=$5
shift 5
mkdir -p "$scratch"
name=$(basename "$program")-$model${2:+-$2}
out=$scratch/$name.out err=$scratch/$name.err

fail() { echo "FAIL ($name): $*" >&2; cat "$err" >&2; exit 1; }

value() { awk -v k="$1" '$1 == k { print $2 }' "${2:-$out}"; }
summary() { sed -n 's/.*pegplus-run: .*\<'"$1"'=\([^ ]*\).*/\1/p' "${2:-$err}" | tail -1; }

# the driven scene's checks on a program output (file $1)
driven_check() {
    awk -v e0="$(value energy_initial "$1")" -v e1="$(value energy_final "$1")" \
        -v work="$(value joint_work "$1")" -v gap="$(value car_wall_gap_min "$1")" \
        -v moved="$(value wall_boxes_moved "$1")" -v boxes="$(value wall_boxes "$1")" \
        -v name="$name" 'BEGIN {
        printf "%s: energy %.6f -> %.6f J, joints did %.6f J of work (gain - work = %.3g J), " \
               "car front %.3f m past the wall face, %d of %d wall boxes moved\n", name, e0, e1,
               work, e1 - e0 - work, -gap, moved, boxes
        bad = 0
        if (work == "" || moved == "" || gap == "") { print "driven scene lines missing"; bad = 1 }
        if (!(e1 - e0 <= work + 0)) { print "energy gained beyond the joints work"; bad = 1 }
        if (!(gap + 0 < 0)) { print "the car did not reach the wall"; bad = 1 }
        if (!(moved + 0 >= 1)) { print "no wall box moved"; bad = 1 }
        exit bad
    }' || fail "driven scene check failed"
}

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
    [ "$driven" = 0 ] || driven_check "$out"
    exit 0
fi

[ "$(summary refused)" = 0 ] || fail "steps refused: $(summary refused)"
awk -v worst="$(summary worst_penetration)" -v depth="$(value max_depth)" \
    -v lowest="$(value lowest_point)" -v e0="$(value energy_initial)" \
    -v e1="$(value energy_final)" -v ke="$(value kinetic_energy_final)" -v bound="$bound" \
    -v name="$name" -v churn="$(value churn_lowest)" -v driven="$driven" 'BEGIN {
    printf "%s: worst penetration %.3g m, final dCollide depth %.3g m, lowest point %.3g m, " \
           "energy %.6f -> %.6f J, final kinetic energy %.3g J\n", name, worst, depth, lowest,
           e0, e1, ke
    bad = 0
    if (!(worst + 0 < bound)) { print "worst penetration above " bound; bad = 1 }
    if (!(depth + 0 < bound)) { print "final overlap above " bound; bad = 1 }
    if (!(lowest + 0 > -bound)) { print "a body below the ground by more than " bound; bad = 1 }
    if (!driven && !(e1 + 0 <= e0 + 0)) { print "energy gained"; bad = 1 }
    if (!driven && !(ke + 0 < 1e-6)) { print "not at rest"; bad = 1 }
    # the body made after a destroy rests on the ground (its own shape, not the old one)
    if (churn != "") {
        printf "%s: the new body rests %.3g m above the ground\n", name, churn
        if (!(churn + 0 < bound && churn + 0 > -bound)) { print "new body not on the ground"; bad = 1 }
    }
    exit bad
}' || fail "physics check failed"
[ "$driven" = 0 ] || driven_check "$out"

# beside stock ODE: the same program and arguments, its contacts measured by pegplus-run
stock=$scratch/$name.stock stock_err=$scratch/$name.stock.err
sh "$run" --model ode -- "$program" "$@" > "$stock" 2> "$stock_err" || fail "the stock ODE run failed"
awk -v model="$model" -v name="$name" \
    -v s_steps="$(summary steps "$stock_err")" -v p_steps="$(summary steps)" \
    -v p_refused="$(summary refused)" -v asked="$(value steps)" \
    -v s_worst="$(summary worst_penetration "$stock_err")" -v p_worst="$(summary worst_penetration)" \
    -v s_depth="$(value max_depth "$stock")" -v p_depth="$(value max_depth)" \
    -v s_e0="$(value energy_initial "$stock")" -v p_e0="$(value energy_initial)" \
    -v s_e1="$(value energy_final "$stock")" -v p_e1="$(value energy_final)" \
    -v s_work="$(value joint_work "$stock")" -v p_work="$(value joint_work)" \
    -v s_moved="$(value wall_boxes_moved "$stock")" -v p_moved="$(value wall_boxes_moved)" 'BEGIN {
    printf "%s beside stock ODE:\n", name
    printf "  %-34s %18s %18s\n", "", "stock ODE", model
    printf "  %-34s %18s %18s\n", "steps completed", s_steps "/" asked, (p_steps - p_refused) "/" asked
    printf "  %-34s %18.3g %18.3g\n", "worst penetration over the run, m", s_worst, p_worst
    printf "  %-34s %18.3g %18.3g\n", "penetration at the end, m", s_depth, p_depth
    printf "  %-34s %18.6f %18.6f\n", "energy at the start, J", s_e0, p_e0
    printf "  %-34s %18.6f %18.6f\n", "energy at the end, J", s_e1, p_e1
    if (s_work != "")
        printf "  %-34s %18.6f %18.6f\n", "energy gain - joints work, J", s_e1 - s_e0 - s_work, p_e1 - p_e0 - p_work
    if (s_moved != "")
        printf "  %-34s %18d %18d\n", "wall boxes moved", s_moved, p_moved
}'
