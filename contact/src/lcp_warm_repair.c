/*
 * The warm basis repaired contact by contact (issue 11; docs/performance.md "The warm basis
 * repaired by contact blocks").
 *
 * A warm basis B (the last step's) is solved for the new q: M_BB z_B = -q_B, w_N = M_NB z_B +
 * q_N. Where some basic z_i < 0 (a pull, or friction that pulls) or some nonbasic w_i < 0 (an
 * approach, or a slip nothing opposes) beyond rounding, B is not a solution basis, and the
 * clamped answer (z_B < 0 set to 0) is not an LCP answer: accepted step after step on a
 * degenerate resting vertex it gains energy (docs/performance.md "heap20's recurring creep").
 * Single unknowns moved in and out of B (block principal pivoting) leave M_BB singular where a
 * contact's sigma loses all its betas (sigma's column of M has entries only in its betas' rows,
 * ST96 Eq 26: rho_f = G_f^T nu + E sigma). Here the moves keep each contact's block
 * [p; beta_1..k; sigma] in one of the patterns of a vertex of ST96's LCP, each with a
 * nonsingular diagonal block (k = 4: d_j and d_{j+2} = -d_j, so at most two adjacent betas of
 * a sticking contact are independent):
 *   open      p out; sigma in with the beta of the most negative tangential velocity
 *             v_j = w_beta_j - sigma (its block [[a, 1], [-1, 0]], determinant 1);
 *   sticking  p in; sigma out; the two adjacent betas of the most negative v_j (one when
 *             k <= 2);
 *   sliding   p in; sigma in; the betas it had.
 * One round changes the blocks of the violated unknowns. Basic z_i < -z_floor: a pull of p
 * opens its contact; a beta's pull takes it out (sigma with it when no beta would be left; a
 * sticking contact keeps at most two adjacent betas); an open contact's sigma below zero takes
 * its friction out; a loaded contact's sigma below zero is left to the clamp unless far beyond
 * (SIGMA_PULL), where the contact sticks. Only when no basic z is negative, nonbasic w_i <
 * -w_floor: an approach closes an open contact as sticking, a slip of an open contact brings
 * sigma in with that beta, w_sigma < 0 (friction beyond the cone) brings sigma in; a loaded
 * contact's slip is left as it is, and the approach and w_sigma < 0 are left below
 * W_LOAD_FLOOR times w_floor. Unknowns outside the blocks move one by one, except PEG's slacks,
 * which stay ("Islands with PEG's I/X sets" below, with the other rules there). Each of
 * the moves left out was measured to make M_BB singular up to the compliance on heap20: it
 * adds or drops a velocity row of a body whose rows already determine it, where Lemke would
 * exchange it with another (a ratio test the repair does not have).
 */
#include "lcp_internal.h"

#include <math.h>

/* The block of contact normal P: its betas (increasing index) and sigma (-1: frictionless).
 * A block of one unknown after p has no beta for its sigma's moves to pick (slip_direction):
 * that unknown is read as a beta without sigma. */
typedef struct contact_block {
    int p, nb, sigma;
    int beta[PP_LCP_BLOCK_BETA_MAX];
} contact_block;

static void block_of(int n, const int *blocks, int P, contact_block *b)
{
    b->p = P;
    b->nb = 0;
    b->sigma = -1;
    int last = -1;
    for (int i = P + 1; i < n; ++i)
        if (blocks[i] == P) {
            if (last >= 0 && b->nb < PP_LCP_BLOCK_BETA_MAX) b->beta[b->nb++] = last;
            last = i;
        }
    if (b->nb == 0 && last >= 0) {
        b->beta[b->nb++] = last;
        last = -1;
    }
    b->sigma = last;
}

static int betas_in(const contact_block *b, const unsigned char *basis)
{
    int c = 0;
    for (int j = 0; j < b->nb; ++j) c += basis[b->beta[j]] != 0;
    return c;
}

/* v_j = w_beta_j - sigma: the tangential velocity along d_j (ST96 Eq 26). */
static int slip_direction(const contact_block *b, const double *z, const double *w)
{
    const double s = b->sigma >= 0 && z[b->sigma] > 0.0 ? z[b->sigma] : 0.0;
    int best = 0;
    for (int j = 1; j < b->nb; ++j)
        if (w[b->beta[j]] - s < w[b->beta[best]] - s) best = j;
    return best;
}

static void betas_out(const contact_block *b, unsigned char *basis)
{
    for (int j = 0; j < b->nb; ++j) basis[b->beta[j]] = 0;
}

