/*
 * Unit tests of pegplus/lcp.h: Lemke's method, warm start, the regularisation fallback and
 * instance files. Every solution is checked by this file's own residual (check_solution),
 * computed from M, q and z alone, not by the solver's report.
 */
#include "pegplus/lcp.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PP_TEST_DATA_DIR
#error "PP_TEST_DATA_DIR must name contact/tests/data"
#endif

/* Tolerances, named once. */
#define TOL_RESIDUAL 1e-9  /* natural-map residual relative to the row data */
#define TOL_SAME_Z 1e-9    /* two solutions of a problem with a unique solution */
#define N_MAX 64
#define TOL_FALLBACK_FRICTION 1e-2 /* the fallback on a friction LCP (not monotone) */

/* ---- Helpers ----------------------------------------------------------------------------- */

static uint64_t g_rng;

static void rng_seed(uint64_t seed)
{
    g_rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

static double rng_uniform(double lo, double hi) /* xorshift64* */
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    uint64_t x = g_rng * 0x2545F4914F6CDD1Dull;
    return lo + (hi - lo) * (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

#define AT(M, n, i, j) ((M)[(i) + (size_t)(j) * (n)])

/* Independent validity check: z >= 0, w = Mz + q >= 0, |min(z_i, w_i)| <= tol * s_i with
 * s_i = |q_i| + (sum_j |M_ij|) ||z||_inf (the data entering row i). Returns the worst ratio. */
static double check_solution(int n, const double *M, const double *q, const double *z)
{
    double worst = 0.0, z_norm = 0.0;
    for (int j = 0; j < n; ++j) z_norm = fmax(z_norm, fabs(z[j]));
    for (int i = 0; i < n; ++i) {
        ck_assert_msg(isfinite(z[i]), "z[%d] not finite", i);
        double w = q[i], s = fabs(q[i]);
        for (int j = 0; j < n; ++j) {
            w += AT(M, n, i, j) * z[j];
            s += fabs(AT(M, n, i, j)) * z_norm;
        }
        double r = fabs(fmin(z[i], w));
        double ratio = s > 0.0 ? r / s : r;
        ck_assert_msg(ratio <= TOL_RESIDUAL, "row %d: z = %.17g, w = %.17g, |min| / s = %g", i,
                      z[i], w, ratio);
        if (ratio > worst) worst = ratio;
    }
    return worst;
}

static pp_lcp_workspace *g_ws;

static void setup(void)
{
    pp_set_log_hook(pp_log_discard, NULL);
    ck_assert_int_eq(pp_lcp_workspace_create(N_MAX, &g_ws), PP_OK);
}

static void teardown(void)
{
    pp_lcp_workspace_destroy(g_ws);
    pp_set_log_hook(NULL, NULL);
}

/* Solve, assert SOLVED and independently valid; returns the result. */
static pp_lcp_result solve_valid(int n, const double *M, const double *q, unsigned char *basis,
                                 double *z)
{
    pp_lcp_result r;
    pp_status s = pp_lcp_solve_lemke(g_ws, n, M, q, NULL, basis, z, &r);
    ck_assert_msg(s == PP_OK, "n = %d: %s after %d pivots, rel residual %g", n,
                  pp_lcp_status_string(r.status), r.pivots, r.relative_residual);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    check_solution(n, M, q, z);
    ck_assert(r.relative_residual <= TOL_RESIDUAL);
    return r;
}

/* Solve M_BB z_B = -q_B by Gaussian elimination with partial pivoting (test's own). */
static int solve_small(int n, const double *M, const double *q, unsigned mask, double *z)
{
    double A[N_MAX][N_MAX + 1];
    int idx[N_MAX], m = 0;
    for (int i = 0; i < n; ++i)
        if (mask & (1u << i)) idx[m++] = i;
    for (int a = 0; a < m; ++a) {
        for (int b = 0; b < m; ++b) A[a][b] = AT(M, n, idx[a], idx[b]);
        A[a][m] = -q[idx[a]];
    }
    for (int c = 0; c < m; ++c) {
        int p = c;
        for (int r = c + 1; r < m; ++r)
            if (fabs(A[r][c]) > fabs(A[p][c])) p = r;
        if (fabs(A[p][c]) < 1e-13) return 0;
        for (int j = 0; j <= m; ++j) {
            double t = A[c][j];
            A[c][j] = A[p][j];
            A[p][j] = t;
        }
        for (int r = 0; r < m; ++r) {
            if (r == c) continue;
            double f = A[r][c] / A[c][c];
            for (int j = c; j <= m; ++j) A[r][j] -= f * A[c][j];
        }
    }
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    for (int a = 0; a < m; ++a) z[idx[a]] = A[a][m] / A[a][a];
    return 1;
}

/* All solutions by enumerating the 2^n complementary bases; returns how many distinct
 * bases give a solution and the first one in z. */
static int enumerate_solutions(int n, const double *M, const double *q, double *z)
{
    int found = 0;
    double zt[N_MAX];
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
        if (!solve_small(n, M, q, mask, zt)) continue;
        int ok = 1;
        for (int i = 0; i < n && ok; ++i) {
            double w = q[i];
            for (int j = 0; j < n; ++j) w += AT(M, n, i, j) * zt[j];
            if (zt[i] < -1e-10 || w < -1e-10) ok = 0;
        }
        if (ok) {
            if (!found) memcpy(z, zt, (size_t)n * sizeof *z);
            ++found;
        }
    }
    return found;
}

/* ---- Random problem families --------------------------------------------------------------- */

static const int k_sizes[] = {1, 2, 3, 5, 8, 13, 21, 34, 60};
#define N_SIZES ((int)(sizeof k_sizes / sizeof k_sizes[0]))

/* M = A^T A + 1e-3 I (SPD), q uniform in [-1, 1]. */
static void random_spd(int n, double *M, double *q)
{
    double A[N_MAX * N_MAX];
    for (int i = 0; i < n * n; ++i) A[i] = rng_uniform(-1.0, 1.0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = i == j ? 1e-3 : 0.0;
            for (int k = 0; k < n; ++k) s += AT(A, n, k, i) * AT(A, n, k, j);
            AT(M, n, i, j) = s;
        }
    for (int i = 0; i < n; ++i) q[i] = rng_uniform(-1.0, 1.0);
}

START_TEST(test_spd_random)
{
    int n = k_sizes[_i % N_SIZES];
    rng_seed(1000 + (uint64_t)_i);
    double M[N_MAX * N_MAX], q[N_MAX], z[N_MAX];
    random_spd(n, M, q);
    pp_lcp_result r = solve_valid(n, M, q, NULL, z);
    ck_assert_int_le(r.pivots, 50 * n + 100);
}
END_TEST

/* Strictly row diagonally dominant with a positive diagonal => every principal submatrix is
 * too => nonsingular with positive determinant: a (nonsymmetric) P-matrix, unique solution. */
START_TEST(test_p_matrix_random)
{
    int n = k_sizes[_i % N_SIZES];
    rng_seed(2000 + (uint64_t)_i);
    double M[N_MAX * N_MAX] = {0}, q[N_MAX] = {0}, z[N_MAX], z_ref[N_MAX];
    for (int i = 0; i < n; ++i) {
        double off = 0.0;
        for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            AT(M, n, i, j) = rng_uniform(-1.0, 1.0);
            off += fabs(AT(M, n, i, j));
        }
        AT(M, n, i, i) = off + rng_uniform(0.1, 1.0);
        q[i] = rng_uniform(-1.0, 1.0);
    }
    solve_valid(n, M, q, NULL, z);
    if (n <= 8) {
        ck_assert_int_eq(enumerate_solutions(n, M, q, z_ref), 1);
        for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(z[i], z_ref[i], TOL_SAME_Z);
    }
}
END_TEST

