/*
 * The basis of Lemke's revised form and of complementary basis solves (lemke.c, file
 * comment, "Revised form" and "Accuracy"): compensated residuals, dense LU with partial
 * pivoting, the explicit basis inverse with its iterative refinement, refactorisation and
 * product-form pivot update, and the basis solve M_BB z_B = -q_B of the warm start and
 * polish. For n >= PP_LCP_SPARSE_MIN_N (run->sparse set) the same operations go through the
 * sparse LU and eta file of lcp_sparse.c: B^-1 b (FTRAN), rows of B^-1 (BTRAN), the pivot
 * update and the refactorisation; the residuals run over M's nonzeros.
 */
#include "lcp_internal.h"

#include <string.h>
#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
#include <immintrin.h>
#endif

/* (hi, lo) -= sum_t a[t] c[t] over `count` <= 4 columns c[t] of length n, compensated
 * (accumulate per product). The blocks of an island's M are sparse (contacts couple only
 * through shared bodies), so zero entries are skipped: cheaper here than streaming four
 * columns at a time through every entry (measured on the pile). */
static inline __attribute__((always_inline)) void
subtract_columns(int n, double *restrict hi, double *restrict lo, const double *const *c,
                 const double *a, int count, const int fused)
{
    for (int t = 0; t < count; ++t) {
        const double *ct = c[t];
        double at = -a[t];
        for (int k = 0; k < n; ++k)
            if (ct[k] != 0.0) accumulate_with(&hi[k], &lo[k], at, ct[k], fused);
    }
}

#ifdef PP_LCP_FMA_DISPATCH
int pp_lcp_cpu_fma(void)
{
    static int known = -1; /* the same answer from any thread: a benign race */
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("fma") ? 1 : 0;
    }
    return known;
}

PP_LCP_FMA_TARGET static void subtract_columns_fma(int n, double *restrict hi,
                                                    double *restrict lo, const double *const *c,
                                                    const double *a, int count)
{
    subtract_columns(n, hi, lo, c, a, count, 1);
}
#endif

#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
/* The same, four entries at a time (AVX2 and FMA): each lane does accumulate_with's fused
 * operations, and a lane whose column entry is 0 keeps its (hi, lo) as the scalar loop skips
 * it (a blend), so the bits are the scalar loop's. */
__attribute__((target("avx2,fma"))) static void
subtract_columns_avx2_fma(int n, double *restrict hi, double *restrict lo,
                          const double *const *c, const double *a, int count)
{
    for (int t = 0; t < count; ++t) {
        const double *ct = c[t];
        const double at = -a[t];
        const __m256d av = _mm256_set1_pd(at);
        int k = 0;
        for (; k + 4 <= n; k += 4) {
            __m256d h = _mm256_loadu_pd(hi + k), l = _mm256_loadu_pd(lo + k);
            pp_lcp_accumulate4(av, _mm256_loadu_pd(ct + k), &h, &l);
            _mm256_storeu_pd(hi + k, h);
            _mm256_storeu_pd(lo + k, l);
        }
        for (; k < n; ++k)
            if (ct[k] != 0.0) accumulate_with(&hi[k], &lo[k], at, ct[k], 1);
    }
}
#endif

void pp_lcp_subtract_columns(int n, double *restrict hi, double *restrict lo,
                             const double *const *c, const double *a, int count)
{
#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
    if (pp_lcp_cpu_fma() && pp_lcp_cpu_avx2()) {
        subtract_columns_avx2_fma(n, hi, lo, c, a, count);
        return;
    }
#endif
#ifdef PP_LCP_FMA_DISPATCH
    if (pp_lcp_cpu_fma()) {
        subtract_columns_fma(n, hi, lo, c, a, count);
        return;
    }
#endif
    subtract_columns(n, hi, lo, c, a, count, 0);
}

/* ---- Vector kernels --------------------------------------------------------------------
 *
 * The dense loops of the LU, the substitutions, the pivot update of the explicit inverse,
 * its dot products and the O(n^2) sweeps over M (residuals, row sums) run four lanes at a
 * time (pp_lcp_v4, lcp_internal.h): each lane does the scalar loop's operations on its
 * element in the scalar loop's order, so the results are the same bits (tested:
 * check_lcp_kernels); a copy compiled for AVX2 is chosen at run time where the CPU has it. */

#ifdef PP_LCP_AVX2_DISPATCH
int pp_lcp_cpu_avx2(void)
{
    static int known = -1; /* the same answer from any thread: a benign race */
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return known;
}
#define AVX2_DISPATCH(call)                                                                 \
    do {                                                                                    \
        if (pp_lcp_cpu_avx2()) {                                                            \
            call;                                                                           \
            return;                                                                         \
        }                                                                                   \
    } while (0)
#else
#define AVX2_DISPATCH(call) ((void)0)
#endif

