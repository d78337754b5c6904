/*
 * The interior-point solve of a monotone LCP (contact/src/lcp_interior.c), checked against a
 * closed form and Lemke:
 *  - a plate of mass m on N x N frictionless supports, LCP(M + eps I, q) with M = J W J^T
 *    (singular: N^2 supports, 3 freedoms): its solution is unique (M + eps I is positive
 *    definite) and, by symmetry, every normal p = m g h / N^2 / (1 + eps m / N^2) (the
 *    vertical impulses sum to no torque; (N^2 / m + eps) p = g h);
 *  - a random monotone LCP, M = B B^T + S + delta I (S skew), answered as Lemke answers it
 *    (the solution is unique).
 *  - the augmented (body-space) Newton systems (lcp_interior.c (4)) where the caller describes
 *    M = L + G^T W G: on the plate (one body, L = eps I) the same closed form; on an island of
 *    random bodies (one with a singular W) and random frictional contacts in the sticking
 *    solve's form (2) + eps D, the iterates after 1, 2, 3 Newton steps are the direct
 *    path's to rounding (the same directions) and the answer is the direct path's and an LCP
 *    answer; a description that does not reproduce M (one body's W off by 1e-3, or the
 *    groups that would drop the cone rows) is refused and the direct path answers;
 *  - the warm start (ip->start) on that island: the answer of a nearby LCP as the start gives
 *    the cold solve's answer in fewer iterations.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define H 0.01

/* a reproducible uniform in [-1, 1) */
static double uniform(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffffff) / (double)0x800000 - 1.0;
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
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_ge(ip.iterations, 1);
    ck_assert_int_eq(ip.factorisations + ip.refactorisations, ip.iterations);
    ck_assert_int_eq(ip.augmented, 0);
    const double share = m * G * H / (N * N) / (1.0 + eps * m / (N * N));
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(x[i], share, 1e-9 * share);
    check_answer(n, M, q, x, v, 1e-9 * share, 1e-9 * G * H);
    /* the same in body space: G = J^T (6 rows of the one body), W = diag(inv), one group
     * per support (L = eps I) */
    ck_assert_int_eq(pp_interior_bodies_reserve(&ip, n, 1, 6 * (size_t)n), PP_OK);
    for (int e = 0; e < 36; ++e) ip.bodies.W[e] = e % 7 == 0 ? inv[e / 7] : 0.0;
    for (int j = 0; j < n; ++j) {
        ip.bodies.group[j] = j;
        ip.bodies.col_start[j] = 6 * j;
        for (int t = 0; t < 6; ++t) {
            ip.bodies.row_index[6 * j + t] = t;
            ip.bodies.values[6 * j + t] = J[j][t];
        }
    }
    ip.bodies.col_start[n] = 6 * n;
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.augmented, 1);
    ck_assert_int_eq(ip.newton_order, n + 6);
    ck_assert_double_le(ip.description_error, 1e-14);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(x[i], share, 1e-9 * share);
    check_answer(n, M, q, x, v, 1e-9 * share, 1e-9 * G * H);
    pp_interior_free(&ip);
    free_columns(&cols);
    free(M);
}
END_TEST


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

/* An island of random bodies and frictional contacts in the sticking solve's form (2) + eps D
 * (lcp_sticking.c): per contact the unknowns (p, beta_1..4, lambda), its impulse columns
 * G's (6 random entries on each of its one or two bodies), the cone row mu p - sum beta with
 * -A_SF^T in lambda's column; W_d = R_d R_d^T random (the last body's of rank 5). Dense M,
 * its description in ip->bodies (group: the contact). */
enum { ISL_BODIES = 6, ISL_CONTACTS = 24, ISL_K = 4, ISL_UNKNOWNS = ISL_K + 2,
       ISL_N = ISL_CONTACTS * ISL_UNKNOWNS };

typedef struct island {
    double W[ISL_BODIES][36];
    int body[ISL_CONTACTS][2];           /* -1: the ground (no column) */
    double g[ISL_N][2][6];               /* an impulse column's entries on its bodies */
    double M[ISL_N * ISL_N], q[ISL_N];
} island;

