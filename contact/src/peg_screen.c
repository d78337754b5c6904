/*
 * Constraint screening: a large island's time-stepping LCP (peg_mlcp.c, file comment; both
 * models) solved on the sets that can be active, the others verified row by row, so that the
 * answer is an exact answer of the WHOLE island's LCP while its matrix is formed only over the
 * working sets. The same completion serves the second part of the file
 * (pp_peg_primaries_island): a large PEG island answered through the sticking solve of its
 * sets' primaries, its I/X sets' slacks completed at the answer.
 *
 * Why. Constraints are built speculatively for every feature pair within the margin eps, so a
 * moving island carries many sets that cannot close in the step: ODE's convex demo under PEG
 * falls as one island of ~74 000 unknowns whose every gap is open (psi/h ~ 1 m/s, the cells
 * at relative rest), and its M by columns took 1.5 GB to find z = 0.
 *
 * The LCP of an island, x = [p; c; beta; sigma; rolling] over its sets (peg_mlcp.c). Split
 * the sets into a working list S and the omitted rest O. Every column of a set j acts on its
 * own rows through E_I1, E_I2, E, U (and the rolling bounds) and on other sets' rows only
 * through its impulse columns (p, beta, g+-: W_b g on its two bodies); slack columns c, sigma
 * and s carry no impulse. So with the impulses of O zero (p = beta = g+- = 0 on O):
 *  (a) the rows of S see nothing of O: w_S = M_SS x_S + q_S, the LCP restricted to S (the
 *      principal submatrix, same compliance shift), solved by Lemke as any island;
 *  (b) the rows of a set j in O are its own terms at the velocity nu+ = nu* + W G x_S of the
 *      bodies after S's impulses: with g_m = psi_m/h + G_m^T nu+ the linearised end gap of
 *      member m over h (Eq 6) and a_s = g_iota - g_s (the slack rows' q and G_I, Eq 45),
 *          w_p   = g_iota + sum_s c_s                       (Eq 40, E_I2)
 *          w_c_s = a_s + sum_{r<=s} c_r   ⊥ c_s >= 0         (Eq 39, E_I1 = tril(ones))
 *          w_b_l = d_l^T (v_B - v_A)+ + sigma ⊥ beta_l = 0   (ST96 Eq 26)
 *          w_sig = mu p - sum_l beta_l = 0 ⊥ sigma >= 0      (ST96 Eq 27)
 *          w_g+- = +-G_a^T nu+ + s_a ⊥ g+- = 0,  w_s = rho p - g+ - g- = 0 ⊥ s_a >= 0.
 *      The completion: c_s = max(0, -(a_s + sum_{r<s} c_r)) in order s = 1..k_j (then
 *      w_c_s = max(0, a_s + sum_{r<s} c_r) >= 0 and c_s w_c_s = 0), sigma = max(0, -min_l
 *      d_l^T nu+_rel) (w_b >= 0, w_sig = 0), s_a = |G_a^T nu+| likewise. Every row
 *      then holds except possibly the p row: by Lemmas 1.1/1.2 (peg_mlcp.c) g_iota + sum_s c_s
 *      = max_m g_m, so w_p = max over the members of the linearised end gap, which must be
 *      >= 0 with p = 0 — the set stays open at the end of the step. A U set has no slacks:
 *      w_p = psi/h + n . nu+_rel.
 * Hence: if x_S solves LCP(M_SS, q_S) and every set of O has max_m g_m(nu+) >= 0, then x_S
 * extended by zero impulses and the completion on O solves the whole island's LCP (every row
 * of S by (a), every row of O by (b)). Not a bound or a tolerance: the same rows, evaluated
 * through the body velocities instead of the columns of M (M_{O,S} x_S = G_O^T W G_S x_S =
 * G_O^T (nu+ - nu*)).
 *
 * The loop (an active-set method on the sets, each round exact):
 *   S_0 = the sets closed at the free motion (max_m g_m(nu*) <= 0, the same test with
 *         x_S = 0: closing, or touching at relative rest, as the supports of a resting stack,
 *         which the free motion leaves at w_p = 0 above the lowest layer) plus those whose p
 *         was basic in the warm-start basis (active last time);
 *   round: solve LCP(M_SS, q_S) (its own M by columns, memory of |S|), nu+ from its impulses,
 *         test every set of O; the violated ones join S (warm start: this round's basis, the
 *         joined sets' unknowns as their completion left them: impulses nonbasic, a slack
 *         basic where its completion c > 0, "Warm-start bytes" below), until none is
 *         violated.
 * S only grows, so the loop ends within |island| rounds; it is bounded by SCREEN_ROUNDS. An
 * island whose S holds more than half of its unknowns (at S_0, or as it grows) is solved
 * whole: screening would save little there, and the degenerate LCPs of settled heaps have
 * many answers, among which a screened solve may pick another vertex than the whole one
 * (measured on heap20: S_0 holds 35-60 % of the unknowns and grows to ~75 % of the sets;
 * screened without the bound on S's growth, its PEG run took 99 470 pivots in 100 steps
 * instead of 1 212, with 4 fallback steps).
 *
 * Touching within the acceptance (the give-up predicted at S_0). A set of O whose p row at the
 * free motion is open by no more than the LCP resolves, 0 < w_p(nu*) <= tol ||q||_inf (tol =
 * residual_tol: a row of that size is a zero to the acceptance), is touching at relative rest
 * up to rounding; any impulse of S that moves one of its bodies toward the other closes it.
 * Such sets on a body that a set of S_0 acts on (which S's impulses may move) are counted
 * with S_0 for the half bound only (S_0 itself is unchanged): when they would take it past
 * half the island is solved whole at once, without the round whose answer would be thrown
 * away. A prediction, not a proof: a counted set whose bodies S's impulses leave at relative
 * rest stays open, and an island that would have been screened with it is then solved whole
 * (the same exact answer as without screening, not faster). Measured: heap20's cold first step (no warm basis) has S_0 = 47 % of
 * its 678 unknowns (standard; PEG 42 % of 727) and 21 (23) omitted sets at w_p(nu*) ~ 1e-14,
 * all of which joined after round 0 (211 pivots), with others, taking S to 70 % (63 %) and the
 * island whole; counted, they take S_0 past half and the round is not run. The crash wall's
 * omitted sets (the 1 mm joints between the bricks of a row) are open by 1e-2 - 1e-1 m/s at
 * every resting step, so its screening is unchanged. Then, and when a round's LCP is not solved, the
 * whole island is solved as without screening (peg_mlcp.c solve_islands continues as before),
 * from the caller's basis, and with the shared pivot budget as it was before screening (the
 * rounds' pivots are not charged, so without a clock deadline the answer is the unscreened
 * one bit for bit; the rounds' time is spent, at most SCREEN_ROUNDS solves of at most half
 * the island each, and a deadline, options' max_seconds or the budget's clock, sees it: the
 * whole solve may then stop earlier than it would have unscreened; the rounds' pivots are
 * reported in the step's statistics). An empty S
 * (every gap open, bodies at relative rest: the falling convex ball) forms no matrix at all:
 * x = 0 with the completion.
 *
 * The gate: an island the primaries' reduction takes (pp_peg_primaries_may: the sticking
 * solve's size, no joint rows, rolling friction or compliance) whose S_0 is itself of the
 * sticking solve's size. S's LCP may then be a settled heap's degenerate PEG LCP, on which
 * Lemke wanders (heap100: S_0 2 094 of 4 452 unknowns, 62 753 pivots cold, 47 590 from the
 * reduction's basis, 5 916-13 898 a round from screening's own), or a resting wall's, on
 * which it does not (the crash demo's wall: S_0 1 300-1 870 of 5 272, 205-224 pivots cold or
 * from the reduction's basis, then 0 from its own; 57-669 as the ball nears). S_0's size does
 * not tell the two apart (34 % of the wall, 38-47 % of the heap); what does is friction: the
 * heap's answers hold 391 of its 391 loaded sets by friction (sum beta 0.26 of sum p, some at
 * the cone's edge), the wall's none (sum beta / sum p 2e-15). A contact held by friction is
 * the degenerate case of ST's LCP that the sticking solve exists for (lcp_sticking.c: the
 * friction of two sticking supports of one body shared in a polyhedron of answers, whose
 * vertex Lemke walks among). So:
 *  - cold (no warm basis, the first step): the reduction (Lemke on S would run from w basic:
 *    the heap's 62 753 pivots; the wall's 205 against the reduction's 0.13 s, once);
 *  - warm, most of the island's sets marked PP_PEG_SCREEN_CAPPED (below): the reduction, its
 *    answer marked again;
 *  - warm, the island's last answer (the caller's start, ws->z_start) holding most of its
 *    loaded sets by friction (held_by_friction): the reduction;
 *  - else screening, its rounds' pivots capped at n / SCREEN_LEMKE_CHEAP in all (no
 *    fallback); where the cap stops them the island goes to the reduction, whose answer
 *    carries PP_PEG_SCREEN_CAPPED on every unknown (so an island the prediction misses pays
 *    the capped round once, not every step; an answer of screening's or of the whole island's
 *    drops the mark, and the next step tries again). The cap keeps the prediction safe: a
 *    wrong "not held by friction" costs n / 4 pivots once, not Lemke's wandering.
 * Measured (docs/performance.md "The crash wall screened again"): the wall's step 0 by the
 * reduction, then screened (224 pivots at step 1, 0 at rest); heap100 by the reduction every
 * step, no round. Where a step's friction does not decide (the heap without its prediction),
 * the cap gave it up at 1 114-1 117 pivots (0.37 s) once and the mark kept it after.
 *
 * A partly known landing. The stepper starts a moving island warm only when every one of its
 * sets is known from the last step (stage_time_step.c: on the pouring scene's degenerate LCPs
 * a partial guess steered Lemke to other answers), and otherwise cold, its known sets' bytes
 * still in `basis`. The convex demo's step 209 (the landing's second step, ~34 000 unknowns)
 * meets new sets as the cells settle, so its S_0 (5 028 unknowns) was solved from w basic:
 * 5 811 pivots, then rounds of 5 352, 5 490 and 5 496 warm from it (docs/performance.md, "The
 * landing's clock"), though most of S_0's active sets were active at step 208. So an island of
 * at least PP_PEG_DECLINE_MIN_N unknowns that the caller starts cold with some known set
 * active (p basic in its bytes) is screened as a warm one: S_0 holds those sets, and the
 * rounds start from the bytes (the new sets' w basic). Any start is a start: Lemke's path
 * from it ends on an answer of S's LCP or gives the basis up for w basic (lcp.c), and the
 * answer is verified as every round's. An island with no known set active, and every island
 * below the size (the soak's, the pouring's, the heaps' moving islands), is screened as
 * before, bit for bit.
 *
 * Past the clock (the shared budget's deadline, lcp.c "The hard clock") no round with a
 * non-empty S starts, here or in the primaries' reduction below: its LCP would get no pivot,
 * only the fallback's answer, which is not an exact answer on S and so gives the island up
 * anyway, after S's matrix had been formed. The island is then solved whole, as without
 * screening, where the fallback's answer comes from the whole LCP (or, for an M too large to
 * sweep, z = 0 without forming it: peg_mlcp.c csc_assemble). Measured on the convex ball's
 * landing: a round started 0.1 s past the clock, then the primaries' reduced LCP (76 104
 * unknowns, 1.8e8 nonzeros) formed in 12 s and its sticking solve's setup 16 s more
 * (docs/performance.md "A hard clock").
 *
 * Acceptance, as every solve's (pegplus/lcp.h): rel(z) = max_i |min(z_i, w_i)| / s_i with
 * s_i = |q_i| + (sum_j |M_ij|) ||z||_inf, and r(z) <= 1e-4 ||q||_inf. For the rows of S,
 * min(z_i, w_i) is S's own, and the whole island's s_i is at least S's (more columns, larger
 * ||z||), so S's rel(z) bounds them. For the rows of O, s_i is bounded below by |q_i| +
 * ||z||_inf times the row's own unit entries (E_I1, E_I2, E, U's terms), and |min(z_i, w_i)|
 * is 0 on a row with z_i = 0, w_i >= 0 (a p row is required >= 0 exactly: no tolerance on a
 * closing gap), a rounding on a completed row. The island's result reports the larger of the
 * two bounds; a set whose completed rows fail it joins S like a violated one.
 *
 * Load sharing (lcp_load_sharing.c) on a screened answer, where solve_islands would run it on
 * the island (pp_peg_may_share): on S's LCP, as on any island by columns (the compliant basis
 * kept in bit 1 first, else after Lemke's answer). Its limit z0 solves LCP(M_SS, q_S), so
 * (a) holds; (b) holds as verified where z0 changes impulses only (the same velocities,
 * PP_LOAD_SHARED_IMPULSES), and is verified again at z0's velocities otherwise: a violated
 * set there keeps Lemke's answer on S (counted as kept), it does not grow S.
 *
 * Warm-start bytes (basis, bit 0: z_i basic) of an omitted set: impulses nonbasic (p, beta,
 * g+- and the sigma and s bounds: w basic), a slack basic where its completion is > 0: a
 * complementary basis with the set's block nonsingular (tril(ones) on the basic slacks), and
 * the basis of the answer whenever no completed sigma or s is > 0. Screening writes bit 0 only;
 * bits 1 and 2 (load sharing's compliant basis and "ran from this basis", peg_lcp_internal.h)
 * come from load sharing on S for S's unknowns, and stay the caller's on O's (bit 1 cleared
 * there where S's compliant basis was found: O's impulses are nonbasic in it).
 */
