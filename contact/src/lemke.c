/*
 * Lemke's method for LCP(M, q) (pegplus/lcp.h), as Stewart & Trinkle 1996 §4 use it, with
 * lexicographic degeneracy resolution, a warm start from the previous complementary basis
 * and the regularisation fallback of docs/references.md. The pivoting is the revised form
 * (an explicit basis inverse) with every quantity the pivot rule reads refined to working
 * accuracy, because the Stewart–Trinkle LCPs of contact piles drive the bases along Lemke's
 * path to condition numbers of 1e10 and more (see "Accuracy" below).
 *
 * One solve (solve_once), in order, each stage only when the previous one did not give a z
 * that passes the independent residual test:
 *   1. the given basis (warm start): one basis solve;
 *   2. Lemke from the given basis, at most n pivots;
 *   3. Lemke from w basic;
 *   4. Lemke from w basic in double-double arithmetic (the rescue, further below);
 * and pp_lcp_solve adds the regularised retries (docs/references.md) after that.
 *
 * Lemke (Cottle–Pang–Stone 1992, Algorithm 4.4.1). Append an artificial z0 with covering
 * vector d > 0 and solve
 *     w - M z - d z0 = q,   w, z, z0 >= 0,   w_i z_i = 0   (i = 1..n).            (L1)
 * With w basic the system is complementary but infeasible where q_i < 0. Let z0 enter at the
 * level z0 = max_i(-q_i / d_i); the row r attaining it leaves (w_r). From then on the basis
 * is feasible and "almost complementary": exactly one pair (w_r, z_r) is nonbasic, and the
 * complement of the variable that just left enters (complementary pivot rule). The
 * minimum-ratio test keeps feasibility; the path ends when z0 leaves (a solution), when
 * the entering column has no positive entry (a secondary ray), or at the pivot cap. It also
 * ends when z0's value reaches 0 without leaving (a degenerate step) and the basic point
 * passes the residual test: the basis is then complementary but for the nonbasic pair,
 * which is 0 on both sides, and z0 = 0 turns (L1) into w = M z + q. (Round-off keeps such a
 * z0 at 1e-14 rather than 0, and pivoting on from there used to end on a false ray; on a
 * basis with cond(B) near 1e16 a z0 of 1e-13 is not 0 yet, hence the test.)
 *
 * Revised form. The basis matrix B (n x n) has for column i the column of the basic
 * variable row_var[i] in [I | -M | -d] (w_j: e_j, z_j: -M_:j, z0: -d). A pivot reads
 *     x = B^-1 q     the basic solution (the explicit tableau's right-hand side),
 *     y = B^-1 a_e   the entering column,
 *     rows of B^-1   for the lexicographic rule, only when rows tie in the ratio test,
 * so B^-1 is kept explicitly (row-major, n^2 doubles) and multiplied by the pivot's
 * elementary matrix after each pivot (the product form: O(n^2) per pivot, like one block
 * of the explicit tableau T = B^-1 [I | -M | -d | q] that the other 2n columns are
 * computed from on demand).
 *
 * Lexicographic rule (CPS §4.9). Perturb q to q(e) = q + (e, e^2, ..., e^n) for a tiny
 * e > 0; the basic solution becomes (x_i, B^-1_i0, ..., B^-1_i,n-1) as a lexicographic
 * vector. The perturbed problem is nondegenerate (the rows of B^-1 are linearly
 * independent), so the path cannot revisit a basis. Its ratio test compares, among rows
 * with a positive entry y_i of the entering column, the vectors (x_i, B^-1_i:) / y_i
 * lexicographically and takes the smallest. The first pivot (z0 entering, column -d) must
 * leave every row lexicographically positive: with r the leaving row, row i becomes
 * (q_i - d_i q_r/d_r, e_i - (d_i/d_r) e_r), which for a tie in the first entry is
 * lexicographically positive only if i < r; so among rows attaining max(-q_i/d_i) the one
 * with the LARGEST index leaves. If z0's row is among the ties of the first entry it is
 * taken at once: z0 = 0 ends the path at a solution.
 *
 * Accuracy. In the Stewart–Trinkle LCP of a pile of boxes (measured on the 30-box pile of
 * examples/benchmark.c) J^T W J has rank about a third of its order: a face on a face is 4
 * contacts for 3 freedoms, the k friction directions span 2. Only the compliance (1e-10 of
 * the largest diagonal entry, pegplus/mlcp.h) lifts the null space, so bases along the path
 * have condition numbers of 1e10 and more and pivots of 1e-9 are legitimate. A quantity
 * computed from B in double precision then carries an error near cond(B) u ~ 1e-6 of its
 * size (u = 2^-53). With the explicit tableau that error accumulated (the basic residual
 * ||B x - q|| grew to 1e-6), basic variables went negative and the path ended on a false
 * secondary ray: the matrix is copositive and, with a compliance > 0, q lies in the dual of
 * SOL(0, M) (only z = (0, 0, sigma) has z^T M z = 0, and q_sigma = 0), which the argument of
 * CPS Theorem 4.4.12 uses to rule out a ray. That argument needs copositive-plus, which M is
 * not along a contact's sigma ((M + M^T) z = (mu sigma, 0, 0) != 0 there), and q_sigma = 0
 * puts q only on the boundary of that dual: on a settled heap of 50 boxes (n = 1 962) a path
 * with a healthy basis (error bound 1e-12) ended on a ray whose entering column has no
 * positive entry at all, no tolerance involved (docs/performance.md, "Cold solves of the
 * settled heaps"). So a ray here is not always a numerical artefact; the regularised retries
 * of pp_lcp_solve follow it. Recomputing x and y by LU at every pivot was not
 * enough: the forward error cond(B) u ~ 1e-6 lands in the friction-cone rows
 * mu p_n - sum_j beta_j >= 0, which J does not see, and spoils the residual of the answer.
 * So x, y and the tied rows are refined (mixed-precision iterative refinement): the
 * residual r = b - B v is computed with compensated products and sums (Ogita, Rump & Oishi
 * 2005, "Dot2": as accurate as in twice the working precision, then rounded), and
 * v += B^-1 r with the explicit inverse. Each step multiplies the error by
 * ||I - B^-1 B|| for the computed inverse (1e-6 ... 1e-2 here), so one to three steps
 * give v to working accuracy as long as cond(B) u < 1. When one step gains fewer than two
 * digits after at least REFACTOR_MIN_UPDATES pivots, or v does not settle, B^-1 is
 * recomputed from the basis columns (refactorise: LU of the dense part only).
 *
 * Ratio test on exact signs. With x accurate, the ratio x_i / y_i uses the sign of x_i as
 * computed (x_i <= 0 is a degenerate row, ratio 0). The explicit tableau had to count
 * |x_i| <= 1e-12 ||q|| as zero, and on the pile that let a row with x_i = 4e-17 and a
 * compliance-sized pivot y_i = 8e-10 take a step of 5e-8 that overshot z0's row.
 *
 * Warm start. A complementary basis B (z_i basic for i in B, w_i basic otherwise) gives
 * w_B = 0, z_N = 0, hence M_BB z_B = -q_B and w_N = M_NB z_B + q_N. When this z (LU with
 * partial pivoting, refined as above) is a solution by the independent residual, no pivot
 * is needed. The same solve "polishes" Lemke's final basis; the better of the two z by
 * residual is kept. When the basis is not a solution (some x_i < 0), Lemke starts from it
 * with the covering vector d = B e: then B^-1 (-d) = -e, z0 entering at max_i(-x_i) makes
 * every basic variable >= 0 in one pivot, and the path goes on as usual. This is Lemke's
 * method on the principal pivot transform of the LCP at B with covering vector e, which is
 * not always copositive, so a ray or n pivots send the solve on to Lemke from w basic.
 * On the pile, where contact sets change a little from step to step, it takes ~12 pivots
 * where Lemke from w basic takes ~37.
 */