static void build_island(island *is, unsigned seed)
{
    const double mu = 0.5, eps = 1e-3;
    memset(is, 0, sizeof *is);
    for (int d = 0; d < ISL_BODIES; ++d) {
        double R[36] = {0};
        for (int c = 0; c < 6; ++c)
            for (int r = c; r < 6; ++r)
                R[r + 6 * c] = r == c ? 1.0 + 0.5 * uniform(&seed) : 0.3 * uniform(&seed);
        if (d == ISL_BODIES - 1)
            for (int r = 0; r < 6; ++r) R[r + 6 * 5] = 0.0; /* rank 5 */
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) {
                double w = 0.0;
                for (int t = 0; t < 6; ++t) w += R[r + 6 * t] * R[c + 6 * t];
                is->W[d][r + 6 * c] = w;
            }
    }
    for (int c = 0; c < ISL_CONTACTS; ++c) {
        const int a = c % ISL_BODIES, b = (c * 7 / 3 + 1) % ISL_BODIES;
        is->body[c][0] = a;
        is->body[c][1] = c % 4 == 0 || b == a ? -1 : b; /* every 4th on the ground */
        for (int l = 0; l <= ISL_K; ++l)
            for (int side = 0; side < 2; ++side)
                for (int e = 0; e < 6; ++e)
                    is->g[c * ISL_UNKNOWNS + l][side][e] =
                        is->body[c][side] < 0 ? 0.0 : uniform(&seed);
    }
    /* G^T W G over the impulse columns */
    for (int i = 0; i < ISL_N; ++i)
        for (int j = 0; j < ISL_N; ++j) {
            const int ci = i / ISL_UNKNOWNS, cj = j / ISL_UNKNOWNS;
            if (i % ISL_UNKNOWNS > ISL_K || j % ISL_UNKNOWNS > ISL_K) continue;
            double s = 0.0;
            for (int si = 0; si < 2; ++si)
                for (int sj = 0; sj < 2; ++sj) {
                    const int d = is->body[ci][si];
                    if (d < 0 || d != is->body[cj][sj]) continue;
                    for (int r = 0; r < 6; ++r)
                        for (int t = 0; t < 6; ++t)
                            s += is->g[i][si][r] * is->W[d][r + 6 * t] * is->g[j][sj][t];
                }
            is->M[i + (size_t)j * ISL_N] = s;
        }
    for (int c = 0; c < ISL_CONTACTS; ++c) {
        const int p = c * ISL_UNKNOWNS, lambda = p + ISL_K + 1;
        is->M[lambda + (size_t)p * ISL_N] = mu;
        is->M[p + (size_t)lambda * ISL_N] = -mu;
        for (int l = 1; l <= ISL_K; ++l) {
            is->M[lambda + (size_t)(p + l) * ISL_N] = -1.0;
            is->M[(p + l) + (size_t)lambda * ISL_N] = 1.0;
        }
        for (int u = 0; u < ISL_UNKNOWNS; ++u) {
            is->M[(p + u) + (size_t)(p + u) * ISL_N] += eps;
            is->q[p + u] = u == 0 ? -0.2 + uniform(&seed) : u <= ISL_K ? uniform(&seed) : 0.0;
        }
    }
}

/* the island's description into ip->bodies (W of body `off` scaled by `w_scale`; groups per
 * unknown when `per_unknown`) */
static void describe_island(const island *is, pp_interior *ip, int off, double w_scale,
                            int per_unknown)
{
    ck_assert_int_eq(pp_interior_bodies_reserve(ip, ISL_N, ISL_BODIES, 12 * (size_t)ISL_N),
                     PP_OK);
    pp_interior_bodies *bd = &ip->bodies;
    for (int d = 0; d < ISL_BODIES; ++d)
        for (int e = 0; e < 36; ++e) bd->W[36 * d + e] = is->W[d][e] * (d == off ? w_scale : 1.0);
    int p = 0;
    for (int j = 0; j < ISL_N; ++j) {
        const int c = j / ISL_UNKNOWNS;
        bd->group[j] = per_unknown ? j : c;
        bd->col_start[j] = p;
        if (j % ISL_UNKNOWNS > ISL_K) continue; /* lambda: no body */
        const int lo = is->body[c][1] >= 0 && is->body[c][1] < is->body[c][0] ? 1 : 0;
        for (int o = 0; o < 2; ++o) {
            const int side = o == 0 ? lo : 1 - lo, d = is->body[c][side];
            if (d < 0) continue;
            for (int e = 0; e < 6; ++e) {
                bd->row_index[p] = 6 * d + e;
                bd->values[p++] = is->g[j][side][e];
            }
        }
    }
    bd->col_start[ISL_N] = p;
}