/* Copositive-plus, not P: M = B^T B + K with B of rank n/2 (PSD, singular symmetric part)
 * and K skew-symmetric; q = w* - M z* for a complementary pair (z*, w*) >= 0, so a solution
 * exists and Lemke must find one (CPS Theorem 4.4.13). */
START_TEST(test_copositive_plus_random)
{
    int n = 2 + (_i % 7) * 4;
    rng_seed(3000 + (uint64_t)_i);
    int rank = n / 2;
    double B[N_MAX * N_MAX], M[N_MAX * N_MAX], q[N_MAX], z[N_MAX], zs[N_MAX];
    for (int i = 0; i < rank * n; ++i) B[i] = rng_uniform(-1.0, 1.0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = 0.0;
            for (int k = 0; k < rank; ++k) s += B[k + (size_t)i * rank] * B[k + (size_t)j * rank];
            double skew = i == j ? 0.0 : rng_uniform(-1.0, 1.0);
            AT(M, n, i, j) = s + skew;
            AT(M, n, j, i) = s - skew;
        }
    for (int i = 0; i < n; ++i) {
        int active = rng_uniform(0.0, 1.0) < 0.5;
        zs[i] = active ? rng_uniform(0.1, 1.0) : 0.0;
    }
    for (int i = 0; i < n; ++i) {
        double mz = 0.0;
        for (int j = 0; j < n; ++j) mz += AT(M, n, i, j) * zs[j];
        q[i] = (zs[i] > 0.0 ? 0.0 : rng_uniform(0.0, 1.0)) - mz;
    }
    solve_valid(n, M, q, NULL, z);
}
END_TEST

/* ---- The Stewart–Trinkle friction LCP, built by hand ---------------------------------- */

/*
 * A box (mass 2 kg, half extents 0.5 x 0.4 x 0.25 m) on the static plane z = 0, four corner
 * contacts, psi = 0, n = +z from the ground (A, static) to the box (B), k = 4 directions
 * d = (+x, +y, -x, -y), mu = 0.5. Free velocity nu* = (vx, vy, -g h; 0). Unknowns
 * [p_n (4); beta (16); sigma (4)], ST96 Eq 29, B-blocks [u; r x u], r = corner - x_B.
 */
#define BOX_NC 4
#define BOX_K 4
#define BOX_N (BOX_NC * (BOX_K + 2))

static void box_friction_lcp_nu(const double *nu, double *M, double *q);

static void box_friction_lcp(double vx, double vy, double *M, double *q)
{
    const double nu[6] = {vx, vy, -9.81 * 0.01, 0, 0, 0};
    box_friction_lcp_nu(nu, M, q);
}

/* The box's LCP for the free velocity nu (v, w) at the step's start. */
static void box_friction_lcp_nu(const double *nu, double *M, double *q)
{
    const double m = 2.0, a = 0.5, b = 0.4, c = 0.25, mu = 0.5;
    const double inv_i[3] = {3.0 / (m * (b * b + c * c)), 3.0 / (m * (a * a + c * c)),
                             3.0 / (m * (a * a + b * b))};
    const double corners[BOX_NC][3] = {{a, b, -c}, {-a, b, -c}, {-a, -b, -c}, {a, -b, -c}};
    const double dirs[BOX_K][3] = {{1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}};
    const double n_hat[3] = {0, 0, 1};
    double G[BOX_NC * (BOX_K + 1)][6];
    int ncol = BOX_NC * (BOX_K + 1);
    for (int i = 0; i < BOX_NC; ++i)
        for (int l = 0; l <= BOX_K; ++l) {
            const double *u = l == 0 ? n_hat : dirs[l - 1];
            const double *r = corners[i];
            int col = l == 0 ? i : BOX_NC + i * BOX_K + (l - 1);
            G[col][0] = u[0];
            G[col][1] = u[1];
            G[col][2] = u[2];
            G[col][3] = r[1] * u[2] - r[2] * u[1];
            G[col][4] = r[2] * u[0] - r[0] * u[2];
            G[col][5] = r[0] * u[1] - r[1] * u[0];
        }
    memset(M, 0, sizeof(double) * BOX_N * BOX_N);
    for (int r = 0; r < ncol; ++r)
        for (int s = 0; s < ncol; ++s) {
            double v = 0.0;
            for (int e = 0; e < 3; ++e)
                v += G[r][e] * G[s][e] / m + G[r][3 + e] * G[s][3 + e] * inv_i[e];
            AT(M, BOX_N, r, s) = v;
        }
    for (int i = 0; i < BOX_NC; ++i) {
        int sig = BOX_NC + BOX_NC * BOX_K + i;
        AT(M, BOX_N, sig, i) = mu;
        for (int j = 0; j < BOX_K; ++j) {
            int f = BOX_NC + i * BOX_K + j;
            AT(M, BOX_N, f, sig) = 1.0;
            AT(M, BOX_N, sig, f) = -1.0;
        }
    }
    for (int r = 0; r < ncol; ++r) {
        double v = 0.0;
        for (int e = 0; e < 6; ++e) v += G[r][e] * nu[e];
        q[r] = v; /* psi = 0 */
    }
    for (int i = 0; i < BOX_NC; ++i) q[BOX_NC + BOX_NC * BOX_K + i] = 0.0;
}

START_TEST(test_friction_lcp_box_cold_and_warm)
{
    static double M[BOX_N * BOX_N];
    double q[BOX_N], z[BOX_N], z2[BOX_N];
    unsigned char basis[BOX_N];
    const double mu = 0.5, m = 2.0, gh = 9.81 * 0.01;
    box_friction_lcp(0.3, 0.1, M, q);

    memset(basis, 0, sizeof basis);
    pp_lcp_result cold = solve_valid(BOX_N, M, q, basis, z);
    ck_assert_int_eq(cold.warm_started, 0);
    ck_assert_int_gt(cold.pivots, 0);

    /* Physics of the solution: the box stops sinking, sum p_n = m g h; sliding, so each
     * loaded contact sits on the pyramid's boundary: sum_j beta_j = mu p_n. */
    double pn = 0.0;
    for (int i = 0; i < BOX_NC; ++i) {
        pn += z[i];
        double fsum = 0.0;
        for (int j = 0; j < BOX_K; ++j) fsum += z[BOX_NC + i * BOX_K + j];
        ck_assert_double_eq_tol(fsum, mu * z[i], 1e-12);
    }
    ck_assert_double_eq_tol(pn, m * gh, 1e-12);

    pp_lcp_result warm = solve_valid(BOX_N, M, q, basis, z2);
    ck_assert_int_eq(warm.warm_started, 1);
    ck_assert_int_eq(warm.pivots, 0);
    for (int i = 0; i < BOX_N; ++i) ck_assert_double_eq_tol(z2[i], z[i], 1e-14);

    /* The next step's problem: a slightly slower slide, same contact mode. */
    double q_next[BOX_N];
    box_friction_lcp(0.25, 0.09, M, q_next);
    pp_lcp_result next = solve_valid(BOX_N, M, q_next, basis, z2);
    printf("check_lemke: friction LCP n = %d: cold %d pivots, warm (same) %d, warm (next step) "
           "%d (warm_started %d)\n", BOX_N, cold.pivots, warm.pivots, next.pivots,
           next.warm_started);
}
END_TEST

/* ---- Degeneracy, rays, warm start, fallback ------------------------------------------- */

/* Rows all tie at every ratio test; the smallest-index rule revisits bases forever, the
 * lexicographic rule cannot (file comment of lemke.c) and reaches z = (1, 1, 1). */