#include "lcp_internal.h"

#include <string.h>

/* ratio_test: the solve's deadline passed while it formed the tied rows (below). */
#define RATIO_OUT_OF_TIME (-4)

/*
 * Minimum-ratio test on (x, y) (see the file comment). Returns the leaving row, -1 when no
 * entry of y is positive (ray), -2 when y is not finite, RATIO_OUT_OF_TIME when the clock ran
 * out while the rows of a large basis's tie were formed (each a BTRAN with the sparse factors
 * and a pass over M's rows, refined on demand: the part of a pivot that grows with the tie;
 * one pivot of the convex ball's screening rounds, 18 778 unknowns and 1.3e7 nonzeros, ended
 * 0.27 s past the deadline; lcp.c "The hard clock").
 */
static int ratio_test(const lemke_run *run, int z0_row)
{
    pp_lcp_workspace *ws = run->ws;
    const pp_lcp_options *o = run->o;
    const int n = run->n;
    const double *x = ws->x, *y = ws->y;
    double amax = pp_lcp_inf_norm(n, y);
    if (!(amax > 0.0) || !isfinite(amax)) return amax > 0.0 ? -2 : -1;
    double threshold = o->pivot_tol * amax;

    double theta_min = INFINITY;
    for (int i = 0; i < n; ++i) {
        if (!(y[i] > threshold)) continue;
        double theta = x[i] > 0.0 ? x[i] / y[i] : 0.0;
        if (theta < theta_min) theta_min = theta;
    }
    if (theta_min == INFINITY) return -1;

    int count = 0;
    double band = o->tie_tol * theta_min;
    for (int i = 0; i < n; ++i) {
        if (!(y[i] > threshold)) continue;
        double theta = x[i] > 0.0 ? x[i] / y[i] : 0.0;
        if (theta <= theta_min + band) ws->ties[count++] = i;
    }
    for (int t = 0; t < count; ++t)
        if (ws->ties[t] == z0_row) return z0_row;
    if (count == 1 || o->tie_break == PP_LCP_FIRST_INDEX) return ws->ties[0];

    /* Lexicographic: compare column j of the rows of B^-1, divided by y_i. The surviving
     * candidates are kept in index[] as positions into ties[] / tie_rows. The rows are
     * refined (O(n^2) each) only when the inverse was seen to drift: when the entering
     * column needed a first correction below LEX_REFINE_DRIFT, the inverse's rows are as
     * good (degenerate PEG problems tie dozens of rows at every pivot). When the inverse was
     * updated with unrefined entering columns (plain_updates), the comparison runs on its
     * rows first and is redone on refined rows only if a candidate was dropped by less than
     * LEX_ROW_ERROR of the largest row / y_i: a decision that close may be the rounding's. */
    const int candidates = count;
    int refine_rows = run->drift > LEX_REFINE_DRIFT;
    double *tie_rows = run->sparse ? pp_lcp_sparse_rows(run->sparse, candidates) : ws->tie_rows;
    if (!tie_rows) return -2; /* out of memory */
    for (;;) {
        double row_scale = 0.0;
        for (int t = 0; t < candidates; ++t) {
            double *row = &tie_rows[(size_t)t * n];
            if (run->sparse && pp_lcp_clock_out(ws)) return RATIO_OUT_OF_TIME;
            if (refine_rows)
                pp_lcp_refined_inverse_row(run, ws->ties[t], row);
            else
                pp_lcp_inverse_row_copy(run, ws->ties[t], row);
            ws->index[t] = t;
            row_scale = max_d(row_scale, pp_lcp_inf_norm(n, row) / y[ws->ties[t]]);
        }
        int check = !refine_rows && run->plain_updates > 0, close = 0;
        double certain = LEX_ROW_ERROR * row_scale;
        count = candidates;
        for (int j = 0; j < n && count > 1; ++j) {
            double vmin = INFINITY, vabs = 0.0;
            for (int t = 0; t < count; ++t) {
                int c = ws->index[t];
                double v = tie_rows[(size_t)c * n + j] / y[ws->ties[c]];
                if (v < vmin) vmin = v;
                if (fabs(v) > vabs) vabs = fabs(v);
            }
            double vband = o->tie_tol * vabs;
            int kept = 0;
            for (int t = 0; t < count; ++t) {
                int c = ws->index[t];
                double v = tie_rows[(size_t)c * n + j] / y[ws->ties[c]];
                if (v <= vmin + vband) ws->index[kept++] = c;
                else if (check && v <= vmin + vband + certain) close = 1;
            }
            count = kept;
        }
        if (!close) break;
        refine_rows = 1;
    }
    return ws->ties[ws->index[0]];
}

