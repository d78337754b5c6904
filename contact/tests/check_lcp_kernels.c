/*
 * Unit tests of the LCP solver's dense vector kernels (contact/src/lcp_basis.c, "Vector
 * kernels"): the LU with partial pivoting and its substitutions, the pivot update and the
 * products of the explicit basis inverse, and the sweeps over M of the residual run four
 * lanes at a time (AVX2 where the CPU has it). Each lane does the scalar loop's operations in
 * the scalar loop's order, so every result must be the same bits as the plain scalar loops
 * written out here: the speed-up must not change a single trajectory. Matrices are random,
 * with exact zeros (the islands' blocks are sparse, and zeros take the skipping branches), of
 * every size from 1 to past the islands' (n up to 131, every remainder of 4 and 8). The same for
 * the sparse basis of large LCPs (lcp_sparse.c): FTRAN through its eta file, the residuals'
 * column updates and a whole Lemke solve, with its vector kernels against its scalar loops.
 */
#include "pegplus/lcp.h"

#include "../src/lcp_internal.h"
#include "test_support.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_MAX 131

/* Random entries in [-1, 1), about a third of them exact zeros, and a dominant diagonal
 * where `diagonal` (a nonsingular matrix, as the islands' basis blocks). */
static void random_matrix(int n, double *A, int diagonal)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double u = uniform(0.0, 1.0);
            A[i + (size_t)j * n] = u < 0.35 ? 0.0 : uniform(-1.0, 1.0);
        }
    if (diagonal)
        for (int i = 0; i < n; ++i) A[i + (size_t)i * n] += (i % 2 ? 1.0 : -1.0) * n * 0.25;
}

/* The scalar LU (the loops the kernels replace, element by element). */
static int scalar_lu_factor(int n, double *A, int *piv)
{
    for (int k = 0; k < n; ++k) {
        double *ck = &A[(size_t)k * n];
        int p = k;
        double amax = fabs(ck[k]);
        for (int i = k + 1; i < n; ++i)
            if (fabs(ck[i]) > amax) {
                amax = fabs(ck[i]);
                p = i;
            }
        piv[k] = p;
        if (!(amax > 0.0) || !isfinite(amax)) return 0;
        if (p != k)
            for (int j = 0; j < n; ++j) {
                double t = A[k + (size_t)j * n];
                A[k + (size_t)j * n] = A[p + (size_t)j * n];
                A[p + (size_t)j * n] = t;
            }
        double inv = 1.0 / ck[k];
        for (int i = k + 1; i < n; ++i) ck[i] *= inv;
        for (int j = k + 1; j < n; ++j) {
            double *cj = &A[(size_t)j * n];
            double f = cj[k];
            if (f == 0.0) continue;
            for (int i = k + 1; i < n; ++i) cj[i] -= f * ck[i];
        }
    }
    return 1;
}

static void scalar_lu_solve(int n, const double *LU, const int *piv, double *x)
{
    for (int k = 0; k < n; ++k)
        if (piv[k] != k) {
            double t = x[k];
            x[k] = x[piv[k]];
            x[piv[k]] = t;
        }
    for (int k = 0; k < n; ++k) {
        double xk = x[k];
        if (xk == 0.0) continue;
        for (int i = k + 1; i < n; ++i) x[i] -= LU[i + (size_t)k * n] * xk;
    }
    for (int k = n - 1; k >= 0; --k) {
        x[k] /= LU[k + (size_t)k * n];
        double xk = x[k];
        if (xk == 0.0) continue;
        for (int i = 0; i < k; ++i) x[i] -= LU[i + (size_t)k * n] * xk;
    }
}