START_TEST(test_degenerate_cycles_without_lexicographic_rule)
{
    const double M[9] = {1, -2, 2, 2, 1, -2, -2, 2, 1}; /* column-major of the file's matrix */
    const double q[3] = {-1, -1, -1};
    double z[3];
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_result r;

    o.tie_break = PP_LCP_FIRST_INDEX;
    o.max_pivots = 1000;
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 3, M, q, &o, NULL, z, &r), PP_ERR_SOLVER);
    ck_assert_int_eq(r.status, PP_LCP_PIVOT_CAP);
    ck_assert_int_eq(r.pivots, 1000);
    for (int i = 0; i < 3; ++i) ck_assert(z[i] == 0.0);

    o.tie_break = PP_LCP_LEXICOGRAPHIC;
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 3, M, q, &o, NULL, z, &r), PP_OK);
    ck_assert_int_le(r.pivots, 10);
    check_solution(3, M, q, z);
    for (int i = 0; i < 3; ++i) ck_assert_double_eq_tol(z[i], 1.0, 1e-14);
}
END_TEST

/* Many ties in a larger problem: a block of the resting-box friction LCP repeated
 * (psi = 0, zero tangential velocity: q_f = 0, sigma rows 0) has degenerate rows everywhere. */
START_TEST(test_degenerate_resting_box)
{
    static double M[BOX_N * BOX_N];
    double q[BOX_N], z[BOX_N];
    box_friction_lcp(0.0, 0.0, M, q);
    int zero_rows = 0;
    for (int i = 0; i < BOX_N; ++i) zero_rows += q[i] == 0.0;
    ck_assert_int_ge(zero_rows, BOX_N - BOX_NC);
    solve_valid(BOX_N, M, q, NULL, z);
    double pn = 0.0, fx = 0.0, fy = 0.0;
    for (int i = 0; i < BOX_NC; ++i) {
        const double *beta = &z[BOX_NC + i * BOX_K]; /* d = +x, +y, -x, -y */
        pn += z[i];
        fx += beta[0] - beta[2];
        fy += beta[1] - beta[3];
    }
    ck_assert_double_eq_tol(pn, 2.0 * 9.81 * 0.01, 1e-12);
    ck_assert_double_eq_tol(fx, 0.0, 1e-12);
    ck_assert_double_eq_tol(fy, 0.0, 1e-12);
}
END_TEST

START_TEST(test_trivial_q_nonnegative)
{
    const double M[4] = {-1, 3, 5, -7};
    const double q[2] = {0.0, 2.0};
    double z[2] = {9, 9};
    pp_lcp_result r = solve_valid(2, M, q, NULL, z);
    ck_assert_int_eq(r.pivots, 0);
    ck_assert(z[0] == 0.0 && z[1] == 0.0);
}
END_TEST

/*
 * An LCP whose data reach the subnormal range: w = M z + q there is computed on a grid of
 * 4.9e-324 (2^-1074), so its relative precision is lost, and rel(z) against |q| + |M| |z|
 * reads the grid, not the answer. Measured (pegplus-soak seed 50 under PEG, step 46 on; 1 042
 * island steps of seeds 1-200): a body resting on a joint stop with velocities of ~1e-322,
 * the stop's row M = 16.76, q = -9.88e-322: Lemke's z = 5.9e-323 (12 grid steps) leaves
 * w = 4.9e-324, rel(z) = 2.5e-3, and every attempt, the regularised ones and the fallback, was
 * refused; z = 0 was applied as a failure (lcp_fallback 3, the PEG LCP replaced by the
 * standard model's). The backward error is measured against at least DBL_MIN (lcp_internal.h
 * pp_lcp_measure_row): a residual on the subnormal grid is round-off. Lemke's answer is then
 * accepted, and it is the solution: w >= 0, z >= 0, z w = 0 to the grid.
 */
START_TEST(test_subnormal_data_solved)
{
    const double M[1] = {16.757213247999584}, q[1] = {-9.8813129168249309e-322};
    double z[1] = {7.0};
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(g_ws, 1, M, q, NULL, NULL, z, &r), PP_OK);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    ck_assert_int_eq(r.fallback, 0);
    ck_assert(r.epsilon == 0.0);
    ck_assert(z[0] > 0.0 && z[0] < 1e-321);               /* -q/M = 5.9e-323 */
    ck_assert(fabs(M[0] * z[0] + q[0]) <= 4 * 4.9406564584124654e-324); /* w to the grid */
    /* the same problem scaled into the normal range: the same answer, exact as before */
    const double q_normal[1] = {-9.8813129168249309e-322 * 0x1p1000};
    ck_assert_int_eq(pp_lcp_solve(g_ws, 1, M, q_normal, NULL, NULL, z, &r), PP_OK);
    ck_assert(r.relative_residual <= 1e-15);
}
END_TEST

/* M = -I, q = -1: w = -z - 1 < 0 for every z >= 0, infeasible; M = [[1,-1],[-1,1]] (PSD,
 * copositive-plus), q = -1: w_1 + w_2 = -2 < 0, infeasible. Lemke must end on a ray. */
START_TEST(test_infeasible_ray_termination)
{
    const double neg_i[4] = {-1, 0, 0, -1};
    const double psd[4] = {1, -1, -1, 1};
    const double q[2] = {-1, -1};
    const double *cases[2] = {neg_i, psd};
    for (int c = 0; c < 2; ++c) {
        double z[2] = {7, 7};
        unsigned char basis[2] = {1, 1};
        pp_lcp_result r;
        ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 2, cases[c], q, NULL, basis, z, &r),
                         PP_ERR_SOLVER);
        ck_assert_int_eq(r.status, PP_LCP_RAY_TERMINATION);
        ck_assert(z[0] == 0.0 && z[1] == 0.0);
        ck_assert(basis[0] == 0 && basis[1] == 0);
        /* The fallback cannot invent a solution either: z stays 0, status kept, no NaN. */
        z[0] = z[1] = 7;
        ck_assert_int_eq(pp_lcp_solve(g_ws, 2, cases[c], q, NULL, NULL, z, &r), PP_ERR_SOLVER);
        ck_assert_int_eq(r.status, PP_LCP_RAY_TERMINATION);
        ck_assert_int_eq(r.attempts, 7); /* plain + eps = 1e-16, 1e-14, ..., 1e-6 */
        ck_assert_int_eq(r.fallback, 0);  /* tried, not kept: it cannot reach the tolerance */
        ck_assert(z[0] == 0.0 && z[1] == 0.0);
        ck_assert(isfinite(r.residual));
    }
}
END_TEST

START_TEST(test_warm_start_repeated_and_wrong_basis)
{
    const int n = 30;
    double M[N_MAX * N_MAX], q[N_MAX], z[N_MAX], z2[N_MAX];
    unsigned char basis[N_MAX];
    rng_seed(42);
    random_spd(n, M, q);
    memset(basis, 0, sizeof basis);
    pp_lcp_result cold = solve_valid(n, M, q, basis, z);
    ck_assert_int_gt(cold.pivots, 0);

    pp_lcp_result warm = solve_valid(n, M, q, basis, z2);
    ck_assert_int_eq(warm.pivots, 0);
    ck_assert_int_eq(warm.warm_started, 1);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(z2[i], z[i], 1e-14);

    /* Warm start disabled by option: pivots again, same unique solution (M is SPD). */
    pp_lcp_options o = pp_lcp_options_default();
    o.warm_start = 0;
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, n, M, q, &o, basis, z2, &r), PP_OK);
    ck_assert_int_eq(r.pivots, cold.pivots);

    /* A wrong basis (every z basic) is rejected by the residual and Lemke runs instead. */
    memset(basis, 1, (size_t)n);
    pp_lcp_result wrong = solve_valid(n, M, q, basis, z2);
    ck_assert_int_eq(wrong.warm_started, 0);
    ck_assert_int_gt(wrong.pivots, 0);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(z2[i], z[i], TOL_SAME_Z);
}
END_TEST