#include "geometry_internal.h"
#include "islands_internal.h"
#include "lcp_internal.h"
#include "peg_lcp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds of the outer loop before the whole island is solved instead. Each round adds at
 * least one set. Measured (docs/performance.md "Constraint screening of large islands"): the
 * resting crash wall settles in 1-2 rounds, a push down a row of boxes in one round per box it
 * moves (check_peg_screen); the crash impact and the convex ball's landing were still growing
 * S at their 3rd-4th round, each a long Lemke solve. */
#define SCREEN_ROUNDS 16

/* The gate's cap ("The gate" at the top): the rounds of an island the reduction takes pivot
 * at most n / SCREEN_LEMKE_CHEAP times in all, n the island's unknowns, as the sticking solve
 * is not tried where Lemke's warm solve took at most that (peg_mlcp.c STICK_LEMKE_CHEAP). */
#define SCREEN_LEMKE_CHEAP 4
static int screen_lemke_cheap = SCREEN_LEMKE_CHEAP;

int pp_peg_screen_lemke_cheap(int divisor)
{
    const int previous = screen_lemke_cheap;
    if (divisor >= 1) screen_lemke_cheap = divisor; /* else unchanged: n / 0 is no cap */
    return previous;
}

/* Known sets of a large moving island started cold ("A partly known landing" at the top): the
 * island's unknowns from which the caller's bytes of its known sets start screening's rounds.
 * The size of the islands PEG declines (PP_PEG_DECLINE_MIN_N, peg_lcp_internal.h): above
 * every island of the soak, the pouring and the heaps' moving islands. */
static int screen_partial_min_n = PP_PEG_DECLINE_MIN_N;

int pp_peg_screen_partial_min_n(int n)
{
    const int previous = screen_partial_min_n;
    screen_partial_min_n = n;
    return previous;
}