START_TEST(lu_same_bits_as_scalar)
{
    rng_state = 11;
    static double A[N_MAX * N_MAX], B[N_MAX * N_MAX], C[N_MAX * N_MAX], x[N_MAX], y[N_MAX],
        b[N_MAX];
    static int pa[N_MAX], pb[N_MAX];
    for (int n = 1; n <= N_MAX; ++n) {
        random_matrix(n, A, n % 3 != 0); /* every third left to partial pivoting alone */
        memcpy(B, A, (size_t)n * n * sizeof *A);
        memcpy(C, A, (size_t)n * n * sizeof *A);
        int ok_a = pp_lcp_lu_factor(n, A, pa), ok_b = scalar_lu_factor(n, B, pb);
        ck_assert_int_eq(ok_a, ok_b);
        if (!ok_a) continue;
        ck_assert_msg(memcmp(A, B, (size_t)n * n * sizeof *A) == 0, "LU factors differ, n = %d", n);
        ck_assert_msg(memcmp(pa, pb, (size_t)n * sizeof *pa) == 0, "pivots differ, n = %d", n);
        for (int i = 0; i < n; ++i) x[i] = uniform(0.0, 1.0) < 0.3 ? 0.0 : uniform(-2.0, 2.0);
        memcpy(y, x, (size_t)n * sizeof *x);
        memcpy(b, x, (size_t)n * sizeof *x);
        pp_lcp_lu_solve(n, A, pa, x);
        scalar_lu_solve(n, B, pb, y);
        ck_assert_msg(memcmp(x, y, (size_t)n * sizeof *x) == 0, "LU solve differs, n = %d", n);
        /* and it solves A x = b (backward error at the rounding level of a stable LU) */
        double anorm = 0.0, xnorm = 0.0, rnorm = 0.0;
        for (int i = 0; i < n; ++i) {
            double r = -b[i], row = 0.0;
            for (int j = 0; j < n; ++j) {
                r += C[i + (size_t)j * n] * x[j];
                row += fabs(C[i + (size_t)j * n]);
            }
            anorm = fmax(anorm, row);
            xnorm = fmax(xnorm, fabs(x[i]));
            rnorm = fmax(rnorm, fabs(r));
        }
        ck_assert_msg(rnorm <= 1e-12 * (anorm * xnorm + 1.0), "A x - b = %g, n = %d", rnorm, n);
    }
}
END_TEST

/* A singular block (two equal columns) is reported as such, as by the scalar loops. */
START_TEST(lu_singular_reported)
{
    rng_state = 12;
    static double A[N_MAX * N_MAX], B[N_MAX * N_MAX];
    static int pa[N_MAX], pb[N_MAX];
    for (int n = 2; n <= 40; ++n) {
        random_matrix(n, A, 0);
        memcpy(&A[(size_t)(n - 1) * n], &A[0], (size_t)n * sizeof *A); /* last column = first */
        for (int i = 0; i < n; ++i) A[i] = A[i + (size_t)(n - 1) * n] = (double)(i + 1);
        memcpy(B, A, (size_t)n * n * sizeof *A);
        ck_assert_int_eq(pp_lcp_lu_factor(n, A, pa), scalar_lu_factor(n, B, pb));
    }
}
END_TEST

START_TEST(vector_sweeps_same_bits_as_scalar)
{
    rng_state = 13;
    double x[N_MAX], y[N_MAX], s[N_MAX], y0[N_MAX], s0[N_MAX];
    for (int n = 0; n <= N_MAX; ++n)
        for (int trial = 0; trial < 4; ++trial) {
            double a = trial == 3 ? 0.0 : uniform(-3.0, 3.0);
            for (int i = 0; i < n; ++i) {
                x[i] = uniform(0.0, 1.0) < 0.3 ? (i % 2 ? 0.0 : -0.0) : uniform(-5.0, 5.0);
                y[i] = y0[i] = uniform(-1.0, 1.0);
                s[i] = s0[i] = uniform(0.0, 1.0);
            }
            pp_lcp_vec_axpy_abs(n, y, s, x, a);
            for (int i = 0; i < n; ++i) {
                y0[i] += x[i] * a;
                s0[i] += fabs(x[i]);
            }
            ck_assert(memcmp(y, y0, (size_t)n * sizeof *y) == 0);
            ck_assert(memcmp(s, s0, (size_t)n * sizeof *s) == 0);
            pp_lcp_vec_abs_add(n, s, x);
            pp_lcp_vec_axpy(n, y, x, -a);
            for (int i = 0; i < n; ++i) {
                s0[i] += fabs(x[i]);
                y0[i] += -a * x[i];
            }
            ck_assert(memcmp(y, y0, (size_t)n * sizeof *y) == 0);
            ck_assert(memcmp(s, s0, (size_t)n * sizeof *s) == 0);
            /* finiteness: an Inf or NaN anywhere is seen */
            ck_assert_int_eq(pp_lcp_all_finite((size_t)n, x), 1);
            if (n > 0) {
                double keep = x[n - 1 - trial % n];
                x[n - 1 - trial % n] = trial % 2 ? INFINITY : NAN;
                ck_assert_int_eq(pp_lcp_all_finite((size_t)n, x), 0);
                x[n - 1 - trial % n] = keep;
            }
        }
}
END_TEST