START_TEST(test_augmented_island)
{
    static island is;
    build_island(&is, 20261126u + (unsigned)_i);
    const int n = ISL_N;
    columns cols;
    to_columns(n, is.M, &cols);
    pp_interior direct, body;
    memset(&direct, 0, sizeof direct);
    memset(&body, 0, sizeof body);
    double x[ISL_N], v[ISL_N], xb[ISL_N], vb[ISL_N];
    /* the same iterates after 1, 2, 3 Newton steps: the same directions to rounding */
    for (int k = 1; k <= 3; ++k) {
        ck_assert_int_eq(pp_interior_solve(&direct, &cols.A, is.q, 1e-16, k, INFINITY, x, v),
                         PP_INTERIOR_STALLED);
        describe_island(&is, &body, -1, 1.0, 0);
        ck_assert_int_eq(pp_interior_solve(&body, &cols.A, is.q, 1e-16, k, INFINITY, xb, vb),
                         PP_INTERIOR_STALLED);
        ck_assert_int_eq(direct.augmented, 0);
        ck_assert_int_eq(body.augmented, 1);
        ck_assert_int_eq(body.iterations, k);
        ck_assert_int_lt(body.newton_entries, direct.newton_entries);
        const double xn = pp_lcp_inf_norm(n, x), vn = pp_lcp_inf_norm(n, v);
        for (int i = 0; i < n; ++i) {
            ck_assert_double_eq_tol(xb[i], x[i], 1e-12 * xn);
            ck_assert_double_eq_tol(vb[i], v[i], 1e-12 * vn);
        }
    }
    ck_assert_int_eq(body.newton_order, n + 6 * ISL_BODIES - 1); /* the last W of rank 5 */
    ck_assert_double_le(body.description_error, 1e-14);
    /* the answer: the direct path's, and an LCP answer */
    ck_assert_int_eq(pp_interior_solve(&direct, &cols.A, is.q, 1e-20, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    describe_island(&is, &body, -1, 1.0, 0);
    ck_assert_int_eq(pp_interior_solve(&body, &cols.A, is.q, 1e-20, 80, INFINITY, xb, vb),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(body.augmented, 1);
    const double xn = pp_lcp_inf_norm(n, x), qn = pp_lcp_inf_norm(n, is.q);
    int basic = 0;
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(xb[i], x[i], 1e-9 * xn);
        basic += xb[i] > 1e-6 * xn;
    }
    ck_assert_int_gt(basic, n / 10); /* neither z = 0 nor every unknown positive */
    ck_assert_int_lt(basic, n - n / 10);
    check_answer(n, is.M, is.q, xb, vb, 1e-8 * xn, 1e-8 * qn);
    /* wrong descriptions: refused (the Newton systems on M's pattern), the same answer */
    describe_island(&is, &body, 2, 1.001, 0);
    ck_assert_int_eq(pp_interior_solve(&body, &cols.A, is.q, 1e-20, 80, INFINITY, xb, vb),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(body.augmented, 0);
    ck_assert_double_gt(body.description_error, 1e-6);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(xb[i], x[i], 1e-9 * xn);
    describe_island(&is, &body, -1, 1.0, 1); /* the cone rows between groups */
    ck_assert_int_eq(pp_interior_solve(&body, &cols.A, is.q, 1e-20, 80, INFINITY, xb, vb),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(body.augmented, 0);
    ck_assert_double_gt(body.description_error, 1e-6);
    /* no description (n = 0 after a solve's caller cleared it): the direct path */
    body.bodies.n = 0;
    ck_assert_int_eq(pp_interior_solve(&body, &cols.A, is.q, 1e-20, 80, INFINITY, xb, vb),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(body.augmented, 0);
    pp_interior_free(&direct);
    pp_interior_free(&body);
    free_columns(&cols);
}
END_TEST

/* The warm start (ip->start): the island's answer x0 of LCP(M, q) as the start of the next
 * step's LCP(M, q'), q' = q + 1e-6 ||q|| u (u random in [-1, 1]): converged, to the cold
 * solve's answer of LCP(M, q') (unique: M + eps D is positive definite on the impulses) in
 * fewer iterations, an LCP answer; the start is used once (ip->start cleared, ip->warm); a
 * start of the wrong unknowns (x0 reversed) still answers the LCP; a zero start is the cold
 * start. */
START_TEST(test_warm_start)
{
    static island is;
    build_island(&is, 20261126u + (unsigned)_i);
    const int n = ISL_N;
    columns cols;
    to_columns(n, is.M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    double x0[ISL_N], v0[ISL_N], x[ISL_N], v[ISL_N], xw[ISL_N], vw[ISL_N], q2[ISL_N];
    describe_island(&is, &ip, -1, 1.0, 0);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, is.q, 1e-20, 80, INFINITY, x0, v0),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.warm, 0);
    const double qn = pp_lcp_inf_norm(n, is.q);
    unsigned seed = 77u + (unsigned)_i;
    for (int i = 0; i < n; ++i) q2[i] = is.q[i] + 1e-6 * qn * uniform(&seed);
    describe_island(&is, &ip, -1, 1.0, 0);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q2, 1e-20, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    const int cold = ip.iterations;
    describe_island(&is, &ip, -1, 1.0, 0);
    ip.start = x0;
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q2, 1e-20, 80, INFINITY, xw, vw),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.warm, 1);
    ck_assert_ptr_null(ip.start);
    ck_assert_int_eq(ip.augmented, 1);
    ck_assert_int_lt(ip.iterations, cold);
    const double xn = pp_lcp_inf_norm(n, x);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(xw[i], x[i], 1e-9 * xn);
    check_answer(n, is.M, q2, xw, vw, 1e-8 * xn, 1e-8 * qn);
    /* the wrong unknowns' answer as the start: only the work depends on it */
    double reversed[ISL_N];
    for (int i = 0; i < n; ++i) reversed[i] = x0[n - 1 - i];
    describe_island(&is, &ip, -1, 1.0, 0);
    ip.start = reversed;
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q2, 1e-20, 80, INFINITY, xw, vw),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.warm, 1);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(xw[i], x[i], 1e-9 * xn);
    check_answer(n, is.M, q2, xw, vw, 1e-8 * xn, 1e-8 * qn);
    /* a zero start: the cold start, the cold iterates */
    double zero[ISL_N] = {0};
    describe_island(&is, &ip, -1, 1.0, 0);
    ip.start = zero;
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q2, 1e-20, 80, INFINITY, xw, vw),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.warm, 0);
    ck_assert_int_eq(ip.iterations, cold);
    for (int i = 0; i < n; ++i) ck_assert_double_eq(xw[i], x[i]);
    pp_interior_free(&ip);
    free_columns(&cols);
}
END_TEST