/* The nonmonotone instance of data/nonmonotone_fallback_3x3.lcp. */
START_TEST(test_regularisation_fallback)
{
    const double M[9] = {0, 0, 2, 2, 0, 1, 0, 1, 0};
    const double q[3] = {-2, -3, -3};
    double z[3];
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 3, M, q, NULL, NULL, z, &r), PP_ERR_SOLVER);
    ck_assert_int_eq(r.status, PP_LCP_RAY_TERMINATION);

    ck_assert_int_eq(pp_lcp_solve(g_ws, 3, M, q, NULL, NULL, z, &r), PP_OK);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    ck_assert(r.epsilon >= PP_LCP_EPS_FIRST && r.epsilon <= PP_LCP_EPS_MAX);
    ck_assert_int_gt(r.attempts, 1);
    check_solution(3, M, q, z);
    ck_assert_double_eq_tol(z[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(z[1], 1.0, 1e-12);
    ck_assert_double_eq_tol(z[2], 3.0, 1e-12);

    /* A problem the plain solve handles never reaches the fallback. */
    const double spd[4] = {2, 1, 1, 2};
    const double q2[2] = {-5, -6};
    ck_assert_int_eq(pp_lcp_solve(g_ws, 2, spd, q2, NULL, NULL, z, &r), PP_OK);
    ck_assert(r.epsilon == 0.0);
    ck_assert_int_eq(r.attempts, 1);
}
END_TEST

START_TEST(test_bad_arguments_rejected)
{
    double M[4] = {1, 0, 0, 1}, q[2] = {-1, -1}, z[2] = {5, 5};
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, N_MAX + 1, M, q, NULL, NULL, z, &r),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 2, NULL, q, NULL, NULL, z, &r), PP_ERR_NULL_ARGUMENT);
    M[1] = NAN;
    ck_assert_int_eq(pp_lcp_solve(g_ws, 2, M, q, NULL, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    ck_assert(z[0] == 5.0 && z[1] == 5.0);
    M[1] = 0.0;
    double d[2] = {1.0, 0.0};
    pp_lcp_options o = pp_lcp_options_default();
    o.covering = d;
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 2, M, q, &o, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    d[1] = 3.0; /* any positive covering vector works */
    ck_assert_int_eq(pp_lcp_solve_lemke(g_ws, 2, M, q, &o, NULL, z, &r), PP_OK);
    check_solution(2, M, q, z);
}
END_TEST

START_TEST(test_caller_buffer_workspace)
{
    size_t bytes = pp_lcp_workspace_size(4);
    ck_assert_uint_gt(bytes, 0);
    double *buffer = malloc(bytes);
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_init(buffer, bytes - 1, 4, &ws), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_lcp_workspace_init(buffer, bytes, 4, &ws), PP_OK);
    ck_assert_int_eq(pp_lcp_workspace_capacity(ws), 4);
    const double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6};
    double z[2];
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, 2, M, q, NULL, NULL, z, &r), PP_OK);
    check_solution(2, M, q, z);
    free(buffer);
}
END_TEST

/* ---- Golden instances and the file format ---------------------------------------------- */

typedef struct golden {
    const char *file;
    int unique;        /* solution unique: compare z with the file's */
    int fallback;      /* needs pp_lcp_solve's regularisation */
} golden;

static const golden k_golden[] = {
    {"cps_2x2_pd.lcp", 1, 0},
    {"cyclic_degenerate_3x3.lcp", 1, 0},
    {"murty_lower_5x5.lcp", 1, 0},
    {"ones_rank1_4x4.lcp", 0, 0},
    {"nonmonotone_fallback_3x3.lcp", 0, 1},
    {"box_friction_4c_k8.lcp", 0, 0},
};
#define N_GOLDEN ((int)(sizeof k_golden / sizeof k_golden[0]))

START_TEST(test_golden_instances)
{
    const golden *g = &k_golden[_i];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PP_TEST_DATA_DIR, g->file);
    pp_lcp_instance inst;
    ck_assert_msg(pp_lcp_instance_load(path, &inst) == PP_OK, "cannot load %s", path);
    ck_assert_ptr_nonnull(inst.z);
    ck_assert_int_le(inst.n, N_MAX);
    check_solution(inst.n, inst.M, inst.q, inst.z); /* the file's own answer is valid */

    double z[N_MAX];
    pp_lcp_result r;
    pp_status s = g->fallback ? pp_lcp_solve(g_ws, inst.n, inst.M, inst.q, NULL, NULL, z, &r)
                              : pp_lcp_solve_lemke(g_ws, inst.n, inst.M, inst.q, NULL, NULL, z, &r);
    ck_assert_msg(s == PP_OK, "%s: %s", g->file, pp_lcp_status_string(r.status));
    check_solution(inst.n, inst.M, inst.q, z);
    if (g->unique)
        for (int i = 0; i < inst.n; ++i) ck_assert_double_eq_tol(z[i], inst.z[i], TOL_SAME_Z);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* ---- The 30-box pile (examples/benchmark.c) -------------------------------------------
 *
 * LCPs of the Stewart–Trinkle step (k = 4, compliance 1e-10) on which the explicit-tableau
 * Lemke failed (false rays, numerical failures) and the regularised retry was needed or
 * accepted residuals of 1e-7..1e-8 (the comment line of each file). Each must now be solved
 * by pp_lcp_solve_lemke alone, without regularisation, to this file's own residual test;
 * the final basis must warm-start the same problem with no pivot. Sizes up to 102 unknowns:
 * these tests use their own workspace.
 */
typedef struct pile_case {
    const char *file;
    int rescue; /* kept because the double-precision path misses (rel 1.2e-8): solved by the
                   double-double rescue. If that changes, the test says so: replace the file
                   by another instance that needs the rescue. */
} pile_case;

static const pile_case k_pile[] = {
    {"pile30_step30_n102.lcp", 0},
    {"pile30_box_n24.lcp", 0},
    {"pile30_island_n60.lcp", 0},
    {"pile30_stack_n48.lcp", 1},
};
#define N_PILE ((int)(sizeof k_pile / sizeof k_pile[0]))

START_TEST(test_pile_instances)
{
    const pile_case *c = &k_pile[_i];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PP_TEST_DATA_DIR, c->file);
    pp_lcp_instance inst;
    ck_assert_msg(pp_lcp_instance_load(path, &inst) == PP_OK, "cannot load %s", path);
    ck_assert_ptr_nonnull(inst.z);
    check_solution(inst.n, inst.M, inst.q, inst.z); /* the file's own answer is valid */

    const int n = inst.n;
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    double *z = malloc((size_t)n * sizeof *z);
    unsigned char *basis = calloc((size_t)n, 1);
    ck_assert(z && basis);
    pp_lcp_result r;
    pp_status s = pp_lcp_solve_lemke(ws, n, inst.M, inst.q, NULL, basis, z, &r);
    ck_assert_msg(s == PP_OK, "%s: %s after %d pivots", c->file, pp_lcp_status_string(r.status),
                  r.pivots);
    ck_assert(r.epsilon == 0.0);
    double worst = check_solution(n, inst.M, inst.q, z);
    ck_assert(r.relative_residual <= TOL_RESIDUAL);
    ck_assert_msg(r.extended == c->rescue, "%s: extended = %d, expected %d", c->file, r.extended,
                  c->rescue);
    printf("check_lemke: %s: n = %d, %d pivots, %d refactorisations%s, rel residual %.2g\n",
           c->file, n, r.pivots, r.refactorisations, r.extended ? ", double-double rescue" : "",
           worst);

    pp_lcp_result again;
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, n, inst.M, inst.q, NULL, basis, z, &again), PP_OK);
    ck_assert_int_eq(again.warm_started, 1);
    ck_assert_int_eq(again.pivots, 0);
    check_solution(n, inst.M, inst.q, z);
    free(z);
    free(basis);
    pp_lcp_workspace_destroy(ws);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* COPIES copies of the m x m block B on the diagonal of an n x n M (n = COPIES m), block b
 * with q scaled by 1 + b / 4 (its z scales with it), the unknowns shuffled when `shuffle`
 * (perm: block row i of copy b is row perm[b m + i]) so that no block is contiguous. */