/* Sticking: p in, sigma out, the two adjacent betas around the slip direction. */
static void make_sticking(const contact_block *b, const double *z, const double *w,
                          unsigned char *basis)
{
    basis[b->p] = 1;
    if (b->sigma < 0) return;
    basis[b->sigma] = 0;
    const int j = slip_direction(b, z, w);
    betas_out(b, basis);
    basis[b->beta[j]] = 1;
    if (b->nb > 2) {
        const int up = b->beta[(j + 1) % b->nb], down = b->beta[(j + b->nb - 1) % b->nb];
        basis[w[up] <= w[down] ? up : down] = 1;
    }
}

static void make_open(const contact_block *b, const double *z, const double *w,
                      unsigned char *basis)
{
    basis[b->p] = 0;
    if (b->sigma < 0) return;
    const int j = slip_direction(b, z, w);
    betas_out(b, basis);
    basis[b->beta[j]] = 1;
    basis[b->sigma] = 1;
}

/* A sticking block (p in, sigma out) keeps at most two adjacent betas, the largest z and its
 * larger basic neighbour: without sigma's row two opposite betas (d_{j+2} = -d_j at k = 4)
 * have opposite columns up to the compliance on the diagonal, and M_BB is singular to it. */
static void stick_betas(const contact_block *b, const double *z, unsigned char *basis)
{
    if (!basis[b->p] || b->sigma < 0 || basis[b->sigma] || betas_in(b, basis) <= 2) return;
    int j = -1;
    for (int t = 0; t < b->nb; ++t)
        if (basis[b->beta[t]] && (j < 0 || z[b->beta[t]] > z[b->beta[j]])) j = t;
    const int up = b->beta[(j + 1) % b->nb], down = b->beta[(j + b->nb - 1) % b->nb];
    const int keep = basis[up] && (!basis[down] || z[up] >= z[down]) ? up
                     : basis[down]                                    ? down
                                                                      : -1;
    betas_out(b, basis);
    basis[b->beta[j]] = 1;
    if (keep >= 0) basis[keep] = 1;
}

/* A loaded contact's sigma (its sliding speed) below -z_floor is left to the clamp unless it
 * is SIGMA_PULL times beyond: at the floor it is a contact sliding at zero speed, degenerate
 * between sliding and sticking, and either move adds or drops a velocity row of a body already
 * determined (heap20: near-singular M_BB, |z| to 1e12); far beyond, the contact sticks. */
#define SIGMA_PULL 1e3
/* The two w-side moves that close or load a contact (an open contact's approach closed as
 * sticking: p and its betas in; w_sigma < 0 bringing sigma in) are made only beyond
 * W_LOAD_FLOOR times w_floor. On a box flat on four coplanar corners (a redundant support: 4
 * normal rows for 3 out-of-plane freedoms) the open corner's approach sits at 1-2.6 times
 * w_floor by rounding alone; closing it adds velocity rows to a body the other corners
 * already determine, M_BB is singular up to the compliance, and the rounds blow up or cycle
 * (heap20's events, docs/performance.md "heap20's events after the contact-block repair"):
 * only Lemke's ratio test chooses which row leaves. Left to the clamp, such an approach is
 * < W_LOAD_FLOOR w_floor (heap20: <= 1.2e-11 m/s), and the gap it opens, h times that, comes
 * back into the next step's q through psi / h (PEG Eq 7). */
#define W_LOAD_FLOOR 10.0
/* With I/X sets (slack given; "Islands with PEG's I/X sets" below): an open contact's
 * friction (its sigma below zero, a beta's slip) is moved only beyond OPEN_FRICTION_FLOOR
 * times the floors. Such a contact carries no impulse (p = 0 forces beta = 0 through sigma's
 * row, ST96 Eq 27), so the clamp leaves no work done; on PEG's islands its sigma and slips
 * sit at 2-4 times the floors by rounding alone, and moving them cycled (islands10: sigma
 * out, a slip in, sigma out, ... over the 6 rounds, then Lemke); at rest they recur at 10-100
 * times the floors step after step (islands10, heap20, islands100 PEG, 300 clock-free steps:
 * 35 506 repair rounds at 10 times, 23 270 at 100, 22 705 never moved; the same pivots but
 * heap20's 7 -> 11). */
#define OPEN_FRICTION_FLOOR 100.0