/* the caller's clock: past its deadline no Newton system is factorised (stalled, the start
 * as it was); the same LCP with no deadline converges */
/* Not monotone (ip->first_order, lcp_interior.c "Not monotone"): the island of
 * test_augmented_island with every third contact in ST's own form (its sigma column E over
 * the betas only, no -mu in the p row, no eps on its diagonal: the sticking solve's round
 * with sliding contacts, lcp_sticking.c), its p pressed hard and the bodies pushed
 * sideways so that such contacts slide: the corrector without the second-order term converges
 * in body space to an LCP answer with such contacts loaded and sliding, and the flag is for
 * one solve only. */
START_TEST(test_first_order_mixed)
{
    static island is;
    build_island(&is, 20261127u + (unsigned)_i);
    const int n = ISL_N;
    int st_form = 0;
    for (int c = 0; c < ISL_CONTACTS; c += 3) {
        const int p = c * ISL_UNKNOWNS, lambda = p + ISL_K + 1;
        is.M[p + (size_t)lambda * n] = 0.0;
        is.M[lambda + (size_t)lambda * n] = 0.0;
        is.q[p] = -1.0;
        is.q[p + 1] = -0.8; /* beta_1 pulled: the contact slides against it */
        ++st_form;
    }
    columns cols;
    to_columns(n, is.M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    double xb[ISL_N], vb[ISL_N];
    describe_island(&is, &ip, -1, 1.0, 0);
    ip.first_order = 1;
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, is.q, 1e-18, 300, INFINITY, xb, vb),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.first_order, 0); /* one solve only */
    ck_assert_int_eq(ip.augmented, 1);
    const double xn = pp_lcp_inf_norm(n, xb), qn = pp_lcp_inf_norm(n, is.q);
    check_answer(n, is.M, is.q, xb, vb, 1e-8 * xn, 1e-8 * qn);
    int sliding = 0; /* loaded (p > 0) and sliding (sigma > 0) in ST's form */
    for (int c = 0; c < ISL_CONTACTS; c += 3) {
        const int p = c * ISL_UNKNOWNS, sigma = p + ISL_K + 1;
        sliding += xb[p] > 1e-6 * xn && xb[sigma] > 1e-6 * xn;
    }
    ck_assert_int_ge(sliding, st_form / 2);
    pp_interior_free(&ip);
    free_columns(&cols);
}
END_TEST

/* The work bound (PP_LCP_FACTOR_WORK, lcp_interior.c): the augmented form (4) is held to
 * AMD's estimate fill^2 / order and to the fill its factorisations made, not to the charge
 * order * entries of a basis block. Between the two the island is solved in body space and
 * refused on M's pattern; below the fill's it is refused in body space too. */
