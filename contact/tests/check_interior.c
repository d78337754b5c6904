/*
 * The interior-point solve of a monotone LCP (contact/src/lcp_interior.c), and the sticking
 * solve's cold path through it (lcp_sticking.c), checked against closed forms and Lemke:
 *  - a plate of mass m on N x N frictionless supports, LCP(M + eps I, q) with M = J W J^T
 *    (singular: N^2 supports, 3 freedoms): its solution is unique (M + eps I is positive
 *    definite) and, by symmetry, every normal p = m g h / N^2 / (1 + eps m / N^2) (the
 *    vertical impulses sum to no torque; (N^2 / m + eps) p = g h);
 *  - a random monotone LCP, M = B B^T + S + delta I (S skew), answered as Lemke answers it
 *    (the solution is unique);
 *  - a box on an incline (8 copies, 192 unknowns, k = 4, mu = 0.5) below the friction angle
 *    (20 deg): it sticks, v = 0, friction F / 4 uphill at each corner, normals N / 4 +- c F /
 *    (4 a); above it (40 deg), the first round's loaded contacts with lambda > 0 go to ST's
 *    form (the LCP is then no longer monotone in their columns) and the second round gives
 *    ST's sliding answer v_x = -g h (sin theta - mu cos theta), sigma = |v_x|. Both answered
 *    by the interior-point solve (no Lemke pivot).
 * Every answer is also checked as an LCP answer (x, v >= 0, x_i v_i ~ 0).
 */
#include "pegplus/lcp.h"

#include "../src/lcp_interior.h"
#include "../src/lcp_sticking.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define H 0.01
#define K 4
#define PI 3.14159265358979323846

/* A dense column-major n x n matrix by columns, every diagonal entry present. */
typedef struct columns {
    int *col_start, *row_index;
    double *values;
    pp_lcp_csc A;
} columns;

static void to_columns(int n, const double *M, columns *c)
{
    c->col_start = malloc((size_t)(n + 1) * sizeof *c->col_start);
    c->row_index = malloc((size_t)n * n * sizeof *c->row_index);
    c->values = malloc((size_t)n * n * sizeof *c->values);
    ck_assert(c->col_start && c->row_index && c->values);
    int p = 0;
    for (int j = 0; j < n; ++j) {
        c->col_start[j] = p;
        for (int i = 0; i < n; ++i) {
            const double a = M[i + (size_t)j * n];
            if (a == 0.0 && i != j) continue;
            c->row_index[p] = i;
            c->values[p++] = a;
        }
    }
    c->col_start[n] = p;
    c->A.n = n;
    c->A.col_start = c->col_start;
    c->A.row_index = c->row_index;
    c->A.values = c->values;
}

static void free_columns(columns *c)
{
    free(c->col_start);
    free(c->row_index);
    free(c->values);
}

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
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, x, v),
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
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, x, v),
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

/* 8 copies of a box (half extents a, b, c; corners at z = -c) of mass m on an incline of
 * angle theta, ST's LCP (ST96 Eq 29) in z = [p; beta; sigma] as in check_sticking.c */
typedef struct box_lcp {
    int n, C;
    double m, mu, inv[6], v_free[6], r[4][3], J[4 * (K + 1)][6];
    double *M, *q;
    unsigned char *sliding;
    columns cols;
} box_lcp;

#define AT(b, c, l) ((l) == 0 ? (c) : (b)->C + (c) * K + (l) - 1)

static void box_on_incline(box_lcp *b, double theta, double mu)
{
    memset(b, 0, sizeof *b);
    const double a = 0.5, hb = 0.3, c = 0.1;
    static const double dirs[K + 1][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}};
    const int copies = 8, C = 4 * copies, nF = C * (K + 1), n = nF + C;
    b->n = n;
    b->C = C;
    b->m = 2.0;
    b->mu = mu;
    b->inv[0] = b->inv[1] = b->inv[2] = 1.0 / b->m;
    b->inv[3] = 3.0 / (b->m * (hb * hb + c * c));
    b->inv[4] = 3.0 / (b->m * (a * a + c * c));
    b->inv[5] = 3.0 / (b->m * (a * a + hb * hb));
    b->v_free[0] = -G * H * sin(theta);
    b->v_free[2] = -G * H * cos(theta);
    for (int i = 0; i < 4; ++i) {
        b->r[i][0] = (i & 1) ? a : -a;
        b->r[i][1] = (i & 2) ? hb : -hb;
        b->r[i][2] = -c;
        for (int l = 0; l <= K; ++l) {
            double *Jr = b->J[i * (K + 1) + l];
            const double *d = dirs[l], *r = b->r[i];
            memcpy(Jr, d, 3 * sizeof *d);
            Jr[3] = r[1] * d[2] - r[2] * d[1];
            Jr[4] = r[2] * d[0] - r[0] * d[2];
            Jr[5] = r[0] * d[1] - r[1] * d[0];
        }
    }
    b->M = calloc((size_t)n * n, sizeof *b->M);
    b->q = calloc((size_t)n, sizeof *b->q);
    b->sliding = calloc((size_t)n, 1);
    ck_assert(b->M && b->q && b->sliding);
    for (int ci = 0; ci < C; ++ci)
        for (int l = 0; l <= K; ++l) {
            const double *Ji = b->J[(ci % 4) * (K + 1) + l];
            for (int cj = 4 * (ci / 4); cj < 4 * (ci / 4) + 4; ++cj) /* the same body */
                for (int e = 0; e <= K; ++e) {
                    const double *Jj = b->J[(cj % 4) * (K + 1) + e];
                    double s = 0.0;
                    for (int t = 0; t < 6; ++t) s += Ji[t] * b->inv[t] * Jj[t];
                    b->M[AT(b, ci, l) + (size_t)AT(b, cj, e) * n] = s;
                }
            for (int t = 0; t < 6; ++t) b->q[AT(b, ci, l)] += Ji[t] * b->v_free[t];
        }
    for (int ci = 0; ci < C; ++ci) {
        const int s = nF + ci;
        b->sliding[s] = 1;
        b->M[s + (size_t)ci * n] = mu;
        for (int l = 1; l <= K; ++l) {
            b->M[s + (size_t)AT(b, ci, l) * n] = -1.0;
            b->M[AT(b, ci, l) + (size_t)s * n] = 1.0;
        }
    }
    to_columns(n, b->M, &b->cols);
}

