/*
 * Unit tests of the LCP solver's large-problem path (n >= PP_LCP_SPARSE_MIN_N: the Lemke basis
 * as a sparse LU with an eta file, lcp_sparse.c): the work bound of one factorisation of that
 * basis (PP_LCP_FACTOR_WORK, lcp_internal.h), and the instance dump of the solve by columns
 * (PP_LCP_DUMP_ALL, lcp.c). Every answer is checked by this file's own residual, computed from
 * M, q and z alone.
 *
 * The instance: M = tridiag(-1/2, 2, -1/2) of order N (symmetric, strictly diagonally dominant
 * with a positive diagonal: a Stieltjes matrix, so M^-1 >= 0 entrywise) and q = -1. Its LCP has
 * the unique solution z = M^-1 1 > 0, w = 0: every z is basic, so Lemke from w basic brings
 * them in one by one and its basis block (-M_DD and z0's column -d) grows with the path: a
 * tridiagonal block of order m factorises with fill lnz + unz >= 4m - 2, estimated work
 * (lnz + unz)^2 / m >= 16 m, so the work of the path's refactorisations grows with it.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, getpid, rmdir */
#include "pegplus/lcp.h"

#include "../src/islands_internal.h"
#include "../src/lcp_internal.h"
#include "test_support.h"

#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define N 240
#define TOL_RESIDUAL 1e-9 /* natural-map residual relative to the row data */

static double M[N * N], q[N], z[N];

static void tridiagonal_instance(void)
{
    memset(M, 0, sizeof M);
    for (int i = 0; i < N; ++i) {
        M[i + (size_t)i * N] = 2.0;
        if (i > 0) M[i + (size_t)(i - 1) * N] = -0.5;
        if (i + 1 < N) M[i + (size_t)(i + 1) * N] = -0.5;
        q[i] = -1.0;
    }
}

/* max_i |min(z_i, (M z + q)_i)| / (|q_i| + sum_j |M_ij| ||z||_inf), from the data alone. */
static double own_residual(void)
{
    double znorm = 0.0, worst = 0.0;
    for (int i = 0; i < N; ++i) znorm = fmax(znorm, fabs(z[i]));
    for (int i = 0; i < N; ++i) {
        double w = q[i], row = 0.0;
        for (int j = 0; j < N; ++j) {
            w += M[i + (size_t)j * N] * z[j];
            row += fabs(M[i + (size_t)j * N]);
        }
        double r = fabs(fmin(z[i], w)) / (fabs(q[i]) + row * znorm);
        if (!(r <= worst)) worst = r;
    }
    return worst;
}

/* The default bound lets this path through: Lemke solves it, nothing is refused. */
START_TEST(factor_work_default_solves)
{
    tridiagonal_instance();
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, N, M, q, &o, NULL, z, &r), PP_OK);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    ck_assert_int_eq(r.factor_work_exceeded, 0);
    ck_assert_int_ge(r.pivots, N); /* every z brought in by a pivot */
    ck_assert_double_le(own_residual(), TOL_RESIDUAL);
    for (int i = 0; i < N; ++i) ck_assert_double_gt(z[i], 0.0);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The path under a bound: it ends at the first refactorisation whose estimated work is above
 * the bound, as at its pivot cap, counted, without an answer. A bound of 1 flop refuses the
 * first refactorisation (after at most PP_LCP_SPARSE_ETA_MAX pivots); a bound of 30 000 flops
 * lets the first one through (a block of about 64 z with about 4 x 64 entries, the tridiagonal
 * and z0's column: AMD's estimate 3 000 - 4 000 flops, the charge m x entries ~1.7e4) and
 * refuses a later one (128 z: charge ~6.6e4, four times that), before the last z is brought
 * in. */
static int pivots_under_bound(double bound, pp_lcp_result *r)
{
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;
    double previous = pp_lcp_factor_work_bound(bound);
    pp_status st = pp_lcp_solve_lemke(ws, N, M, q, &o, NULL, z, r);
    ck_assert_double_eq(pp_lcp_factor_work_bound(previous), bound);
    ck_assert_int_eq(st, PP_ERR_SOLVER);
    ck_assert_int_eq(r->status, PP_LCP_PIVOT_CAP);
    ck_assert_int_eq(r->factor_work_exceeded, 1);
    pp_lcp_workspace_destroy(ws);
    return r->pivots;
}

START_TEST(factor_work_bound_ends_path)
{
    tridiagonal_instance();
    pp_lcp_result r;
    int first = pivots_under_bound(1.0, &r);
    ck_assert_int_ge(first, 8); /* REFACTOR_MIN_UPDATES */
    ck_assert_int_le(first, PP_LCP_SPARSE_ETA_MAX + 1);
    int later = pivots_under_bound(30000.0, &r);
    ck_assert_int_gt(later, first);
    ck_assert_int_lt(later, N);
}
END_TEST

/* The full solve under a bound no factorisation meets: every Lemke path (the plain attempt and
 * each regularised retry) ends at its first refactorisation, each counted (and summed when
 * islands' results are merged into a step's), and the bounded fallback answers; on this diagonally dominant M its projected Gauss-Seidel converges, so the
 * answer is the solution. */
