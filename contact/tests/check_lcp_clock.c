/*
 * Unit tests of the LCP solver's hard clock (lcp.c, "The hard clock"): past the deadline no
 * Lemke attempt, basis solve or regularised retry starts, and the solve answers with the
 * bounded fallback, held to the clock's allowance (PP_LCP_PAST_CLOCK_WORK), its residual and
 * status reported; before it, a factorisation whose predicted time (its charge at
 * PP_LCP_WORK_RATE) would cross the deadline does not start. The tests read the rule by the
 * work done (pivots, attempts, the fallback's charge), not by timings: a deadline already
 * passed, or one closer than a factorisation's predicted time, gives the same counts on any
 * machine. Every answer is checked against pp_lcp_evaluate's measures from M, q and z alone.
 *
 * The instance: M = tridiag(-1/2, 2, -1/2) of order N, q = -1 (check_lcp_large.c): a
 * Stieltjes matrix, so its LCP has the unique solution z = M^-1 1 > 0, w = 0, every z basic;
 * the all-basic warm basis solves it as it stands, and the fallback's projected Gauss-Seidel
 * converges on it.
 */
#include "pegplus/lcp.h"

#include "../src/lcp_internal.h"
#include "test_support.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 240

static double M[N * N], q[N], z[N];
static int col_start[N + 1], rows[3 * N];
static double values[3 * N];

static pp_lcp_csc tridiagonal_instance(int n)
{
    memset(M, 0, sizeof M);
    int p = 0;
    for (int j = 0; j < n; ++j) {
        M[j + (size_t)j * n] = 2.0;
        if (j > 0) M[j + (size_t)(j - 1) * n] = -0.5;
        if (j + 1 < n) M[j + (size_t)(j + 1) * n] = -0.5;
        q[j] = -1.0;
    }
    for (int j = 0; j < n; ++j) {
        col_start[j] = p;
        for (int i = j > 0 ? j - 1 : 0; i <= j + 1 && i < n; ++i) {
            rows[p] = i;
            values[p++] = M[i + (size_t)j * n];
        }
    }
    col_start[n] = p;
    return (pp_lcp_csc){n, col_start, rows, values};
}

/* The result's measures are those of z on (M, q), bit for bit, and z is usable (r(z) <=
 * ||q||_inf = 1: no worse than z = 0). */
static void assert_measured(int n, const pp_lcp_result *r)
{
    pp_lcp_result e;
    memset(&e, 0, sizeof e);
    pp_lcp_evaluate(n, M, q, z, NULL, &e);
    ck_assert(e.residual == r->residual);
    ck_assert(e.relative_residual == r->relative_residual);
    ck_assert(e.min_z == r->min_z && e.min_w == r->min_w);
    ck_assert_double_le(r->residual, 1.0);
    for (int i = 0; i < n; ++i) ck_assert(z[i] >= 0.0 && isfinite(z[i]));
}

/* A budget whose deadline has passed. */
static pp_lcp_budget passed_budget(void)
{
    pp_lcp_budget b = pp_lcp_budget_start(1e-9, -1);
    while (pp_lcp_clock() <= b.deadline) continue;
    return b;
}

/* Past the deadline, on an LCP where every Lemke path ends at its pivot cap after its first
 * pivot (max_pivots = 1: the path's own cap, before its first clock read), so that the old
 * order ran the plain path and all six regularised retries past the deadline (7 attempts of
 * one pivot each, each setting up the sparse basis), then the fallback under its full bound
 * (1e9): now no attempt starts (0 pivots, 1 attempt, no refactorisation), the budget is
 * marked exhausted, and the fallback answers within the clock's allowance, its residual and
 * status reported; it converges here (diagonally dominant), so the answer is the solution.
 * Dense M and M by columns alike. */