static int screening = 1;

int pp_peg_screening(int on)
{
    int previous = screening;
    screening = on != 0;
    return previous;
}

/* The screen's scratch, grown to the problem and kept with the workspace. */
struct pp_peg_screen {
    int sets_capacity, bodies_capacity, n_capacity, dense_capacity;
    int *position, *slack, *friction, *roll; /* per set: S's layout (position -1: not in S) */
    int *list;               /* S's sets, increasing */
    unsigned char *in_s;     /* per set */
    double *dv;              /* 6 per body: nu+ - nu*, from S's impulses */
    unsigned char *pushed;   /* per body: 1 where a set of S_0 acts on it */
    unsigned char *basis;    /* whole-indexed: the working basis of the rounds */
    unsigned char *kept;     /* whole-indexed: the sticking solve's kept state of a reduced
                                island (pp_peg_primaries_island) */
    double *zl;              /* n: Lemke's answer on S while load sharing is checked */
    double *M;               /* S's dense M when |S| is below the sparse threshold */
};

/* The per-set arrays (grown together). */
static void free_set_arrays(struct pp_peg_screen *sc)
{
    free(sc->position);
    free(sc->slack);
    free(sc->friction);
    free(sc->roll);
    free(sc->list);
    free(sc->in_s);
}

void pp_peg_screen_free(pp_peg_workspace *ws)
{
    struct pp_peg_screen *sc = ws->screen;
    if (!sc) return;
    free_set_arrays(sc);
    free(sc->dv);
    free(sc->pushed);
    free(sc->basis);
    free(sc->kept);
    free(sc->zl);
    free(sc->M);
    free(sc);
    ws->screen = NULL;
}

static pp_status screen_reserve(pp_peg_workspace *ws, int ns, int nb, int n_whole)
{
    if (!ws->screen) {
        ws->screen = calloc(1, sizeof *ws->screen);
        if (!ws->screen) return PP_ERR_NO_MEMORY;
    }
    struct pp_peg_screen *sc = ws->screen;
    if (ns > sc->sets_capacity) {
        free_set_arrays(sc);
        sc->position = malloc((size_t)ns * sizeof(int));
        sc->slack = malloc((size_t)ns * sizeof(int));
        sc->friction = malloc((size_t)ns * sizeof(int));
        sc->roll = malloc((size_t)ns * sizeof(int));
        sc->list = malloc((size_t)ns * sizeof(int));
        sc->in_s = malloc((size_t)ns);
        sc->sets_capacity = 0;
        if (!sc->position || !sc->slack || !sc->friction || !sc->roll || !sc->list || !sc->in_s)
            return PP_ERR_NO_MEMORY;
        sc->sets_capacity = ns;
    }
    if (nb > sc->bodies_capacity) {
        free(sc->dv);
        free(sc->pushed);
        sc->dv = calloc((size_t)nb * 6, sizeof(double));
        sc->pushed = calloc((size_t)nb, 1);
        sc->bodies_capacity = 0;
        if (!sc->dv || !sc->pushed) return PP_ERR_NO_MEMORY;
        sc->bodies_capacity = nb;
    }
    if (n_whole > sc->n_capacity) {
        free(sc->basis);
        free(sc->kept);
        free(sc->zl);
        sc->basis = malloc((size_t)n_whole);
        sc->kept = malloc((size_t)n_whole);
        sc->zl = malloc((size_t)n_whole * sizeof *sc->zl);
        sc->n_capacity = 0;
        if (!sc->basis || !sc->kept || !sc->zl) return PP_ERR_NO_MEMORY;
        sc->n_capacity = n_whole;
    }
    return PP_OK;
}

/* G^T (nu+ - nu*) of Jacobian row `row` of set j (both sides). */
static double row_change(const pp_peg_workspace *ws, const double *dv, int j, int row)
{
    double rate = 0.0;
    for (int side = 0; side < 2; ++side) {
        const int b = ws->set_body[2 * j + side];
        if (b >= 0) rate += dot6(JAC(ws, row, side), &dv[6 * (size_t)b]);
    }
    return rate;
}

/* Set j of O at the velocities nu* + dv: its completion written into the whole z (and bit 0
 * of its basis bytes into `basis`, if given; the other bits left); returns 1 when the set is violated (w_p < 0, or a
 * completed row beyond the acceptance; with `touching`, also w_p = 0: a closed gap at
 * relative rest), and folds its rows into the residual bounds; its w_p in *gap, if given. */
static int complete_set(pp_peg_workspace *ws, const lcp_layout *whole, const double *dv, int j,
                        double tol, int touching, double *zmax, double *residual, double *rel,
                        double *min_w, double *complementarity, unsigned char *basis,
                        double *gap)
{
    const int k = whole->k, row0 = ws->row_first[j];
    const int kj = ws->slack_first[j + 1] - ws->slack_first[j];
    const double *q = ws->q;
    double *z = ws->z;
    int violated = 0;
    /* slacks, in order (E_I1 = tril(ones)) */
    double prefix = 0.0, wmin = INFINITY;
    for (int s = 1; s <= kj; ++s) {
        const int at = row_index(whole, j, k + s);
        const double a = q[at] + row_change(ws, dv, j, row0 + k + s);
        const double c = fmax(0.0, -(a + prefix));
        prefix += c;
        const double w = a + prefix;
        z[at] = c;
        if (basis) basis[at] = (unsigned char)((basis[at] & ~1) | (c > 0.0));
        *zmax = fmax(*zmax, c);
        const double m = fabs(fmin(c, w));
        /* s_i >= |q_i| + ||z|| (s ones of E_I1 in the row, the diagonal among them) */
        if (m > tol * (fabs(q[at]) + *zmax)) violated = 1;
        *residual = fmax(*residual, m);
        if (m > 0.0) *rel = fmax(*rel, m / (fabs(q[at]) + *zmax));
        wmin = fmin(wmin, w);
        *complementarity = fmax(*complementarity, fabs(c * w));
    }
    /* the p row: max over the members of the end gap over h, with p = 0 */
    const int p = row_index(whole, j, 0);
    const double wp = q[p] + row_change(ws, dv, j, row0) + prefix;
    z[p] = 0.0;
    if (basis) basis[p] &= (unsigned char)~1;
    if (wp < 0.0 || (touching && wp <= 0.0)) violated = 1;
    if (gap) *gap = wp;
    wmin = fmin(wmin, wp);
    /* friction: beta = 0, sigma the smallest bound keeping the beta rows >= 0 */
    if (whole->friction[j] >= 0) {
        double least = INFINITY;
        for (int l = 1; l <= k; ++l)
            least = fmin(least, q[row_index(whole, j, l)] + row_change(ws, dv, j, row0 + l));
        const double sigma = fmax(0.0, -least);
        for (int l = 1; l <= k; ++l) {
            const int at = row_index(whole, j, l);
            z[at] = 0.0;
            if (basis) basis[at] &= (unsigned char)~1;
        }
        const int sg = sigma_index(whole, j);
        z[sg] = sigma;
        if (basis) basis[sg] &= (unsigned char)~1;
        *zmax = fmax(*zmax, sigma);
        wmin = fmin(wmin, fmin(least + sigma, 0.0)); /* w_sigma = 0 */
    }
    /* rolling: g+- = 0, s_a the smallest bound keeping both torque rows >= 0 */
    for (int m = 0; m < ws->roll_axes[j]; ++m) {
        double change = 0.0;
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            if (b >= 0) change += pp_v3_dot(RJAC(ws, j, m, side) + 3, &dv[6 * (size_t)b + 3]);
        }
        const int at = roll_index(whole, j, 3 * m);
        const double wplus = q[at] + change, wminus = q[at + 1] - change;
        const double bound = fmax(0.0, fmax(-wplus, -wminus));
        z[at] = z[at + 1] = 0.0;
        z[at + 2] = bound;
        for (int u = 0; basis && u < 3; ++u) basis[at + u] &= (unsigned char)~1;
        *zmax = fmax(*zmax, bound);
        wmin = fmin(wmin, fmin(fmin(wplus, wminus) + bound, 0.0));
    }
    *min_w = fmin(*min_w, wmin);
    return violated;
}

