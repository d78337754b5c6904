/*
 * The warm basis's repair (lcp_warm_repair.c) on islands with PEG's I/X sets (issue 11;
 * docs/performance.md "The warm basis repaired on islands with I/X sets").
 *
 * A set j with primary iota and secondaries s = 1..k_j has the unknowns p, c_1..c_k (its
 * slacks), and the primary's betas and sigma. Its rows (PEG Eqs 39-40, peg_mlcp.c), with
 * g_m the linearised end gap of member m over h:
 *     w_p   = g_iota + sum_s c_s                         ⊥ p    (Eq 40, E_I2 = ones(1, k))
 *     w_c_s = g_iota - g_s + sum_{r<=s} c_r              ⊥ c_s  (Eq 39, E_I1 = tril(ones))
 * The set's p, betas and sigma are a contact block as a U set's (the primary's ST96 rows), and
 * are moved as those. A slack column has entries only in its own set's c rows (E_I1) and its
 * p row (E_I2): slack columns carry no impulse (Eq 41). With p nonbasic M_BB is block
 * triangular with the basic slacks' unit lower-triangular block on the diagonal, so every
 * pattern of the slacks is nonsingular; with p basic, eliminating the basic slacks turns the
 * p row into the row of the last basic slack's member, so the pattern chooses which member's
 * row holds the set closed.
 *
 * The slacks are left as the warm basis has them (a violated slack to the clamp). Moved, they
 * broke check_peg_pouring (seed 9, frictionless: total overlap 9.33e-11 m^3 after step 225,
 * the bound 1e-12), whether one by one (a basic c_s < 0 out, a nonbasic w_c_s < 0 in) or as one
 * pattern per set (c_s basic iff member s's gap d_s = g_s - g_iota = sum_{r<=s} c_r - w_c_s is
 * above the running maximum, Lemmas 1.1/1.2, ties within the floor kept); and they pivoted
 * more: islands10 / islands100 PEG 2.74 / 55.9 Lemke pivots a step against 1.11 / 24.3 with
 * the slacks left (300 clock-free steps), heap20 PEG the same (7 pivots). On these islands a
 * violated slack is a member's gap above the set's at rounding (w_c < 0 to 4e-10 m/s in the
 * clamped answers); the creep came from the sets' p, betas and sigma, which are repaired.
 *
 * With I/X sets two more rules (pp_lcp_warm_moves):
 *  - one approach is closed a round (p in as sticking, a set's slacks as they are), the most
 *    negative (pp_lcp_approach_to_close). Two X sets with one primary (the shared warm-start
 *    key of docs/performance.md "Why resting 3-box stacks pivot") have the same p column and,
 *    with no slack basic, the same p row: closed together, M_BB is singular (islands10 PEG:
 *    every repair that closed two I/X sets at once failed its next basis solve); and a 3-box
 *    stack's corners approaching at 10-20 times the floor, closed together (a U set's and an
 *    X set's), made M_BB singular up to the compliance (|z| 50-1e3 after one round). Closed
 *    one at a time, the next round sees the others' approaches with the first one's row in
 *    M_BB (islands10 / islands100 PEG: 31.3 / 180.3 -> 1.11 / 24.3 pivots a step);
 *  - an open contact's friction (its sigma below zero, a beta's slip) is moved only beyond
 *    OPEN_FRICTION_FLOOR times the floors (lcp_warm_repair.c).
 * Closing one approach a round takes more rounds: the repair runs up to
 * WARM_REPAIR_SET_ROUNDS (lcp.c) rounds there (islands10 / islands100 PEG: 10.6 / 105.2 -> 1.11
 * / 24.3 pivots a step from 6 to 12 rounds).
 */
#include "lcp_internal.h"

int pp_lcp_approach_to_close(int n, const int *blocks, const double *w,
                             const unsigned char *basis, double floor)
{
    int best = -1;
    for (int i = 0; i < n; ++i)
        if (blocks[i] == i && !basis[i] && w[i] < -floor && (best < 0 || w[i] < w[best]))
            best = i;
    return best;
}