/* ---- Refinement on demand ----------------------------------------------------------------
 *
 * The refinement above makes every pivot decision that of exact arithmetic, at the price of
 * compensated residuals (with Dekker's product, ~20 flops an entry) for x and y at every
 * pivot: 40-50% of a solve on the pile (perf). Most decisions do not need it: a ratio test
 * whose winner beats every other candidate by more than the errors of x and y, with no
 * entry of y near the pivot threshold and no candidate x_i near 0, picks the row exact
 * arithmetic picks. So a pivot first forms y with the updated inverse alone and runs
 * ratio_test_certain, which returns the row only when the decision is certain under
 * error bounds
 *     |y - B^-1 a|  <=  e_y = Y_ERROR_SAFETY max(drift, n u) growth ||y||_inf,
 *     |x - B^-1 q|  <=  e_x (x_error, carried through the pivots),
 * where drift is the measured relative error of the last refined entering column and
 * growth the product of ||y|| / |y_r| over the pivots since (an elementary matrix with a
 * small pivot magnifies the inverse's error by about that). After a pivot on row r with
 * theta = x_r / y_r,
 *     e_theta = (e_x + |theta| e_y) / |y_r| + 2 u |theta|,
 *     e_x'    = max(e_theta, e_x + ||y|| e_theta + |theta| e_y) + 2 u (||x|| + |theta| ||y||).
 * Everything else (a tie, a degenerate row, a ray, z0 near 0, every REFINE_PERIOD pivots, or
 * e_x above X_ERROR_MAX ||x||) goes through the refined path as before: x and y refined,
 * the inverse recomputed when they drift, ties broken on refined rows. Before z is read
 * off, x is refined once more; the answer is judged by the independent residual anyway.
 * On the sparse path a decision refused here is first taken plain ("Plain pivots" below).
 */
#define RATIO_AMBIGUOUS (-3)
#define REFINE_PERIOD 4
#define Y_ERROR_SAFETY 100.0
#define X_ERROR_MAX 1e-8

/* ---- Plain pivots, refined on failure ---------------------------------------------------
 *
 * On the sparse path (n >= PP_LCP_SPARSE_MIN_N) the certified test above decides few pivots:
 * on the impact islands of ODE's crash and convex demos (2 000-5 000 unknowns) 0.3-5 %, the
 * rest refused by entries of y near the pivot threshold (above ~455 unknowns the bound e_y
 * exceeds the threshold itself: 8 558 of 8 575 refusals there) and by degenerate rows, so
 * nearly every pivot pays two compensated residuals and three FTRANs, two thirds of its time
 * (docs/performance.md, "The Lemke pivot on the impact islands", "The certified ratio test on
 * large islands"). There a path first runs
 * with plain pivots: when the certified test refuses and fewer than PLAIN_PERIOD pivots have
 * passed since x and y were last refined, the ordinary ratio_test decides on the unrefined x
 * and y (its lexicographic ties on the inverse's rows, re-checked on refined rows when close,
 * as for any inverse updated with unrefined columns); a ray or a y not finite is left to the
 * refined path to confirm. Every PLAIN_PERIOD-th pivot is refined as before.
 *
 * A plain decision is exact arithmetic's only when the errors of x and y are below the ratio
 * test's margins: with KLU's estimate of cond_1 of the factorised block, e_y ~ cond u times
 * the growth of the eta file, which on those islands (cond 1e3-6e8 at the refactorisations,
 * the growth since of 1e2-1e10) is far above the tie band (tie_tol = 1e-12); so plain pivots
 * follow a path of a perturbed problem (basic variables off by up to e_x, ties broken by the
 * rounding), not Lemke's exact path. Most problems do not mind: the path still ends where
 * z0 leaves, and the answer is judged by the residual test. Some do, and no estimate read
 * from the basis tells them apart: on heap50's cold LCP (n 2 016) plain pivots taken only where
 * cond u growth <= 1e-9 (42 and 26 on the first two attempts' paths, on bases of cond <= 1e5)
 * already send both to other ends, refused, and M + 1e-14 I solves at twice the time, where
 * the refined paths end on M + 1e-16 I's answer. So a plain path is
 * speculative, and what tells is its own outcome: it is given up, and the same path is run
 * again from its start with every decision refined (which is the path without plain pivots,
 * pivot for pivot), when
 *   - a refined x after plain pivots is infeasible beyond round-off: min_i x_i <
 *     -PLAIN_INFEASIBLE ||x||_inf (the path has left the feasible region it must stay in, by
 *     at least what the answer's residual test allows, residual_tol);
 *   - it ends other than SOLVED (a ray confirmed by the refined test, y or x not finite, the
 *     pivot cap, cycling), unless the clock or the pivot budget stopped it;
 *   - z0 left but the basic point misses the residual test (basic_point_solves).
 * The answer is then the plain path's, which passed the residual test, or the refined one's,
 * as before, bit for bit. A path from a given basis (the warm start, at most n pivots) given
 * up so (PP_LCP_NUMERICAL: infeasible, or a basic point that misses) is run again from the
 * same basis once, refined only as far as the plain path went and PLAIN_PERIOD pivots on
 * (the wrong decision lies there), plain after; when that fails too, or the given basis's path
 * ends on its cap or a ray, the attempt goes on to Lemke from w basic as it always did
 * (lcp.c, solve_once), and that path, plain first too, is the one run again refined
 * throughout. Measured on the convex landing's round 3 (4 788 unknowns, from round 2's
 * basis; docs/performance.md, "The landing's clock"): the plain path given up after 65
 * pivots on a basic point that missed, then the cold path's 4 923 pivots; run again refined to
 * pivot 73 it solves in 1 881, 2x less CPU, exact. The regularised
 * retries (M + eps I, ws->shift > 0) pivot refined: they run only after the attempt on M
 * failed, on an LCP whose paths have shown themselves delicate, and their answers are the
 * ones of today's ladder. Measured (docs/performance.md, "Plain pivots on the sparse path,
 * refined on failure"): cold solves of the convex landing's rounds (n 2 934-5 208) 2.1-2.4x
 * faster, of the crash's impact islands 1.3-2.4x, every answer exact; heap50's cold LCP
 * gives up its plain path on M after 208 pivots and ends on the refined paths' answer bit for
 * bit (M + 1e-16 I) for 208 more pivots (0.6 %). */