/*
 * Islands with PEG's I/X sets (slack given; docs/performance.md "The warm basis repaired on
 * islands with I/X sets").
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
 *    negative (approach_to_close). Two X sets with one primary (the shared warm-start key
 *    of docs/performance.md "Why resting 3-box stacks pivot") have the same p column and,
 *    with no slack basic, the same p row: closed together, M_BB is singular (islands10 PEG:
 *    every repair that closed two I/X sets at once failed its next basis solve); and a 3-box
 *    stack's corners approaching at 10-20 times the floor, closed together (a U set's and an
 *    X set's), made M_BB singular up to the compliance (|z| 50-1e3 after one round). Closed
 *    one at a time, the next round sees the others' approaches with the first one's row in
 *    M_BB (islands10 / islands100 PEG: 31.3 / 180.3 -> 1.11 / 24.3 pivots a step);
 *  - an open contact's friction (its sigma below zero, a beta's slip) is moved only beyond
 *    OPEN_FRICTION_FLOOR times the floors.
 * Closing one approach a round takes more rounds: the repair runs up to
 * WARM_REPAIR_SET_ROUNDS (lcp.c) rounds there (islands10 / islands100 PEG: 10.6 / 105.2 -> 1.11
 * / 24.3 pivots a step from 6 to 12 rounds).
 */

/* The one approach a round closes on an island with I/X sets: the most negative w_P < -floor
 * of a nonbasic p of blocks, or -1. */
static int approach_to_close(int n, const int *blocks, const double *w,
                             const unsigned char *basis, double floor)
{
    int best = -1;
    for (int i = 0; i < n; ++i)
        if (blocks[i] == i && !basis[i] && w[i] < -floor && (best < 0 || w[i] < w[best]))
            best = i;
    return best;
}

int pp_lcp_warm_moves(int n, const int *blocks, const int *slack, const double *z,
                      const double *w, unsigned char *basis, double z_floor, double w_floor)
{
    int changed = 0;
    contact_block b;
    /* basic z_i < -z_floor: out, by blocks */
    for (int i = 0; i < n; ++i) {
        if (!basis[i] || !(z[i] < -z_floor)) continue;
        const int P = blocks[i];
        if (slack && slack[i] >= 0) continue; /* a set's slack: left (below) */
        if (P < 0) {
            basis[i] = 0;
            ++changed;
            continue;
        }
        block_of(n, blocks, P, &b);
        if (i == b.sigma && basis[P] && !(z[i] < -SIGMA_PULL * z_floor)) continue;
        if (slack && i == b.sigma && !basis[P] && !(z[i] < -OPEN_FRICTION_FLOOR * z_floor))
            continue;
        ++changed;
        if (i == b.sigma && basis[P]) {
            make_sticking(&b, z, w, basis);
        } else if (i == P) {
            make_open(&b, z, w, basis);
        } else if (i == b.sigma) { /* an open contact without slip: no friction */
            betas_out(&b, basis);
            basis[i] = 0;
        } else {
            basis[i] = 0;
            if (i != b.sigma && b.sigma >= 0 && basis[b.sigma] && betas_in(&b, basis) == 0)
                basis[b.sigma] = 0;
            stick_betas(&b, z, basis);
        }
    }
    if (changed) return changed;
    /* with I/X sets, one approach closed a round ("Islands with PEG's I/X sets") */
    const int close =
        slack ? approach_to_close(n, blocks, w, basis, W_LOAD_FLOOR * w_floor) : -1;
    /* nonbasic w_i < -w_floor: in, by blocks */
    for (int i = 0; i < n; ++i) {
        if (basis[i] || !(w[i] < -w_floor)) continue;
        const int P = blocks[i];
        if (slack && slack[i] >= 0) continue;
        if (P < 0) {
            basis[i] = 1;
            ++changed;
            continue;
        }
        block_of(n, blocks, P, &b);
        /* a loaded contact's slip: left (a beta entering adds a velocity row; measured, taken
         * in alone or in exchange for the block's least beta, it did not converge on heap20) */
        if (i != P && i != b.sigma && basis[P]) continue;
        if ((i == P || i == b.sigma) && !(w[i] < -W_LOAD_FLOOR * w_floor)) continue;
        if (slack && i == P && i != close) continue;
        if (slack && i != P && i != b.sigma && !(w[i] < -OPEN_FRICTION_FLOOR * w_floor))
            continue;
        ++changed;
        if (i == P) {
            make_sticking(&b, z, w, basis);
        } else if (i == b.sigma) {
            basis[i] = 1;
            if (betas_in(&b, basis) == 0) basis[b.beta[slip_direction(&b, z, w)]] = 1;
        } else { /* an open contact slipping against d_i */
            betas_out(&b, basis);
            basis[i] = 1;
            if (b.sigma >= 0) basis[b.sigma] = 1;
        }
    }
    return changed;
}