START_TEST(factor_work_bound_then_fallback)
{
    tridiagonal_instance();
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;
    pp_lcp_result r;
    double previous = pp_lcp_factor_work_bound(1.0);
    pp_status st = pp_lcp_solve(ws, N, M, q, &o, NULL, z, &r);
    pp_lcp_factor_work_bound(previous);
    ck_assert_int_eq(st, PP_OK);
    ck_assert_int_eq(r.fallback, 1);
    ck_assert_int_eq(r.factor_work_exceeded, r.attempts); /* every path ended by the bound */
    ck_assert_int_gt(r.attempts, 1);
    ck_assert_int_le(r.pivots, r.attempts * (PP_LCP_SPARSE_ETA_MAX + 1));
    ck_assert_double_le(own_residual(), TOL_RESIDUAL);
    /* the count reaches a step's statistics (pp_step_stats.lcp_factor_refused): the islands'
     * results are merged with it summed */
    pp_lcp_result step;
    pp_lcp_result_merge(&step, &r, 1);
    pp_lcp_result_merge(&step, &r, 0);
    ck_assert_int_eq(step.factor_work_exceeded, 2 * r.factor_work_exceeded);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The warm-start basis solve is held to the same bound. The answer's own basis, given back,
 * is accepted without a pivot at the default bound; under a bound its LU does not meet it is
 * refused (no warm start), and Lemke's path from it ends on the bound too: nothing factorises
 * a basis above the bound. */
START_TEST(factor_work_bounds_warm_start)
{
    tridiagonal_instance();
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;
    unsigned char basis[N];
    memset(basis, 0, sizeof basis);
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, N, M, q, &o, basis, z, &r), PP_OK);
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, N, M, q, &o, basis, z, &r), PP_OK);
    ck_assert_int_eq(r.warm_started, 1);
    ck_assert_int_eq(r.pivots, 0);
    ck_assert_double_le(own_residual(), TOL_RESIDUAL);

    double previous = pp_lcp_factor_work_bound(1.0);
    pp_status st = pp_lcp_solve_lemke(ws, N, M, q, &o, basis, z, &r);
    pp_lcp_factor_work_bound(previous);
    ck_assert_int_eq(st, PP_ERR_SOLVER);
    ck_assert_int_eq(r.warm_started, 0);
    ck_assert_int_ge(r.factor_work_exceeded, 1);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The bounded fallback's total work (lcp_fallback.c, pp_lcp_solve_fallback "Cost"): every
 * stage is charged before it runs and runs only if the charge fits in the bound. On this M one
 * sweep of the fallback's projected Gauss-Seidel (fallback_iterations = 1) leaves every z_i > 0
 * and w_i < z_i, so its first Newton step solves the basis of every z exactly: that call's
 * charge c is the whole work. Under a bound of c the call is the same bit for bit (nothing was
 * over it); under c - 1 the Newton step does not run: the answer is the sweep's, cut, its
 * residual reported as the data's own and no worse than the start z = 0 (rel = 1), the charge
 * within the bound. Deterministic: no clock is read. */
static pp_lcp_result fallback_under(pp_lcp_workspace *ws, double bound, pp_lcp_budget *budget,
                                    double *answer)
{
    pp_lcp_options o = pp_lcp_options_default();
    o.fallback_iterations = 1;
    o.fallback_work = bound;
    o.budget = budget;
    pp_lcp_result r;
    pp_lcp_solve_fallback(ws, N, M, q, &o, NULL, answer, &r);
    ck_assert_int_eq(r.fallback, 1);
    ck_assert_int_eq(r.fallback_iterations, 1);
    ck_assert_double_le(r.fallback_work, bound > 0.0 ? bound : PP_LCP_FALLBACK_WORK);
    for (int i = 0; i < N; ++i) ck_assert(isfinite(answer[i]) && answer[i] >= 0.0);
    memcpy(z, answer, sizeof z);
    ck_assert_double_eq(own_residual(), r.relative_residual); /* the z returned, reported */
    ck_assert_double_lt(r.relative_residual, 1.0);            /* z = 0: rel = 1 (q = -1) */
    return r;
}