/* The whole LCP's unknowns of set j: rows (p, beta, c), sigma, rolling. */
#define FOR_SET_UNKNOWNS(ws, L, j, at, body)                                                  \
    do {                                                                                    \
        for (int r_ = 0; r_ < (ws)->row_first[(j) + 1] - (ws)->row_first[j]; ++r_) {        \
            const int at = row_index((L), (j), r_);                                         \
            if (at >= 0) body;                                                              \
        }                                                                                   \
        if ((L)->friction[j] >= 0) {                                                        \
            const int at = sigma_index((L), (j));                                           \
            body;                                                                           \
        }                                                                                   \
        for (int u_ = 0; u_ < 3 * (ws)->roll_axes[j]; ++u_) {                               \
            const int at = roll_index((L), (j), u_);                                        \
            body;                                                                           \
        }                                                                                   \
    } while (0)

/* The bytes of set j copied between whole-indexed bases (from NULL: w basic), but for the
 * gate's PP_PEG_SCREEN_CAPPED: an answer of screening's does not carry it. */
static void set_bytes(const pp_peg_workspace *ws, const lcp_layout *whole, int j,
                      const unsigned char *from, unsigned char *to)
{
    FOR_SET_UNKNOWNS(ws, whole, j, at,
                     to[at] = from ? (unsigned char)(from[at] & ~PP_PEG_SCREEN_CAPPED) : 0);
}

/* z_motion = z on set j (no load sharing here: the bodies move with z). */
static void set_motion(pp_peg_workspace *ws, const lcp_layout *whole, int j)
{
    FOR_SET_UNKNOWNS(ws, whole, j, at, ws->z_motion[at] = ws->z[at]);
}

/* Unknowns of set j: p, its slacks, beta and sigma if frictional, its rolling unknowns. */
static int set_size(const pp_peg_workspace *ws, int j, int k)
{
    return 1 + (ws->slack_first[j + 1] - ws->slack_first[j]) +
           (ws->friction_slot[j] >= 0 ? k + 1 : 0) + 3 * ws->roll_axes[j];
}

/* nu+ - nu* of the island's bodies from S's impulses x (S's layout L): dv zeroed on every
 * body of the island first. */
static void velocity_change(const pp_peg_workspace *ws, const lcp_layout *L, const int *island,
                            int count, const int *list, int sets, const double *x, double *dv)
{
    const int k = L->k;
    for (int t = 0; t < count; ++t)
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * island[t] + side];
            if (b >= 0) memset(&dv[6 * (size_t)b], 0, 6 * sizeof *dv);
        }
    for (int t = 0; t < sets; ++t) {
        const int j = list[t];
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            if (b < 0 || !ws->coupled[b]) continue;
            double *v = &dv[6 * (size_t)b];
            for (int l = 0; l <= k; ++l) {
                const int col = col_index(L, j, l);
                const double xl = col >= 0 ? x[col] : 0.0;
                if (xl == 0.0) continue;
                const double *wg = WJAC(ws, k, j, l, side);
                for (int r = 0; r < 6; ++r) v[r] += wg[r] * xl;
            }
            for (int m = 0; m < ws->roll_axes[j]; ++m) {
                const int at = roll_index(L, j, 3 * m);
                const double xm = x[at] - x[at + 1];
                if (xm == 0.0) continue;
                const double *wg = RWJAC(ws, j, m, side);
                for (int r = 0; r < 6; ++r) v[r] += wg[r] * xm;
            }
        }
    }
}

/* The whole island's residual bounds of an answer: S's own (its solve's result r over its x,
 * ns_n unknowns) folded with the rows of every omitted set completed at nu* + dv. */
typedef struct screen_bounds {
    double zmax, residual, rel, min_w, compl;
} screen_bounds;

/* The whole island's r(z) within the data bound of every accepted answer (r(z) <=
 * PP_LCP_DATA_RESIDUAL ||q||_inf, lcp_internal.h; qmax the island's ||q||_inf), or 0. */
static int data_residual_within(const screen_bounds *b, double qmax)
{
    return !(b->residual > PP_LCP_DATA_RESIDUAL * qmax && b->residual > 0.0);
}

/* The island's ||q||_inf over its sets' rows (a frictionless set has no friction rows). */
static double island_qmax(const pp_peg_workspace *ws, const lcp_layout *whole,
                          const int *island, int count)
{
    double qmax = 0.0;
    for (int t = 0; t < count; ++t) {
        const int j = island[t];
        for (int r = 0; r < ws->row_first[j + 1] - ws->row_first[j]; ++r) {
            const int at = row_index(whole, j, r);
            if (at >= 0) qmax = fmax(qmax, fabs(ws->q[at]));
        }
    }
    return qmax;
}

/* The rounds' counters summed in total, into the answer's result. */
static void rounds_counters(pp_lcp_result *out, const pp_lcp_result *total)
{
    out->pivots = total->pivots;
    out->refactorisations = total->refactorisations;
    out->factor_work_exceeded = total->factor_work_exceeded;
    out->attempts = total->attempts;
    out->fallback_iterations = total->fallback_iterations;
    out->fallback_work = total->fallback_work;
    out->fallback_cut = total->fallback_cut;
    out->seconds = total->seconds;
}

/* 1 when the solves under `o` would start past their clock: the shared budget's deadline
 * (pp_lcp_deadline; a solve's own max_seconds starts with it). */
static int past_clock(const pp_lcp_options *o)
{
    const double now = pp_lcp_clock();
    return now > pp_lcp_deadline(o, now);
}

/* Given up: the shared budget's pivots and fallback work as they were before the rounds, so
 * that the whole island's solve after them is charged as without them (their time is spent:
 * a deadline sees it, and past it the fallback work is held to the clock's allowance,
 * pp_lcp_budget_past_clock). A round's fallback answer is thrown away with the round: at the
 * crash demo's impact (PEG, step 15) a round's fallback, started just past the clock, had
 * taken 1.4e8 of the allowance and left the whole island's 1.1e8 and its re-linearisation
 * iterate none (its M not formed, z = 0: r(z) 20 against 10.8 on main); given back, the
 * impact's answers are main's (docs/performance.md "A hard clock"). */
static void budget_restore(pp_lcp_budget *budget, const pp_lcp_budget *before)
{
    if (!budget) return;
    budget->pivots = before->pivots;
    budget->pivots_used = before->pivots_used;
    budget->exhausted = before->exhausted;
    budget->fallback_work = before->fallback_work;
    pp_lcp_budget_past_clock(budget);
}

/* Every set of O completed at nu* + dv (its z, and bit 0 of its bytes in wb) and folded into
 * *b, which starts from S's r; returns the number of violated sets, which join S (in_s,
 * *n_s) when `join`. */
static int complete_omitted(pp_peg_workspace *ws, const lcp_layout *whole, const int *island,
                            int count, const double *dv, double tol, const double *x, int ns_n,
                            const pp_lcp_result *r, screen_bounds *b, unsigned char *wb,
                            int join, int *n_s)
{
    struct pp_peg_screen *sc = ws->screen;
    b->zmax = 0.0;
    for (int a = 0; a < ns_n; ++a) b->zmax = fmax(b->zmax, x[a]);
    b->residual = r->residual;
    b->rel = r->relative_residual;
    b->min_w = ns_n > 0 ? r->min_w : INFINITY;
    b->compl = r->complementarity;
    int violated = 0;
    for (int t = 0; t < count; ++t) {
        const int j = island[t];
        if (sc->in_s[j]) continue;
        if (complete_set(ws, whole, dv, j, tol, 0, &b->zmax, &b->residual, &b->rel, &b->min_w,
                         &b->compl, wb, NULL)) {
            ++violated;
            if (join) {
                sc->in_s[j] = 1;
                *n_s += set_size(ws, j, whole->k);
            }
        }
    }
    return violated;
}