/* The explicit inverse's products and pivot update (lemke_run with a workspace): the same
 * bits as the scalar loops (B^-1 b by the four partial sums of each row's dot product; row r
 * /= y_r, row i -= y_i row r). */
START_TEST(inverse_same_bits_as_scalar)
{
    rng_state = 14;
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(N_MAX, &ws), PP_OK);
    static double inv0[N_MAX * N_MAX];
    double b[N_MAX], v[N_MAX], v0[N_MAX], x0[N_MAX];
    for (int n = 1; n < PP_LCP_SPARSE_MIN_N && n <= N_MAX; n += (n < 20 ? 1 : 7)) {
        lemke_run run;
        memset(&run, 0, sizeof run);
        run.ws = ws;
        run.n = n;
        for (size_t e = 0; e < (size_t)n * n; ++e)
            ws->inverse[e] = inv0[e] = uniform(0.0, 1.0) < 0.3 ? 0.0 : uniform(-1.0, 1.0);
        for (int i = 0; i < n; ++i) b[i] = uniform(-1.0, 1.0);
        pp_lcp_apply_inverse(&run, b, v);
        for (int i = 0; i < n; ++i) {
            const double *row = &inv0[(size_t)i * n];
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
            int k = 0;
            for (; k + 4 <= n; k += 4) {
                s0 += row[k] * b[k];
                s1 += row[k + 1] * b[k + 1];
                s2 += row[k + 2] * b[k + 2];
                s3 += row[k + 3] * b[k + 3];
            }
            for (; k < n; ++k) s0 += row[k] * b[k];
            v0[i] = (s0 + s1) + (s2 + s3);
        }
        ck_assert_msg(memcmp(v, v0, (size_t)n * sizeof *v) == 0, "B^-1 b differs, n = %d", n);

        const int r = n / 2;
        for (int i = 0; i < n; ++i) {
            ws->y[i] = i == r ? uniform(0.5, 1.0) : (uniform(0.0, 1.0) < 0.3 ? 0.0 : uniform(-1.0, 1.0));
            ws->x[i] = x0[i] = uniform(-1.0, 1.0);
        }
        ck_assert_int_eq(pp_lcp_pivot(&run, r), 1);
        double inv = 1.0 / ws->y[r], theta = x0[r] * inv;
        for (int k = 0; k < n; ++k) inv0[(size_t)r * n + k] *= inv;
        for (int i = 0; i < n; ++i) {
            double f = ws->y[i];
            if (i == r || f == 0.0) continue;
            for (int k = 0; k < n; ++k) inv0[(size_t)i * n + k] -= f * inv0[(size_t)r * n + k];
            x0[i] -= f * theta;
        }
        x0[r] = theta;
        ck_assert_msg(memcmp(ws->inverse, inv0, (size_t)n * n * sizeof *inv0) == 0,
                      "pivot update differs, n = %d", n);
        ck_assert_msg(memcmp(ws->x, x0, (size_t)n * sizeof *x0) == 0, "x differs, n = %d", n);
    }
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* w = M z + q and the row sums of |M| of the residual: the same bits as a row-wise loop. */
START_TEST(residual_same_bits_as_scalar)
{
    rng_state = 15;
    static double M[N_MAX * N_MAX];
    double q[N_MAX], z[N_MAX], w[N_MAX];
    for (int n = 1; n <= N_MAX; n += 5) {
        random_matrix(n, M, 0);
        for (int i = 0; i < n; ++i) {
            q[i] = uniform(-1.0, 1.0);
            z[i] = uniform(0.0, 1.0) < 0.5 ? 0.0 : uniform(0.0, 2.0);
        }
        pp_lcp_result result, with_sums;
        memset(&result, 0, sizeof result);
        memset(&with_sums, 0, sizeof with_sums);
        pp_lcp_residual(n, M, q, z, w, &result);
        /* the row sums formed once (pp_lcp_solve's argument check) and the residual given
         * them (w from the columns with z_j != 0 alone): the same bits */
        double sums[N_MAX], w_sums[N_MAX];
        pp_lcp_row_sums(n, M, sums);
        pp_lcp_residual_sums(n, M, sums, q, z, w_sums, &with_sums);
        ck_assert_msg(memcmp(w, w_sums, (size_t)n * sizeof *w) == 0, "w with sums, n = %d", n);
        ck_assert_msg(memcmp(&result, &with_sums, sizeof result) == 0, "measures with sums, "
                      "n = %d", n);
        double zmax = 0.0, relative = 0.0;
        for (int i = 0; i < n; ++i) zmax = fmax(zmax, fabs(z[i]));
        for (int i = 0; i < n; ++i) {
            double wi = q[i], row = 0.0;
            for (int j = 0; j < n; ++j) {
                if (z[j] != 0.0) wi += M[i + (size_t)j * n] * z[j];
                row += fabs(M[i + (size_t)j * n]);
            }
            ck_assert_msg(memcmp(&row, &sums[i], sizeof row) == 0, "row sum %d, n = %d", i, n);
            ck_assert_msg(memcmp(&wi, &w[i], sizeof wi) == 0, "w_%d differs, n = %d", i, n);
            double si = fabs(q[i]) + row * zmax, ri = fabs(fmin(z[i], wi));
            double rel = si > 0.0 ? ri / si : (ri > 0.0 ? INFINITY : ri);
            if (!(rel <= relative)) relative = rel;
        }
        ck_assert_msg(memcmp(&relative, &result.relative_residual, sizeof relative) == 0,
                      "relative residual differs, n = %d", n);
    }
}
END_TEST