#define PLAIN_PERIOD 8
#define PLAIN_INFEASIBLE 1e-9

/* Refine x = B^-1 q; recompute the inverse when x does not settle (refactorise keeps the
 * better one). Sets x_error. Returns 0 when x is not finite. */
static int refresh_x(lemke_run *run)
{
    int settled;
    if (pp_lcp_refine(run, run->q, run->ws->x, &settled) == INFINITY) return 0;
    if (!settled && run->updates > 0) pp_lcp_refactorise(run); /* refines x with the better inverse */
    run->x_error = run->last_correction;
    return isfinite(run->x_error);
}

/* y = B^-1 a_v with the current inverse, not refined. Returns ||y||_inf (not finite: y is
 * not usable). */
static double entering_column_plain(lemke_run *run, int v)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    pp_lcp_load_column(run, v, ws->column);
    if (v < n && !run->sparse) {
        for (int i = 0; i < n; ++i) ws->y[i] = pp_lcp_inverse_row(run, i)[v];
    } else {
        pp_lcp_apply_inverse(run, ws->column, ws->y);
    }
    run->y_ready = v; /* pp_lcp_form_entering_column refines this y if it must */
    return pp_lcp_inf_norm(n, ws->y);
}

/* The minimum-ratio row when the decision is certain under the error bounds x_error and
 * y_error (see above): unique minimum with every other ratio apart by more than the tie
 * band and the errors, no y_i within y_error of the threshold, every candidate x_i > x_error.
 * RATIO_AMBIGUOUS otherwise (also for a ray: the refined path confirms it). */
static int ratio_test_certain(const lemke_run *run, double y_error)
{
    const pp_lcp_workspace *ws = run->ws;
    const pp_lcp_options *o = run->o;
    const int n = run->n;
    const double *x = ws->x, *y = ws->y;
    const double ex = run->x_error;
    double amax = pp_lcp_inf_norm(n, y);
    if (!(amax > 0.0) || !isfinite(amax)) return RATIO_AMBIGUOUS;
    double threshold = o->pivot_tol * amax, band = y_error * (1.0 + o->pivot_tol);
    int r = -1;
    double theta_r = INFINITY;
    for (int i = 0; i < n; ++i) {
        if (fabs(y[i] - threshold) <= band) return RATIO_AMBIGUOUS;
        if (y[i] < threshold) continue;
        if (!(x[i] > ex)) return RATIO_AMBIGUOUS; /* degenerate, or its sign uncertain */
        double theta = x[i] / y[i];
        if (theta < theta_r) {
            theta_r = theta;
            r = i;
        }
    }
    if (r < 0) return RATIO_AMBIGUOUS;
    double high = theta_r * (1.0 + ex / x[r] + y_error / y[r] + 4.0 * DBL_EPSILON) *
                  (1.0 + o->tie_tol);
    for (int i = 0; i < n; ++i) {
        if (i == r || y[i] < threshold) continue;
        double theta = x[i] / y[i];
        double low = theta * (1.0 - ex / x[i] - y_error / y[i] - 4.0 * DBL_EPSILON);
        if (!(low > high)) return RATIO_AMBIGUOUS;
    }
    return r;
}

/* The error bound of x after a pivot on row r with the entering column y (error y_error),
 * before the pivot is applied (see above). */
static void carry_x_error(lemke_run *run, int r, double y_error)
{
    const int n = run->n;
    const double *x = run->ws->x, *y = run->ws->y;
    double ynorm = pp_lcp_inf_norm(n, y), xnorm = pp_lcp_inf_norm(n, x);
    double theta = fabs(x[r] / y[r]);
    double e_theta = (run->x_error + theta * y_error) / fabs(y[r]) + 2.0 * DBL_EPSILON * theta;
    double e = run->x_error + ynorm * e_theta + theta * y_error;
    run->x_error = max_d(e_theta, e) + 2.0 * DBL_EPSILON * (xnorm + theta * ynorm);
    run->growth *= max_d(1.0, ynorm / fabs(y[r]));
}

/* Whether the refined x is feasible up to PLAIN_INFEASIBLE (see "Plain pivots"). */
static int plain_feasible(const lemke_run *run)
{
    const double *x = run->ws->x;
    const double floor = -PLAIN_INFEASIBLE * pp_lcp_inf_norm(run->n, x);
    for (int i = 0; i < run->n; ++i)
        if (x[i] < floor) return 0;
    return 1;
}

/* Whether the basic point with z0 taken as 0 passes the residual test on LCP(Me, q). A z0
 * of 1e-13 ||q|| is not 0 on a basis with cond(B) ~ 1e16 (the pile has them): there the
 * point can miss by 1e-8 and the path must go on to where z0 leaves. */
static int basic_point_solves(const lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    double *z = ws->z_try;
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    for (int i = 0; i < n; ++i) {
        int v = ws->row_var[i];
        if (v >= n && v < 2 * n) z[v - n] = fmax(ws->x[i], 0.0);
    }
    if (run->sparse) /* the same measure over M's nonzeros */
        return pp_lcp_sparse_relative_residual(run->sparse, run->q, z) <= run->o->residual_tol;
    pp_lcp_result check;
    pp_lcp_residual(n, run->M, run->q, z, NULL, &check);
    return check.relative_residual <= run->o->residual_tol;
}