typedef long long pp_lcp_v4i __attribute__((vector_size(4 * sizeof(long long))));
/* |x| lane by lane: the sign bit cleared, as fabs */
#define ABS4(x) ((pp_lcp_v4)((pp_lcp_v4i)(x) & (pp_lcp_v4i){INT64_MAX, INT64_MAX, INT64_MAX, \
                                                             INT64_MAX}))

/* y[i] -= f x[i], i < n: element i is y[i] - (f x[i]) rounded twice, as the scalar loop. */
static inline __attribute__((always_inline)) void axpy_minus(int n, double *restrict y,
                                                             const double *restrict x, double f)
{
    const pp_lcp_v4 fv = {f, f, f, f};
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        pp_lcp_v4 a = PP_LCP_V4(y + i) - fv * PP_LCP_V4(x + i);
        pp_lcp_v4 b = PP_LCP_V4(y + i + 4) - fv * PP_LCP_V4(x + i + 4);
        PP_LCP_V4(y + i) = a;
        PP_LCP_V4(y + i + 4) = b;
    }
    for (; i + 4 <= n; i += 4) PP_LCP_V4(y + i) = PP_LCP_V4(y + i) - fv * PP_LCP_V4(x + i);
    for (; i < n; ++i) y[i] -= f * x[i];
}

/* c_t[i] -= f_t x[i] for four columns c_t (distinct from x and from each other): each
 * element as in axpy_minus */
static inline __attribute__((always_inline)) void axpy_minus4(int n, double *const *c,
                                                              const double *restrict x,
                                                              const double *f)
{
    double *restrict c0 = c[0], *restrict c1 = c[1], *restrict c2 = c[2], *restrict c3 = c[3];
    const pp_lcp_v4 f0 = {f[0], f[0], f[0], f[0]}, f1 = {f[1], f[1], f[1], f[1]},
                    f2 = {f[2], f[2], f[2], f[2]}, f3 = {f[3], f[3], f[3], f[3]};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const pp_lcp_v4 xi = PP_LCP_V4(x + i);
        PP_LCP_V4(c0 + i) = PP_LCP_V4(c0 + i) - f0 * xi;
        PP_LCP_V4(c1 + i) = PP_LCP_V4(c1 + i) - f1 * xi;
        PP_LCP_V4(c2 + i) = PP_LCP_V4(c2 + i) - f2 * xi;
        PP_LCP_V4(c3 + i) = PP_LCP_V4(c3 + i) - f3 * xi;
    }
    for (; i < n; ++i) {
        c0[i] -= f[0] * x[i];
        c1[i] -= f[1] * x[i];
        c2[i] -= f[2] * x[i];
        c3[i] -= f[3] * x[i];
    }
}

/* y[i] += a x[i] */
static inline __attribute__((always_inline)) void axpy_plus(int n, double *restrict y,
                                                            const double *restrict x, double a)
{
    const pp_lcp_v4 av = {a, a, a, a};
    int i = 0;
    for (; i + 4 <= n; i += 4) PP_LCP_V4(y + i) = PP_LCP_V4(y + i) + av * PP_LCP_V4(x + i);
    for (; i < n; ++i) y[i] += a * x[i];
}

/* y[i] *= a */
static inline __attribute__((always_inline)) void scale(int n, double *y, double a)
{
    const pp_lcp_v4 av = {a, a, a, a};
    int i = 0;
    for (; i + 4 <= n; i += 4) PP_LCP_V4(y + i) = PP_LCP_V4(y + i) * av;
    for (; i < n; ++i) y[i] *= a;
}

/* x . y with four partial sums, s_l over the k = l mod 4 (one lane each), the tail into s_0,
 * then (s_0 + s_1) + (s_2 + s_3): without reassociation (no -ffast-math) one sum is a chain
 * of dependent additions, four times slower. This is the kernel of every pivot (B^-1 times
 * a vector). */
static inline __attribute__((always_inline)) double dot(int n, const double *restrict x,
                                                        const double *restrict y)
{
    pp_lcp_v4 s = {0.0, 0.0, 0.0, 0.0};
    int k = 0;
    for (; k + 4 <= n; k += 4) s += PP_LCP_V4(x + k) * PP_LCP_V4(y + k);
    double s0 = s[0];
    for (; k < n; ++k) s0 += x[k] * y[k];
    return (s0 + s[1]) + (s[2] + s[3]);
}

/* y[i] += a x[i] and s[i] += |x[i]| */
static inline __attribute__((always_inline)) void axpy_abs(int n, double *restrict y,
                                                           double *restrict s,
                                                           const double *restrict x, double a)
{
    const pp_lcp_v4 av = {a, a, a, a};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        pp_lcp_v4 xi = PP_LCP_V4(x + i);
        PP_LCP_V4(y + i) = PP_LCP_V4(y + i) + xi * av;
        PP_LCP_V4(s + i) = PP_LCP_V4(s + i) + ABS4(xi);
    }
    for (; i < n; ++i) {
        y[i] += x[i] * a;
        s[i] += fabs(x[i]);
    }
}