/* pp_lcp_solve's argument check forms M's row sums (lcp.c check_arguments): M with a NaN or
 * an Inf is still refused; finite entries whose row sum overflows are not (the entry-wise
 * test decides); the sums are kept for the M just solved (pp_lcp_row_sums_kept) and dropped
 * by the next public solve. */
START_TEST(row_sums_kept_by_the_solve)
{
    enum { n = 3 };
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    double M[n * n] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, q[n] = {-1, 1, -2}, z[n];
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(ws, n, M, q, NULL, NULL, z, &r), PP_OK);
    const double *sums = pp_lcp_row_sums_kept(ws, n, M);
    ck_assert_ptr_nonnull(sums);
    for (int i = 0; i < n; ++i) ck_assert_double_eq(sums[i], 2.0);
    ck_assert_double_eq(z[0], 0.5);
    ck_assert_double_eq(z[2], 1.0);
    ck_assert_ptr_null(pp_lcp_row_sums_kept(ws, n - 1, M)); /* another order */
    double M2[n * n];
    memcpy(M2, M, sizeof M);
    ck_assert_ptr_null(pp_lcp_row_sums_kept(ws, n, M2)); /* another matrix */
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, n, M, q, NULL, NULL, z, &r), PP_OK);
    ck_assert_ptr_null(pp_lcp_row_sums_kept(ws, n, M)); /* another public solve since */
    /* an Inf, a NaN: refused */
    M2[1] = INFINITY;
    ck_assert_int_eq(pp_lcp_solve(ws, n, M2, q, NULL, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(pp_lcp_row_sums_kept(ws, n, M2));
    M2[1] = NAN;
    ck_assert_int_eq(pp_lcp_solve(ws, n, M2, q, NULL, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    /* finite, with a row sum that overflows (1e308 + 1e308): not refused as NaN/Inf */
    memcpy(M2, M, sizeof M);
    M2[0 + 1 * n] = 1e308;
    M2[0 + 2 * n] = 1e308;
    ck_assert_int_ne(pp_lcp_solve(ws, n, M2, q, NULL, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* The compensated column sums of the residuals (hi, lo) -= sum_t a_t c_t: the same bits as
 * the scalar loop (zero entries skipped; a b = p + e by a fused multiply-add, which Dekker's
 * product matches exactly where the CPU has none). */
START_TEST(compensated_columns_same_bits_as_scalar)
{
    rng_state = 16;
    static double cols[4][N_MAX];
    double hi[N_MAX], lo[N_MAX], hi0[N_MAX], lo0[N_MAX], a[4];
    for (int n = 1; n <= N_MAX; n += 3)
        for (int count = 0; count <= 4; ++count) {
            const double *c[4] = {cols[0], cols[1], cols[2], cols[3]};
            for (int t = 0; t < 4; ++t) {
                a[t] = uniform(-2.0, 2.0) * pow(10.0, (double)(t - 2));
                for (int k = 0; k < n; ++k)
                    cols[t][k] = uniform(0.0, 1.0) < 0.4 ? 0.0 : uniform(-1.0, 1.0);
            }
            for (int k = 0; k < n; ++k) {
                hi[k] = hi0[k] = uniform(-1.0, 1.0);
                lo[k] = lo0[k] = uniform(-1.0, 1.0) * 1e-17;
            }
            pp_lcp_subtract_columns(n, hi, lo, c, a, count);
            for (int t = 0; t < count; ++t)
                for (int k = 0; k < n; ++k) {
                    if (c[t][k] == 0.0) continue;
                    double p = -a[t] * c[t][k], ep = fma(-a[t], c[t][k], -p);
                    double s = hi0[k] + p, bv = s - hi0[k];
                    double es = (hi0[k] - (s - bv)) + (p - bv);
                    hi0[k] = s;
                    lo0[k] += es + ep;
                }
            ck_assert_msg(memcmp(hi, hi0, (size_t)n * sizeof *hi) == 0, "hi differs, n = %d", n);
            ck_assert_msg(memcmp(lo, lo0, (size_t)n * sizeof *lo) == 0, "lo differs, n = %d", n);
        }
}
END_TEST

/* The infinity norm (max |x_i| over the x_i that are not NaN), four lanes: the scalar loop's
 * value with NaN, Inf and zeros of both signs among the entries, at every length. */
START_TEST(inf_norm_same_as_scalar)
{
    rng_state = 17;
    double x[N_MAX];
    for (int n = 0; n <= N_MAX; ++n)
        for (int trial = 0; trial < 4; ++trial) {
            for (int i = 0; i < n; ++i) {
                double u = uniform(0.0, 1.0);
                x[i] = u < 0.1    ? NAN
                       : u < 0.15 ? (trial % 2 ? -INFINITY : -0.0)
                       : u < 0.3  ? 0.0
                                  : uniform(-1.0, 1.0) * pow(10.0, (double)(i % 7) - 3.0);
            }
            double scalar = 0.0;
            for (int i = 0; i < n; ++i)
                if (fabs(x[i]) > scalar) scalar = fabs(x[i]);
            double lanes = pp_lcp_inf_norm(n, x);
            ck_assert_msg(memcmp(&scalar, &lanes, sizeof lanes) == 0,
                          "n = %d: %.17g against %.17g", n, lanes, scalar);
        }
}
END_TEST

/* A random x with about a third of its entries zeros of either sign. */
static void random_signed_zeros(int n, double *x, double density)
{
    for (int i = 0; i < n; ++i) {
        double u = uniform(0.0, 1.0);
        x[i] = u < density ? uniform(-1.0, 1.0) : (u < 0.5 + 0.5 * density ? 0.0 : -0.0);
    }
}

/* The sparse basis of large LCPs (lcp_sparse.c) on a random matrix by columns, column
 * diagonally dominant (so every complementary basis block is nonsingular), with explicit
 * zeros in its pattern: FTRAN through an eta file of sparse, half-dense and dense etas (zeros
 * of both signs among their entries and in b), the residual b - B v of a basis of w, z and z0
 * columns and the residual of a row of B^-1, on M and on M + shift I, give the same bits with
 * the vector kernels as with the scalar loops (pp_lcp_sparse_vector_kernels). */
START_TEST(sparse_kernels_same_bits_as_scalar)
{
    rng_state = 18;
    enum { NS = 209 };
    static int col_start[NS + 1], row_index[NS * NS], row_var[NS], row_var2[NS];
    static double values[NS * NS], d[NS], y[NS], b[NS], v0[NS], v1[NS];
    static double hi0[NS], lo0[NS];
    const int previous = pp_lcp_sparse_vector_kernels(-1);
    for (int n = 9; n <= NS; n += 40) {
        int p = 0;
        for (int j = 0; j < n; ++j) {
            col_start[j] = p;
            for (int k = 0; k < n; ++k) {
                double u = uniform(0.0, 1.0);
                if (k != j && u > 0.3) continue;
                row_index[p] = k;
                values[p++] = k == j ? 0.5 * n + uniform(1.0, 2.0)
                                     : (u < 0.03 ? 0.0 : uniform(-1.0, 1.0));
            }
            d[j] = uniform(0.5, 2.0);
        }
        col_start[n] = p;
        const pp_lcp_csc A = {n, col_start, row_index, values};
        pp_lcp_workspace *ws = NULL;
        ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
        for (int shifted = 0; shifted < 2; ++shifted) {
            /* shifted: z basic in about half the positions; else w basic everywhere (B0 = I,
             * so b's zeros of either sign reach the etas as they are) */
            for (int i = 0; i < n; ++i)
                row_var[i] = shifted && uniform(0.0, 1.0) < 0.5 ? n + i : i;
            ws->shift = shifted ? 1e-3 : 0.0;
            pp_lcp_sparse *sp = pp_lcp_sparse_create(ws, n, NULL, &A, d);
            ck_assert_ptr_nonnull(sp);
            ck_assert_msg(pp_lcp_sparse_factor(sp, row_var), "n = %d: basis singular", n);
            pp_lcp_sparse_swap(sp);
            for (int e = 0; e < 70; ++e) {
                const int r = (int)uniform(0.0, (double)n - 0.5);
                random_signed_zeros(n, y, e % 3 == 0 ? 0.05 : (e % 3 == 1 ? 0.5 : 0.9));
                y[r] = (e % 2 ? -1.0 : 1.0) * uniform(0.5, 2.0);
                ck_assert(pp_lcp_sparse_pivot(sp, r, y));
                if (e >= 10 && e % 10 != 9) continue;
                random_signed_zeros(n, b, 0.6);
                pp_lcp_sparse_vector_kernels(0);
                pp_lcp_sparse_ftran(sp, b, v0);
                pp_lcp_sparse_vector_kernels(1);
                pp_lcp_sparse_ftran(sp, b, v1);
                ck_assert_msg(memcmp(v0, v1, (size_t)n * sizeof *v0) == 0,
                              "FTRAN differs, n = %d, %d etas", n, e + 1);
            }
            /* The residual b - B v of basis_residual (lcp_basis.c) over a basis of w, z (in
             * runs of every length mod 4) and z0, v with zeros of both signs, against its
             * scalar loop of pp_lcp_sparse_subtract. */
            for (int j = 0; j < n; ++j)
                row_var2[j] = uniform(0.0, 1.0) < 0.3 ? j : n + j;
            row_var2[n / 2] = 2 * n;
            for (int round = 0; round < 3; ++round) {
                random_signed_zeros(n, y, round == 0 ? 0.9 : 0.4);
                for (int k = 0; k < n; ++k) {
                    b[k] = uniform(-1.0, 1.0);
                    hi0[k] = b[k];
                    lo0[k] = 0.0;
                }
                for (int j = 0; j < n; ++j) {
                    const int var = row_var2[j];
                    if (y[j] == 0.0) continue;
                    if (var < n) {
                        double sum, e;
                        two_sum(hi0[var], -y[j], &sum, &e);
                        hi0[var] = sum;
                        lo0[var] += e;
                    } else {
                        pp_lcp_sparse_subtract(sp, var, -y[j], hi0, lo0);
                    }
                }
                for (int k = 0; k < n; ++k) v0[k] = hi0[k] + lo0[k];
                pp_lcp_sparse_vector_kernels(0);
                ck_assert_int_eq(pp_lcp_sparse_basis_residual(sp, row_var2, b, y, v1), 0);
                pp_lcp_sparse_vector_kernels(1);
                if (pp_lcp_sparse_basis_residual(sp, row_var2, b, y, v1))
                    ck_assert_msg(memcmp(v0, v1, (size_t)n * sizeof *v0) == 0,
                                  "basis residual differs, n = %d", n);
            }
            /* The residual of a row of B^-1 (pp_lcp_refined_inverse_row): r_j = delta_ij +
             * data . u over a basis of w, z (in runs of every length mod 4) and z0, against
             * lcp_basis.c's loop of pp_lcp_sparse_dot. */
            for (int round = 0; round < 3; ++round) {
                const int i = (int)uniform(0.0, (double)n - 0.5);
                random_signed_zeros(n, b, round == 0 ? 0.9 : 0.4);
                for (int j = 0; j < n; ++j) {
                    const int var = row_var2[j];
                    double hi = j == i ? 1.0 : 0.0, lo = 0.0;
                    if (var < n) two_sum(hi, -b[var], &hi, &lo);
                    else pp_lcp_sparse_dot(sp, var, b, &hi, &lo);
                    v0[j] = hi + lo;
                }
                pp_lcp_sparse_vector_kernels(0);
                ck_assert_int_eq(pp_lcp_sparse_basis_dots(sp, row_var2, i, b, v1), 0);
                pp_lcp_sparse_vector_kernels(1);
                if (pp_lcp_sparse_basis_dots(sp, row_var2, i, b, v1))
                    ck_assert_msg(memcmp(v0, v1, (size_t)n * sizeof *v0) == 0,
                                  "row residual differs, n = %d, row %d", n, i);
            }
            pp_lcp_sparse_destroy(sp);
        }
        ws->shift = 0.0;
        pp_lcp_workspace_destroy(ws);
    }
    pp_lcp_sparse_vector_kernels(previous);
}
END_TEST

/* A whole Lemke solve on the sparse basis (n = 240 >= PP_LCP_SPARSE_MIN_N): the same pivots,
 * basis and z to the bit with the vector kernels as with the scalar loops. The LCP:
 * M = G G^T + 1e-3 I with G sparse (each row 6 entries among 80 columns: M is positive
 * definite, so Lemke solves it, and its columns couple through shared columns of G, as an
 * island's contacts through shared bodies), q with about half its entries negative. */
START_TEST(sparse_lemke_same_bits_as_scalar)
{
    rng_state = 19;
    enum { NL = 240, K = 80 };
    static double G[NL * K], M[NL * NL], q[NL], z0[NL], z1[NL];
    static unsigned char basis0[NL], basis1[NL];
    for (int i = 0; i < NL; ++i) {
        for (int c = 0; c < K; ++c) G[i * K + c] = 0.0;
        for (int t = 0; t < 6; ++t) G[i * K + (int)uniform(0.0, K - 0.5)] = uniform(-1.0, 1.0);
        q[i] = uniform(-1.0, 0.8);
    }
    for (int j = 0; j < NL; ++j)
        for (int i = 0; i < NL; ++i) {
            double sum = i == j ? 1e-3 : 0.0;
            for (int c = 0; c < K; ++c) sum += G[i * K + c] * G[j * K + c];
            M[i + (size_t)j * NL] = sum;
        }
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(NL, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0;
    pp_lcp_result r0, r1;
    const int previous = pp_lcp_sparse_vector_kernels(0);
    ck_assert_int_eq(pp_lcp_solve(ws, NL, M, q, &o, basis0, z0, &r0), PP_OK);
    pp_lcp_sparse_vector_kernels(1);
    ck_assert_int_eq(pp_lcp_solve(ws, NL, M, q, &o, basis1, z1, &r1), PP_OK);
    pp_lcp_sparse_vector_kernels(previous);
    ck_assert_int_gt(r0.pivots, PP_LCP_SPARSE_ETA_MAX); /* past a forced refactorisation */
    ck_assert_int_eq(r0.pivots, r1.pivots);
    ck_assert_int_eq(r0.refactorisations, r1.refactorisations);
    ck_assert_msg(memcmp(z0, z1, sizeof z0) == 0, "z differs");
    ck_assert_msg(memcmp(basis0, basis1, sizeof basis0) == 0, "basis differs");
    ck_assert_double_le(r1.relative_residual, o.residual_tol);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("lcp_kernels");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, lu_same_bits_as_scalar);
    tcase_add_test(tc, lu_singular_reported);
    tcase_add_test(tc, vector_sweeps_same_bits_as_scalar);
    tcase_add_test(tc, inverse_same_bits_as_scalar);
    tcase_add_test(tc, residual_same_bits_as_scalar);
    tcase_add_test(tc, row_sums_kept_by_the_solve);
    tcase_add_test(tc, compensated_columns_same_bits_as_scalar);
    tcase_add_test(tc, inf_norm_same_as_scalar);
    tcase_add_test(tc, sparse_kernels_same_bits_as_scalar);
    tcase_add_test(tc, sparse_lemke_same_bits_as_scalar);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(kernels_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