/* z and the complementary basis from the final basic solution x (+ x_lo, the low parts of a
 * double-double x, when given): z_j = x_i where z_j is basic in row i, 0 elsewhere. Both are 0
 * when the pivoting did not end SOLVED. Returns status. */
pp_lcp_status pp_lcp_read_solution(const int *row_var, int n, pp_lcp_status status,
                                   const double *x, const double *x_lo, double *z,
                                   unsigned char *basis)
{
    for (int i = 0; i < n; ++i) {
        z[i] = 0.0;
        basis[i] = 0;
    }
    if (status != PP_LCP_SOLVED) return status;
    for (int i = 0; i < n; ++i) {
        int v = row_var[i];
        if (v >= n && v < 2 * n) {
            z[v - n] = x_lo ? x[i] + x_lo[i] : x[i];
            basis[v - n] = 1;
        }
    }
    return status;
}

/* ---- Cycling ---------------------------------------------------------------------------
 *
 * With the lexicographic rule exact Lemke cannot revisit a basis, but its tie tolerances can:
 * on a degenerate PEG column (n = 523, from the pouring test) the path went round for the
 * whole cap of 50 n + 100 pivots (~30 s) where M + 1e-12 I is solved in 483 pivots. So the
 * path keeps a hash of its state (XOR of one random key per basic variable, updated in O(1)
 * a pivot, and a key for the variable that just left, which fixes the next entering one: a
 * basis reached again from its other neighbour is not a loop) in a direct-mapped table, and
 * ends as PP_LCP_PIVOT_CAP once CYCLE_REPEATS states have come round again: the path is
 * going in circles, and pp_lcp_solve's retries get the time instead. One repeat is not
 * enough: the decisions at a tie depend on the rounding in x and B^-1, so a path can come
 * back to a state and leave it another way (a 924-unknown PEG column does, once, and is
 * solved 200 pivots later). (A direct-mapped table forgets some bases; a cycle repeats, so it is
 * found on a later round. A false alarm needs two bases with equal 64-bit hashes.) The
 * first-index rule, kept to show cycling, is left to cycle to the cap. */

#define CYCLE_REPEATS 16