/* s[i] += |x[i]| */
static inline __attribute__((always_inline)) void abs_add(int n, double *restrict s,
                                                          const double *restrict x)
{
    int i = 0;
    for (; i + 4 <= n; i += 4) PP_LCP_V4(s + i) = PP_LCP_V4(s + i) + ABS4(PP_LCP_V4(x + i));
    for (; i < n; ++i) s[i] += fabs(x[i]);
}

/* x_i 0 is 0 for a finite x_i and NaN for NaN or Inf: 1 when the lanes' sums are 0 */
static inline __attribute__((always_inline)) int finite(size_t count, const double *x)
{
    pp_lcp_v4 s = {0.0, 0.0, 0.0, 0.0}, t = s;
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        s += PP_LCP_V4(x + i) * 0.0;
        t += PP_LCP_V4(x + i + 4) * 0.0;
    }
    s += t;
    double a = (s[0] + s[1]) + (s[2] + s[3]);
    for (; i < count; ++i) a += x[i] * 0.0;
    return a == 0.0;
}

/* max_i |x_i| over the x_i that are not NaN (0 for none), as pp_lcp_inf_norm's scalar loop
 * `if (|x_i| > norm) norm = |x_i|`: a lane keeps its running maximum where |x_i| > it is false
 * (NaN included), and the lanes' maxima are combined the same way. The maximum of a set does
 * not depend on the order it is taken in (|x_i| has no -0), so the value is the scalar loop's. */