START_TEST(fallback_work_bound_is_exact)
{
    tridiagonal_instance();
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    static double full[N], same[N], cut[N];
    /* the default bound: the Newton step runs and solves */
    pp_lcp_result r = fallback_under(ws, 0.0, NULL, full);
    ck_assert_int_eq(r.fallback_cut, 0);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    ck_assert_double_le(r.relative_residual, TOL_RESIDUAL);
    const double charge = r.fallback_work;
    /* the charges of the file comment: 3 passes and a sweep over the N^2 entries of the dense
     * M, and the Newton step's basis of all N z (M_BB: 3N - 2 entries) and its w */
    ck_assert_double_eq(charge, 4.0 * N * N + (double)N * (3 * N - 2) + (double)N * N);
    r = fallback_under(ws, charge, NULL, same);
    ck_assert_int_eq(r.fallback_cut, 0);
    ck_assert_int_eq(memcmp(same, full, sizeof full), 0);
    const pp_lcp_result under = fallback_under(ws, charge - 1.0, NULL, cut);
    ck_assert_int_eq(under.fallback_cut, 1);
    ck_assert_int_eq(under.status, PP_LCP_APPROXIMATE);
    ck_assert_double_gt(under.relative_residual, TOL_RESIDUAL); /* the sweep's answer only */
    ck_assert_double_eq(under.fallback_work, 4.0 * N * N);

    /* A budget shared by two calls (a time step's): each is charged to it, and the second
     * gets only what the first left, whatever its own bound. */
    pp_lcp_budget budget = pp_lcp_budget_start(0.0, -1);
    ck_assert_double_eq(budget.fallback_work, PP_LCP_FALLBACK_STEP_WORK);
    budget.fallback_work = 2.0 * charge - 1.0;
    r = fallback_under(ws, 0.0, &budget, same);
    ck_assert_int_eq(r.fallback_cut, 0);
    ck_assert_int_eq(memcmp(same, full, sizeof full), 0);
    ck_assert_double_eq(budget.fallback_work, charge - 1.0);
    const pp_lcp_result second = fallback_under(ws, 0.0, &budget, same);
    ck_assert_int_eq(second.fallback_cut, 1);
    ck_assert_int_eq(memcmp(same, cut, sizeof cut), 0);
    ck_assert_double_eq(budget.fallback_work, charge - 1.0 - 4.0 * N * N);
    printf("check_lcp_large: fallback on N = %d: charged %.6g, solved; under %.6g cut after "
           "its sweep, charged %.6g, rel residual %.2g\n",
           N, charge, charge - 1.0, under.fallback_work, under.relative_residual);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* Past the clock, an LCP by columns whose M the fallback cannot sweep once (4 nnz(M) above
 * its work bound: the three passes charged first leave no room for a sweep or a warm start):
 * pp_lcp_solve_csc's answer is the fallback's start z = 0, and pp_lcp_fallback_unformed gives
 * the same answer from q alone (lcp_fallback.c pp_lcp_fallback_idle_entries): the same z, the
 * same measures bit for bit, the same status and charge, the budget left the same. With a
 * bound that pays one sweep, 4 nnz(M), the fallback moves (the threshold is the file
 * comment's); while the clock runs, M is always needed. */
START_TEST(fallback_unformed_is_the_fallbacks_answer)
{
    tridiagonal_instance();
    static int col_start[N + 1], rows[3 * N];
    static double values[3 * N], solved[N], unformed[N];
    int p = 0;
    for (int j = 0; j < N; ++j) {
        col_start[j] = p;
        for (int i = 0; i < N; ++i)
            if (M[i + (size_t)j * N] != 0.0) {
                rows[p] = i;
                values[p++] = M[i + (size_t)j * N];
            }
    }
    col_start[N] = p;
    ck_assert_int_eq(p, 3 * N - 2);
    const pp_lcp_csc A = {N, col_start, rows, values};
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_budget running = pp_lcp_budget_start(100.0, -1);
    o.budget = &running;
    ck_assert(pp_lcp_fallback_idle_entries(&o) == HUGE_VAL);
    for (int pays = 0; pays < 2; ++pays) {
        pp_lcp_budget budget[2];
        pp_lcp_result r[2];
        for (int u = 0; u < 2; ++u) {
            budget[u] = pp_lcp_budget_start(1e-9, -1); /* out at once */
            /* the fallbacks' work a budget keeps past its clock (lcp.c "The hard clock") */
            budget[u].fallback_work = PP_LCP_PAST_CLOCK_WORK;
            while (pp_lcp_clock() <= budget[u].deadline) continue;
        }
        o.fallback_work = pays ? 4.0 * p : 4.0 * p - 1.0;
        o.budget = &budget[0];
        ck_assert_double_eq(pp_lcp_fallback_idle_entries(&o), 0.25 * o.fallback_work);
        ck_assert_int_eq(pp_lcp_solve_csc(ws, &A, q, &o, NULL, solved, &r[0]), PP_ERR_SOLVER);
        ck_assert_int_eq(r[0].status, PP_LCP_APPROXIMATE);
        ck_assert_int_eq(r[0].fallback, 1);
        if (pays) { /* one sweep: z moved, rel(z) below z = 0's 1 */
            ck_assert_int_eq(r[0].fallback_iterations, 1);
            ck_assert_double_lt(r[0].relative_residual, 1.0);
            ck_assert_double_eq(r[0].fallback_work, 4.0 * p);
            continue;
        }
        o.budget = &budget[1];
        ck_assert_double_gt((double)p, pp_lcp_fallback_idle_entries(&o));
        ck_assert_int_eq(pp_lcp_fallback_unformed(N, q, (double)p, &o, unformed, &r[1]),
                         PP_LCP_APPROXIMATE);
        for (int i = 0; i < N; ++i) ck_assert(solved[i] == 0.0 && unformed[i] == 0.0);
        ck_assert_int_eq(r[0].fallback_iterations, 0);
        ck_assert_int_eq(r[0].fallback_cut, 1);
        ck_assert_int_eq(r[1].fallback_cut, 1);
        ck_assert_int_eq(r[1].budget_exhausted, 1);
        ck_assert_double_eq(r[0].relative_residual, 1.0); /* q = -1 */
        ck_assert(r[0].residual == r[1].residual);
        ck_assert(r[0].relative_residual == r[1].relative_residual);
        ck_assert(r[0].scale == r[1].scale);
        ck_assert(r[0].min_z == r[1].min_z && r[0].min_w == r[1].min_w);
        ck_assert(r[0].complementarity == r[1].complementarity);
        ck_assert(r[0].fallback_work == r[1].fallback_work);
        ck_assert(budget[0].fallback_work == budget[1].fallback_work);
        ck_assert_int_eq(budget[0].exhausted, budget[1].exhausted);
    }
    printf("check_lcp_large: past the clock, nnz(M) = %d: the fallback's answer z = 0 under a "
           "bound of 4 nnz - 1, formed from q alone\n", p);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The fallback's answer when the budget ran out is one pp_lcp_solve keeps (lcp_fallback.c,
 * `usable`): the best iterate by rel(z) AMONG those with r(z) <= ||q||_inf, not overall. The
 * instance: a trap block on unknowns 0..2 beside tridiag(-1/2, 2, -1/2) of order N - 3 (q = -1
 * there, as above),
 *     row 0: w_0 = 1.1e-7 z_0 + 1e-7 z_1 + z_2 - 1
 *     row 1: w_1 = z_0 + z_1
 *     row 2: w_2 = z_2 + 1,
 * and the warm basis {0, 1} with every tridiagonal z. Its basis solution has z_0 = -z_1 = 1e8
 * (1e-8 z_0 = 1); clamped, z = (1e8, 0, 0, T^-1 1) has w_0 = 10: r(z) = 10 > ||q|| = 1, while
 * rel(z) = 10 / (1 + (1 + 2.1e-7) 1e8) ~ 1e-7, below that of anything the sweeps reach from
 * z = 0 (z_0 grows by ~10 a sweep: rel ~ 1 / (10 k)) and below regularised_tol. Lemke is
 * given no pivot (a shared budget of 0 pivots: deterministic, no clock), so pp_lcp_solve runs
 * the fallback from that warm basis, K sweeps, the Newton step cut by the call's work bound
 * (3 passes, the warm basis solve and K sweeps fit exactly): by rel(z) alone the fallback
 * would keep the clamped warm point, which pp_lcp_solve refuses for an exhausted budget (no
 * worse than z = 0 is r(z) <= ||q||), and the island would get no impulse. Kept instead: the
 * last sweeps' iterate, usable, better than z = 0, applied (PP_LCP_APPROXIMATE) with its
 * residual. Dense M and M by columns (the crash demo's islands), the same answer. */
#define TRAP_SWEEPS 20

static void trap_instance(void)
{
    tridiagonal_instance();
    for (int i = 0; i < 3; ++i) /* rows and columns 0..2 out of the tridiagonal */
        for (int j = 0; j < 4; ++j) {
            M[i + (size_t)j * N] = 0.0;
            M[j + (size_t)i * N] = 0.0;
        }
    M[3 + (size_t)3 * N] = 2.0;
    M[0 + 0 * N] = 1.1e-7;
    M[0 + 1 * N] = 1e-7;
    M[0 + 2 * N] = 1.0;
    M[1 + 0 * N] = 1.0;
    M[1 + 1 * N] = 1.0;
    M[2 + 2 * N] = 1.0;
    q[0] = -1.0;
    q[1] = 0.0;
    q[2] = 1.0;
}

/* r(z) = max_i |min(z_i, (M z + q)_i)|, from the data alone */
static double own_absolute_residual(const double *x)
{
    double worst = 0.0;
    for (int i = 0; i < N; ++i) {
        double w = q[i];
        for (int j = 0; j < N; ++j) w += M[i + (size_t)j * N] * x[j];
        worst = fmax(worst, fabs(fmin(x[i], w)));
    }
    return worst;
}

START_TEST(fallback_keeps_a_usable_answer)
{
    trap_instance();
    static int col_start[N + 1], rows[N * 4];
    static double values[N * 4];
    int p = 0, diagonal_entries = 0;
    for (int j = 0; j < N; ++j) { /* by columns: the nonzeros, and every diagonal entry */
        col_start[j] = p;
        for (int i = 0; i < N; ++i)
            if (M[i + (size_t)j * N] != 0.0 || i == j) {
                rows[p] = i;
                values[p++] = M[i + (size_t)j * N];
            }
    }
    col_start[N] = p;
    for (int j = 0; j < N; ++j) diagonal_entries += M[j + (size_t)j * N] != 0.0;
    ck_assert_int_eq(diagonal_entries, N);
    const pp_lcp_csc A = {N, col_start, rows, values};
    unsigned char warm[N];
    memset(warm, 1, sizeof warm);
    warm[2] = 0;
    /* the charges (lcp_fallback.c): 3 passes, the warm basis solve (nb = N - 1 basic z, its
     * block M_BB: 4 entries in the trap, 3 (N - 3) - 2 in the tridiagonal) and its w, K sweeps;
     * over M's entries: N^2 dense, its nonzeros by columns */
    const double nb = N - 1, block = 4.0 + 3.0 * (N - 3) - 2.0;
    /* the trap: the clamped warm basis solution, as the fallback forms it */
    static double warm_z[N], answer[2][N];
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    ck_assert_int_eq(pp_lcp_csc_solve_basis(ws, &A, q, warm, warm_z), 1);
    for (int i = 0; i < N; ++i) warm_z[i] = fmax(warm_z[i], 0.0);
    ck_assert_double_eq_tol(warm_z[0], 1e8, 1.0);
    memcpy(z, warm_z, sizeof z);
    const double warm_rel = own_residual(), warm_r = own_absolute_residual(warm_z);
    ck_assert_double_gt(warm_r, 9.0); /* w_0 = 10: r(z) > ||q|| = 1 */
    ck_assert_double_lt(warm_rel, 1e-6);
    for (int by_columns = 0; by_columns < 2; ++by_columns) {
        const double entries = by_columns ? (double)p : (double)N * N;
        pp_lcp_budget budget = pp_lcp_budget_start(0.0, 0); /* no pivot at all */
        pp_lcp_options o = pp_lcp_options_default();
        o.max_seconds = 0.0;
        o.budget = &budget;
        o.fallback_iterations = TRAP_SWEEPS;
        o.fallback_work = 3.0 * entries + nb * block + entries + TRAP_SWEEPS * entries;
        unsigned char basis[N];
        memcpy(basis, warm, sizeof basis);
        pp_lcp_result r;
        double *x = answer[by_columns];
        pp_status st = by_columns ? pp_lcp_solve_csc(ws, &A, q, &o, basis, x, &r)
                                  : pp_lcp_solve(ws, N, M, q, &o, basis, x, &r);
        ck_assert_int_eq(st, PP_ERR_SOLVER);
        ck_assert_int_eq(r.budget_exhausted, 1);
        ck_assert_int_eq(r.fallback, 1);
        ck_assert_int_eq(r.status, PP_LCP_APPROXIMATE); /* applied, not z = 0 */
        ck_assert_int_eq(r.fallback_iterations, TRAP_SWEEPS);
        ck_assert_int_eq(r.fallback_cut, 1);            /* the Newton step did not fit */
        ck_assert_double_eq(r.fallback_work, o.fallback_work);
        memcpy(z, x, sizeof z);
        /* usable, better than z = 0 (rel 1: q_0 = -1), reported as the data say */
        const double rel = own_residual(), res = own_absolute_residual(x);
        ck_assert_double_eq_tol(r.relative_residual, rel, 1e-12 * rel);
        ck_assert_double_eq_tol(r.residual, res, 1e-12);
        ck_assert_double_le(res, 1.0);
        ck_assert_double_lt(rel, 0.1);
        ck_assert_double_gt(x[0], 0.0); /* the load the trap row asks for, not none */
        /* the warm point was better by rel(z) alone, and unusable: not kept */
        ck_assert_double_lt(warm_rel, rel);
        ck_assert_double_gt(warm_r, 1.0);
        printf("check_lcp_large: fallback from the trap's warm basis (%s): r(z) = %.3g, rel = "
               "%.3g applied; the warm point had r(z) = %.3g, rel = %.3g\n",
               by_columns ? "by columns" : "dense", res, rel, warm_r, warm_rel);
    }
    ck_assert_int_eq(memcmp(answer[0], answer[1], sizeof answer[0]), 0);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* lcp.c, "The ladder after a cycle": after a plain path of more than n pivots on a large LCP
 * ended on the cycling detector, the retries start at the first eps = 1e-16 * 100^k above
 * tie_tol max_i |M_ii|, with at least the last rung (1e-6) left; every other plain failure, a
 * short path and a small (dense) LCP keep the whole ladder. The crash impact's LCP: max |M_ii|
 * 11.2 (its sigma rows 0), tie_tol 1e-12, so M + 1e-10 I first (k = 3). */
START_TEST(ladder_skips_rungs_below_the_tie_band)
{
    enum { NR = 200 };
    static int col_start[NR + 1], row_index[2 * NR];
    static double values[2 * NR];
    int p = 0;
    for (int j = 0; j < NR; ++j) { /* diagonal: 0 on every fifth row, else up to 11.2 */
        col_start[j] = p;
        row_index[p] = j;
        values[p++] = j % 5 == 0 ? 0.0 : (j == 77 ? -11.2 : 0.1 + 0.05 * (j % 50));
        if (j + 1 < NR) {
            row_index[p] = j + 1;
            values[p++] = 20.0; /* off the diagonal: not counted */
        }
    }
    col_start[NR] = p;
    const pp_lcp_csc A = {NR, col_start, row_index, values};
    pp_lcp_options o = pp_lcp_options_default();
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 1, 0, NR + 1), 3); /* 1e-10 first */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 1, 0, NR), 0);     /* short path */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 0, 0, 50 * NR), 0); /* ray, cap */
    /* a false end ("The ladder after a false end"): the same rungs, at any length */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 0, 1, NR / 2), 3);
    static const int no_sets[NR] = {0}; /* PEG's I/X sets given: a false end keeps the ladder */
    o.set_slack = no_sets;
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 0, 1, NR / 2), 0);
    o.set_slack = NULL;
    o.tie_tol = 0.0; /* exact ties: no band */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 1, 0, NR + 1), 0);
    o.tie_tol = 1e-3; /* a band above every rung: the last one (1e-6) is kept */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 1, 0, NR + 1), 5);
    o.tie_tol = 1e-12;
    values[col_start[77]] = 0.04; /* max |M_ii| = 2.55 now: 2.55e-12, so 1e-10 still */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 1, 0, NR + 1), 3);
    for (int j = 0; j < NR; ++j) values[col_start[j]] *= 0.1; /* 2.55e-13: 1e-12 first */
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, NULL, &A, &o, 1, 0, NR + 1), 2);
    /* dense: the same rule from PP_LCP_SPARSE_MIN_N on, none below */
    static double M[NR * NR];
    for (int j = 0; j < NR; ++j) M[j + (size_t)j * NR] = j == 3 ? 11.2 : 1.0;
    ck_assert_int_eq(pp_lcp_rungs_skipped(NR, M, NULL, &o, 1, 0, NR + 1), 3);
    ck_assert_int_eq(pp_lcp_rungs_skipped(PP_LCP_SPARSE_MIN_N - 1, M, NULL, &o, 1, 0, 10 * NR), 0);
    ck_assert_int_eq(pp_lcp_rungs_skipped(PP_LCP_SPARSE_MIN_N - 1, M, NULL, &o, 0, 1, 10 * NR), 0);
}
END_TEST