static void block_lcp(int copies, int m, const double *B, const double *qb, int shuffle,
                      double *M, double *q, int *perm)
{
    const int n = copies * m;
    for (int i = 0; i < n; ++i) perm[i] = i;
    for (int i = n - 1; shuffle && i > 0; --i) { /* Fisher-Yates */
        int j = (int)rng_uniform(0.0, i + 1.0);
        if (j > i) j = i;
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memset(M, 0, (size_t)n * n * sizeof *M);
    for (int b = 0; b < copies; ++b)
        for (int i = 0; i < m; ++i) {
            q[perm[b * m + i]] = (1.0 + 0.25 * b) * qb[i];
            for (int j = 0; j < m; ++j)
                AT(M, n, perm[b * m + i], perm[b * m + j]) = AT(B, m, i, j);
        }
}

/* A large LCP (n >= 1500) takes the sparse basis (a sparse LU with an eta file,
 * contact/src/lcp_sparse.c).
 * 1. 16 copies of the pile's step LCP (n = 102, friction, redundant contacts): the whole,
 *    n = 1 632, is solved with forced refactorisations along the path, valid by the
 *    independent residual; its basis solves it again without a pivot (the warm start's
 *    basis solve, sparse too).
 * 2. 16 copies of a positive definite 100 x 100 block (a P-matrix: one solution): every
 *    block of the whole's z is the block's own solution by the dense path, to 1e-9.
 * 3. 500 copies of test_regularisation_fallback's 3 x 3 LCP, on which plain Lemke ends on a
 *    ray: the regularised retries (M + eps I, the diagonal shifted as it is read, no copy
 *    of M) solve the whole, and every block is (1, 1, 3) times its scale. (In this order;
 *    shuffled, Lemke on M + eps I ends at a z of size 1/eps, refused, by the dense path
 *    too: measured on 100 shuffled copies.) */
START_TEST(test_large_sparse_block_lcp)
{
    enum { COPIES = 16, SPD_M = 100 };
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PP_TEST_DATA_DIR, "pile30_step30_n102.lcp");
    pp_lcp_instance inst;
    ck_assert(pp_lcp_instance_load(path, &inst) == PP_OK);
    const int n_max = COPIES * (inst.n > SPD_M ? inst.n : SPD_M);
    double *M = malloc((size_t)n_max * n_max * sizeof *M), *q = malloc((size_t)n_max * sizeof *q);
    double *z = malloc((size_t)n_max * sizeof *z), *zb = malloc((size_t)SPD_M * sizeof *zb);
    double *B = malloc((size_t)SPD_M * SPD_M * sizeof *B), *qb = malloc(SPD_M * sizeof *qb);
    double *A = malloc((size_t)SPD_M * SPD_M * sizeof *A);
    int *perm = malloc((size_t)n_max * sizeof *perm);
    unsigned char *basis = calloc((size_t)n_max, 1);
    ck_assert(M && q && z && zb && B && qb && A && perm && basis);
    pp_lcp_workspace *ws;
    ck_assert_int_eq(pp_lcp_workspace_create(n_max, &ws), PP_OK);
    rng_seed(11);
    /* no clock: the pivot caps alone bound the solves (sanitizer builds, a loaded machine) */
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;

    int n = COPIES * inst.n;
    block_lcp(COPIES, inst.n, inst.M, inst.q, 1, M, q, perm);
    pp_lcp_result r;
    pp_status st = pp_lcp_solve_lemke(ws, n, M, q, &o, basis, z, &r);
    ck_assert_msg(st == PP_OK, "n = %d: %s after %d pivots", n, pp_lcp_status_string(r.status),
                  r.pivots);
    ck_assert(r.epsilon == 0.0);
    ck_assert_int_gt(r.refactorisations, 1); /* the eta file was folded into new factors */
    double worst = check_solution(n, M, q, z);
    printf("check_lemke: %d pile LCPs on the diagonal, n = %d (sparse basis): %d pivots, %d "
           "refactorisations, rel residual %.2g\n", COPIES, n, r.pivots, r.refactorisations,
           worst);
    pp_lcp_result again;
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, n, M, q, &o, basis, z, &again), PP_OK);
    ck_assert_int_eq(again.warm_started, 1);
    ck_assert_int_eq(again.pivots, 0);
    check_solution(n, M, q, z);

    /* 2: B = A A^T + I, q mixed in sign (some contacts pushed, some free) */
    for (int k = 0; k < SPD_M * SPD_M; ++k) A[k] = rng_uniform(-1.0, 1.0);
    for (int i = 0; i < SPD_M; ++i) {
        qb[i] = rng_uniform(-1.0, 0.5);
        for (int j = 0; j < SPD_M; ++j) {
            double sum = i == j ? 1.0 : 0.0;
            for (int k = 0; k < SPD_M; ++k) sum += AT(A, SPD_M, i, k) * AT(A, SPD_M, j, k);
            AT(B, SPD_M, i, j) = sum;
        }
    }
    n = COPIES * SPD_M;
    block_lcp(COPIES, SPD_M, B, qb, 1, M, q, perm);
    st = pp_lcp_solve_lemke(ws, n, M, q, &o, NULL, z, &r);
    ck_assert_msg(st == PP_OK, "n = %d: %s after %d pivots", n, pp_lcp_status_string(r.status),
                  r.pivots);
    check_solution(n, M, q, z);
    pp_lcp_workspace *small;
    ck_assert_int_eq(pp_lcp_workspace_create(SPD_M, &small), PP_OK);
    double *qs = malloc(SPD_M * sizeof *qs);
    ck_assert_ptr_nonnull(qs);
    for (int b = 0; b < COPIES; ++b) {
        for (int i = 0; i < SPD_M; ++i) qs[i] = q[perm[b * SPD_M + i]];
        pp_lcp_result rb;
        ck_assert_int_eq(pp_lcp_solve_lemke(small, SPD_M, B, qs, &o, NULL, zb, &rb), PP_OK);
        double size = 0.0;
        for (int i = 0; i < SPD_M; ++i) size = fmax(size, fabs(zb[i]));
        for (int i = 0; i < SPD_M; ++i)
            ck_assert_msg(fabs(z[perm[b * SPD_M + i]] - zb[i]) <= TOL_SAME_Z * size,
                          "block %d row %d: %.17g vs %.17g", b, i, z[perm[b * SPD_M + i]], zb[i]);
    }
    printf("check_lemke: %d positive definite blocks, n = %d (sparse basis): %d pivots, each "
           "block equal to its dense solve\n", COPIES, n, r.pivots);
    free(qs);
    pp_lcp_workspace_destroy(small);

    /* 3 */
    enum { RAY_COPIES = 500 };
    const double ray_M[9] = {0, 0, 2, 2, 0, 1, 0, 1, 0}, ray_q[3] = {-2, -3, -3};
    n = RAY_COPIES * 3;
    ck_assert_int_le(n, n_max);
    block_lcp(RAY_COPIES, 3, ray_M, ray_q, 0, M, q, perm);
    st = pp_lcp_solve_lemke(ws, n, M, q, &o, NULL, z, &r);
    ck_assert_int_eq(st, PP_ERR_SOLVER);
    ck_assert_int_eq(r.status, PP_LCP_RAY_TERMINATION);
    ck_assert_int_eq(pp_lcp_solve(ws, n, M, q, &o, NULL, z, &r), PP_OK);
    ck_assert(r.epsilon >= PP_LCP_EPS_FIRST && r.epsilon <= PP_LCP_EPS_MAX);
    ck_assert_int_gt(r.attempts, 1);
    check_solution(n, M, q, z);
    for (int b = 0; b < RAY_COPIES; ++b) {
        const double scale = 1.0 + 0.25 * b, expect[3] = {1.0, 1.0, 3.0};
        for (int i = 0; i < 3; ++i)
            ck_assert_msg(fabs(z[perm[3 * b + i]] - scale * expect[i]) <= 1e-12 * scale,
                          "block %d: z_%d = %.17g", b, i, z[perm[3 * b + i]]);
    }
    printf("check_lemke: %d copies of a ray-terminating 3 x 3 LCP, n = %d: solved with M + %g "
           "I after %d attempts\n", RAY_COPIES, n, r.epsilon, r.attempts);
    pp_lcp_workspace_destroy(ws);
    free(M);
    free(q);
    free(z);
    free(zb);
    free(B);
    free(qb);
    free(A);
    free(perm);
    free(basis);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* A warm basis that is singular for M (lemke.c, "Repair"): boxes at rest with all four
 * corner normals basic, as a load-shared answer describes it (four normals of one face span
 * three freedoms), and one friction sigma basic with none of its betas, whose column of M_BB
 * is exactly 0. The basis is repaired (dependent columns go back to w basic) and the solve
 * starts from what stands (warm_started or warm_lemke) instead of from w basic, in no more
 * pivots than from w basic; the answer carries each box's weight over the step,
 * sum p_n = m g h. */
