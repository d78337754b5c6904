/*
 * The interior-point solve of a monotone LCP (contact/src/lcp_interior.c), checked against a
 * closed form and Lemke:
 *  - a plate of mass m on N x N frictionless supports, LCP(M + eps I, q) with M = J W J^T
 *    (singular: N^2 supports, 3 freedoms): its solution is unique (M + eps I is positive
 *    definite) and, by symmetry, every normal p = m g h / N^2 / (1 + eps m / N^2) (the
 *    vertical impulses sum to no torque; (N^2 / m + eps) p = g h);
 *  - a random monotone LCP, M = B B^T + S + delta I (S skew), answered as Lemke answers it
 *    (the solution is unique).
 * The sticking solve's cold path through it (a box on an incline below and above the friction
 * angle, the plate with friction) is checked against its closed forms in check_sticking.c,
 * by this stage and by Lemke's (pp_sticking.lemke_only).
 * Every answer is also checked as an LCP answer (x, v >= 0, x_i v_i ~ 0).
 */
#include "pegplus/lcp.h"

#include "../src/lcp_interior.h"
#include "lcp_columns.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define H 0.01

/* x, v = M x + q an LCP answer of LCP(M, q): x >= 0, v >= -tol, |x_i v_i| <= tol^2 and v as
 * returned within tol of M x + q */
static void check_answer(int n, const double *M, const double *q, const double *x,
                         const double *v, double x_tol, double v_tol)
{
    for (int i = 0; i < n; ++i) {
        double w = q[i];
        for (int j = 0; j < n; ++j) w += M[i + (size_t)j * n] * x[j];
        ck_assert_double_ge(x[i], 0.0);
        ck_assert_double_ge(w, -v_tol);
        ck_assert_double_eq_tol(w, v[i], v_tol);
        ck_assert_double_le(fabs(fmin(x[i] / x_tol, w / v_tol)), 1.0);
    }
}

START_TEST(test_plate_frictionless)
{
    enum { N = 12, n = N * N };
    const double m = 3.0, a = 0.5, c = 0.05, inv[6] = {1 / m, 1 / m, 1 / m,
                                                      3 / (m * (a * a + c * c)),
                                                      3 / (m * (a * a + c * c)),
                                                      3 / (m * 2 * a * a)};
    double J[n][6];
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            const double r[3] = {-a + a / N + 2 * a * i / N, -a + a / N + 2 * a * j / N, -c};
            double *row = J[i * N + j];
            row[0] = row[1] = 0.0;
            row[2] = 1.0;
            row[3] = r[1]; /* r x (0, 0, 1) */
            row[4] = -r[0];
            row[5] = 0.0;
        }
    double *M = calloc((size_t)n * n, sizeof *M), q[n], x[n], v[n];
    ck_assert(M != NULL);
    double diag = 0.0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j)
            for (int t = 0; t < 6; ++t) M[i + (size_t)j * n] += J[i][t] * inv[t] * J[j][t];
        q[i] = -G * H; /* J v*, v* = (0, 0, -g h) */
        diag = fmax(diag, M[i + (size_t)i * n]);
    }
    const double eps = 1e-3 * diag;
    for (int i = 0; i < n; ++i) M[i + (size_t)i * n] += eps;
    columns cols;
    to_columns(n, M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_ge(ip.iterations, 1);
    ck_assert_int_eq(ip.factorisations + ip.refactorisations, ip.iterations);
    const double share = m * G * H / (N * N) / (1.0 + eps * m / (N * N));
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(x[i], share, 1e-9 * share);
    check_answer(n, M, q, x, v, 1e-9 * share, 1e-9 * G * H);
    pp_interior_free(&ip);
    free_columns(&cols);
    free(M);
}
END_TEST

/* a reproducible uniform in [-1, 1) */
static double uniform(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffffff) / (double)0x800000 - 1.0;
}

START_TEST(test_random_monotone_against_lemke)
{
    enum { n = 120, r = 40 };
    unsigned seed = 20261126u;
    double *B = malloc((size_t)n * r * sizeof *B), *M = calloc((size_t)n * n, sizeof *M);
    double q[n], x[n], v[n], z[n];
    ck_assert(B && M);
    for (int t = 0; t < n * r; ++t) B[t] = uniform(&seed);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int t = 0; t < r; ++t) s += B[i + (size_t)t * n] * B[j + (size_t)t * n];
            M[i + (size_t)j * n] = s;
        }
    for (int i = 0; i < n; ++i) { /* a skew part, sparse, and a small shift */
        for (int j = i + 1; j < n; ++j)
            if ((i * 7 + j * 3) % 11 == 0) {
                const double s = uniform(&seed);
                M[i + (size_t)j * n] += s;
                M[j + (size_t)i * n] -= s;
            }
        M[i + (size_t)i * n] += 1e-2;
        q[i] = 4.0 * uniform(&seed);
    }
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_result lr;
    ck_assert_int_eq(pp_lcp_solve(ws, n, M, q, &o, NULL, z, &lr), PP_OK);
    ck_assert_int_eq(lr.status, PP_LCP_SOLVED);
    columns cols;
    to_columns(n, M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    const double z_norm = pp_lcp_inf_norm(n, z);
    int basic = 0;
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(x[i], z[i], 1e-8 * z_norm);
        basic += z[i] > 0.0;
    }
    ck_assert_int_gt(basic, 10); /* not a trivial answer (z = 0, or every unknown basic) */
    ck_assert_int_lt(basic, n - 10);
    check_answer(n, M, q, x, v, 1e-8 * z_norm, 1e-8 * pp_lcp_inf_norm(n, q));
    pp_interior_free(&ip);
    free_columns(&cols);
    pp_lcp_workspace_destroy(ws);
    free(B);
    free(M);
}
END_TEST

/* the caller's clock: past its deadline no Newton system is factorised (stalled, the start
 * as it was); the same LCP with no deadline converges */
START_TEST(test_deadline)
{
    const int n = 40;
    double M[40 * 40], q[40], x[40], v[40];
    for (int i = 0; i < n; ++i) {
        q[i] = (i % 3) ? -1.0 : 0.5;
        for (int j = 0; j < n; ++j) M[i + j * n] = i == j ? 2.0 : (abs(i - j) == 1 ? -0.5 : 0.0);
    }
    columns cols;
    to_columns(n, M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, pp_lcp_clock() - 1.0, x, v),
                     PP_INTERIOR_STALLED);
    ck_assert_int_eq(ip.iterations, 0);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_gt(ip.iterations, 0);
    check_answer(n, M, q, x, v, 1e-9, 1e-9);
    pp_interior_free(&ip);
    free_columns(&cols);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("interior");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_plate_frictionless);
    tcase_add_test(tc, test_random_monotone_against_lemke);
    tcase_add_test(tc, test_deadline);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