/* 1 when the island's last answer (the caller's start, ws->z_start: its sets' answer of the
 * last solve of this kind) holds most of its loaded sets by friction: p > tol max p, and
 * sum_l beta_l > tol mu p (both beyond the acceptance's resolution) on more than half of
 * them. The gate's prediction ("The gate" at the top). */
static int held_by_friction(const pp_peg_workspace *ws, const lcp_layout *whole,
                            const int *island, int count, double tol)
{
    const double *z = ws->z_start;
    if (!z) return 0;
    double pmax = 0.0;
    for (int t = 0; t < count; ++t) pmax = fmax(pmax, z[row_index(whole, island[t], 0)]);
    int loaded = 0, held = 0;
    for (int t = 0; t < count; ++t) {
        const int j = island[t];
        const double p = z[row_index(whole, j, 0)];
        if (!(p > tol * pmax)) continue;
        ++loaded;
        if (whole->friction[j] < 0) continue;
        double friction = 0.0;
        for (int l = 1; l <= whole->k; ++l) friction += z[row_index(whole, j, l)];
        held += friction > tol * ws->set_mu[j] * p;
    }
    return 2 * held > loaded;
}

pp_status pp_peg_screen_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                               const lcp_layout *whole, const int *island, int count, int s,
                               int n, const pp_lcp_options *options, unsigned char *basis,
                               pp_peg_stats *stats, pp_lcp_result *result, int *answered,
                               int *solved_n, unsigned char *mark, int may_decline,
                               int *first_contact)
{
    *answered = 0;
    *first_contact = 0;
    *solved_n = 0;
    *mark = 0;
    memset(result, 0, sizeof *result);
    if (!screening) return PP_OK;
    const int k = whole->k, nb = pp->base.body_count;
    pp_status st = screen_reserve(ws, ws->max_sets, nb, ws->n_max);
    if (st != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for screening an island of %d sets",
               count);
        return st;
    }
    struct pp_peg_screen *sc = ws->screen;
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *given = options ? options : &defaults;
    const double tol = given->residual_tol;
    /* the working basis, whole-indexed: the caller's bytes of the island, written back only
     * when screening answers (a whole solve after it starts from the caller's own); the
     * rounds write bit 0 only, bits 1 and 2 (load sharing's) stay the caller's until load
     * sharing runs on the answer */
    unsigned char *wb = sc->basis;
    double *dv = sc->dv;
    /* S_0: the sets violated at the free motion (dv = 0), and those active in the warm start
     * (p basic). complete_set writes only O's place in z: it is rewritten below. */
    velocity_change(ws, whole, island, count, island, 0, NULL, dv);
    const double qmax = island_qmax(ws, whole, island, count);
    /* a large moving island the caller starts cold, its known sets' bytes given ("A partly
     * known landing" at the top): they start the rounds */
    const int partial = !given->warm_start && basis && n >= screen_partial_min_n;
    double zmax = 0.0, residual = 0.0, rel = 0.0, min_w = INFINITY, compl = 0.0;
    int sets = 0, n_s = 0, slacks = 0, rolls = 0, warm_active = 0, approaching = 0;
    for (int t = 0; t < count; ++t) {
        const int j = island[t];
        set_bytes(ws, whole, j, basis, wb);
        slacks += ws->slack_first[j + 1] - ws->slack_first[j];
        rolls += ws->roll_axes[j];
        double gap = INFINITY;
        const int was = (given->warm_start || partial) && basis &&
                        (basis[row_index(whole, j, 0)] & 1);
        warm_active += was;
        const int active = was || complete_set(ws, whole, dv, j, tol, 1, &zmax, &residual, &rel,
                                               &min_w, &compl, NULL, &gap);
        approaching += !was && gap < -tol * qmax; /* closing at the free motion */
        /* 2: open by no more than the LCP resolves (the prediction below) */
        sc->in_s[j] = (unsigned char)(active ? 1 : gap <= tol * qmax ? 2 : 0);
        if (active) {
            ++sets;
            n_s += set_size(ws, j, k);
        }
    }
    /* A first contact (peg_mlcp.c, "Declined islands"): warm, no set active last time, some
     * set closing at the free motion (w_p < 0 beyond what the LCP resolves; a gap closed at
     * relative rest, w_p = 0, is not one): declined before any round */
    if (may_decline && given->warm_start && basis && warm_active == 0 && approaching > 0) {
        *first_contact = 1;
        return PP_OK;
    }
    /* The prediction of the give-up ("Touching within the acceptance" at the top): the sets
     * touching within the acceptance on a body S_0 acts on, counted with S_0. */
    int n_touching = 0;
    for (int t = 0; t < count; ++t)
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * island[t] + side];
            if (b >= 0) sc->pushed[b] = 0;
        }
    for (int t = 0; t < count; ++t)
        for (int side = 0; side < 2 && sc->in_s[island[t]] == 1; ++side) {
            const int b = ws->set_body[2 * island[t] + side];
            if (b >= 0 && ws->coupled[b]) sc->pushed[b] = 1; /* S_0 can move it */
        }
    for (int t = 0; t < count; ++t) {
        const int j = island[t];
        if (sc->in_s[j] != 2) continue;
        sc->in_s[j] = 0;
        const int a = ws->set_body[2 * j], b = ws->set_body[2 * j + 1];
        if ((a >= 0 && sc->pushed[a]) || (b >= 0 && sc->pushed[b])) n_touching += set_size(ws, j, k);
    }
    /* little to screen: the whole island, as without; also when the touching sets would take
     * S past half */
    if (2 * n_s > n || 2 * (n_s + n_touching) > n) return PP_OK;
    /* The gate ("The gate" at the top): a PEG island the primaries' reduction takes whose S_0
     * is itself of the sticking solve's size goes to the reduction (then, given up, whole as
     * without screening) cold, capped before (most of its sets marked: *mark, the bit its
     * answer carries) or held by friction; else it is screened, its rounds' pivots capped at
     * n / screen_lemke_cheap. */
    int cap = 0;
    if (n_s >= pp_peg_sticking_size() && pp_peg_primaries_may(ws, pp, n, slacks, 0, rolls)) {
        if (!given->warm_start || !basis) return PP_OK;
        int capped = 0;
        for (int t = 0; t < count; ++t)
            capped += (basis[row_index(whole, island[t], 0)] & PP_PEG_SCREEN_CAPPED) != 0;
        if (2 * capped > count) {
            *mark = PP_PEG_SCREEN_CAPPED;
            return PP_OK;
        }
        if (held_by_friction(ws, whole, island, count, tol)) return PP_OK;
        cap = n / screen_lemke_cheap > 0 ? n / screen_lemke_cheap : 1; /* 0 would be no cap */
    }
    /* load sharing on the answer where solve_islands would run it on the whole island */
    const int may_share = pp_peg_may_share(ws, pp, n, slacks, 0, rolls);
    /* the shared budget as it was: a screening that gives up is not charged (below) */
    pp_lcp_budget *budget = given->budget;
    const pp_lcp_budget budget_before = budget ? *budget : (pp_lcp_budget){0};
    pp_lcp_options opts = *given;
    /* the caller's start, or the known sets' bytes where one of them was active */
    opts.warm_start = given->warm_start || (partial && warm_active > 0);
    pp_lcp_result total; /* the rounds' counters, summed */
    memset(&total, 0, sizeof total);
    dense_store *d = ws->dense;
    for (int round = 0; round < SCREEN_ROUNDS; ++round) {
        /* S's layout, the island's: [p; c; beta; sigma; rolling] over S in set order */
        int K = 0, nf = 0, nr = 0, m = 0;
        for (int t = 0; t < count; ++t) {
            const int j = island[t];
            if (!sc->in_s[j]) {
                sc->position[j] = -1;
                sc->friction[j] = -1;
                continue;
            }
            sc->list[m] = j;
            sc->position[j] = m++;
            sc->slack[j] = K;
            K += ws->slack_first[j + 1] - ws->slack_first[j];
            sc->friction[j] = ws->friction_slot[j] >= 0 ? nf++ : -1;
            sc->roll[j] = nr;
            nr += 3 * ws->roll_axes[j];
        }
        const lcp_layout L = {m, K, nf, k, sc->position, sc->slack, sc->friction, nr, sc->roll};
        const int ns_n = layout_size(&L);
        /* no round's LCP past the clock ("Past the clock" at the top): the whole island */
        if (ns_n > 0 && past_clock(given)) break;
        /* the gate's cap, over the rounds: the solve's pivots over all its attempts (so it
         * stops there without the regularised retries) and no fallback; reached, the island
         * is given up and remembered */
        if (cap > 0 && ns_n > 0) {
            const int left = cap - total.pivots;
            if (left <= 0) {
                *mark = PP_PEG_SCREEN_CAPPED;
                break;
            }
            opts.max_total_pivots = left;
            opts.fallback = 0;
        }
        pp_lcp_result r;
        memset(&r, 0, sizeof r);
        r.status = PP_LCP_SOLVED;
        pp_lcp_csc A = {0, NULL, NULL, NULL};
        if (ns_n > 0) {
            st = pp_peg_island_reserve(ws, ns_n); /* logs its own failure */
            if (st != PP_OK) return st;
            pp_peg_island_map(ws, &L, whole, sc->list, m, d->island_map);
            for (int a = 0; a < ns_n; ++a) {
                d->island_q[a] = ws->q[d->island_map[a]];
                d->island_basis[a] = wb[d->island_map[a]] & 1;
            }
            /* the contact blocks and set slacks: as solve_islands' */
            pp_peg_contact_blocks(&L, sc->list, m, ns_n, d->island_blocks);
            opts.contact_block = d->island_blocks;
            opts.set_slack = K > 0 ? d->island_blocks + ns_n : NULL;
            st = pp_peg_csc_assemble(ws, pp, &L, sc->list, m, ns_n, &d->csc, &A);
            if (st != PP_OK) {
                pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for the columns of a screened "
                                     "LCP of %d unknowns", ns_n);
                return st;
            }
            if (ns_n >= PP_LCP_SPARSE_MIN_N) {
                st = pp_lcp_solve_csc(d->lcp, &A, d->island_q, &opts, d->island_basis,
                                      d->island_z, &r);
            } else { /* below the sparse solver's size: the same columns, dense */
                if (ns_n > sc->dense_capacity) {
                    free(sc->M);
                    sc->M = malloc((size_t)ns_n * ns_n * sizeof *sc->M);
                    sc->dense_capacity = sc->M ? ns_n : 0;
                    if (!sc->M) {
                        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for a screened LCP "
                                             "of %d unknowns", ns_n);
                        return PP_ERR_NO_MEMORY;
                    }
                }
                memset(sc->M, 0, (size_t)ns_n * ns_n * sizeof *sc->M);
                pp_lcp_csc_scatter(&A, sc->M);
                st = pp_lcp_solve(d->lcp, ns_n, sc->M, d->island_q, &opts, d->island_basis,
                                  d->island_z, &r);
            }
            pp_lcp_result_merge(&total, &r, 0);
            if (st != PP_OK && st != PP_ERR_SOLVER) return st;
            if (st != PP_OK) { /* not solved: the whole island, as without screening */
                if (cap > 0 && total.pivots >= cap) *mark = PP_PEG_SCREEN_CAPPED;
                break;
            }
            for (int a = 0; a < ns_n; ++a)
                wb[d->island_map[a]] =
                    (unsigned char)((wb[d->island_map[a]] & ~1) | (d->island_basis[a] & 1));
            /* the next round tries this round's rung first (lcp.c "The rung handed on") */
            opts.first_rung = r.epsilon;
        }
        /* O at nu+ = nu* + W G x_S */
        velocity_change(ws, &L, island, count, sc->list, m, d->island_z, dv);
        screen_bounds b;
        const int joined = complete_omitted(ws, whole, island, count, dv, tol, d->island_z,
                                            ns_n, &r, &b, wb, 1, &n_s);
        stats->screen_rounds += 1;
        if (joined > 0) {
            if (2 * n_s > n) break; /* most of the island can be active: solved whole */
            opts.warm_start = 1; /* the next round starts from this round's basis */
            continue;
        }
        /* settled: x_S with O's completion solves the whole island's LCP */
        if (!data_residual_within(&b, qmax)) break; /* not accepted: the whole */
        /* Load sharing on S's LCP (peg_mlcp.c pp_peg_share_screened), as solve_islands runs
         * it on an island by columns: its limit z0 solves LCP(M_SS, q_S); with only impulses
         * changed (PP_LOAD_SHARED_IMPULSES) the bodies' velocities are Lemke's, so O's rows
         * (b) hold as verified; otherwise nu+ is recomputed from z0 and every set of O
         * verified again, and z0 kept only if none is violated (else Lemke's answer,
         * counted as kept). */
        int outcome = -2; /* -2: not run; -1: a repeat (pp_peg_share_screened) */
        int keep_motion = 0;
        if (may_share && ns_n > 0) {
            const pp_lcp_result lemke = r;
            memcpy(sc->zl, d->island_z, (size_t)ns_n * sizeof *sc->zl);
            st = pp_peg_share_screened(ws, &L, sc->list, m, s, ns_n, &A, options, basis,
                                       round == 0 && r.warm_started, &r, &outcome);
            if (st != PP_OK) return st;
            keep_motion = outcome == PP_LOAD_SHARED_IMPULSES;
            if (outcome == PP_LOAD_SHARED || outcome == PP_LOAD_SHARED_IMPULSES) {
                /* nu+ from z0 (impulses only: Lemke's, as verified), the bounds from z0 */
                if (outcome == PP_LOAD_SHARED)
                    velocity_change(ws, &L, island, count, sc->list, m, d->island_z, dv);
                const int violated = complete_omitted(ws, whole, island, count, dv, tol,
                                                      d->island_z, ns_n, &r, &b, wb, 0, NULL);
                if (violated > 0 || !data_residual_within(&b, qmax)) {
                    /* Lemke's answer on S, and O completed at its velocities again */
                    memcpy(d->island_z, sc->zl, (size_t)ns_n * sizeof *sc->zl);
                    r = lemke;
                    for (int a = 0; a < ns_n; ++a)
                        d->island_basis[a] =
                            (unsigned char)((d->island_basis[a] & 1) | PP_PEG_SHARING_RAN);
                    velocity_change(ws, &L, island, count, sc->list, m, d->island_z, dv);
                    complete_omitted(ws, whole, island, count, dv, tol, d->island_z, ns_n, &r,
                                     &b, wb, 0, NULL);
                    outcome = PP_LOAD_KEPT;
                    keep_motion = 0;
                }
            }
            stats->load_shared +=
                outcome == PP_LOAD_SHARED || outcome == PP_LOAD_SHARED_IMPULSES;
            stats->load_kept += outcome == PP_LOAD_KEPT || outcome == -1;
            /* S's bytes whole (bits 0-2); O's: nonbasic in the compliant basis found (bit 1
             * cleared), bit 2 as S's (load sharing ran on this answer) */
            for (int a = 0; a < ns_n; ++a) wb[d->island_map[a]] = d->island_basis[a];
            const int found = d->load.found && outcome != PP_LOAD_KEPT && outcome != -1;
            const unsigned char ran = (unsigned char)(d->island_basis[0] & PP_PEG_SHARING_RAN);
            for (int t = 0; t < count; ++t) {
                const int j = island[t];
                if (sc->in_s[j]) continue;
                FOR_SET_UNKNOWNS(ws, whole, j, at,
                                 wb[at] = (unsigned char)((wb[at] & ~(PP_PEG_SHARING_RAN |
                                                                      (found ? 2 : 0))) |
                                                          ran));
            }
        }
        for (int a = 0; a < ns_n; ++a) {
            ws->z[d->island_map[a]] = d->island_z[a];
            ws->z_motion[d->island_map[a]] = keep_motion ? sc->zl[a] : d->island_z[a];
        }
        for (int t = 0; t < count; ++t) {
            if (!sc->in_s[island[t]]) set_motion(ws, whole, island[t]);
            if (basis) set_bytes(ws, whole, island[t], wb, basis);
        }
        /* the final round's result (with load sharing's residuals where it changed the
         * answer), the rounds' counters summed, the whole island's residual bounds */
        pp_lcp_result out = r;
        rounds_counters(&out, &total);
        out.status = PP_LCP_SOLVED;
        out.residual = b.residual;
        out.relative_residual = b.rel;
        out.min_w = b.min_w;
        out.complementarity = b.compl;
        out.min_z = ns_n > 0 ? fmin(r.min_z, 0.0) : 0.0;
        out.warm_started = round == 0 && r.warm_started;
        *result = out;
        *answered = 1;
        *solved_n = ns_n;
        stats->screened_sets += count - m;
        stats->screened_unknowns += n - ns_n;
        return PP_OK;
    }
    /* Given up: the whole island is solved as without screening, from the caller's basis and
     * budget (the rounds' pivots are not charged to it, so that without a clock deadline its
     * answer is the unscreened one bit for bit; their time is spent, and a deadline
     * (max_seconds, the budget's clock) sees it). The rounds' counters go back in `result`
     * for the step's statistics. */
    budget_restore(budget, &budget_before);
    *result = total;
    ++stats->screen_whole;
    return PP_OK;
}