START_TEST(past_deadline_no_attempt_starts)
{
    const pp_lcp_csc A = tridiagonal_instance(N);
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    for (int by_columns = 0; by_columns < 2; ++by_columns) {
        pp_lcp_budget b = passed_budget();
        pp_lcp_options o = pp_lcp_options_default();
        o.max_seconds = 0.0; /* the budget's clock only */
        o.max_pivots = 1;
        o.budget = &b;
        pp_lcp_result r;
        pp_status st = by_columns ? pp_lcp_solve_csc(ws, &A, q, &o, NULL, z, &r)
                                  : pp_lcp_solve(ws, N, M, q, &o, NULL, z, &r);
        ck_assert_int_eq(r.pivots, 0);
        ck_assert_int_eq(r.attempts, 1);
        ck_assert_int_eq(r.refactorisations, 0);
        ck_assert_int_eq(r.budget_exhausted, 1);
        ck_assert_int_eq(b.exhausted, 1);
        ck_assert_int_eq(r.fallback, 1);
        ck_assert_double_gt(r.fallback_work, 0.0);
        ck_assert_double_le(r.fallback_work, PP_LCP_PAST_CLOCK_WORK);
        ck_assert_double_eq(b.fallback_work, PP_LCP_PAST_CLOCK_WORK - r.fallback_work);
        ck_assert_int_eq(r.status, PP_LCP_SOLVED); /* the sweeps converge on this M */
        ck_assert_int_eq(st, PP_OK);
        assert_measured(N, &r);
        printf("check_lcp_clock: past the deadline (%s): %d pivots, %d attempt, fallback %d "
               "sweeps, work %.3g, rel %.3g\n", by_columns ? "by columns" : "dense", r.pivots,
               r.attempts, r.fallback_iterations, r.fallback_work, r.relative_residual);
    }
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* Past the deadline with less work left than the fallback's first pass and sweep (4 nnz(M)):
 * its answer is its start z = 0, given without reading M, its residual from q alone and its
 * three passes charged, the same answer, measures and charge as the fallback's own call under
 * that bound (pp_lcp_solve_fallback, which reads M); one more unit of work pays the sweep. */
START_TEST(past_deadline_without_a_sweep_is_z0)
{
    const pp_lcp_csc A = tridiagonal_instance(N);
    const double entries = (double)col_start[N];
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    for (int pays = 0; pays < 2; ++pays) {
        pp_lcp_budget b = passed_budget();
        b.fallback_work = pays ? 4.0 * entries : 4.0 * entries - 1.0;
        pp_lcp_options o = pp_lcp_options_default();
        o.budget = &b;
        pp_lcp_result r;
        ck_assert_int_eq(pp_lcp_solve_csc(ws, &A, q, &o, NULL, z, &r), PP_ERR_SOLVER);
        ck_assert_int_eq(r.status, PP_LCP_APPROXIMATE);
        ck_assert_int_eq(r.fallback, 1);
        ck_assert_int_eq(r.pivots, 0);
        assert_measured(N, &r);
        if (pays) {
            ck_assert_int_eq(r.fallback_iterations, 1);
            ck_assert_double_lt(r.relative_residual, 1.0);
            continue;
        }
        for (int i = 0; i < N; ++i) ck_assert(z[i] == 0.0);
        ck_assert_int_eq(r.fallback_cut, 1);
        ck_assert_int_eq(r.fallback_iterations, 0);
        ck_assert_double_eq(r.relative_residual, 1.0);
        ck_assert_double_eq(r.fallback_work, 3.0 * entries);
        ck_assert_double_eq(b.fallback_work, entries - 1.0);
        /* the fallback itself under the same bound: the same z and measures */
        static double zf[N];
        pp_lcp_options of = pp_lcp_options_default();
        of.fallback_work = 4.0 * N * N - 1.0; /* its charges on the dense M */
        pp_lcp_result f;
        ck_assert_int_eq(pp_lcp_solve_fallback(ws, N, M, q, &of, NULL, zf, &f), PP_ERR_SOLVER);
        ck_assert_int_eq(memcmp(z, zf, sizeof zf), 0);
        ck_assert(f.residual == r.residual && f.relative_residual == r.relative_residual);
        ck_assert(f.scale == r.scale && f.min_z == r.min_z && f.min_w == r.min_w);
        ck_assert(f.complementarity == r.complementarity);
        ck_assert_int_eq(f.fallback_iterations, 0);
    }
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The LCP of the two tests below: n = 4 083, tridiagonal M (2 on the diagonal, -0.5 beside
 * it) by compressed columns, q = -1; with every unknown basic its basis solve is charged
 * n nnz(M) = n (3 n - 2). */
enum { NL = 4083 };
static int cs[NL + 1], ri[3 * NL];
static double vals[3 * NL], ql[NL], zl[NL];
static unsigned char basis[NL];

static pp_lcp_csc tridiagonal_lcp(void)
{
    int p = 0;
    for (int j = 0; j < NL; ++j) {
        cs[j] = p;
        for (int i = j > 0 ? j - 1 : 0; i <= j + 1 && i < NL; ++i) {
            ri[p] = i;
            vals[p++] = i == j ? 2.0 : -0.5;
        }
        ql[j] = -1.0;
    }
    cs[NL] = p;
    return (pp_lcp_csc){NL, cs, ri, vals};
}

/* Before the deadline, a factorisation whose predicted time crosses it does not start: the
 * all-basic warm basis solves this LCP as it stands (warm_started, no pivot) when the clock
 * has room, but its basis solve is charged nb nnz(M_BB) = n (3 n - 2) (a charge of 5e7 at n
 * = 4 083, 0.1 s at PP_LCP_WORK_RATE; KLU does it in ~1 ms), so with 0.05 s left it is not
 * tried: the answer then comes from Lemke's path from w basic, or, when the clock runs out
 * first, from the fallback, whose own basis solve is held to its work bound; either way
 * not from the warm start. The same solve with 100 s on the clock is warm-started. */
START_TEST(prediction_refuses_a_factorisation)
{
    const pp_lcp_csc A = tridiagonal_lcp();
    ck_assert_double_gt((double)NL * A.col_start[NL], 0.1 * PP_LCP_WORK_RATE);
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(NL, &ws), PP_OK);
    for (int room = 0; room < 2; ++room) {
        pp_lcp_budget b = pp_lcp_budget_start(room ? 100.0 : 0.05, -1);
        pp_lcp_options o = pp_lcp_options_default();
        o.max_seconds = 0.0;
        o.budget = &b;
        memset(basis, 1, sizeof basis);
        pp_lcp_result r;
        pp_status st = pp_lcp_solve_csc(ws, &A, ql, &o, basis, zl, &r);
        if (room) {
            ck_assert_int_eq(st, PP_OK);
            ck_assert_int_eq(r.warm_started, 1);
            ck_assert_int_eq(r.pivots, 0);
        } else {
            ck_assert_int_eq(r.warm_started, 0);
            ck_assert(st == PP_OK || r.fallback == 1);
        }
        ck_assert_double_le(r.residual, 1.0);
        printf("check_lcp_clock: warm basis with %s on the clock: warm_started %d, %d pivots, "
               "fallback %d, rel %.3g\n", room ? "100 s" : "0.05 s", r.warm_started, r.pivots,
               r.fallback, r.relative_residual);
    }
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* A solve whose Lemke the clock stopped before the deadline (here a factorisation whose
 * predicted time crosses it: prediction_refuses_a_factorisation's LCP and warm basis, 0.05 s
 * on a budget's clock) ends its budget's clock (lcp.c finish_limits): the budget's deadline
 * is the solve's end, so that the budget's next solve starts past the clock (no attempt, the
 * fallback's answer) instead of forming and pivoting on what is left of 0.05 s. The first
 * solve's fallback answers this LCP well before the 0.05 s are out (printed); without the rule
 * the budget's deadline is then still ahead of the solve's end, which the test reads. */
START_TEST(clock_stopped_solve_ends_its_budget)
{
    const pp_lcp_csc A = tridiagonal_lcp();
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(NL, &ws), PP_OK);
    pp_lcp_budget b = pp_lcp_budget_start(0.05, -1);
    const double deadline = b.deadline;
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;
    o.budget = &b;
    memset(basis, 1, sizeof basis);
    pp_lcp_result r;
    pp_lcp_solve_csc(ws, &A, ql, &o, basis, zl, &r);
    const double end = pp_lcp_clock();
    printf("check_lcp_clock: stopped by the clock: budget_exhausted %d, %d pivots, fallback %d, "
           "ended %.3g s before the deadline\n", r.budget_exhausted, r.pivots, r.fallback,
           deadline - end);
    /* (on a machine so loaded that the solve ends past the old deadline these hold anyway) */
    ck_assert_int_eq(r.budget_exhausted, 1);
    ck_assert_double_le(b.deadline, end);
    ck_assert_double_le(b.fallback_work, PP_LCP_PAST_CLOCK_WORK);
    memset(basis, 1, sizeof basis);
    pp_lcp_solve_csc(ws, &A, ql, &o, basis, zl, &r);
    ck_assert_int_eq(r.pivots, 0);
    ck_assert_int_eq(r.warm_started, 0);
    ck_assert_int_eq(r.fallback, 1);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The first attempt's share (lcp.c start_attempt): a first attempt whose share of the clock
 * has passed is not stopped while it is within its path's pivots (attempt_path, 3 n), only
 * past them, and the solve's deadline stops it at once whatever its pivots. Read on the
 * limits themselves (pp_lcp_take_pivot, which every Lemke pivot calls): a share already
 * passed and a deadline 100 s away, or passed too, give the same counts on any machine. */
START_TEST(first_attempt_keeps_the_clock_within_its_path)
{
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_limits *l = &ws->limits;
    for (int deadline_passed = 0; deadline_passed < 2; ++deadline_passed) {
        const double now = pp_lcp_clock();
        memset(l, 0, sizeof *l);
        l->pivots_left = 1000;
        l->deadline = deadline_passed ? now - 1.0 : now + 100.0;
        l->attempt_deadline = now - 1.0; /* the share: passed */
        l->factor_deadline = l->deadline;
        l->clock_every = 1;
        l->countdown = 1;
        l->attempt_path = 3L * N;
        int taken = 0;
        while (taken < 10 * N && pp_lcp_take_pivot(ws)) ++taken;
        if (deadline_passed) {
            ck_assert_int_eq(taken, 0);
            ck_assert_int_eq(l->hit, 1);
            ck_assert_int_eq(l->attempt_hit, 0);
        } else {
            ck_assert_int_eq(taken, 3 * N); /* its path's pivots, then the share holds */
            ck_assert_int_eq(l->hit, 0);
            ck_assert_int_eq(l->attempt_hit, 1);
        }
        ck_assert_int_eq(l->stopped, 1);
    }
    /* a retry (attempt_path 0) is held to its share from its first pivot */
    memset(l, 0, sizeof *l);
    l->pivots_left = 1000;
    l->deadline = pp_lcp_clock() + 100.0;
    l->attempt_deadline = l->deadline - 200.0;
    l->clock_every = 1;
    l->countdown = 1;
    ck_assert_int_eq(pp_lcp_take_pivot(ws), 0);
    ck_assert_int_eq(l->attempt_hit, 1);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

static Suite *lcp_clock_suite(void)
{
    Suite *s = suite_create("lcp_clock");
    TCase *tc = tcase_create("hard_clock");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, past_deadline_no_attempt_starts);
    tcase_add_test(tc, past_deadline_without_a_sweep_is_z0);
    tcase_add_test(tc, prediction_refuses_a_factorisation);
    tcase_add_test(tc, first_attempt_keeps_the_clock_within_its_path);
    tcase_add_test(tc, clock_stopped_solve_ends_its_budget);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lcp_clock_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