/* ---- The ladder after a false end: the crash impact's screening round ------------------ */

/* The next whitespace-separated token of a gzip'd text file, '#' comments skipped to the end
 * of their line; 0 at the end. */
static int gz_token(gzFile f, char *buf, size_t size)
{
    int c;
    do {
        c = gzgetc(f);
        if (c == '#')
            while (c != EOF && c != '\n') c = gzgetc(f);
    } while (c != EOF && isspace(c));
    size_t k = 0;
    while (c != EOF && !isspace(c) && k + 1 < size) {
        buf[k++] = (char)c;
        c = gzgetc(f);
    }
    buf[k] = '\0';
    return k > 0;
}

static void gz_expect(gzFile f, const char *word)
{
    char buf[64];
    ck_assert_msg(gz_token(f, buf, sizeof buf) && strcmp(buf, word) == 0, "expected '%s'", word);
}

static long gz_long(gzFile f)
{
    char buf[64];
    ck_assert(gz_token(f, buf, sizeof buf));
    return strtol(buf, NULL, 10);
}

static double gz_double(gzFile f)
{
    char buf[64];
    ck_assert(gz_token(f, buf, sizeof buf));
    return strtod(buf, NULL); /* the file's shortest round-trip decimals: the same double */
}

/* The step-16 LCP (data/crash_standard_step16_n1794.csc.gz, ladder_after_a_false_end below)
 * into *A and *q (malloc'd; free A's arrays and *q). */