static inline __attribute__((always_inline)) double inf_norm(int n, const double *x)
{
    pp_lcp_v4 m = {0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const pp_lcp_v4 a = ABS4(PP_LCP_V4(x + i));
        const pp_lcp_v4i larger = a > m;
        m = (pp_lcp_v4)(((pp_lcp_v4i)a & larger) | ((pp_lcp_v4i)m & ~larger));
    }
    double norm = 0.0;
    for (int l = 0; l < 4; ++l)
        if (m[l] > norm) norm = m[l];
    for (; i < n; ++i)
        if (fabs(x[i]) > norm) norm = fabs(x[i]);
    return norm;
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static double inf_norm_avx2(int n, const double *x)
{
    return inf_norm(n, x);
}
#endif

double pp_lcp_vec_inf_norm(int n, const double *x)
{
#ifdef PP_LCP_AVX2_DISPATCH
    if (pp_lcp_cpu_avx2()) return inf_norm_avx2(n, x);
#endif
    return inf_norm(n, x);
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static int finite_avx2(size_t count, const double *x)
{
    return finite(count, x);
}
#endif

int pp_lcp_vec_finite(size_t count, const double *x)
{
#ifdef PP_LCP_AVX2_DISPATCH
    if (pp_lcp_cpu_avx2()) return finite_avx2(count, x);
#endif
    return finite(count, x);
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static void axpy_avx2(int n, double *y, const double *x, double a)
{
    axpy_plus(n, y, x, a);
}
PP_LCP_AVX2_TARGET static void axpy_abs_avx2(int n, double *y, double *s, const double *x,
                                             double a)
{
    axpy_abs(n, y, s, x, a);
}
PP_LCP_AVX2_TARGET static void abs_add_avx2(int n, double *s, const double *x)
{
    abs_add(n, s, x);
}
#endif

void pp_lcp_vec_axpy(int n, double *restrict y, const double *restrict x, double a)
{
    AVX2_DISPATCH(axpy_avx2(n, y, x, a));
    axpy_plus(n, y, x, a);
}

void pp_lcp_vec_axpy_abs(int n, double *restrict y, double *restrict s,
                         const double *restrict x, double a)
{
    AVX2_DISPATCH(axpy_abs_avx2(n, y, s, x, a));
    axpy_abs(n, y, s, x, a);
}

void pp_lcp_vec_abs_add(int n, double *restrict s, const double *restrict x)
{
    AVX2_DISPATCH(abs_add_avx2(n, s, x));
    abs_add(n, s, x);
}

/* ---- Dense LU with partial pivoting ---------------------------------------------------
 *
 * The blocks solved here are small (an island of a pile: n <= ~150) and solved often (a
 * warm start or a refactorisation at every step). OpenBLAS's dgetrf runs such sizes on its
 * thread pool, whose workers spin-wait: on the 30-box pile dgetrf_parallel and sched_yield
 * took ~45% of the step time (perf). These loops do the same right-looking LU in the calling
 * thread, column-major with the inner loops contiguous (vectorisable). */

/* The LU (below), once for the baseline and once for AVX2. */
static inline __attribute__((always_inline)) int lu_factor(int n, double *A, int *piv)
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
        scale(n - k - 1, ck + k + 1, inv);
        /* the columns with u_kj != 0, four at a time (each loaded l_ik serves four) */
        int j = k + 1;
        for (;;) {
            double *c[4];
            double f[4];
            int m = 0;
            for (; j < n && m < 4; ++j)
                if (A[k + (size_t)j * n] != 0.0) {
                    c[m] = &A[(size_t)j * n + k + 1];
                    f[m++] = A[k + (size_t)j * n];
                }
            if (m == 4) axpy_minus4(n - k - 1, c, ck + k + 1, f);
            else
                for (int t = 0; t < m; ++t) axpy_minus(n - k - 1, c[t], ck + k + 1, f[t]);
            if (j >= n) break;
        }
    }
    return 1;
}

static inline __attribute__((always_inline)) void lu_solve(int n, const double *LU,
                                                           const int *piv, double *b)
{
    for (int k = 0; k < n; ++k)
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
    double *x = b;
    for (int k = 0; k < n; ++k) {
        double xk = x[k];
        if (xk == 0.0) continue;
        axpy_minus(n - k - 1, x + k + 1, &LU[(size_t)k * n] + k + 1, xk);
    }
    for (int k = n - 1; k >= 0; --k) {
        const double *ck = &LU[(size_t)k * n];
        x[k] /= ck[k];
        double xk = x[k];
        if (xk == 0.0) continue;
        axpy_minus(k, x, ck, xk);
    }
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static int lu_factor_avx2(int n, double *A, int *piv)
{
    return lu_factor(n, A, piv);
}

PP_LCP_AVX2_TARGET static void lu_solve_avx2(int n, const double *LU, const int *piv,
                                             double *b)
{
    lu_solve(n, LU, piv, b);
}
#endif

/* A = P L U in place (column-major, n x n, leading dimension n; unit L below the diagonal).
 * piv[k] is the row swapped with row k at step k (LAPACK's convention, 0-based). Returns 0
 * when a pivot is exactly zero or not finite. Column j's update at step k is skipped where
 * U_kj = 0 (the blocks are sparse: contacts couple only through shared bodies). */
int pp_lcp_lu_factor(int n, double *A, int *piv)
{
#ifdef PP_LCP_AVX2_DISPATCH
    if (pp_lcp_cpu_avx2()) return lu_factor_avx2(n, A, piv);
#endif
    return lu_factor(n, A, piv);
}

/* b = A^-1 b with the factors of lu_factor (column-oriented substitutions; zero entries of
 * the right-hand side skip their column, which makes inverting cheaper). */
void pp_lcp_lu_solve(int n, const double *LU, const int *piv, double *b)
{
    AVX2_DISPATCH(lu_solve_avx2(n, LU, piv, b));
    lu_solve(n, LU, piv, b);
}

/* ---- Basis solve (warm start and polish) -------------------------------------------- */

/* z from the complementary basis: M_BB z_B = -q_B (LU with partial pivoting, then
 * iterative refinement with compensated residuals, as in refine), z_N = 0. M_BB is kept
 * in tie_rows for the residuals (free outside the pivoting). Returns 0 when M_BB is
 * exactly singular or the solve is not finite. */
int pp_lcp_solve_basis(pp_lcp_workspace *ws, int n, const double *M, const double *q,
                       const unsigned char *basis, double *z)
{
    int nb = 0;
    for (int i = 0; i < n; ++i)
        if (basis[i]) ws->index[nb++] = i;
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    if (nb == 0) return 1;
    double *zb = ws->rhs, *r = ws->residual, *hi = ws->sum_hi, *lo = ws->sum_lo;
    if (n >= PP_LCP_SPARSE_MIN_N) { /* M_BB sparse (the workspace's squares are smaller) */
        if (!pp_lcp_sparse_solve_basis(n, M, ws->shift, q, ws->index, nb,
                                       ws->limits.factor_deadline, zb, r, hi, lo))
            return 0;
        for (int b = 0; b < nb; ++b) z[ws->index[b]] = zb[b];
        return 1;
    }
    double *mbb = ws->tie_rows;
    for (int b = 0; b < nb; ++b) {
        const double *col = M + (size_t)ws->index[b] * n;
        for (int a = 0; a < nb; ++a) mbb[a + (size_t)b * nb] = col[ws->index[a]];
        zb[b] = -q[ws->index[b]];
    }
    memcpy(ws->lu, mbb, (size_t)nb * nb * sizeof *mbb);
    if (!pp_lcp_lu_factor(nb, ws->lu, ws->pivots)) return 0;
    pp_lcp_lu_solve(nb, ws->lu, ws->pivots, zb);
    for (int step = 0; step < REFINE_STEPS; ++step) {
        /* r = -q_B - M_BB z_B, column by column of M_BB */
        for (int a = 0; a < nb; ++a) {
            hi[a] = -q[ws->index[a]];
            lo[a] = 0.0;
        }
        const double *cols[4];
        double coef[4];
        int group = 0;
        for (int b = 0; b < nb; ++b) {
            if (zb[b] == 0.0) continue;
            cols[group] = &mbb[(size_t)b * nb];
            coef[group++] = zb[b];
            if (group == 4) {
                pp_lcp_subtract_columns(nb, hi, lo, cols, coef, group);
                group = 0;
            }
        }
        pp_lcp_subtract_columns(nb, hi, lo, cols, coef, group);
        for (int a = 0; a < nb; ++a) r[a] = hi[a] + lo[a];
        pp_lcp_lu_solve(nb, ws->lu, ws->pivots, r);
        double c = 0.0, size = 0.0;
        for (int b = 0; b < nb; ++b) {
            zb[b] += r[b];
            c = max_d(c, fabs(r[b]));
            size = max_d(size, fabs(zb[b]));
        }
        if (!(c > REFINE_SETTLED * size) || (step == 0 && c <= REFINE_ONE_STEP * size)) break;
    }
    if (!pp_lcp_all_finite((size_t)nb, zb)) return 0;
    for (int b = 0; b < nb; ++b) z[ws->index[b]] = zb[b];
    return 1;
}

/* The column of variable v in [I | -M | -d], as the data it is made of: for z_j and z0
 * the column is -data; for w_j (data NULL) it is e_j. */
static const double *pp_lcp_column_data(const lemke_run *run, int v)
{
    const int n = run->n;
    if (v < n) return NULL;
    if (!run->M) return run->d; /* M by columns (run->csc): only the sparse basis reads it */
    return v < 2 * n ? run->M + (size_t)(v - n) * n : run->d;
}

void pp_lcp_load_column(const lemke_run *run, int v, double *a)
{
    const int n = run->n;
    if (run->sparse && v >= n && v < 2 * n) { /* -(M + eps I)_:j over its nonzeros */
        pp_lcp_sparse_load_column(run->sparse, v, a);
        return;
    }
    const double *data = pp_lcp_column_data(run, v);
    if (data) {
        for (int k = 0; k < n; ++k) a[k] = -data[k];
        if (run->sparse && v < 2 * n) a[v - n] = -(data[v - n] + run->ws->shift); /* M + eps I */
    } else {
        for (int k = 0; k < n; ++k) a[k] = 0.0;
        a[v] = 1.0;
    }
}

/* out = b - B v, compensated. B v = sum_i v_i a_{row_var[i]} and a = -data, so every
 * z or z0 column adds +v_i data. */
static void basis_residual(const lemke_run *run, const double *b, const double *v, double *out)
{
    const int n = run->n;
    double *hi = run->ws->sum_hi, *lo = run->ws->sum_lo;
    if (run->sparse && /* the same sums in one call (lcp_sparse.c, vector kernels) */
        pp_lcp_sparse_basis_residual(run->sparse, run->ws->row_var, b, v, out))
        return;
    for (int k = 0; k < n; ++k) {
        hi[k] = b[k];
        lo[k] = 0.0;
    }
    const double *cols[4];
    double coef[4];
    int group = 0;
    for (int i = 0; i < n; ++i) {
        int var = run->ws->row_var[i];
        double vi = v[i];
        if (vi == 0.0) continue;
        const double *data = pp_lcp_column_data(run, var);
        if (!data) {
            double s, e;
            two_sum(hi[var], -vi, &s, &e);
            hi[var] = s;
            lo[var] += e;
            continue;
        }
        if (run->sparse) { /* over the column's nonzeros, in the same order */
            pp_lcp_sparse_subtract(run->sparse, var, -vi, hi, lo);
            continue;
        }
        cols[group] = data; /* the column is -data: b - B v gains +v_i data */
        coef[group++] = -vi;
        if (group == 4) {
            pp_lcp_subtract_columns(n, hi, lo, cols, coef, group);
            group = 0;
        }
    }
    pp_lcp_subtract_columns(n, hi, lo, cols, coef, group);
    for (int k = 0; k < n; ++k) out[k] = hi[k] + lo[k];
}

static inline __attribute__((always_inline)) void
apply_inverse(int n, const double *inverse, const double *b, double *v)
{
    for (int i = 0; i < n; ++i) v[i] = dot(n, &inverse[(size_t)i * n], b);
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static void apply_inverse_avx2(int n, const double *inverse, const double *b,
                                                  double *v)
{
    apply_inverse(n, inverse, b, v);
}
#endif

/* v = B^-1 b with the explicit inverse (row-major: one dot product per row). */
void pp_lcp_apply_inverse(const lemke_run *run, const double *b, double *v)
{
    const int n = run->n;
    if (run->sparse) {
        pp_lcp_sparse_ftran(run->sparse, b, v);
        return;
    }
    AVX2_DISPATCH(apply_inverse_avx2(n, run->ws->inverse, b, v));
    apply_inverse(n, run->ws->inverse, b, v);
}

/*
 * Iterative refinement of v ~ B^-1 b: r = b - B v (compensated), v += B^-1 r, at most
 * REFINE_STEPS times, stopping once the correction is at the rounding level of v, or when
 * the corrections stop shrinking at the floor set by the accuracy of the compensated
 * residual (error about (n u)^2 |B| |v|, magnified by B^-1). Returns the size of the first
 * correction relative to v (how far the explicit inverse has drifted; INFINITY when v is not
 * finite), and in *settled whether v ended within REFINE_FLOOR of B^-1 b. An unsettled v
 * is still the best estimate at hand: the pivot rule may use it, and the answer is judged by
 * the independent residual in the end.
 */
double pp_lcp_refine(lemke_run *run, const double *b, double *v, int *settled)
{
    const int n = run->n;
    double *r = run->ws->residual, *c = run->ws->sum_hi;
    double first = 0.0, previous = INFINITY;
    *settled = 0;
    run->last_correction = INFINITY;
    for (int step = 0; step < REFINE_STEPS; ++step) {
        basis_residual(run, b, v, r);
        pp_lcp_apply_inverse(run, r, c); /* basis_residual is done with sum_hi */
        double cmax = 0.0, size = 0.0;
        for (int i = 0; i < n; ++i) {
            v[i] += c[i];
            cmax = max_d(cmax, fabs(c[i]));
            size = max_d(size, fabs(v[i]));
        }
        if (!isfinite(size) || !isfinite(cmax)) return INFINITY;
        if (step == 0) first = size > 0.0 ? cmax / size : (cmax > 0.0 ? INFINITY : 0.0);
        /* Settled when the correction is at the rounding level, or after a first correction
         * of relative size <= REFINE_ONE_STEP: the step contracts the error by about that
         * factor, so what remains is below first^2 <= u. Saves the second residual. */
        if (!(cmax > REFINE_SETTLED * size) || (step == 0 && first <= REFINE_ONE_STEP)) {
            *settled = 1;
            run->last_correction = REFINE_SETTLED * size;
            return first;
        }
        int contracting = cmax < 0.5 * previous;
        previous = cmax;
        if (!contracting) break;
    }
    *settled = previous <= REFINE_FLOOR * pp_lcp_inf_norm(n, v);
    run->last_correction = previous;
    return first;
}

/* Keep (or bring back) the updated inverse, x and the update count; tie_rows and rhs are
 * free while a refactorisation runs (they serve the ratio test and the basis solves). */
static void save_inverse(lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const size_t n = (size_t)run->n;
    if (!run->sparse) /* the sparse basis keeps its current factors beside the new ones */
        memcpy(ws->tie_rows, ws->inverse, n * n * sizeof *ws->inverse);
    memcpy(ws->rhs, ws->x, n * sizeof *ws->x);
    run->saved_updates = run->updates;
    run->saved_plain_updates = run->plain_updates;
}

static void restore_inverse(lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const size_t n = (size_t)run->n;
    if (run->sparse) pp_lcp_sparse_swap(run->sparse); /* back to the factors before */
    else memcpy(ws->inverse, ws->tie_rows, n * n * sizeof *ws->inverse);
    memcpy(ws->x, ws->rhs, n * sizeof *ws->x);
    run->updates = run->saved_updates;
    run->y_ready = -1;
    run->plain_updates = run->saved_plain_updates;
}

/*
 * Recompute B^-1 from the basis columns and refine x = B^-1 q.
 *
 * Block form. Let D be the rows (positions) whose basic variable has a dense column (z_j:
 * -M_:j, z0: -d), W the others (w_k basic, column e_k), and R the equations k whose w_k is
 * NOT basic (|R| = |D| for a nonsingular B). Ordering the equations R, then the k of W, and
 * the positions D, then W,
 *     B = [A 0; C I],  A = B[R, D],  C = B[W-equations, D],
 *     B^-1 = [A^-1 0; -C A^-1 I],
 * so only A (m = |D|, about half of n) is factorised (LU with partial pivoting): m^3/3 +
 * m^3 for the rows of A^-1 (solves with A^T) + |W| m^2 for C A^-1, instead of ~2.7 n^3 for
 * the whole B. Row d of A^-1 goes to position D_d at the equations R; position i in W with
 * w_k basic gets 1 at equation k and -(C A^-1)_k at the equations R.
 *
 * On a basis with cond(B) u near 1 the fresh inverse can be a worse preconditioner than
 * the updated one (its error is cond(B) u in every direction, the product form's mostly in
 * the directions of the last pivots), so when x does not settle with it, or A is singular
 * to working precision, the updated inverse and x come back and 0 is returned.
 */
int pp_lcp_refactorise(lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    int *dense = ws->ties, *equation = ws->index; /* D positions; R equations (free here) */
    double *u = ws->column;
    run->y_ready = -1; /* column is scratch here, and the inverse changes */
    save_inverse(run);
    if (run->sparse) { /* A factorised sparse; the old factors stay for restore_inverse */
        int ok = pp_lcp_sparse_factor(run->sparse, ws->row_var);
        if (ok) {
            pp_lcp_sparse_swap(run->sparse);
            pp_lcp_apply_inverse(run, run->q, ws->x);
            pp_lcp_refine(run, run->q, ws->x, &ok);
            if (!ok) restore_inverse(run);
        }
        ++run->refactorisations;
        if (!ok) {
            pp_lcp_sparse_postpone(run->sparse); /* the forced one: not again at once */
            return 0;
        }
        run->updates = 0;
        run->plain_updates = 0;
        return 1;
    }

    /* equation[] first marks the equations whose w is basic, then lists R in order. */
    int m = 0;
    for (int k = 0; k < n; ++k) equation[k] = 0;
    for (int i = 0; i < n; ++i) {
        int var = ws->row_var[i];
        if (var < n) equation[var] = 1;
        else dense[m++] = i;
    }
    int mr = 0;
    for (int k = 0; k < n; ++k)
        if (!equation[k]) equation[mr++] = k; /* mr <= k: overwrites only what was read */
    int ok = mr == m;

    /* A^T column-major: At[d + r m] = A[r][d] = a_{row_var[D_d]}[R_r]. */
    double *At = ws->lu;
    for (int d = 0; ok && d < m; ++d) {
        const double *data = pp_lcp_column_data(run, ws->row_var[dense[d]]);
        for (int r = 0; r < m; ++r) At[d + (size_t)r * m] = -data[equation[r]];
    }
    for (int i = 0; ok && i < n; ++i) {
        double *row = pp_lcp_inverse_row(run, i);
        for (int k = 0; k < n; ++k) row[k] = 0.0;
    }
    if (ok) ok = pp_lcp_lu_factor(m, At, ws->pivots);
    for (int d = 0; ok && d < m; ++d) { /* row d of A^-1: A^T u = e_d */
        for (int r = 0; r < m; ++r) u[r] = 0.0;
        u[d] = 1.0;
        pp_lcp_lu_solve(m, At, ws->pivots, u);
        double *row = pp_lcp_inverse_row(run, dense[d]);
        for (int r = 0; r < m; ++r) row[equation[r]] = u[r];
    }
    for (int i = 0; ok && i < n; ++i) { /* w_k basic: row = e_k - C_k A^-1 */
        int k = ws->row_var[i];
        if (k >= n) continue;
        double *row = pp_lcp_inverse_row(run, i);
        row[k] = 1.0;
        for (int d = 0; d < m; ++d) {
            double c = -pp_lcp_column_data(run, ws->row_var[dense[d]])[k]; /* C[k][d] */
            if (c == 0.0) continue;
            const double *a_inv = pp_lcp_inverse_row(run, dense[d]);
            for (int r = 0; r < m; ++r) row[equation[r]] -= c * a_inv[equation[r]];
        }
    }
    if (ok) ok = pp_lcp_all_finite((size_t)n * n, ws->inverse);
    if (ok) {
        pp_lcp_apply_inverse(run, run->q, ws->x);
        pp_lcp_refine(run, run->q, ws->x, &ok);
    }
    ++run->refactorisations;
    if (!ok) {
        restore_inverse(run);
        return 0;
    }
    run->updates = 0;
    run->plain_updates = 0;
    return 1;
}

/* y = B^-1 a_v with the current inverse, refined; returns the drift (refine). */
double pp_lcp_form_entering_column(lemke_run *run, int v, int *settled)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    if (run->y_ready != v) { /* else formed by the certain-decision attempt (lemke.c) */
        pp_lcp_load_column(run, v, ws->column);
        if (v < n && !run->sparse) {
            for (int i = 0; i < n; ++i) ws->y[i] = pp_lcp_inverse_row(run, i)[v];
        } else {
            pp_lcp_apply_inverse(run, ws->column, ws->y);
        }
    }
    run->y_ready = -1;
    return pp_lcp_refine(run, ws->column, ws->y, settled);
}

/*
 * y = B^-1 a_v for the entering variable v, refined. B^-1 is recomputed when y does not
 * settle with the updated inverse, or when it has drifted (a refinement step gains less
 * than REFACTOR_GAIN) over at least REFACTOR_MIN_UPDATES pivots, so that the O(n^3) cost is
 * spread over O(n) pivots of O(n^2). A fresh inverse that y does not settle with is
 * dropped for the updated one. Returns 0 when y is not finite.
 */
int pp_lcp_entering_column(lemke_run *run, int v)
{
    int settled;
    double drift = run->drift = pp_lcp_form_entering_column(run, v, &settled);
    if (drift == INFINITY) return 0;
    if (settled && (drift <= REFACTOR_GAIN || run->updates < REFACTOR_MIN_UPDATES)) return 1;
    if (run->updates == 0 || !pp_lcp_refactorise(run)) return 1;
    drift = run->drift = pp_lcp_form_entering_column(run, v, &settled);
    if (settled) return 1;
    restore_inverse(run);
    return (run->drift = pp_lcp_form_entering_column(run, v, &settled)) < INFINITY;
}

/* Row i of B^-1, refined: u B = e_i^T, r_j = delta_ij - a_{row_var[j]} . u (compensated),
 * u += r^T B^-1. */
void pp_lcp_refined_inverse_row(const lemke_run *run, int i, double *u)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    double *r = ws->residual, *c = ws->sum_hi;
    pp_lcp_inverse_row_copy(run, i, u);
    for (int step = 0; step < REFINE_STEPS; ++step) {
        const int done = /* the same sums, four columns at a time (lcp_sparse.c) */
            run->sparse && pp_lcp_sparse_basis_dots(run->sparse, ws->row_var, i, u, r);
        for (int j = 0; j < n && !done; ++j) {
            int var = ws->row_var[j];
            const double *data = pp_lcp_column_data(run, var);
            double hi = j == i ? 1.0 : 0.0, lo = 0.0;
            if (!data) {
                double s, e;
                two_sum(hi, -u[var], &s, &e);
                hi = s;
                lo = e;
            } else if (run->sparse) {
                pp_lcp_sparse_dot(run->sparse, var, u, &hi, &lo);
            } else {
                for (int k = 0; k < n; ++k)
                    if (data[k] != 0.0) accumulate(&hi, &lo, data[k], u[k]);
            }
            r[j] = hi + lo;
        }
        if (run->sparse) {
            pp_lcp_sparse_btran(run->sparse, r, c); /* c^T = r^T B^-1 */
        } else {
            for (int k = 0; k < n; ++k) c[k] = 0.0;
            for (int j = 0; j < n; ++j) {
                if (r[j] == 0.0) continue;
                pp_lcp_vec_axpy(n, c, pp_lcp_inverse_row(run, j), r[j]);
            }
        }
        double cmax = 0.0, size = 0.0;
        for (int k = 0; k < n; ++k) {
            u[k] += c[k];
            cmax = max_d(cmax, fabs(c[k]));
            size = max_d(size, fabs(u[k]));
        }
        if (!(cmax > REFINE_SETTLED * size)) return;
    }
}

/* Row i of B^-1 into row. */
void pp_lcp_inverse_row_copy(const lemke_run *run, int i, double *row)
{
    if (run->sparse) pp_lcp_sparse_unit_row(run->sparse, i, row);
    else memcpy(row, pp_lcp_inverse_row(run, i), (size_t)run->n * sizeof *row);
}

static inline __attribute__((always_inline)) void pivot_dense(int n, double *inverse, double *x,
                                                              const double *y, int r)
{
    double *row_r = &inverse[(size_t)r * n];
    double inv = 1.0 / y[r];
    double theta = x[r] * inv;
    scale(n, row_r, inv);
    for (int i = 0; i < n; ++i) {
        double f = y[i];
        if (i == r || f == 0.0) continue;
        axpy_minus(n, &inverse[(size_t)i * n], row_r, f);
        x[i] -= f * theta;
    }
    x[r] = theta;
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static void pivot_dense_avx2(int n, double *inverse, double *x,
                                                const double *y, int r)
{
    pivot_dense(n, inverse, x, y, r);
}
#endif

/* Pivot on row r with the entering column y: x and B^-1 are multiplied by the elementary
 * matrix that maps y to e_r (row r /= y_r; row i -= y_i row r). Returns 0 when the sparse
 * basis's eta file cannot grow (out of memory). */
int pp_lcp_pivot(lemke_run *run, int r)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    double *x = ws->x, *y = ws->y;
    if (run->sparse) {
        if (!pp_lcp_sparse_pivot(run->sparse, r, y)) return 0;
        double theta = x[r] * (1.0 / y[r]);
        for (int i = 0; i < n; ++i)
            if (i != r && y[i] != 0.0) x[i] -= y[i] * theta;
        x[r] = theta;
        return 1;
    }
#ifdef PP_LCP_AVX2_DISPATCH
    if (pp_lcp_cpu_avx2()) {
        pivot_dense_avx2(n, ws->inverse, x, y, r);
        return 1;
    }
#endif
    pivot_dense(n, ws->inverse, x, y, r);
    return 1;
}