START_TEST(test_warm_lemke_singular_basis_repaired)
{
    /* REPAIR_COPIES separate copies of the box (a block-diagonal LCP of at least
     * PP_LCP_SPARSE_MIN_N unknowns, the size from which a singular start basis is repaired) */
    enum { REPAIR_COPIES = 8, N = REPAIR_COPIES * BOX_N };
    static double M1[BOX_N * BOX_N], M[N * N];
    static double q[N], z[N], z_cold[N];
    static unsigned char basis[N];
    double q1[BOX_N];
    box_friction_lcp(0.0, 0.0, M1, q1);
    memset(M, 0, sizeof M);
    memset(basis, 0, sizeof basis);
    for (int c = 0; c < REPAIR_COPIES; ++c) {
        const int o = c * BOX_N;
        for (int j = 0; j < BOX_N; ++j) {
            q[o + j] = q1[j];
            for (int i = 0; i < BOX_N; ++i) M[(size_t)(o + j) * N + o + i] = M1[j * BOX_N + i];
        }
        for (int i = 0; i < BOX_NC; ++i) basis[o + i] = 1;
        basis[o + BOX_NC + BOX_NC * BOX_K] = 1; /* sigma_0 without its betas: M_DD's column 0 */
    }
    pp_lcp_workspace *fixture_ws = g_ws; /* sized N_MAX: this test's own, sized N */
    ck_assert_int_eq(pp_lcp_workspace_create(N, &g_ws), PP_OK);
    pp_lcp_result cold = solve_valid(N, M, q, NULL, z_cold);
    pp_lcp_result warm = solve_valid(N, M, q, basis, z);
    pp_lcp_workspace_destroy(g_ws);
    g_ws = fixture_ws;
    ck_assert_msg(warm.warm_started || warm.warm_lemke, "the start basis was thrown away");
    ck_assert_int_le(warm.pivots, cold.pivots);
    for (int c = 0; c < REPAIR_COPIES; ++c) {
        double pn = 0.0;
        for (int i = 0; i < BOX_NC; ++i) pn += z[c * BOX_N + i];
        ck_assert_double_eq_tol(pn, 2.0 * 9.81 * 0.01, 1e-12);
    }
}
END_TEST

/* The LCP of `copies` separate boxes (box_friction_lcp_nu) under pegplus' compliance: 1e-10
 * max_i M_ii on the normal and friction diagonal (pegplus/mlcp.h). */
static void compliant_boxes(const double *nu, int copies, double *M, double *q)
{
    static double M1[BOX_N * BOX_N];
    double q1[BOX_N], big = 0.0;
    const int n = copies * BOX_N;
    box_friction_lcp_nu(nu, M1, q1);
    for (int i = 0; i < BOX_N; ++i) big = fmax(big, AT(M1, BOX_N, i, i));
    for (int i = 0; i < BOX_NC * (BOX_K + 1); ++i) AT(M1, BOX_N, i, i) += 1e-10 * big;
    memset(M, 0, sizeof(double) * (size_t)n * n);
    for (int c = 0; c < copies; ++c) {
        const int o = c * BOX_N;
        for (int j = 0; j < BOX_N; ++j) {
            q[o + j] = q1[j];
            for (int i = 0; i < BOX_N; ++i) M[(size_t)(o + j) * n + o + i] = M1[j * BOX_N + i];
        }
    }
}

/* Lemke from the previous step's basis where that basis's block is nonsingular only through
 * the compliance (lemke.c, "Repair"), on an LCP of at least PP_LCP_SPARSE_MIN_N unknowns. The
 * boxes slid along (0.3, 0.1) and now slide along (0.1, 0.3): the previous answer's basis holds
 * all four normals of each box's face (three freedoms) and, for each corner, the beta against
 * the old slide, whose columns of G coincide for the two corners at the same y; the repair
 * takes such columns back to w basic and Lemke starts from what stands. The answer is checked
 * as an LCP answer (solve_valid), is reached from the start (not from w basic), carries each
 * box's weight over the step (sum p_n = m g h) and, sliding, the Coulomb limit
 * (sum beta = mu sum p_n). */
START_TEST(test_warm_lemke_compliance_basis_repaired)
{
    enum { COPIES = 8, N = COPIES * BOX_N };
    static double M[N * N], q[N], z[N], z_cold[N];
    static unsigned char basis[N];
    const double mu = 0.5, mgh = 2.0 * 9.81 * 0.01;
    const double e[6] = {0.3, 0.1, -9.81 * 0.01, 0.0, 0.0, 0.0},
                 f[6] = {0.1, 0.3, -9.81 * 0.01, 0.0, 0.0, 0.0};
    pp_lcp_workspace *fixture_ws = g_ws;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &g_ws), PP_OK);
    compliant_boxes(e, COPIES, M, q);
    memset(basis, 0, sizeof basis);
    solve_valid(N, M, q, basis, z);
    compliant_boxes(f, COPIES, M, q);
    pp_lcp_result cold = solve_valid(N, M, q, NULL, z_cold);
    pp_lcp_result warm = solve_valid(N, M, q, basis, z);
    pp_lcp_workspace_destroy(g_ws);
    g_ws = fixture_ws;
    printf("check_lemke: compliant boxes, next slide direction: cold %d pivots, from the "
           "previous basis %d\n", cold.pivots, warm.pivots);
    ck_assert_msg(warm.warm_started || warm.warm_lemke, "the start basis was thrown away");
    ck_assert_int_le(warm.pivots, cold.pivots);
    for (int c = 0; c < COPIES; ++c) {
        double pn = 0.0, beta = 0.0;
        for (int i = 0; i < BOX_NC; ++i) pn += z[c * BOX_N + i];
        for (int k = 0; k < BOX_NC * BOX_K; ++k) beta += z[c * BOX_N + BOX_NC + k];
        ck_assert_double_eq_tol(pn, mgh, 1e-9 * mgh);
        ck_assert_double_eq_tol(beta, mu * pn, 1e-9 * mgh);
    }
}
END_TEST

/* Lemke from the previous basis when it is not a solution: the box turns from sliding along
 * (0.3, 0.1) to (0.1, 0.3), so the old friction directions are wrong; the solve pivots from
 * the old basis (warm_lemke) and reaches the same motion as a cold solve, in fewer pivots. */