static void load_crash_step16(pp_lcp_csc *A, double **q)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PP_TEST_DATA_DIR, "crash_standard_step16_n1794.csc.gz");
    gzFile f = gzopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    gz_expect(f, "pp_lcp_csc");
    ck_assert_int_eq(gz_long(f), 1);
    gz_expect(f, "n");
    const int n = (int)gz_long(f);
    gz_expect(f, "nnz");
    const int nnz = (int)gz_long(f);
    ck_assert(n == 1794 && nnz > 0);
    int *col_start = malloc((size_t)(n + 1) * sizeof *col_start);
    int *rows = malloc((size_t)nnz * sizeof *rows);
    double *values = malloc((size_t)nnz * sizeof *values);
    *q = malloc((size_t)n * sizeof **q);
    ck_assert(col_start && rows && values && *q);
    gz_expect(f, "col_start");
    for (int j = 0; j <= n; ++j) col_start[j] = (int)gz_long(f);
    gz_expect(f, "row_index");
    for (int t = 0; t < nnz; ++t) rows[t] = (int)gz_long(f);
    gz_expect(f, "values");
    for (int t = 0; t < nnz; ++t) values[t] = gz_double(f);
    gz_expect(f, "q");
    for (int i = 0; i < n; ++i) (*q)[i] = gz_double(f);
    gzclose(f);
    ck_assert_int_eq(col_start[n], nnz);
    *A = (pp_lcp_csc){n, col_start, rows, values};
}