/*
 * PEG's sets reduced to their primaries: a large island with PEG I/X sets (K > 0) answered
 * through the sticking solve (lcp_sticking.c), as the standard model's large islands are.
 *
 * Why. The sticking solve takes a Stewart-Trinkle LCP (impulses and sliding speeds, K = 0):
 * a settled heap's answer through the convex problem of its sticking contacts. An island with
 * I/X sets has slack rows (Eqs 39-40), whose LCP is not of that form (E_I1 in the c rows and
 * E_I2 in the p rows are no symmetric pair, and max_s g_s >= 0 is not a convex condition on
 * nu), so it went to Lemke on the whole PEG LCP.
 *
 * The reduction. A working list S of the island's sets, the others O (omitted, p = 0, as in
 * screening). With the slacks of S held at c = 0, the LCP left on S's [p; beta; sigma] is the
 * principal submatrix of the island's LCP there: Eq 40 without E_I2 c is Eq 24 of the primary
 * alone, i.e. the Stewart-Trinkle LCP of S's primaries as U sets (the layout without slacks:
 * lcp_layout's slack NULL), which the sticking solve takes. With nu+ the velocities of its
 * answer (p, beta, sigma), the slacks of every set of S are completed as an omitted set's are
 * (complete_set: a_s = g_iota - g_s at nu+, the c row's q and body terms):
 *     c_s = max(0, -(a_s + sum_{r<s} c_r)),   s = 1..k_j in order,
 * so every c row holds with c_s w_c_s = 0. The beta and sigma rows are the reduced LCP's own
 * (no slack enters them), and the p row becomes w_p = g_iota + sum_s c_s = max_s g_s >=
 * g_iota >= 0 (Lemmas 1.1/1.2). So the completed answer solves the island's PEG LCP on S iff
 * every set of S with p > 0 has sum_s c_s = 0: where a set carries a load its max is decided
 * by its primary (no secondary's linearised gap opens beyond the primary's, g_s <= g_iota =
 * 0). A set without load holds whatever its secondaries do (w_p >= 0, p = 0). And O's rows
 * hold as in screening (b) where every set of O has max_m g_m(nu+) >= 0.
 *
 * Which sets are omitted. A set of S loaded while a secondary opens beyond its primary (p > 0
 * and sum_s c_s > 0, each beyond the acceptance's resolution) asks the reduction for a
 * stronger law than PEG's: the primary pushing a vertex that can leave through another face;
 * PEG's answer has p = 0 there. Such sets join O, and the reduced LCP is solved again
 * (PRIMARY_ROUNDS at most). Before the first round, O_0 holds the sets that this decides at
 * rest: a secondary open beyond the primary, with the set open, at zero relative velocity
 * (the psi/h terms alone: max_s psi_s > psi_iota and max_s psi_s > 0, by more than the
 * acceptance resolves, tol ||q||_inf). At the re-linearisation's predicted poses the sets are
 * built unreduced and kept from every iterate (ST96 §4), and a set's primary, chosen where it
 * was built, is no longer its largest gap: heap50's iterates had 110 loaded primaries that
 * must slide when all were held (the sticking solve refused).
 *
 * The answer: S's reduced answer with the completions, O's sets completed with zero impulse;
 * it is checked on the island's own LCP (its matrix by columns, assembled once the rounds have
 * settled) by the acceptance of every solve (pp_lcp_csc_accept: rel(z) <= residual_tol, r(z)
 * <= PP_LCP_DATA_RESIDUAL ||q||_inf): not a test of its own. Where it is refused, where the
 * sticking solve does not answer, where a set of O is violated (max_m g_m(nu+) < 0: its
 * secondary decides a closed gap, which a primary's U row cannot say), or when the rounds
 * run out, the island is solved as before (Lemke on its PEG LCP from the caller's basis and
 * with the shared pivot budget as it was: the rounds' pivots are reported, not charged, so
 * without a clock deadline that answer is the one without the reduction).
 *
 * Warm-start bytes: S's unknowns as the sticking solve wrote them (bit 0 and its kept active
 * set's bits), a slack basic where completed > 0; O's as screening writes an omitted set's
 * (impulses nonbasic, a slack basic where completed > 0), other bits cleared.
 */