static uint64_t variable_key(int v)
{
    uint64_t x = (uint64_t)v + 0x9E3779B97F4A7C15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Record basis `hash`; 1 when it was seen before on this path. */
static int basis_seen(pp_lcp_workspace *ws, uint64_t hash)
{
    uint64_t *slot = &ws->seen[hash & (PP_LCP_SEEN_BASES - 1)];
    if (*slot == hash) return 1;
    *slot = hash;
    return 0;
}

/* ---- Repair of a given start basis ---------------------------------------------------
 *
 * A start basis (the warm start, kept by constraint identity across steps and
 * re-linearisation iterates) is the solution basis of a neighbouring LCP. Its block
 * A = -M_DD (D its basic z) can be singular for this M: a set whose contacts were rebuilt,
 * a friction sigma basic with none of its betas (M_ss = 0), four supports of a face whose
 * normals are dependent but for the compliance. The refactorisation then fails and the
 * whole warm start was thrown away for Lemke from w basic: on ODE's boxstack demo
 * (pegplus-benchmark --scene boxstack, standard model) 189 of 818 warm starts failed so, at
 * 0 pivots, and their cold paths (350-850 pivots on 270-426 unknowns) were 90% of the LCP
 * time. Any nonsingular complementary basis is a valid start (the covering vector d = B e
 * makes it feasible in one pivot), so the basis is repaired instead, as a simplex code
 * repairs a singular crash basis: an LU of M_DD, column by column with partial pivoting,
 * leaves out each column whose largest remaining entry is below REPAIR_TOL of its own size
 * (numerically dependent on the columns before it), and those z_j go back to w_j basic
 * (row and column j leave D). Leaving rows out can break a column kept before, so the LU is
 * run again on the new D, at most REPAIR_ROUNDS times. The repaired basis keeps the part
 * of the old one that still stands; what was dropped Lemke brings back by pivoting. The LU
 * runs in the workspace's square arrays, so a basis with more than square_n basic z (a large
 * LCP's, |D| > PP_LCP_SPARSE_MIN_N - 1) is tried as it is, as before.
 * Only LCPs of PP_LCP_SPARSE_MIN_N unknowns or more are repaired: below it a cold path is
 * short and the repaired one measured longer. pegplus-benchmark --scene boxstack,islands10
 * --model standard,peg --steps 500 --lcp-budget 0, mean pivots a step (standard / PEG):
 * never repaired 166 / 130 on boxstack, 15 / 20 on islands10 (10 separate 3-box stacks,
 * islands of about 120 unknowns); always 83 / 105 and 31 / 108; from PP_LCP_SPARSE_MIN_N
 * 106 / 111 and 15 / 20, the fastest of the three on both scenes (real-time factor of
 * boxstack 5.5 / 3.4 against 2.7 / 2.5 never and 5.2 / 3.2 always). A smaller singular warm
 * basis still starts Lemke from w basic.
 * "Dependent" is judged at REPAIR_TOL = 1e-4 of the column's size, well above the compliance
 * (1e-10 max_i M_ii, pegplus/mlcp.h): columns that only the compliance keeps apart (four
 * corners of a face for three freedoms; the betas along one direction of two corners on a
 * line in that direction, whose columns of G coincide) go back to w basic too. At 1e-12
 * they stood, and on the boxstack demo's moving pile (pegplus-benchmark --scene boxstack
 * --model standard, steps 700-999, islands of 161-750 unknowns) 699 warm starts ended on a
 * ray after 1-3 pivots (a true ray of the transformed LCP: no positive entry in the entering
 * column) and 382 at 0 pivots (the start's refinement did not settle), each followed by
 * Lemke from w basic (~310 pivots); at 1e-4, along that run's own trajectory, 23 and 1, and
 * the whole scene 2-3.4 times fewer pivots a step under both models (docs/performance.md,
 * "The boxstack demo's pivots", with the measurements and what they leave unexplained). */
#define REPAIR_TOL 1e-4
#define REPAIR_ROUNDS 8

static int repair_round(pp_lcp_workspace *ws, int n, const double *Me, const pp_lcp_csc *csc,
                        unsigned char *basis)
{
    int *D = ws->index, m = 0;
    for (int i = 0; i < n; ++i)
        if (basis[i]) D[m++] = i;
    if (m == 0 || m > ws->square_n) return 0;
    double *A = ws->lu, *norm = ws->column;
    const double shift = n >= PP_LCP_SPARSE_MIN_N ? ws->shift : 0.0;
    if (csc) { /* M_DD gathered over the columns' nonzeros (place: row -> its place in D) */
        int *place = ws->pivots;
        for (int i = 0; i < n; ++i) place[i] = -1;
        for (int b = 0; b < m; ++b) place[D[b]] = b;
        for (int b = 0; b < m; ++b) {
            double *a = A + (size_t)b * m, big = 0.0;
            for (int r = 0; r < m; ++r) a[r] = 0.0;
            for (int t = csc->col_start[D[b]]; t < csc->col_start[D[b] + 1]; ++t) {
                const int r = place[csc->row_index[t]];
                if (r >= 0) a[r] = csc->values[t] + (r == b ? shift : 0.0);
            }
            for (int r = 0; r < m; ++r) big = max_d(big, fabs(a[r]));
            norm[b] = big;
        }
    }
    for (int b = 0; !csc && b < m; ++b) {
        const double *col = Me + (size_t)D[b] * n;
        double *a = A + (size_t)b * m, big = 0.0;
        for (int r = 0; r < m; ++r) {
            a[r] = col[D[r]] + (r == b ? shift : 0.0);
            big = max_d(big, fabs(a[r]));
        }
        norm[b] = big;
    }
    int k = 0, dropped = 0;
    for (int j = 0; j < m; ++j) {
        double *cj = A + (size_t)j * m, amax = 0.0;
        int p = k;
        for (int i = k; i < m; ++i)
            if (fabs(cj[i]) > amax) {
                amax = fabs(cj[i]);
                p = i;
            }
        if (!(amax > REPAIR_TOL * norm[j]) || !isfinite(amax)) {
            basis[D[j]] = 0; /* dependent on the columns before it */
            ++dropped;
            continue;
        }
        if (p != k)
            for (int c = j; c < m; ++c) {
                double t = A[k + (size_t)c * m];
                A[k + (size_t)c * m] = A[p + (size_t)c * m];
                A[p + (size_t)c * m] = t;
            }
        double inv = 1.0 / cj[k];
        for (int i = k + 1; i < m; ++i) cj[i] *= inv;
        for (int c = j + 1; c < m; ++c) {
            double *cc = A + (size_t)c * m, f = cc[k];
            if (f == 0.0) continue;
            for (int i = k + 1; i < m; ++i) cc[i] -= f * cj[i];
        }
        ++k;
    }
    return dropped;
}

/* The given basis `start` repaired into ws->start_basis (see above); returns it. */
static const unsigned char *repair_start(pp_lcp_workspace *ws, int n, const double *Me,
                                         const pp_lcp_csc *csc, const unsigned char *start)
{
    unsigned char *basis = ws->start_basis;
    memcpy(basis, start, (size_t)n);
    for (int round = 0; round < REPAIR_ROUNDS; ++round)
        if (repair_round(ws, n, Me, csc, basis) == 0) break;
    return basis;
}

/*
 * Lemke from w basic on LCP(Me, q). Fills z (unclamped) and basis; returns the status of
 * the pivoting alone (SOLVED = z0 left the basis or reached 0) and counts pivots and
 * refactorisations. `large`: the sparse basis of a large LCP (else the explicit inverse);
 * csc: Me by columns (then Me is NULL and large is 1). `plain` (large only; NULL: none):
 * plain pivots allowed from pivot `plain_from` on, and their count on return (see "Plain
 * pivots").
 */
static pp_lcp_status lemke_path(pp_lcp_workspace *ws, int n, const double *Me,
                                const pp_lcp_csc *csc, const double *q, const double *d,
                                const unsigned char *start, const pp_lcp_options *o,
                                int max_pivots, double *z, unsigned char *basis, int *pivots,
                                int *refactorisations, int large, int *plain, int plain_from)
{
    lemke_run run = {ws, n, Me, q, d, o, 0, 0, 0, 0.0, 0.0, 0.0, 0, 1.0, 0, 0, -1, NULL, csc};
    const int z0_var = 2 * n;
    const double z0_zero = o->tie_tol * pp_lcp_inf_norm(n, q);
    *pivots = 0;
    *refactorisations = 0;
    ws->cycled = 0;

    if (!start && large) { /* w basic: B = I (no dense part), x = q, B^-1 (-d) = -d */
        for (int i = 0; i < n; ++i) {
            ws->x[i] = q[i];
            ws->y[i] = -d[i];
            ws->row_var[i] = i;
        }
        run.sparse = pp_lcp_sparse_create(ws, n, Me, csc, d);
        if (!run.sparse || !pp_lcp_sparse_factor(run.sparse, ws->row_var)) {
            pp_lcp_sparse_destroy(run.sparse);
            return PP_LCP_NUMERICAL;
        }
        pp_lcp_sparse_swap(run.sparse);
    } else if (!start) { /* w basic: B = I, x = q, z0's column B^-1 (-d) = -d */
        for (int i = 0; i < n; ++i) {
            double *row = pp_lcp_inverse_row(&run, i);
            for (int k = 0; k < n; ++k) row[k] = 0.0;
            row[i] = 1.0;
            ws->x[i] = q[i];
            ws->y[i] = -d[i];
            ws->row_var[i] = i;
        }
    } else { /* the given complementary basis, with d = B e (see the file comment) */
        if (n >= PP_LCP_SPARSE_MIN_N) start = repair_start(ws, n, Me, csc, start); /* Repair */
        double *db = ws->start_covering;
        for (int k = 0; k < n; ++k) db[k] = start[k] ? 0.0 : 1.0;
        for (int i = 0; i < n; ++i) {
            ws->row_var[i] = start[i] ? n + i : i;
            if (!start[i]) continue;
            if (csc) { /* over the column's nonzeros (the others subtract 0) */
                for (int t = csc->col_start[i]; t < csc->col_start[i + 1]; ++t)
                    db[csc->row_index[t]] -= csc->values[t];
                continue;
            }
            const double *col = Me + (size_t)i * n;
            for (int k = 0; k < n; ++k) db[k] -= col[k];
        }
        run.d = db;
        if (large) {
            run.sparse = pp_lcp_sparse_create(ws, n, Me, csc, db);
            if (!run.sparse) return PP_LCP_NUMERICAL;
        }
        int settled = 0, ok = pp_lcp_refactorise(&run);
        *refactorisations = run.refactorisations;
        if (ok) ok = pp_lcp_form_entering_column(&run, z0_var, &settled) < INFINITY;
        if (!ok) { /* a start refused by the factorisation work bound ends as at the cap */
            const int work = run.sparse && pp_lcp_sparse_work_exceeded(run.sparse);
            ws->limits.factor_work_hits += work;
            pp_lcp_sparse_destroy(run.sparse);
            return work ? PP_LCP_PIVOT_CAP : PP_LCP_NUMERICAL;
        }
    }

    /* First pivot: z0 enters at the level max_i x_i / y_i over y_i < 0 (= max_i -q_i/d_i
     * from w basic), which makes every basic variable >= 0; ties -> largest index
     * (lexicographic) or smallest (first-index rule). */
    int r = -1;
    double best = -INFINITY;
    for (int i = 0; i < n; ++i) {
        if (!(ws->y[i] < 0.0)) continue;
        double level = ws->x[i] / ws->y[i];
        double band = o->tie_tol * fabs(best);
        if (r < 0 || level > best + band) {
            best = level;
            r = i;
        } else if (o->tie_break == PP_LCP_LEXICOGRAPHIC && level >= best - band) {
            r = i;
        }
    }
    if (r < 0 || !pp_lcp_pivot(&run, r)) {
        pp_lcp_sparse_destroy(run.sparse);
        return PP_LCP_NUMERICAL;
    }
    ++run.updates;
    *pivots = 1;
    int leaving = ws->row_var[r];
    ws->row_var[r] = z0_var;
    const int z0_row = r; /* a row changes its basic variable only when pivoted on, so z0
                             stays in this row until it leaves */
    pp_lcp_status status = PP_LCP_PIVOT_CAP;
    memset(ws->seen, 0, sizeof ws->seen);
    uint64_t hash = 0;
    int repeats = 0;
    for (int i = 0; i < n; ++i) hash ^= variable_key(ws->row_var[i]);
    basis_seen(ws, hash ^ variable_key(3 * n + 1 + leaving));

    run.x_error = 4.0 * DBL_EPSILON * pp_lcp_inf_norm(n, ws->x);
    run.growth = 1.0;
    int x_fresh = 1; /* x refined since the last pivot (or exact from w basic) */
    int plain_taken = 0, plain_unchecked = 0; /* plain pivots: all, since x was refined */

    for (;;) {
        if (ws->x[z0_row] <= z0_zero + run.x_error) {
            if (!x_fresh && !refresh_x(&run)) {
                status = PP_LCP_NUMERICAL;
                break;
            }
            x_fresh = 1;
            if (ws->x[z0_row] <= z0_zero && basic_point_solves(&run)) {
                status = PP_LCP_SOLVED; /* z0 = 0: the basic point solves the LCP */
                break;
            }
        }
        int entering = leaving < n ? leaving + n : leaving - n; /* complement */
        if (*pivots >= max_pivots) {
            status = PP_LCP_PIVOT_CAP;
            break;
        }
        if (run.sparse && pp_lcp_sparse_work_exceeded(run.sparse)) {
            /* a refactorisation was refused by PP_LCP_FACTOR_WORK (lcp_internal.h): the path
             * ends as at its pivot cap */
            ++ws->limits.factor_work_hits;
            status = PP_LCP_PIVOT_CAP;
            break;
        }
        if (!pp_lcp_take_pivot(ws)) {
            status = PP_LCP_BUDGET_EXHAUSTED;
            break;
        }
        if (run.sparse && pp_lcp_sparse_refactor_due(run.sparse)) {
            /* the eta file's length (lcp_sparse.c); refines x with the new factors */
            if (pp_lcp_refactorise(&run)) {
                x_fresh = 1;
                run.x_error = run.last_correction;
                run.since_refine = 0;
                run.growth = 1.0;
            }
        }
        r = RATIO_AMBIGUOUS;
        double y_error = 0.0;
        int plain_pivot = 0;
        if (run.since_refine < REFINE_PERIOD &&
            run.x_error <= X_ERROR_MAX * pp_lcp_inf_norm(n, ws->x)) {
            double ynorm = entering_column_plain(&run, entering);
            y_error = Y_ERROR_SAFETY * max_d(run.drift, n * DBL_EPSILON) * run.growth * ynorm;
            if (isfinite(y_error)) r = ratio_test_certain(&run, y_error);
        }
        if (r == RATIO_AMBIGUOUS && plain && run.since_refine < PLAIN_PERIOD &&
            *pivots >= plain_from) {
            if (run.y_ready != entering) entering_column_plain(&run, entering);
            r = ratio_test(&run, z0_row);
            if (r == -1 || r == -2) r = RATIO_AMBIGUOUS; /* the refined path confirms it */
            else if (r >= 0) plain_pivot = 1;
        }
        if (r == RATIO_AMBIGUOUS) {
            if (!x_fresh && !refresh_x(&run)) {
                status = PP_LCP_NUMERICAL;
                break;
            }
            x_fresh = 1;
            if (plain_unchecked && !plain_feasible(&run)) {
                status = PP_LCP_NUMERICAL; /* given up ("Plain pivots") */
                break;
            }
            plain_unchecked = 0;
            if (!pp_lcp_entering_column(&run, entering)) {
                status = PP_LCP_NUMERICAL;
                break;
            }
            y_error = run.last_correction;
            run.since_refine = 0;
            run.growth = 1.0;
            r = ratio_test(&run, z0_row);
        }
        if (r == -1) {
            status = PP_LCP_RAY_TERMINATION;
            break;
        }
        if (r == -2) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        if (r == RATIO_OUT_OF_TIME) {
            status = PP_LCP_BUDGET_EXHAUSTED;
            break;
        }
        run.y_ready = -1;
        carry_x_error(&run, r, y_error);
        if (run.since_refine > 0 || plain_pivot) ++run.plain_updates;
        plain_taken += plain_pivot;
        plain_unchecked += plain_pivot;
        if (!pp_lcp_pivot(&run, r)) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        ++*pivots;
        ++run.updates;
        ++run.since_refine;
        x_fresh = 0;
        leaving = ws->row_var[r];
        ws->row_var[r] = entering;
        hash ^= variable_key(leaving) ^ variable_key(entering);
        if (leaving != z0_var && o->tie_break == PP_LCP_LEXICOGRAPHIC &&
            basis_seen(ws, hash ^ variable_key(3 * n + 1 + leaving)) &&
            ++repeats > CYCLE_REPEATS) {
            status = PP_LCP_PIVOT_CAP; /* cycling: see above */
            ws->cycled = 1;
            break;
        }
        if (!isfinite(ws->x[r])) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        if (leaving == z0_var) {
            status = refresh_x(&run) ? PP_LCP_SOLVED : PP_LCP_NUMERICAL;
            if (status == PP_LCP_SOLVED && plain_taken && !basic_point_solves(&run))
                status = PP_LCP_NUMERICAL; /* given up ("Plain pivots") */
            break;
        }
    }
    if (plain) *plain = plain_taken;
    *refactorisations = run.refactorisations;
    pp_lcp_sparse_destroy(run.sparse);

    return pp_lcp_read_solution(ws->row_var, n, status, ws->x, NULL, z, basis);
}

/* A large LCP's path on M itself with plain pivots, run again refined when it is given up
 * ("Plain pivots"); a small one's, and a regularised retry's (shift > 0), refined. A path
 * given up is charged to the clock, not to the solve's pivot budget (limits.pivots_left,
 * max_total_pivots: "two full Lemke paths, where a solvable problem takes one", lcp.h): the
 * refined path and the regularised retries get the pivots they had without plain pivots.
 * Charged, a plain path that ran to its cap left the retries none (2 cap - 2 of the default
 * 2 cap), and where the budget is one path's (lcp_sticking.c's Lemke on Q, max_total_pivots
 * = max_pivots) the refined path lost the plain path's pivots: the arm's LCP
 * (check_lcp_large, data/arm_peg_n208.lcp), whose refined path takes 111 pivots, failed to
 * the fallback (rel 1.1e-5) with max_pivots 120 = max_total_pivots after its plain path
 * gave up at 89. The work stays bounded: a solve pivots at most one path's cap more than its
 * budget (result.pivots counts both paths, and a shared budget is charged them after the
 * solve, lcp.c finish_limits). */
static pp_lcp_status lemke_plain_first(pp_lcp_workspace *ws, int n, const double *Me,
                                       const pp_lcp_csc *csc, const double *q, const double *d,
                                       const unsigned char *start, const pp_lcp_options *o,
                                       int max_pivots, double *z, unsigned char *basis,
                                       int *pivots, int *refactorisations, int large)
{
    int plain = 0, work_hits = ws->limits.factor_work_hits;
    const long pivots_left = ws->limits.pivots_left;
    const int speculate = large && ws->shift == 0.0; /* not on the ladder's rungs */
    pp_lcp_status status = lemke_path(ws, n, Me, csc, q, d, start, o, max_pivots, z, basis,
                                      pivots, refactorisations, large, speculate ? &plain : NULL,
                                      0);
    if (status == PP_LCP_SOLVED || plain == 0 || ws->limits.hit || ws->limits.attempt_hit ||
        ws->limits.factor_work_hits > work_hits || (start && status != PP_LCP_NUMERICAL))
        return status; /* solved; refined; stopped, not given up; a given basis's cap or ray */
    const int given_up = *pivots, given_up_refactorisations = *refactorisations;
    ws->limits.pivots_left = pivots_left; /* not charged to the budget (above) */
    /* from a given basis: refined as far as the plain path went (and PLAIN_PERIOD on), plain
     * after ("Plain pivots"); from w basic: refined throughout */
    plain = 0;
    status = lemke_path(ws, n, Me, csc, q, d, start, o, max_pivots, z, basis, pivots,
                        refactorisations, large, start ? &plain : NULL,
                        given_up + PLAIN_PERIOD);
    *pivots += given_up;
    *refactorisations += given_up_refactorisations;
    return status;
}

pp_lcp_status pp_lcp_lemke_pivot(pp_lcp_workspace *ws, int n, const double *Me, const double *q,
                                 const double *d, const unsigned char *start,
                                 const pp_lcp_options *o, int max_pivots, double *z,
                                 unsigned char *basis, int *pivots, int *refactorisations)
{
    return lemke_plain_first(ws, n, Me, NULL, q, d, start, o, max_pivots, z, basis, pivots,
                             refactorisations, n >= PP_LCP_SPARSE_MIN_N);
}

/* Lemke on LCP(A + shift I, q), A by columns (n >= PP_LCP_SPARSE_MIN_N: the sparse basis). */
pp_lcp_status pp_lcp_lemke_pivot_csc(pp_lcp_workspace *ws, const pp_lcp_csc *A, const double *q,
                                     const double *d, const unsigned char *start,
                                     const pp_lcp_options *o, int max_pivots, double *z,
                                     unsigned char *basis, int *pivots, int *refactorisations)
{
    return lemke_plain_first(ws, A->n, NULL, A, q, d, start, o, max_pivots, z, basis, pivots,
                             refactorisations, 1);
}