START_TEST(test_augmented_work_bound)
{
    static island is;
    build_island(&is, 20261128u);
    const int n = ISL_N;
    columns cols;
    to_columns(n, is.M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    double x[ISL_N], v[ISL_N];
    describe_island(&is, &ip, -1, 1.0, 0);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, is.q, 1e-18, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.augmented, 1);
    const double amd = ip.newton_fill * ip.newton_fill / ip.newton_order,
                 charge = (double)ip.newton_order * ip.newton_entries;
    const double bound = 4.0 * amd; /* room for KLU's own fill beyond AMD's estimate */
    ck_assert_double_lt(bound, charge);
    const double kept = pp_lcp_factor_work_bound(bound);
    describe_island(&is, &ip, -1, 1.0, 0);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, is.q, 1e-18, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(ip.augmented, 1);
    const double xn = pp_lcp_inf_norm(n, x), qn = pp_lcp_inf_norm(n, is.q);
    check_answer(n, is.M, is.q, x, v, 1e-8 * xn, 1e-8 * qn);
    ip.bodies.n = 0; /* no description: (3), n nnz(M) over the bound */
    ck_assert_double_gt((double)n * cols.A.col_start[n], bound);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, is.q, 1e-18, 80, INFINITY, x, v),
                     PP_INTERIOR_FAILED);
    ck_assert_int_eq(ip.iterations, 0);
    pp_lcp_factor_work_bound(0.5 * amd);
    describe_island(&is, &ip, -1, 1.0, 0);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, is.q, 1e-18, 80, INFINITY, x, v),
                     PP_INTERIOR_FAILED);
    ck_assert_int_eq(ip.iterations, 0);
    pp_lcp_factor_work_bound(kept);
    pp_interior_free(&ip);
    free_columns(&cols);
}
END_TEST

/* The deadline and stop tests' LCP: tridiagonal M (2 on the diagonal, -0.5 beside it), q
 * alternating -1, -1, 0.5; it converges in more than 6 interior iterations. */
static void tridiagonal_lcp(int n, double *M, double *q)
{
    for (int i = 0; i < n; ++i) {
        q[i] = (i % 3) ? -1.0 : 0.5;
        for (int j = 0; j < n; ++j) M[i + j * n] = i == j ? 2.0 : (abs(i - j) == 1 ? -0.5 : 0.0);
    }
}

START_TEST(test_deadline)
{
    const int n = 40;
    double M[40 * 40], q[40], x[40], v[40];
    tridiagonal_lcp(n, M, q);
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

/* The caller's stop test (pp_interior stop, stop_every; lcp_sticking.c's creeping round): it
 * sees the iterate every stop_every iterations, its nonzero ends the solve there with x that
 * iterate (PP_INTERIOR_STALLED, stopped), and it is the next solve's only: the solve after it
 * runs to convergence. The deadline test's tridiagonal LCP (converges in more than 6). */
typedef struct stop_record {
    int calls, at_call, n;
    double x[40];
} stop_record;

static int stop_at(void *context, const double *x)
{
    stop_record *r = context;
    memcpy(r->x, x, (size_t)r->n * sizeof *x);
    return ++r->calls == r->at_call;
}

START_TEST(test_stop)
{
    const int n = 40;
    double M[40 * 40], q[40], x[40], v[40];
    tridiagonal_lcp(n, M, q);
    columns cols;
    to_columns(n, M, &cols);
    pp_interior ip;
    memset(&ip, 0, sizeof ip);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    const int full = ip.iterations;
    ck_assert_int_gt(full, 6);
    ck_assert_int_eq(ip.stopped, 0);
    stop_record r = {0, 2, n, {0}};
    ip.stop = stop_at;
    ip.stop_context = &r;
    ip.stop_every = 3;
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_STALLED);
    ck_assert_int_eq(r.calls, 2); /* at iterations 3 and 6 */
    ck_assert_int_eq(ip.iterations, 6);
    ck_assert_int_eq(ip.stopped, 1);
    for (int i = 0; i < n; ++i) ck_assert(x[i] == r.x[i]); /* the iterate it was shown */
    ck_assert(ip.stop == NULL && ip.stop_context == NULL);
    ck_assert_int_eq(pp_interior_solve(&ip, &cols.A, q, 1e-16, 80, INFINITY, x, v),
                     PP_INTERIOR_CONVERGED);
    ck_assert_int_eq(r.calls, 2); /* not called again */
    ck_assert_int_eq(ip.iterations, full);
    ck_assert_int_eq(ip.stopped, 0);
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
    tcase_add_test(tc, test_stop);
    tcase_add_loop_test(tc, test_augmented_island, 0, 3);
    tcase_add_loop_test(tc, test_warm_start, 0, 3);
    tcase_add_loop_test(tc, test_first_order_mixed, 0, 3);
    tcase_add_test(tc, test_augmented_work_bound);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