/*
 * data/crash_standard_step16_n1794.csc.gz: ODE's crash demo under the standard model
 * (clock-free, the default re-linearisation), step 16's first screening round, 1 794 unknowns,
 * cold, as pp_lcp_solve_csc got it (M by columns, 299 zero diagonal entries, max |M_ii| 11.6:
 * the wall's redundant supports, no compliance). Its plain attempt ends on a false end (z0
 * leaves after 1 274 pivots on a basis whose answer misses by rel(z) 7.8e-4: numerically
 * singular), and so do the rungs below the tie band, each from w basic: M + 1e-16 I a false end
 * again (663 pivots), 1e-14 the cycling detector (969), 1e-12 a ray (840); M + 1e-10 I solves
 * (1 678). "The ladder after a false end" (lcp.c) goes from the plain attempt to 1e-10, the
 * same answer bit for bit in 2 952 pivots instead of 5 424. Here with the solve's pivots held
 * to two paths of n (max_total_pivots = 2 n): solved on M + 1e-10 I within that, no fallback,
 * z an answer of LCP(M, q) itself by this file's residual. Without the rule the ladder runs out
 * of pivots on the 1e-12 rung and the fallback answers (approximate).
 */
START_TEST(ladder_after_a_false_end)
{
    pp_lcp_csc A;
    double *q;
    load_crash_step16(&A, &q);
    const int n = A.n;
    const int *col_start = A.col_start, *rows = A.row_index;
    const double *values = A.values;
    double *z = malloc((size_t)n * sizeof *z);
    ck_assert(z != NULL);

    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0; /* no clock: the pivots alone bound the solve */
    o.max_total_pivots = 2 * n;
    pp_lcp_result r;
    const pp_status st = pp_lcp_solve_csc(ws, &A, q, &o, NULL, z, &r);
    printf("ladder_after_a_false_end: status %s, %d pivots, %d attempts, eps %g, rel %.3g, "
           "fallback %d\n", pp_lcp_status_string(r.status), r.pivots, r.attempts, r.epsilon,
           r.relative_residual, r.fallback);
    ck_assert_int_eq(st, PP_OK);
    ck_assert(r.status == PP_LCP_SOLVED && r.fallback == 0 && r.pivots <= 2 * n);
    ck_assert_msg(r.epsilon == 1e-10 && r.attempts == 2, "eps %g after %d attempts", r.epsilon,
                  r.attempts);
    /* an answer of LCP(M, q) by its own residual, formed here from the columns */
    double *w = malloc((size_t)n * sizeof *w), *row = malloc((size_t)n * sizeof *row);
    ck_assert(w && row);
    double znorm = 0.0, worst = 0.0;
    for (int i = 0; i < n; ++i) {
        ck_assert(z[i] >= 0.0);
        w[i] = q[i];
        row[i] = 0.0;
        znorm = fmax(znorm, z[i]);
    }
    for (int j = 0; j < n; ++j)
        for (int t = col_start[j]; t < col_start[j + 1]; ++t) {
            w[rows[t]] += values[t] * z[j];
            row[rows[t]] += fabs(values[t]);
        }
    for (int i = 0; i < n; ++i)
        worst = fmax(worst, fabs(fmin(z[i], w[i])) / (fabs(q[i]) + row[i] * znorm));
    ck_assert_msg(znorm > 0.0 && worst <= 1e-9, "rel(z) %g", worst);
    free(w);
    free(row);
    pp_lcp_workspace_destroy(ws);
    free((void *)A.col_start);
    free((void *)A.row_index);
    free((void *)A.values);
    free(q);
    free(z);
}
END_TEST


/*
 * "The rung handed on" (lcp.c): the step-16 LCP above, whose ladder answers on M + 1e-10 I
 * after its plain attempt's false end (2 attempts), solved again with the rung handed on
 * (pp_lcp_options.first_rung, as peg_screen.c hands a round's rung to the next round of the
 * same island): one attempt, the same answer bit for bit, and fewer pivots by the plain
 * attempt's (the lower rungs paid once, by the first solve, not again). A rung within the tie
 * band (1e-12 <= tie_tol max |M_ii| = 1.2e-11: such a rung is its own path's) and a value
 * that is no rung of the ladder (3e-11) are ignored: the same solve as without them, pivot for
 * pivot. Clock-free.
 */
START_TEST(rung_handed_on)
{
    pp_lcp_csc A;
    double *q;
    load_crash_step16(&A, &q);
    const int n = A.n;
    double *z = malloc((size_t)n * sizeof *z), *z_ladder = malloc((size_t)n * sizeof *z);
    ck_assert(z && z_ladder);
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0; /* no clock: the pivots alone bound the solve */
    o.max_total_pivots = 4 * n;

    pp_lcp_result ladder, r;
    ck_assert_int_eq(pp_lcp_solve_csc(ws, &A, q, &o, NULL, z_ladder, &ladder), PP_OK);
    ck_assert(ladder.status == PP_LCP_SOLVED && ladder.fallback == 0);
    ck_assert_msg(ladder.epsilon == 1e-10 && ladder.attempts == 2, "eps %g after %d attempts",
                  ladder.epsilon, ladder.attempts);

    o.first_rung = 1e-10;
    ck_assert_int_eq(pp_lcp_solve_csc(ws, &A, q, &o, NULL, z, &r), PP_OK);
    printf("rung_handed_on: ladder %d pivots in %d attempts; handed 1e-10: %d pivots, %d "
           "attempts\n", ladder.pivots, ladder.attempts, r.pivots, r.attempts);
    ck_assert(r.status == PP_LCP_SOLVED && r.fallback == 0 && r.epsilon == 1e-10);
    ck_assert_int_eq(r.attempts, 1);
    ck_assert_msg(r.pivots > 0 && r.pivots < ladder.pivots, "%d pivots, the ladder's %d",
                  r.pivots, ladder.pivots);
    ck_assert(memcmp(z, z_ladder, (size_t)n * sizeof *z) == 0);

    const double ignored[2] = {1e-12, 3e-11};
    for (int c = 0; c < 2; ++c) {
        o.first_rung = ignored[c];
        ck_assert_int_eq(pp_lcp_solve_csc(ws, &A, q, &o, NULL, z, &r), PP_OK);
        ck_assert(r.epsilon == 1e-10 && r.attempts == ladder.attempts);
        ck_assert_int_eq(r.pivots, ladder.pivots);
        ck_assert(memcmp(z, z_ladder, (size_t)n * sizeof *z) == 0);
    }

    pp_lcp_workspace_destroy(ws);
    free((void *)A.col_start);
    free((void *)A.row_index);
    free((void *)A.values);
    free(q);
    free(z);
    free(z_ladder);
}
END_TEST