START_TEST(test_warm_lemke_from_previous_basis)
{
    static double M[BOX_N * BOX_N];
    double q[BOX_N], z[BOX_N], z_cold[BOX_N];
    unsigned char basis[BOX_N];
    box_friction_lcp(0.3, 0.1, M, q);
    memset(basis, 0, sizeof basis);
    solve_valid(BOX_N, M, q, basis, z);

    box_friction_lcp(0.1, 0.3, M, q);
    pp_lcp_result cold = solve_valid(BOX_N, M, q, NULL, z_cold);
    pp_lcp_result warm = solve_valid(BOX_N, M, q, basis, z);
    ck_assert_int_eq(warm.warm_started, 0);
    ck_assert_int_eq(warm.warm_lemke, 1);
    ck_assert_int_lt(warm.pivots, cold.pivots);
    double pn = 0.0, pn_cold = 0.0;
    for (int i = 0; i < BOX_NC; ++i) {
        pn += z[i];
        pn_cold += z_cold[i];
    }
    ck_assert_double_eq_tol(pn, pn_cold, 1e-12);
    printf("check_lemke: next slide direction: cold %d pivots, from the previous basis %d\n",
           cold.pivots, warm.pivots);
}
END_TEST

START_TEST(test_instance_round_trip)
{
    const int n = 7;
    double M[N_MAX * N_MAX], q[N_MAX], z[N_MAX];
    rng_seed(7);
    random_spd(n, M, q);
    solve_valid(n, M, q, NULL, z);
    const char *path = "check_lemke_round_trip.lcp";
    ck_assert_int_eq(pp_lcp_instance_save(path, n, M, q, z, "round trip\nsecond line"), PP_OK);
    pp_lcp_instance inst;
    ck_assert_int_eq(pp_lcp_instance_load(path, &inst), PP_OK);
    ck_assert_int_eq(inst.n, n);
    ck_assert_mem_eq(inst.M, M, sizeof(double) * n * n);
    ck_assert_mem_eq(inst.q, q, sizeof(double) * n);
    ck_assert_mem_eq(inst.z, z, sizeof(double) * n);
    pp_lcp_instance_free(&inst);

    ck_assert_int_eq(pp_lcp_instance_save(path, n, M, q, NULL, NULL), PP_OK);
    ck_assert_int_eq(pp_lcp_instance_load(path, &inst), PP_OK);
    ck_assert_ptr_null(inst.z);
    pp_lcp_instance_free(&inst);

    FILE *f = fopen(path, "w");
    fputs("pp_lcp 1\nn 2\nM\n1 0\n0\nq\n", f);
    fclose(f);
    ck_assert_int_eq(pp_lcp_instance_load(path, &inst), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(inst.M);
    remove(path);
}
END_TEST

/* ---- Budgets and the bounded fallback ---------------------------------------------------- */

/* Load a data file into a fresh workspace of its size. */
static pp_lcp_instance load_data(const char *file, pp_lcp_workspace **ws)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PP_TEST_DATA_DIR, file);
    pp_lcp_instance inst;
    ck_assert_msg(pp_lcp_instance_load(path, &inst) == PP_OK, "cannot load %s", path);
    ck_assert_int_eq(pp_lcp_workspace_create(inst.n, ws), PP_OK);
    return inst;
}

static void assert_finite_nonnegative(int n, const double *z, const pp_lcp_result *r)
{
    for (int i = 0; i < n; ++i) {
        ck_assert_msg(isfinite(z[i]), "z[%d] not finite", i);
        ck_assert(z[i] >= 0.0);
    }
    ck_assert(isfinite(r->residual));
    ck_assert(isfinite(r->relative_residual));
}

/* The pile's largest instance needs 71 pivots; with a budget of 5 the solve stops pivoting,
 * answers with the fallback (finite, z >= 0, its residual reported and equal to this file's
 * own measure) and charges the shared budget. */