#define PRIMARY_ROUNDS 4

/* Set j of S (layout L, its reduced answer x) at nu* + dv: its slacks completed into the whole
 * z (and bit 0 of their bytes into wb); returns 1 when the set is loaded while a secondary
 * opens beyond its primary (both beyond tol of the p row's scale |q_p| + zmax). */
static int complete_slacks(pp_peg_workspace *ws, const lcp_layout *whole, const lcp_layout *L,
                           const double *x, const double *dv, int j, double tol, double zmax,
                           unsigned char *wb)
{
    const int k = whole->k, row0 = ws->row_first[j];
    const int kj = ws->slack_first[j + 1] - ws->slack_first[j];
    double prefix = 0.0;
    for (int s = 1; s <= kj; ++s) {
        const int at = row_index(whole, j, k + s);
        const double a = ws->q[at] + row_change(ws, dv, j, row0 + k + s);
        const double c = fmax(0.0, -(a + prefix));
        prefix += c;
        ws->z[at] = c;
        wb[at] = (unsigned char)(c > 0.0);
    }
    const double p = x[row_index(L, j, 0)];
    const double scale = fabs(ws->q[row_index(whole, j, 0)]) + zmax;
    return fmin(p, prefix) > tol * scale;
}

pp_status pp_peg_primaries_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                                  const lcp_layout *whole, const lcp_layout *island,
                                  const int *list, int count, int n,
                                  const pp_lcp_options *options, unsigned char *basis,
                                  unsigned char mark, pp_peg_stats *stats,
                                  pp_lcp_result *result, int *answered)
{
    *answered = 0;
    memset(result, 0, sizeof *result);
    const int k = whole->k, nb = pp->base.body_count;
    pp_status st = screen_reserve(ws, ws->max_sets, nb, ws->n_max);
    if (st != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for an island of %d sets", count);
        return st;
    }
    struct pp_peg_screen *sc = ws->screen;
    dense_store *d = ws->dense;
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *given = options ? options : &defaults;
    const double tol = given->residual_tol;
    unsigned char *wb = sc->basis;
    double *dv = sc->dv;
    const double qmax = island_qmax(ws, whole, list, count);
    /* O_0: a secondary open beyond the primary at zero relative velocity, the set open */
    for (int t = 0; t < count; ++t) {
        const int j = list[t], row0 = ws->row_first[j];
        const int kj = ws->slack_first[j + 1] - ws->slack_first[j];
        double prefix = 0.0;
        for (int s = 1; s <= kj; ++s)
            prefix += fmax(0.0, -(ws->rhs[row0 + k + s] + prefix));
        sc->in_s[j] = !(prefix > tol * qmax && ws->rhs[row0] + prefix > tol * qmax);
    }
    /* the shared budget as it was: where the reduction gives up it is not charged (as
     * screening's rounds are not) */
    pp_lcp_budget *budget = given->budget;
    const pp_lcp_budget budget_before = budget ? *budget : (pp_lcp_budget){0};
    pp_lcp_result total;
    memset(&total, 0, sizeof total);
    for (int round = 0; round < PRIMARY_ROUNDS; ++round) {
        /* S's reduced layout: [p; beta; sigma] over S in set order, no slacks */
        int m = 0, nf = 0;
        for (int t = 0; t < count; ++t) {
            const int j = list[t];
            sc->position[j] = sc->friction[j] = -1;
            if (!sc->in_s[j]) continue;
            sc->list[m] = j;
            sc->position[j] = m++;
            if (ws->friction_slot[j] >= 0) sc->friction[j] = nf++;
        }
        const lcp_layout L = {m, 0, nf, k, sc->position, NULL, sc->friction, 0, sc->roll};
        const int ns_n = layout_size(&L);
        if (ns_n < PP_LCP_SPARSE_MIN_N) break;
        if (past_clock(given)) break; /* no round past the clock: the island as before */
        /* The sticking solve's kept state (its active set and sliding contacts, bits 0, 3, 4
         * of the bytes its last answer wrote) where S's sets had one: the sets that had none
         * (new at this pose, or omitted last time) start inactive and sticking (impulses
         * nonbasic), and the kept state is tried although the caller's warm start is off.
         * The caller's rule (a moving island tries a basis only where every set is known)
         * keeps Lemke on a degenerate PEG LCP from vertices a partial guess steers it to;
         * here the start only seeds the sticking solve, whose answer is accepted on the
         * island's LCP as any other. heap50's sets change from step to step (53-72 I/X
         * sets), so its reduced islands were never warm: the interior stage, without the
         * sliding contacts the last answer found, ran out of slide rounds and Lemke on the
         * convex problem ran cold (9 600-9 800 pivots) where from the completed state it
         * took 1 200-1 500 (docs/performance.md, "PEG's heaps through the sticking solve"). */
        int known = 0;
        for (int t = 0; basis && t < m; ++t)
            known += (basis[row_index(whole, sc->list[t], 0)] & PP_PEG_STICKING) != 0;
        pp_lcp_options so = *given;
        const unsigned char *start = basis;
        if (known > 0 && known < m) {
            for (int t = 0; t < m; ++t) {
                const int j = sc->list[t];
                const int have = (basis[row_index(whole, j, 0)] & PP_PEG_STICKING) != 0;
                FOR_SET_UNKNOWNS(ws, whole, j, at,
                                 sc->kept[at] = have ? basis[at] : PP_PEG_STICKING);
            }
            start = sc->kept;
            so.warm_start = 1;
        } else if (known == m && m > 0) {
            so.warm_start = 1;
        }
        pp_lcp_result r;
        int solved = 0;
        st = pp_peg_primaries_solve(ws, pp, whole, &L, sc->list, m, ns_n, &so, start, &r,
                                    &solved);
        pp_lcp_result_merge(&total, &r, 0);
        if (st != PP_OK) return st;
        if (!solved) break;
        /* nu+ - nu*, S's slacks completed, and the loaded sets a secondary opens: to O */
        velocity_change(ws, &L, list, count, sc->list, m, d->island_z, dv);
        double zmax = 0.0;
        for (int a = 0; a < ns_n; ++a) zmax = fmax(zmax, d->island_z[a]);
        int joined = 0;
        for (int t = 0; t < m; ++t) {
            const int j = sc->list[t];
            if (ws->slack_first[j + 1] > ws->slack_first[j] &&
                complete_slacks(ws, whole, &L, d->island_z, dv, j, tol, zmax, wb)) {
                sc->in_s[j] = 0;
                ++joined;
            }
        }
        if (joined > 0) continue;
        /* O completed with zero impulse: every set's max_m g_m(nu+) >= 0, else given up */
        double residual = 0.0, rel = 0.0, min_w = INFINITY, compl = 0.0;
        int violated = 0;
        for (int t = 0; t < count && !violated; ++t) {
            const int j = list[t];
            if (sc->in_s[j]) continue;
            set_bytes(ws, whole, j, NULL, wb);
            violated = complete_set(ws, whole, dv, j, tol, 0, &zmax, &residual, &rel, &min_w,
                                    &compl, wb, NULL);
        }
        if (violated) break;
        /* S's answer and bytes into the whole z and the working bytes */
        for (int a = 0; a < ns_n; ++a) {
            ws->z[d->island_map[a]] = d->island_z[a];
            wb[d->island_map[a]] = d->island_basis[a];
        }
        /* the island's own LCP, and the acceptance of every solve on it */
        st = pp_peg_island_reserve(ws, n);
        if (st != PP_OK) return st;
        pp_peg_island_map(ws, island, whole, list, count, d->island_map);
        for (int a = 0; a < n; ++a) {
            d->island_q[a] = ws->q[d->island_map[a]];
            d->island_z[a] = ws->z[d->island_map[a]];
        }
        pp_lcp_csc A = {0, NULL, NULL, NULL};
        st = pp_peg_csc_assemble(ws, pp, island, list, count, n, &d->csc, &A);
        if (st != PP_OK) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for the columns of an LCP of %d "
                                 "unknowns", n);
            return st;
        }
        pp_lcp_result measured = r;
        if (!pp_lcp_csc_accept(&A, d->island_q, 0.0, given, d->island_z, NULL, &measured))
            break;
        for (int a = 0; a < n; ++a) {
            const int at = d->island_map[a];
            ws->z[at] = ws->z_motion[at] = d->island_z[a];
            if (basis) basis[at] = (unsigned char)(wb[at] | mark);
        }
        rounds_counters(&measured, &total);
        measured.status = PP_LCP_SOLVED;
        measured.warm_started = round == 0 && r.warm_started;
        *result = measured;
        *answered = 1;
        stats->load_shared += 1; /* the sticking solve's answer, as solve_islands counts it */
        return PP_OK;
    }
    /* given up: the island is solved as before, from the caller's basis and budget (the
     * pivots spent here are reported in `result`, not charged; a deadline sees their time) */
    budget_restore(budget, &budget_before);
    *result = total;
    return PP_OK;
}