/* max_i |min(x_i, (M x + q)_i)| / (|q_i| + sum_j |M_ij| ||x||_inf) of a loaded instance, from
 * its data alone; x = 0 fails (infinite). */
static double instance_residual(const pp_lcp_instance *inst, const double *x)
{
    const int n = inst->n;
    double xnorm = 0.0, worst = 0.0;
    for (int i = 0; i < n; ++i) xnorm = fmax(xnorm, fabs(x[i]));
    if (!(xnorm > 0.0)) return INFINITY;
    for (int i = 0; i < n; ++i) {
        double w = inst->q[i], row = 0.0;
        for (int j = 0; j < n; ++j) {
            w += inst->M[i + (size_t)j * n] * x[j];
            row += fabs(inst->M[i + (size_t)j * n]);
        }
        double rel = fabs(fmin(x[i], w)) / (fabs(inst->q[i]) + row * xnorm);
        if (!(rel <= worst)) worst = rel;
    }
    return worst;
}

/* The arm's LCP (check_joint_scenes' arm under PEG, n = 208, data/arm_peg_n208.lcp) into
 * *inst; large enough for the sparse basis (PP_LCP_SPARSE_MIN_N). Free with
 * pp_lcp_instance_free. */
static void load_arm_lcp(pp_lcp_instance *inst)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PP_TEST_DATA_DIR, "arm_peg_n208.lcp");
    ck_assert_int_eq(pp_lcp_instance_load(path, inst), PP_OK);
    ck_assert_int_ge(inst->n, PP_LCP_SPARSE_MIN_N);
}

/* Plain pivots, refined on failure (lemke.c): an island's LCP of check_joint_scenes' arm (PEG,
 * n = 208, data/arm_peg_n208.lcp), on the sparse basis. Its plain path leaves the feasible
 * region (a refined x below -1e-9 ||x||_inf after 89 pivots) and is run again with every
 * decision refined, which solves LCP(M, q) itself: one attempt, no shift, z checked here as an
 * LCP answer, dense M and by columns. Without the rule the plain pivots end on a ray and the
 * ladder's answer is M + 1e-6 I's (rel 2.5e-7: epsilon > 0 and the residual above 1e-9).
 * The same with a budget of one path, max_pivots = max_total_pivots = 120 (lcp_sticking.c's
 * Lemke on Q): the refined path's 111 pivots fit in it, the given-up plain path's 89 are not
 * charged to it (lemke_plain_first); charged, the solve ran out and answered the fallback's
 * z (rel 1.1e-5). */