START_TEST(test_pivot_budget_gives_fallback)
{
    pp_lcp_workspace *ws;
    pp_lcp_instance inst = load_data("pile30_step30_n102.lcp", &ws);
    const int n = inst.n;
    double *z = malloc((size_t)n * sizeof *z);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_budget budget = pp_lcp_budget_start(0.0, 5);
    o.budget = &budget;
    pp_lcp_result r;
    double t0 = pp_lcp_clock();
    pp_status s = pp_lcp_solve(ws, n, inst.M, inst.q, &o, NULL, z, &r);
    double seconds = pp_lcp_clock() - t0;
    ck_assert_int_eq(s, PP_ERR_SOLVER);
    ck_assert_int_eq(r.status, PP_LCP_APPROXIMATE);
    ck_assert_int_eq(r.fallback, 1);
    ck_assert_int_eq(r.budget_exhausted, 1);
    ck_assert_int_le(r.pivots, 5 + 1); /* + the first pivot of an attempt (z0 entering) */
    ck_assert_int_gt(r.fallback_iterations, 0);
    ck_assert(seconds < 1.0);
    assert_finite_nonnegative(n, z, &r);
    pp_lcp_result check;
    pp_lcp_evaluate(n, inst.M, inst.q, z, NULL, &check);
    ck_assert(check.relative_residual == r.relative_residual);
    ck_assert_int_eq(budget.pivots, 0);
    ck_assert_int_eq(budget.exhausted, 1);
    ck_assert_int_eq(budget.pivots_used, r.pivots);

    int sweeps = r.fallback_iterations;
    /* The same through max_total_pivots, and with the fallback off: budget status, z = 0. */
    o = pp_lcp_options_default();
    o.max_total_pivots = 5;
    o.fallback = 0;
    ck_assert_int_eq(pp_lcp_solve(ws, n, inst.M, inst.q, &o, NULL, z, &r), PP_ERR_SOLVER);
    ck_assert_int_eq(r.status, PP_LCP_BUDGET_EXHAUSTED);
    for (int i = 0; i < n; ++i) ck_assert(z[i] == 0.0);
    printf("check_lemke: budget of 5 pivots on %s: fallback rel residual %.2g, %d sweeps, "
           "%.3g s\n", "pile30_step30_n102.lcp", check.relative_residual, sweeps,
           seconds);
    free(z);
    pp_lcp_workspace_destroy(ws);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* A deadline already past: no pivoting beyond the first, the answer within the fallback's
 * own bound, and the default budget still solves the problem exactly. */
START_TEST(test_time_budget_honoured)
{
    pp_lcp_workspace *ws;
    pp_lcp_instance inst = load_data("pile30_island_n60.lcp", &ws);
    const int n = inst.n;
    double *z = malloc((size_t)n * sizeof *z);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_budget budget = pp_lcp_budget_start(0.0, -1);
    budget.deadline = pp_lcp_clock() - 1.0;
    o.budget = &budget;
    pp_lcp_result r;
    pp_status s = pp_lcp_solve(ws, n, inst.M, inst.q, &o, NULL, z, &r);
    ck_assert_int_eq(r.budget_exhausted, 1);
    ck_assert_int_eq(r.fallback, 1);
    ck_assert_int_le(r.pivots, 1);
    assert_finite_nonnegative(n, z, &r);
    /* The fallback may solve it (its Newton steps find the active set): then PP_OK. */
    if (s == PP_OK) {
        ck_assert_int_eq(r.status, PP_LCP_SOLVED);
        check_solution(n, inst.M, inst.q, z);
    } else {
        ck_assert_int_eq(r.status, PP_LCP_APPROXIMATE);
    }
    printf("check_lemke: deadline passed on pile30_island_n60.lcp: %s, rel residual %.2g\n",
           pp_lcp_status_string(r.status), r.relative_residual);

    ck_assert_int_eq(pp_lcp_solve(ws, n, inst.M, inst.q, NULL, NULL, z, &r), PP_OK);
    ck_assert_int_eq(r.budget_exhausted, 0);
    ck_assert_int_eq(r.fallback, 0);
    check_solution(n, inst.M, inst.q, z);
    free(z);
    pp_lcp_workspace_destroy(ws);
    pp_lcp_instance_free(&inst);
}
END_TEST

/* The fallback alone on solvable LCPs: an SPD problem (PGS converges, Newton finishes it)
 * and the resting box's friction LCP (zero diagonal in the sigma rows) reach the residual
 * tolerance; z is finite and >= 0 throughout. */
START_TEST(test_fallback_solves_solvable_lcp)
{
    double M[N_MAX * N_MAX], q[N_MAX], z[N_MAX];
    pp_lcp_result r;
    rng_seed(4000 + (uint64_t)_i);
    int n = 5 + 7 * _i;
    random_spd(n, M, q);
    pp_status s = pp_lcp_solve_fallback(g_ws, n, M, q, NULL, NULL, z, &r);
    ck_assert_msg(s == PP_OK, "n = %d: fallback rel residual %g", n, r.relative_residual);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    ck_assert_int_eq(r.fallback, 1);
    check_solution(n, M, q, z);

    static double B[BOX_N * BOX_N];
    double qb[BOX_N], zb[BOX_N];
    box_friction_lcp(0.3 * _i, 0.1, B, qb);
    s = pp_lcp_solve_fallback(g_ws, BOX_N, B, qb, NULL, NULL, zb, &r);
    assert_finite_nonnegative(BOX_N, zb, &r);
    /* The friction LCP is not monotone and its sigma rows have a zero diagonal: the fallback
     * is not promised to solve it, only to get close (measured: exact for 3 of these 4). */
    ck_assert_msg(r.relative_residual <= TOL_FALLBACK_FRICTION,
                  "box (%g, 0.1): fallback rel residual %g", 0.3 * _i, r.relative_residual);
    printf("check_lemke: fallback on the box friction LCP (%g, 0.1): %s, rel residual %.2g\n",
           0.3 * _i, s == PP_OK ? "solved" : "approximate", r.relative_residual);
}
END_TEST

/* The fallback never returns NaN or Inf, whatever the problem: infeasible (M = -I), a
 * nonmonotone matrix, huge and tiny data, a zero matrix; z >= 0 and the reported residual
 * is that of the returned z. */
START_TEST(test_fallback_never_nan)
{
    const int n = 6;
    double M[36], q[6], z[6];
    pp_lcp_result r, check;
    rng_seed(5000 + (uint64_t)_i);
    for (int i = 0; i < n * n; ++i) M[i] = rng_uniform(-1.0, 1.0);
    for (int i = 0; i < n; ++i) q[i] = rng_uniform(-1.0, 1.0);
    switch (_i % 4) {
    case 0: /* infeasible: w = -z - 1 < 0 */
        memset(M, 0, sizeof M);
        for (int i = 0; i < n; ++i) {
            AT(M, n, i, i) = -1.0;
            q[i] = -1.0;
        }
        break;
    case 1: /* zero diagonal, large entries */
        for (int i = 0; i < n; ++i) AT(M, n, i, i) = 0.0;
        for (int i = 0; i < n * n; ++i) M[i] *= 1e150;
        break;
    case 2: /* tiny data */
        for (int i = 0; i < n * n; ++i) M[i] *= 1e-150;
        break;
    case 3: /* zero matrix, some q < 0: infeasible */
        memset(M, 0, sizeof M);
        break;
    }
    pp_lcp_options o = pp_lcp_options_default();
    o.fallback_iterations = 50;
    pp_lcp_solve_fallback(g_ws, n, M, q, &o, NULL, z, &r);
    ck_assert_int_eq(r.fallback, 1);
    ck_assert_int_le(r.fallback_iterations, 50);
    assert_finite_nonnegative(n, z, &r);
    pp_lcp_evaluate(n, M, q, z, NULL, &check);
    ck_assert(check.relative_residual == r.relative_residual);
    /* Through pp_lcp_solve with a tiny budget: a finite answer as well. */
    o.max_total_pivots = 1;
    pp_lcp_solve(g_ws, n, M, q, &o, NULL, z, &r);
    assert_finite_nonnegative(n, z, &r);
}
END_TEST

/* PEG time-stepping LCPs of the soak's scene (pegplus-soak --seed 490 --model peg, step 278,
 * dumped with PP_LCP_DUMP_ALL) on which Lemke ends on a complementary basis whose solution
 * is enormous: ||z|| = 3e16 and 2.4e18 at ||q|| = 0.67, residual r(z) = 2.1 and 28, yet
 * rel(z) = 2e-17 because rel divides by ||z||. Accepted, they wrote velocities of 1e15 m/s
 * into ODE. Now refused (lcp.c, pp_lcp_accept: r(z) <= 1e-4 ||q|| as well): whatever the
 * outcome, what comes back is no worse than z = 0. */
START_TEST(test_enormous_basis_refused)
{
    const char *files[] = {"soak490_ray_a_n30.lcp", "soak490_ray_b_n30.lcp"};
    pp_lcp_workspace *ws;
    pp_lcp_instance inst = load_data(files[_i], &ws);
    double z[N_MAX], q_norm = 0.0, z_norm = 0.0;
    pp_lcp_result r;
    pp_status s = pp_lcp_solve(ws, inst.n, inst.M, inst.q, NULL, NULL, z, &r);
    assert_finite_nonnegative(inst.n, z, &r);
    for (int i = 0; i < inst.n; ++i) {
        q_norm = fmax(q_norm, fabs(inst.q[i]));
        z_norm = fmax(z_norm, z[i]);
    }
    ck_assert_msg(r.residual <= q_norm, "%s: r(z) = %g > ||q|| = %g (||z|| = %g, status %d)",
                  files[_i], r.residual, q_norm, z_norm, s);
    if (s == PP_OK)
        ck_assert_msg(r.residual <= 1e-4 * q_norm, "%s: accepted with r(z) = %g", files[_i], r.residual);
    ck_assert_msg(z_norm <= 1e6 * (1.0 + q_norm), "%s: ||z|| = %g", files[_i], z_norm);
    pp_lcp_instance_free(&inst);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lemke");
    TCase *tc = tcase_create("lemke");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_spd_random, 0, 4 * N_SIZES);
    tcase_add_loop_test(tc, test_p_matrix_random, 0, 4 * N_SIZES);
    tcase_add_loop_test(tc, test_copositive_plus_random, 0, 28);
    tcase_add_test(tc, test_friction_lcp_box_cold_and_warm);
    tcase_add_test(tc, test_degenerate_cycles_without_lexicographic_rule);
    tcase_add_test(tc, test_degenerate_resting_box);
    tcase_add_test(tc, test_trivial_q_nonnegative);
    tcase_add_test(tc, test_subnormal_data_solved);
    tcase_add_test(tc, test_infeasible_ray_termination);
    tcase_add_test(tc, test_warm_start_repeated_and_wrong_basis);
    tcase_add_test(tc, test_regularisation_fallback);
    tcase_add_test(tc, test_bad_arguments_rejected);
    tcase_add_test(tc, test_caller_buffer_workspace);
    tcase_add_loop_test(tc, test_golden_instances, 0, N_GOLDEN);
    tcase_add_test(tc, test_instance_round_trip);
    tcase_add_loop_test(tc, test_enormous_basis_refused, 0, 2);
    tcase_add_loop_test(tc, test_pile_instances, 0, N_PILE);
    tcase_add_test(tc, test_warm_lemke_from_previous_basis);
    tcase_add_test(tc, test_warm_lemke_singular_basis_repaired);
    tcase_add_test(tc, test_warm_lemke_compliance_basis_repaired);
    tcase_add_test(tc, test_large_sparse_block_lcp);
    tcase_add_test(tc, test_pivot_budget_gives_fallback);
    tcase_add_test(tc, test_time_budget_honoured);
    tcase_add_loop_test(tc, test_fallback_solves_solvable_lcp, 0, 4);
    tcase_add_loop_test(tc, test_fallback_never_nan, 0, 8);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