static void box_release(box_lcp *b)
{
    free(b->M);
    free(b->q);
    free(b->sliding);
    free_columns(&b->cols);
}

/* the velocity after the step of copy k: v* + W J^T z_F */
static void box_velocity(const box_lcp *b, int k, const double *z, double *v)
{
    for (int t = 0; t < 6; ++t) {
        double s = 0.0;
        for (int i = 0; i < 4; ++i)
            for (int l = 0; l <= K; ++l) s += b->J[i * (K + 1) + l][t] * z[AT(b, 4 * k + i, l)];
        v[t] = b->v_free[t] + b->inv[t] * s;
    }
}

/* the sticking solve, cold: answered by its interior-point solve (no Lemke pivot), z an
 * answer of ST's LCP */
static void box_solve(box_lcp *b, pp_sticking *st, double *z)
{
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(b->n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_result r;
    ck_assert_int_eq(pp_sticking_island(st, ws, &b->cols.A, b->q, b->sliding, NULL, NULL, NULL,
                                        &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_gt(st->interior_iterations, 0);
    ck_assert_int_eq(st->lemke_pivots, 0);
    double *v = malloc((size_t)b->n * sizeof *v);
    ck_assert(v != NULL);
    for (int i = 0; i < b->n; ++i) {
        v[i] = b->q[i];
        for (int j = 0; j < b->n; ++j) v[i] += b->M[i + (size_t)j * b->n] * z[j];
    }
    check_answer(b->n, b->M, b->q, z, v, 1e-9 * b->m * G * H, 1e-9 * G * H);
    free(v);
    pp_lcp_workspace_destroy(ws);
}

START_TEST(test_box_sticks_below_friction_angle)
{
    static box_lcp b;
    const double theta = 20.0 * PI / 180.0, mu = 0.5, a = 0.5, cz = 0.1;
    box_on_incline(&b, theta, mu);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    double z[256], v[6];
    box_solve(&b, &st, z);
    ck_assert_int_eq(st.rounds, 1);
    const double mgh = b.m * G * H, N = mgh * cos(theta), F = mgh * sin(theta);
    const double tol = 1e-9 * mgh;
    for (int c = 0; c < b.C; ++c) {
        const double x = b.r[c % 4][0];
        ck_assert_double_eq_tol(z[c], N / 4.0 + (x < 0.0 ? 1.0 : -1.0) * cz * F / (4.0 * a), tol);
        const double *beta = &z[b.C + c * K];
        ck_assert_double_eq_tol(beta[0] - beta[2], F / 4.0, tol);
        ck_assert_double_eq_tol(beta[1] - beta[3], 0.0, tol);
        ck_assert_double_le(beta[0] + beta[1] + beta[2] + beta[3], mu * z[c] + tol);
    }
    for (int k = 0; k < b.C / 4; ++k) {
        box_velocity(&b, k, z, v);
        for (int t = 0; t < 6; ++t) ck_assert_double_le(fabs(v[t]), 1e-9 * G * H);
    }
    pp_sticking_free(&st);
    box_release(&b);
}
END_TEST

START_TEST(test_box_slides_above_friction_angle)
{
    static box_lcp b;
    const double theta = 40.0 * PI / 180.0, mu = 0.5;
    box_on_incline(&b, theta, mu);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    double z[256], v[6];
    box_solve(&b, &st, z);
    ck_assert_int_eq(st.rounds, 2); /* the second round not monotone in the sliding columns */
    int marked = 0;
    for (int i = 0; i < b.n; ++i) marked += st.slides[i] != 0;
    ck_assert_int_eq(marked, b.C);
    const double vx = -G * H * (sin(theta) - mu * cos(theta));
    for (int k = 0; k < b.C / 4; ++k) {
        box_velocity(&b, k, z, v);
        ck_assert_double_eq_tol(v[0], vx, 1e-9 * G * H);
        for (int t = 1; t < 6; ++t) ck_assert_double_le(fabs(v[t]), 1e-9 * G * H);
    }
    for (int c = 0; c < b.C; ++c) {
        ck_assert_double_eq_tol(z[b.C * (K + 1) + c], -vx, 1e-9 * G * H); /* sigma */
        const double *beta = &z[b.C + c * K];
        ck_assert_double_eq_tol(beta[0] + beta[1] + beta[2] + beta[3], mu * z[c],
                                1e-9 * b.m * G * H); /* on the pyramid's face */
    }
    pp_sticking_free(&st);
    box_release(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("interior");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_plate_frictionless);
    tcase_add_test(tc, test_random_monotone_against_lemke);
    tcase_add_test(tc, test_box_sticks_below_friction_angle);
    tcase_add_test(tc, test_box_slides_above_friction_angle);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