START_TEST(plain_path_given_up_is_refined)
{
    pp_lcp_instance inst;
    load_arm_lcp(&inst);
    const int n = inst.n;
    int *col_start = malloc((size_t)(n + 1) * sizeof *col_start);
    int *rows = malloc((size_t)n * n * sizeof *rows);
    double *values = malloc((size_t)n * n * sizeof *values), *x = malloc((size_t)n * sizeof *x);
    ck_assert(col_start && rows && values && x);
    int p = 0;
    for (int j = 0; j < n; ++j) { /* by columns: the nonzeros, and every diagonal entry */
        col_start[j] = p;
        for (int i = 0; i < n; ++i)
            if (inst.M[i + (size_t)j * n] != 0.0 || i == j) {
                rows[p] = i;
                values[p++] = inst.M[i + (size_t)j * n];
            }
    }
    col_start[n] = p;
    const pp_lcp_csc A = {n, col_start, rows, values};
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0; /* no clock: the same path on a loaded machine */
    for (int run = 0; run < 4; ++run) {
        const int by_columns = run % 2;
        if (run >= 2) o.max_pivots = o.max_total_pivots = 120; /* one path's budget */
        pp_lcp_result r;
        const pp_status st = by_columns ? pp_lcp_solve_csc(ws, &A, inst.q, &o, NULL, x, &r)
                                        : pp_lcp_solve(ws, n, inst.M, inst.q, &o, NULL, x, &r);
        ck_assert_int_eq(st, PP_OK);
        ck_assert_int_eq(r.status, PP_LCP_SOLVED);
        ck_assert_int_eq(r.attempts, 1);
        ck_assert(r.epsilon == 0.0);
        ck_assert_int_eq(r.fallback, 0);
        ck_assert_double_le(instance_residual(&inst, x), TOL_RESIDUAL);
    }
    pp_lcp_workspace_destroy(ws);
    free(col_start);
    free(rows);
    free(values);
    free(x);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* A plain path from a given basis given up is run again from that basis (lemke.c
 * lemke_plain_first, "Plain pivots": refined as far as the plain path went and PLAIN_PERIOD
 * pivots on, plain after). The arm's LCP (n = 208, sparse basis) from two given bases that
 * Lemke must pivot from (neither is a solution): w basic everywhere (a warm start that knows
 * no set, as an unknown set's bytes), and the answer's basis on the first 32 unknowns with w
 * basic on the rest (a partly known warm start). With max_pivots = 120, which caps every path
 * (the warm path at min(max_pivots, n)), the solve answers from the given basis
 * (warm_lemke) on M itself (one attempt, eps 0) in more pivots than one path may take: two
 * paths ran from the given basis, the plain one given up and its rerun, which answered;
 * z checked here as an LCP answer (measured: 200 and 191 pivots). Without the rerun the given
 * basis's path is dropped when its plain pivots give up and Lemke from w basic answers
 * (warm_lemke 0: measured with lemke_plain_first returning every given basis's failure, as
 * before 78b86ee). */
START_TEST(plain_path_from_given_basis_is_rerun)
{
    enum { KNOWN = 32, CAP = 120 };
    pp_lcp_instance inst;
    load_arm_lcp(&inst);
    const int n = inst.n;
    ck_assert_int_lt(CAP, n); /* the cap, not n, bounds the given basis's path */
    double *x = malloc((size_t)n * sizeof *x);
    unsigned char *answer = calloc((size_t)n, 1), *given = calloc((size_t)n, 1);
    ck_assert(x && answer && given);
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0; /* no clock: the same paths on a loaded machine */
    o.warm_start = 0;
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(ws, n, inst.M, inst.q, &o, answer, x, &r), PP_OK);
    o.warm_start = 1;
    o.max_pivots = CAP;
    for (int known = 0; known <= KNOWN; known += KNOWN) {
        for (int i = 0; i < n; ++i) given[i] = i < known ? answer[i] : 0;
        ck_assert_int_eq(pp_lcp_solve(ws, n, inst.M, inst.q, &o, given, x, &r), PP_OK);
        printf("check_lcp_large: from the answer's basis on %d unknowns: %d pivots, warm_lemke "
               "%d, rel %.3g\n", known, r.pivots, r.warm_lemke, r.relative_residual);
        ck_assert_int_eq(r.status, PP_LCP_SOLVED);
        ck_assert_int_eq(r.warm_started, 0); /* pivoted from the given basis */
        ck_assert_int_eq(r.warm_lemke, 1);   /* and answered by that path */
        ck_assert_int_eq(r.attempts, 1);
        ck_assert(r.epsilon == 0.0);
        ck_assert_int_eq(r.fallback, 0);
        ck_assert_int_gt(r.pivots, CAP);     /* two paths from the given basis */
        ck_assert_int_le(r.pivots, 2 * CAP); /* and no third */
        ck_assert_double_le(instance_residual(&inst, x), TOL_RESIDUAL);
    }
    pp_lcp_workspace_destroy(ws);
    free(x);
    free(answer);
    free(given);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* PP_LCP_DUMP_ALL covers the solve by columns: pp_lcp_solve_csc writes its LCP, M dense, and
 * the file loads back to the same M and q bit for bit (%.17g). The variable is read once per
 * process, at the first solve: Check runs each test in a child process, and this test is the
 * suite's first for a run with CK_FORK=no. */
START_TEST(dump_covers_columns)
{
    tridiagonal_instance();
    char dir[] = "/tmp/pp_lcp_dump_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(setenv("PP_LCP_DUMP_ALL", dir, 1), 0);
    int col_start[N + 1], rows[3 * N], p = 0;
    double values[3 * N];
    for (int j = 0; j < N; ++j) {
        col_start[j] = p;
        for (int i = j > 0 ? j - 1 : 0; i <= j + 1 && i < N; ++i) {
            rows[p] = i;
            values[p++] = M[i + (size_t)j * N];
        }
    }
    col_start[N] = p;
    pp_lcp_csc A = {N, col_start, rows, values};
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_csc(ws, &A, q, NULL, NULL, z, &r), PP_OK);
    ck_assert_double_le(own_residual(), TOL_RESIDUAL);
    pp_lcp_workspace_destroy(ws);
    char path[256];
    snprintf(path, sizeof path, "%s/lcp_%ld_%06d_n%d.lcp", dir, (long)getpid(), 0, N);
    pp_lcp_instance inst;
    ck_assert_int_eq(pp_lcp_instance_load(path, &inst), PP_OK);
    ck_assert_int_eq(inst.n, N);
    ck_assert_int_eq(memcmp(inst.M, M, sizeof M), 0);
    ck_assert_int_eq(memcmp(inst.q, q, sizeof q), 0);
    pp_lcp_instance_free(&inst);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *lcp_large_suite(void)
{
    Suite *s = suite_create("lcp_large");
    TCase *tc = tcase_create("factor_work");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, dump_covers_columns); /* first: it reads PP_LCP_DUMP_ALL (CK_FORK=no) */
    tcase_add_test(tc, factor_work_default_solves);
    tcase_add_test(tc, factor_work_bound_ends_path);
    tcase_add_test(tc, factor_work_bound_then_fallback);
    tcase_add_test(tc, factor_work_bounds_warm_start);
    tcase_add_test(tc, fallback_work_bound_is_exact);
    tcase_add_test(tc, fallback_keeps_a_usable_answer);
    tcase_add_test(tc, fallback_unformed_is_the_fallbacks_answer);
    tcase_add_test(tc, ladder_skips_rungs_below_the_tie_band);
    tcase_add_test(tc, plain_path_given_up_is_refined);
    tcase_add_test(tc, plain_path_from_given_basis_is_rerun);
    suite_add_tcase(s, tc);
    /* a real LCP of 1 794 unknowns: 1-2 s of CPU, its own timeout for a loaded machine */
    TCase *crash = tcase_create("crash_lcp");
    tcase_add_checked_fixture(crash, setup, teardown);
    tcase_set_timeout(crash, 120);
    tcase_add_test(crash, ladder_after_a_false_end);
    tcase_add_test(crash, rung_handed_on);
    suite_add_tcase(s, crash);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lcp_large_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
