/*
 * Lemke's method for LCP(M, q) (pegplus/lcp.h), as Stewart & Trinkle 1996 §4 use it, with
 * lexicographic degeneracy resolution, a warm start from the previous complementary basis
 * and the regularisation fallback of spec/PEG.md §6. The pivoting is the revised form
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
 * and pp_lcp_solve adds the regularised retries of spec/PEG.md §6 after that.
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
 * SOL(0, M) (only z = (0, 0, sigma) has z^T M z = 0, and q_sigma = 0), so exact Lemke does
 * not end on a ray (CPS Theorem 4.4.12). Recomputing x and y by LU at every pivot was not
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
#define _POSIX_C_SOURCE 200809L /* getpid (PP_LCP_DUMP_ALL) */
#include "pegplus/lcp.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PP_LCP_N_MAX_LIMIT (1 << 20)

/* Refinement: at most this many corrections of x or y per pivot, and of a tied row. A
 * fresh inverse of a basis with condition number 1e11 gains about five digits per step. */
#define REFINE_STEPS 6
/* Recompute B^-1 when one refinement step gains less than this factor (two digits)... */
#define REFACTOR_GAIN 1e-2
/* ... and it has been updated by at least this many pivots since it was computed. */
#define REFACTOR_MIN_UPDATES 8
/* A correction below this multiple of u ||v||_inf leaves v at working accuracy. */
#define REFINE_SETTLED (4.0 * DBL_EPSILON)
/* One correction of at most this relative size is enough (see refine). */
#define REFINE_ONE_STEP 1e-8
/* Lemke's z within this part of residual_tol is not polished by a basis solve. */
#define POLISH_SKIP 1e-3
/* Tied rows of B^-1 are refined when the last entering column drifted more than this. */
#define LEX_REFINE_DRIFT 1e-10
/* Relative error assumed for rows of an inverse updated with unrefined columns (ratio_test). */
#define LEX_ROW_ERROR 1e-6
/* The double-double rescue runs on problems up to this size, for at most 2 n + 10 pivots:
 * it costs ~50 n^2 flops a pivot (40 ms a pivot at n = 900; the pile's islands are <= 140). */
#define RESCUE_MAX_N 256
/* Corrections that stop shrinking are at the floor of the compensated residual, about
 * cond(B) (n u)^2 ||v||: accepted while below this part of ||v||_inf (the pile's worst
 * bases, condition numbers near 1e16, settle at 1e-12). */
#define REFINE_FLOOR 1e-9

/* The phases of a solve do not overlap, so some buffers serve several (noted). */
struct pp_lcp_workspace {
    int n_max;
    int owned;
    double *inverse;      /* n x n, row-major: B^-1 of the current Lemke basis (the rescue:
                             its high parts) */
    double *lu;           /* n x n: LU factors (refactorisation, basis solves) */
    double *tie_rows;     /* n x n: rows of B^-1 of tied rows, row-major; also the kept
                             inverse of a refactorisation, M_BB of a basis solve, and the
                             low parts of B^-1 in the rescue */
    double *regularised;  /* n x n: M + eps I */
    double *x;            /* n: basic solution B^-1 q */
    double *y;            /* n: entering column B^-1 a */
    double *residual;     /* n: b - B v (the rescue: low parts of x) */
    double *sum_hi;       /* n: compensated accumulators, high and low parts (the rescue: */
    double *sum_lo;       /* n:   low parts of y) */
    double *column;       /* n: a column of [I | -M | -d]; refactorisation scratch */
    double *rhs;          /* n: basis solves; the kept x of a refactorisation */
    double *z_try;        /* n: candidate z */
    double *w_try;        /* n: its w */
    double *covering;     /* n: d */
    double *start_covering; /* n: d = B e of a Lemke run from a given basis */
    int *pivots;          /* n: row interchanges of an LU */
    int *row_var;         /* n: basic variable of each row (0..n-1 w, n..2n-1 z, 2n z0) */
    int *ties;            /* n: rows tied in the ratio test; refactorisation: positions D */
    int *index;           /* n: basic z indices (basis solves); tie bookkeeping;
                             refactorisation: equations R */
    unsigned char *basis; /* n: internal basis flags */
};

/* max of two doubles where neither is NaN (callers check finiteness): fmax is a call into
 * libm at -O2 without -ffinite-math-only, and it showed at 6% of a solve in perf. */
static inline double max_d(double a, double b)
{
    return a > b ? a : b;
}

static size_t align_up(size_t bytes)
{
    return (bytes + 15u) & ~(size_t)15u;
}

size_t pp_lcp_workspace_size(int n_max)
{
    if (n_max < 1 || n_max > PP_LCP_N_MAX_LIMIT) return 0;
    size_t n = (size_t)n_max;
    size_t bytes = align_up(sizeof(struct pp_lcp_workspace));
    bytes += 4 * align_up(n * n * sizeof(double));
    bytes += 11 * align_up(n * sizeof(double));
    bytes += 4 * align_up(n * sizeof(int));
    bytes += align_up(n);
    return bytes;
}

pp_status pp_lcp_workspace_init(void *buffer, size_t bytes, int n_max, pp_lcp_workspace **out)
{
    if (!buffer || !out) {
        pp_log(PP_LOG_ERROR, "pp_lcp_workspace_init: NULL %s", buffer ? "out" : "buffer");
        return PP_ERR_NULL_ARGUMENT;
    }
    size_t need = pp_lcp_workspace_size(n_max);
    if (need == 0 || bytes < need || ((uintptr_t)buffer % sizeof(double)) != 0) {
        pp_log(PP_LOG_ERROR,
               "pp_lcp_workspace_init: n_max %d needs %zu aligned bytes, got %zu", n_max, need,
               bytes);
        return PP_ERR_INVALID_ARGUMENT;
    }
    size_t n = (size_t)n_max;
    unsigned char *p = buffer;
    pp_lcp_workspace *ws = (pp_lcp_workspace *)p;
    p += align_up(sizeof *ws);
    ws->n_max = n_max;
    ws->owned = 0;
    double **squares[4] = {&ws->inverse, &ws->lu, &ws->tie_rows, &ws->regularised};
    for (int i = 0; i < 4; ++i) {
        *squares[i] = (double *)p;
        p += align_up(n * n * sizeof(double));
    }
    double **vectors[11] = {&ws->x,      &ws->y,        &ws->residual, &ws->sum_hi,
                            &ws->sum_lo, &ws->column,   &ws->rhs,      &ws->z_try,
                            &ws->w_try,  &ws->covering, &ws->start_covering};
    for (int i = 0; i < 11; ++i) {
        *vectors[i] = (double *)p;
        p += align_up(n * sizeof(double));
    }
    ws->pivots = (int *)p;
    p += align_up(n * sizeof(int));
    ws->row_var = (int *)p;
    p += align_up(n * sizeof(int));
    ws->ties = (int *)p;
    p += align_up(n * sizeof(int));
    ws->index = (int *)p;
    p += align_up(n * sizeof(int));
    ws->basis = p;
    *out = ws;
    return PP_OK;
}

pp_status pp_lcp_workspace_create(int n_max, pp_lcp_workspace **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_lcp_workspace_create: NULL out");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = NULL;
    size_t bytes = pp_lcp_workspace_size(n_max);
    if (bytes == 0) {
        pp_log(PP_LOG_ERROR, "pp_lcp_workspace_create: n_max %d outside 1..%d", n_max,
               PP_LCP_N_MAX_LIMIT);
        return PP_ERR_INVALID_ARGUMENT;
    }
    void *buffer = malloc(bytes);
    if (!buffer) {
        pp_log(PP_LOG_ERROR, "pp_lcp_workspace_create: cannot allocate %zu bytes", bytes);
        return PP_ERR_NO_MEMORY;
    }
    pp_status status = pp_lcp_workspace_init(buffer, bytes, n_max, out);
    PP_ASSERT(status == PP_OK, "workspace layout matches its size");
    (*out)->owned = 1;
    return PP_OK;
}

void pp_lcp_workspace_destroy(pp_lcp_workspace *workspace)
{
    if (workspace && workspace->owned) free(workspace);
}

int pp_lcp_workspace_capacity(const pp_lcp_workspace *workspace)
{
    return workspace ? workspace->n_max : 0;
}

const char *pp_lcp_status_string(pp_lcp_status status)
{
    switch (status) {
    case PP_LCP_SOLVED: return "solved";
    case PP_LCP_RAY_TERMINATION: return "ray termination";
    case PP_LCP_PIVOT_CAP: return "pivot cap";
    case PP_LCP_NUMERICAL: return "numerical failure";
    }
    return "unknown";
}

pp_lcp_options pp_lcp_options_default(void)
{
    pp_lcp_options o;
    o.max_pivots = 0;
    o.pivot_tol = 1e-11;
    o.tie_tol = 1e-12;
    o.residual_tol = 1e-9;
    o.regularised_tol = 1e-6;
    o.covering = NULL;
    o.tie_break = PP_LCP_LEXICOGRAPHIC;
    o.warm_start = 1;
    return o;
}

/* ---- The independent residual ------------------------------------------------------ */

static double vector_inf_norm(int n, const double *x)
{
    double norm = 0.0;
    for (int i = 0; i < n; ++i)
        if (fabs(x[i]) > norm) norm = fabs(x[i]);
    return norm;
}

/* w = M z + q, then the natural map r(z) = ||min(z, w)||_inf (CPS §1.5): r = 0 exactly
 * when z >= 0, w >= 0 and z_i w_i = 0, and r bounds the violation of each condition.
 * Row i is measured against s_i = |q_i| + (sum_j |M_ij|) ||z||_inf, the size of the data
 * that form w_i and of the rounding in them: for z >= 0, |min(z_i, w_i)| <= |w_i| <= s_i.
 * r_i / s_i is a normwise backward error of row i (the relative change of row i of [M q]
 * that makes z exact there); s_i = 0 forces w_i = 0 exactly and r_i = 0. A pivoting
 * solution carries absolute errors of order u ||z||_inf in every component, so a row whose
 * own entries are all round-off (a sigma row when every beta is 0) still passes, which a
 * purely componentwise measure would not. w_i is formed row by row: no buffer needed. */
static void evaluate(int n, const double *M, const double *q, const double *z, double *w,
                     pp_lcp_result *result)
{
    double residual = 0.0, relative = 0.0, scale = 0.0;
    double min_z = INFINITY, min_w = INFINITY, comp = 0.0;
    double z_norm = vector_inf_norm(n, z);
    for (int i = 0; i < n; ++i) {
        double wi = q[i], row = 0.0;
        for (int j = 0; j < n; ++j) {
            double mij = M[i + (size_t)j * n];
            wi += mij * z[j];
            row += fabs(mij);
        }
        double si = fabs(q[i]) + row * z_norm;
        if (w) w[i] = wi;
        double ri = fabs(fmin(z[i], wi));
        if (isnan(wi) || isnan(z[i])) ri = NAN;
        double rel = si > 0.0 ? ri / si : (ri > 0.0 ? INFINITY : ri);
        if (!(ri <= residual)) residual = ri; /* NaN propagates */
        if (!(rel <= relative)) relative = rel;
        if (si > scale) scale = si;
        if (z[i] < min_z) min_z = z[i];
        if (wi < min_w) min_w = wi;
        double c = fabs(z[i] * wi);
        if (c > comp) comp = c;
    }
    result->residual = residual;
    result->relative_residual = relative;
    result->scale = scale;
    result->min_z = n > 0 ? min_z : 0.0;
    result->min_w = n > 0 ? min_w : 0.0;
    result->complementarity = comp;
}

void pp_lcp_evaluate(int n, const double *M, const double *q, const double *z, double *w_out,
                     pp_lcp_result *result)
{
    PP_ASSERT(n >= 0 && M && q && z && result, "pp_lcp_evaluate: valid arguments");
    evaluate(n, M, q, z, w_out, result);
}

static int all_finite(size_t count, const double *x)
{
    for (size_t i = 0; i < count; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* Accept z (clamped to z >= 0): rel(z), measured against the original M and q, must be
 * <= residual_tol. A solve of M + eps I (eps > 0) moves w by eps z, so there rel(z) may
 * reach max(residual_tol, regularised_tol), and the shift itself must be a small part of
 * the data, eps ||z||_inf <= regularised_tol ||q||_inf: otherwise the "solution" exists
 * only because of eps (for an infeasible LCP, z grows like 1/eps along a ray and the
 * row-wise residual can look small by cancellation). */
static int accept(int n, const double *M, const double *q, double eps, const pp_lcp_options *o,
                  double *z, double *w, pp_lcp_result *result)
{
    if (!all_finite((size_t)n, z)) return 0;
    for (int i = 0; i < n; ++i)
        if (z[i] < 0.0) z[i] = 0.0;
    evaluate(n, M, q, z, w, result);
    if (eps == 0.0) return result->relative_residual <= o->residual_tol;
    return result->relative_residual <= fmax(o->residual_tol, o->regularised_tol) &&
           eps * vector_inf_norm(n, z) <= o->regularised_tol * vector_inf_norm(n, q);
}

/* ---- Compensated arithmetic ------------------------------------------------------------ */

/* a + b = s + e exactly (Knuth's TwoSum; no branch on magnitudes). */
static inline void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b, bv = x - a;
    *e = (a - (x - bv)) + (b - bv);
    *s = x;
}

/* a b = p + e exactly: one fused multiply-add where the hardware has it, else Dekker's
 * product with Veltkamp's split (each half has at most 26 bits, so the partial products
 * are exact). */
static inline void two_product(double a, double b, double *p, double *e)
{
    double x = a * b;
#ifdef FP_FAST_FMA
    *e = fma(a, b, -x);
#else
    const double split = 134217729.0; /* 2^27 + 1 */
    double ca = split * a, a_hi = ca - (ca - a), a_lo = a - a_hi;
    double cb = split * b, b_hi = cb - (cb - b), b_lo = b - b_hi;
    *e = ((a_hi * b_hi - x) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
#endif
    *p = x;
}

/* (hi, lo) += a b, keeping the rounding errors of the product and of the sum in lo
 * (Ogita–Rump–Oishi Dot2): the final hi + lo is as accurate as a sum formed in twice the
 * working precision and then rounded. */
static inline void accumulate(double *hi, double *lo, double a, double b)
{
    double p, ep, s, es;
    two_product(a, b, &p, &ep);
    two_sum(*hi, p, &s, &es);
    *hi = s;
    *lo += es + ep;
}

/* (hi, lo) -= sum_t a[t] c[t] over `count` <= 4 columns c[t] of length n, compensated
 * (accumulate per product). The blocks of an island's M are sparse (contacts couple only
 * through shared bodies), so zero entries are skipped: cheaper here than streaming four
 * columns at a time through every entry (measured on the pile). */
static void subtract_columns(int n, double *restrict hi, double *restrict lo,
                             const double *const *c, const double *a, int count)
{
    for (int t = 0; t < count; ++t) {
        const double *ct = c[t];
        double at = -a[t];
        for (int k = 0; k < n; ++k)
            if (ct[k] != 0.0) accumulate(&hi[k], &lo[k], at, ct[k]);
    }
}

/* ---- Dense LU with partial pivoting ---------------------------------------------------
 *
 * The blocks solved here are small (an island of a pile: n <= ~150) and solved often (a
 * warm start or a refactorisation at every step). OpenBLAS's dgetrf runs such sizes on its
 * thread pool, whose workers spin-wait: on the 30-box pile dgetrf_parallel and sched_yield
 * took ~45% of the step time (perf). These loops do the same right-looking LU in the calling
 * thread, column-major with the inner loops contiguous (vectorisable). */

/* A = P L U in place (column-major, n x n, leading dimension n; unit L below the diagonal).
 * piv[k] is the row swapped with row k at step k (LAPACK's convention, 0-based). Returns 0
 * when a pivot is exactly zero or not finite. */
static int lu_factor(int n, double *A, int *piv)
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
            double *restrict cj = &A[(size_t)j * n];
            const double *restrict lk = ck;
            double f = cj[k];
            if (f == 0.0) continue;
            for (int i = k + 1; i < n; ++i) cj[i] -= f * lk[i];
        }
    }
    return 1;
}

/* b = A^-1 b with the factors of lu_factor (column-oriented substitutions; zero entries of
 * the right-hand side skip their column, which makes inverting cheaper). */
static void lu_solve(int n, const double *LU, const int *piv, double *b)
{
    for (int k = 0; k < n; ++k)
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
    double *restrict x = b;
    for (int k = 0; k < n; ++k) {
        double xk = x[k];
        if (xk == 0.0) continue;
        const double *restrict ck = &LU[(size_t)k * n];
        for (int i = k + 1; i < n; ++i) x[i] -= ck[i] * xk;
    }
    for (int k = n - 1; k >= 0; --k) {
        const double *restrict ck = &LU[(size_t)k * n];
        x[k] /= ck[k];
        double xk = x[k];
        if (xk == 0.0) continue;
        for (int i = 0; i < k; ++i) x[i] -= ck[i] * xk;
    }
}

/* ---- Basis solve (warm start and polish) -------------------------------------------- */

/* z from the complementary basis: M_BB z_B = -q_B (LU with partial pivoting, then
 * iterative refinement with compensated residuals, as in refine), z_N = 0. M_BB is kept
 * in tie_rows for the residuals (free outside the pivoting). Returns 0 when M_BB is
 * exactly singular or the solve is not finite. */
static int solve_basis(pp_lcp_workspace *ws, int n, const double *M, const double *q,
                       const unsigned char *basis, double *z)
{
    int nb = 0;
    for (int i = 0; i < n; ++i)
        if (basis[i]) ws->index[nb++] = i;
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    if (nb == 0) return 1;
    double *zb = ws->rhs, *r = ws->residual, *hi = ws->sum_hi, *lo = ws->sum_lo;
    double *mbb = ws->tie_rows;
    for (int b = 0; b < nb; ++b) {
        const double *col = M + (size_t)ws->index[b] * n;
        for (int a = 0; a < nb; ++a) mbb[a + (size_t)b * nb] = col[ws->index[a]];
        zb[b] = -q[ws->index[b]];
    }
    memcpy(ws->lu, mbb, (size_t)nb * nb * sizeof *mbb);
    if (!lu_factor(nb, ws->lu, ws->pivots)) return 0;
    lu_solve(nb, ws->lu, ws->pivots, zb);
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
                subtract_columns(nb, hi, lo, cols, coef, group);
                group = 0;
            }
        }
        subtract_columns(nb, hi, lo, cols, coef, group);
        for (int a = 0; a < nb; ++a) r[a] = hi[a] + lo[a];
        lu_solve(nb, ws->lu, ws->pivots, r);
        double c = 0.0, size = 0.0;
        for (int b = 0; b < nb; ++b) {
            zb[b] += r[b];
            c = max_d(c, fabs(r[b]));
            size = max_d(size, fabs(zb[b]));
        }
        if (!(c > REFINE_SETTLED * size) || (step == 0 && c <= REFINE_ONE_STEP * size)) break;
    }
    if (!all_finite((size_t)nb, zb)) return 0;
    for (int b = 0; b < nb; ++b) z[ws->index[b]] = zb[b];
    return 1;
}

/* ---- Lemke's pivoting, revised form --------------------------------------------------- */

typedef struct lemke_run {
    pp_lcp_workspace *ws;
    int n;
    const double *M;            /* the matrix pivoted on (M + eps I in a regularised attempt) */
    const double *q;
    const double *d;
    const pp_lcp_options *o;
    int refactorisations;
    int updates;                /* pivots applied to B^-1 since it was last computed */
    int saved_updates;          /* updates of the inverse kept by save_inverse */
    double drift;               /* first refinement correction of the last entering column */
    double x_error;             /* estimated bound on ||x - B^-1 q||_inf (see "Refinement on
                                   demand") */
    double last_correction;     /* refine: size of the correction it stopped at, or, when
                                   settled, of the rounding level of v */
    int since_refine;           /* pivots since y and x were last refined */
    double growth;              /* product of ||y|| / |y_r| over those pivots */
    int plain_updates;          /* pivots with an unrefined y since B^-1 was computed */
    int saved_plain_updates;
} lemke_run;

/* Row i of the explicit basis inverse. */
static double *inverse_row(const lemke_run *run, int i)
{
    return &run->ws->inverse[(size_t)i * run->n];
}

/* The column of variable v in [I | -M | -d], as the data it is made of: for z_j and z0
 * the column is -data; for w_j (data NULL) it is e_j. */
static const double *column_data(const lemke_run *run, int v)
{
    const int n = run->n;
    if (v < n) return NULL;
    return v < 2 * n ? run->M + (size_t)(v - n) * n : run->d;
}

static void load_column(const lemke_run *run, int v, double *a)
{
    const int n = run->n;
    const double *data = column_data(run, v);
    if (data) {
        for (int k = 0; k < n; ++k) a[k] = -data[k];
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
        const double *data = column_data(run, var);
        if (!data) {
            double s, e;
            two_sum(hi[var], -vi, &s, &e);
            hi[var] = s;
            lo[var] += e;
            continue;
        }
        cols[group] = data; /* the column is -data: b - B v gains +v_i data */
        coef[group++] = -vi;
        if (group == 4) {
            subtract_columns(n, hi, lo, cols, coef, group);
            group = 0;
        }
    }
    subtract_columns(n, hi, lo, cols, coef, group);
    for (int k = 0; k < n; ++k) out[k] = hi[k] + lo[k];
}

/* x . y with four independent partial sums: without reassociation (no -ffast-math) the
 * compiler keeps one sum as a chain of dependent additions, four times slower. This is the
 * kernel of every pivot (B^-1 times a vector). */
static double dot(int n, const double *restrict x, const double *restrict y)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += x[k] * y[k];
        s1 += x[k + 1] * y[k + 1];
        s2 += x[k + 2] * y[k + 2];
        s3 += x[k + 3] * y[k + 3];
    }
    for (; k < n; ++k) s0 += x[k] * y[k];
    return (s0 + s1) + (s2 + s3);
}

/* v = B^-1 b with the explicit inverse (row-major: one dot product per row). */
static void apply_inverse(const lemke_run *run, const double *b, double *v)
{
    const int n = run->n;
    for (int i = 0; i < n; ++i) v[i] = dot(n, inverse_row(run, i), b);
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
static double refine(lemke_run *run, const double *b, double *v, int *settled)
{
    const int n = run->n;
    double *r = run->ws->residual, *c = run->ws->sum_hi;
    double first = 0.0, previous = INFINITY;
    *settled = 0;
    run->last_correction = INFINITY;
    for (int step = 0; step < REFINE_STEPS; ++step) {
        basis_residual(run, b, v, r);
        apply_inverse(run, r, c); /* basis_residual is done with sum_hi */
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
    *settled = previous <= REFINE_FLOOR * vector_inf_norm(n, v);
    run->last_correction = previous;
    return first;
}

/* Keep (or bring back) the updated inverse, x and the update count; tie_rows and rhs are
 * free while a refactorisation runs (they serve the ratio test and the basis solves). */
static void save_inverse(lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const size_t n = (size_t)run->n;
    memcpy(ws->tie_rows, ws->inverse, n * n * sizeof *ws->inverse);
    memcpy(ws->rhs, ws->x, n * sizeof *ws->x);
    run->saved_updates = run->updates;
    run->saved_plain_updates = run->plain_updates;
}

static void restore_inverse(lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const size_t n = (size_t)run->n;
    memcpy(ws->inverse, ws->tie_rows, n * n * sizeof *ws->inverse);
    memcpy(ws->x, ws->rhs, n * sizeof *ws->x);
    run->updates = run->saved_updates;
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
static int refactorise(lemke_run *run)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    int *dense = ws->ties, *equation = ws->index; /* D positions; R equations (free here) */
    double *u = ws->column;
    save_inverse(run);

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
        const double *data = column_data(run, ws->row_var[dense[d]]);
        for (int r = 0; r < m; ++r) At[d + (size_t)r * m] = -data[equation[r]];
    }
    for (int i = 0; ok && i < n; ++i) {
        double *row = inverse_row(run, i);
        for (int k = 0; k < n; ++k) row[k] = 0.0;
    }
    if (ok) ok = lu_factor(m, At, ws->pivots);
    for (int d = 0; ok && d < m; ++d) { /* row d of A^-1: A^T u = e_d */
        for (int r = 0; r < m; ++r) u[r] = 0.0;
        u[d] = 1.0;
        lu_solve(m, At, ws->pivots, u);
        double *row = inverse_row(run, dense[d]);
        for (int r = 0; r < m; ++r) row[equation[r]] = u[r];
    }
    for (int i = 0; ok && i < n; ++i) { /* w_k basic: row = e_k - C_k A^-1 */
        int k = ws->row_var[i];
        if (k >= n) continue;
        double *row = inverse_row(run, i);
        row[k] = 1.0;
        for (int d = 0; d < m; ++d) {
            double c = -column_data(run, ws->row_var[dense[d]])[k]; /* C[k][d] */
            if (c == 0.0) continue;
            const double *a_inv = inverse_row(run, dense[d]);
            for (int r = 0; r < m; ++r) row[equation[r]] -= c * a_inv[equation[r]];
        }
    }
    if (ok) ok = all_finite((size_t)n * n, ws->inverse);
    if (ok) {
        apply_inverse(run, run->q, ws->x);
        refine(run, run->q, ws->x, &ok);
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
static double form_entering_column(lemke_run *run, int v, int *settled)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    load_column(run, v, ws->column);
    if (v < n) {
        for (int i = 0; i < n; ++i) ws->y[i] = inverse_row(run, i)[v];
    } else {
        apply_inverse(run, ws->column, ws->y);
    }
    return refine(run, ws->column, ws->y, settled);
}

/*
 * y = B^-1 a_v for the entering variable v, refined. B^-1 is recomputed when y does not
 * settle with the updated inverse, or when it has drifted (a refinement step gains less
 * than REFACTOR_GAIN) over at least REFACTOR_MIN_UPDATES pivots, so that the O(n^3) cost is
 * spread over O(n) pivots of O(n^2). A fresh inverse that y does not settle with is
 * dropped for the updated one. Returns 0 when y is not finite.
 */
static int entering_column(lemke_run *run, int v)
{
    int settled;
    double drift = run->drift = form_entering_column(run, v, &settled);
    if (drift == INFINITY) return 0;
    if (settled && (drift <= REFACTOR_GAIN || run->updates < REFACTOR_MIN_UPDATES)) return 1;
    if (run->updates == 0 || !refactorise(run)) return 1;
    drift = run->drift = form_entering_column(run, v, &settled);
    if (settled) return 1;
    restore_inverse(run);
    return (run->drift = form_entering_column(run, v, &settled)) < INFINITY;
}

/* Row i of B^-1, refined: u B = e_i^T, r_j = delta_ij - a_{row_var[j]} . u (compensated),
 * u += r^T B^-1. */
static void refined_inverse_row(const lemke_run *run, int i, double *u)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    double *r = ws->residual, *c = ws->sum_hi;
    memcpy(u, inverse_row(run, i), (size_t)n * sizeof *u);
    for (int step = 0; step < REFINE_STEPS; ++step) {
        for (int j = 0; j < n; ++j) {
            int var = ws->row_var[j];
            const double *data = column_data(run, var);
            double hi = j == i ? 1.0 : 0.0, lo = 0.0;
            if (!data) {
                double s, e;
                two_sum(hi, -u[var], &s, &e);
                hi = s;
                lo = e;
            } else {
                for (int k = 0; k < n; ++k)
                    if (data[k] != 0.0) accumulate(&hi, &lo, data[k], u[k]);
            }
            r[j] = hi + lo;
        }
        for (int k = 0; k < n; ++k) c[k] = 0.0;
        for (int j = 0; j < n; ++j) {
            if (r[j] == 0.0) continue;
            const double *row = inverse_row(run, j);
            for (int k = 0; k < n; ++k) c[k] += r[j] * row[k];
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

/*
 * Minimum-ratio test on (x, y) (see the file comment). Returns the leaving row, -1 when no
 * entry of y is positive (ray), -2 when y is not finite.
 */
static int ratio_test(const lemke_run *run, int z0_row)
{
    pp_lcp_workspace *ws = run->ws;
    const pp_lcp_options *o = run->o;
    const int n = run->n;
    const double *x = ws->x, *y = ws->y;
    double amax = vector_inf_norm(n, y);
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
    for (;;) {
        double row_scale = 0.0;
        for (int t = 0; t < candidates; ++t) {
            double *row = &ws->tie_rows[(size_t)t * n];
            if (refine_rows)
                refined_inverse_row(run, ws->ties[t], row);
            else
                memcpy(row, inverse_row(run, ws->ties[t]), (size_t)n * sizeof *row);
            ws->index[t] = t;
            row_scale = max_d(row_scale, vector_inf_norm(n, row) / y[ws->ties[t]]);
        }
        int check = !refine_rows && run->plain_updates > 0, close = 0;
        double certain = LEX_ROW_ERROR * row_scale;
        count = candidates;
        for (int j = 0; j < n && count > 1; ++j) {
            double vmin = INFINITY, vabs = 0.0;
            for (int t = 0; t < count; ++t) {
                int c = ws->index[t];
                double v = ws->tie_rows[(size_t)c * n + j] / y[ws->ties[c]];
                if (v < vmin) vmin = v;
                if (fabs(v) > vabs) vabs = fabs(v);
            }
            double vband = o->tie_tol * vabs;
            int kept = 0;
            for (int t = 0; t < count; ++t) {
                int c = ws->index[t];
                double v = ws->tie_rows[(size_t)c * n + j] / y[ws->ties[c]];
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
 */
#define RATIO_AMBIGUOUS (-3)
#define REFINE_PERIOD 4
#define Y_ERROR_SAFETY 100.0
#define X_ERROR_MAX 1e-8

/* Refine x = B^-1 q; recompute the inverse when x does not settle (refactorise keeps the
 * better one). Sets x_error. Returns 0 when x is not finite. */
static int refresh_x(lemke_run *run)
{
    int settled;
    if (refine(run, run->q, run->ws->x, &settled) == INFINITY) return 0;
    if (!settled && run->updates > 0) refactorise(run); /* refines x with the better inverse */
    run->x_error = run->last_correction;
    return isfinite(run->x_error);
}

/* y = B^-1 a_v with the current inverse, not refined. Returns ||y||_inf (not finite: y is
 * not usable). */
static double entering_column_plain(lemke_run *run, int v)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    if (v < n) {
        for (int i = 0; i < n; ++i) ws->y[i] = inverse_row(run, i)[v];
    } else {
        load_column(run, v, ws->column);
        apply_inverse(run, ws->column, ws->y);
    }
    return vector_inf_norm(n, ws->y);
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
    double amax = vector_inf_norm(n, y);
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
    double ynorm = vector_inf_norm(n, y), xnorm = vector_inf_norm(n, x);
    double theta = fabs(x[r] / y[r]);
    double e_theta = (run->x_error + theta * y_error) / fabs(y[r]) + 2.0 * DBL_EPSILON * theta;
    double e = run->x_error + ynorm * e_theta + theta * y_error;
    run->x_error = max_d(e_theta, e) + 2.0 * DBL_EPSILON * (xnorm + theta * ynorm);
    run->growth *= max_d(1.0, ynorm / fabs(y[r]));
}

/* Pivot on row r with the entering column y: x and B^-1 are multiplied by the elementary
 * matrix that maps y to e_r (row r /= y_r; row i -= y_i row r). */
static void pivot(lemke_run *run, int r)
{
    pp_lcp_workspace *ws = run->ws;
    const int n = run->n;
    double *x = ws->x, *y = ws->y;
    double *row_r = inverse_row(run, r);
    double inv = 1.0 / y[r];
    double theta = x[r] * inv;
    for (int k = 0; k < n; ++k) row_r[k] *= inv;
    for (int i = 0; i < n; ++i) {
        double f = y[i];
        if (i == r || f == 0.0) continue;
        double *restrict row_i = inverse_row(run, i);
        const double *restrict pivot_row = row_r;
        for (int k = 0; k < n; ++k) row_i[k] -= f * pivot_row[k];
        x[i] -= f * theta;
    }
    x[r] = theta;
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
    pp_lcp_result check;
    evaluate(n, run->M, run->q, z, NULL, &check);
    return check.relative_residual <= run->o->residual_tol;
}

/* z and the complementary basis from the final basic solution x (+ x_lo, the low parts of a
 * double-double x, when given): z_j = x_i where z_j is basic in row i, 0 elsewhere. Both are 0
 * when the pivoting did not end SOLVED. Returns status. */
static pp_lcp_status read_solution(const int *row_var, int n, pp_lcp_status status,
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

/*
 * Lemke from w basic on LCP(Me, q). Fills z (unclamped) and basis; returns the status of
 * the pivoting alone (SOLVED = z0 left the basis or reached 0) and counts pivots and
 * refactorisations.
 */
static pp_lcp_status lemke_pivot(pp_lcp_workspace *ws, int n, const double *Me, const double *q,
                                 const double *d, const unsigned char *start,
                                 const pp_lcp_options *o, int max_pivots, double *z,
                                 unsigned char *basis, int *pivots, int *refactorisations)
{
    lemke_run run = {ws, n, Me, q, d, o, 0, 0, 0, 0.0, 0.0, 0.0, 0, 1.0, 0, 0};
    const int z0_var = 2 * n;
    const double z0_zero = o->tie_tol * vector_inf_norm(n, q);
    *pivots = 0;
    *refactorisations = 0;

    if (!start) { /* w basic: B = I, x = q, z0's column B^-1 (-d) = -d */
        for (int i = 0; i < n; ++i) {
            double *row = inverse_row(&run, i);
            for (int k = 0; k < n; ++k) row[k] = 0.0;
            row[i] = 1.0;
            ws->x[i] = q[i];
            ws->y[i] = -d[i];
            ws->row_var[i] = i;
        }
    } else { /* the given complementary basis, with d = B e (see the file comment) */
        double *db = ws->start_covering;
        for (int k = 0; k < n; ++k) db[k] = start[k] ? 0.0 : 1.0;
        for (int i = 0; i < n; ++i) {
            ws->row_var[i] = start[i] ? n + i : i;
            if (!start[i]) continue;
            const double *col = Me + (size_t)i * n;
            for (int k = 0; k < n; ++k) db[k] -= col[k];
        }
        run.d = db;
        int settled = 0, ok = refactorise(&run);
        *refactorisations = run.refactorisations;
        if (ok) ok = form_entering_column(&run, z0_var, &settled) < INFINITY;
        if (!ok) return PP_LCP_NUMERICAL;
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
    if (r < 0) return PP_LCP_NUMERICAL;
    pivot(&run, r);
    ++run.updates;
    *pivots = 1;
    int leaving = ws->row_var[r];
    ws->row_var[r] = z0_var;
    const int z0_row = r; /* a row changes its basic variable only when pivoted on, so z0
                             stays in this row until it leaves */
    pp_lcp_status status = PP_LCP_PIVOT_CAP;

    run.x_error = 4.0 * DBL_EPSILON * vector_inf_norm(n, ws->x);
    run.growth = 1.0;
    int x_fresh = 1; /* x refined since the last pivot (or exact from w basic) */

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
        r = RATIO_AMBIGUOUS;
        double y_error = 0.0;
        if (run.since_refine < REFINE_PERIOD &&
            run.x_error <= X_ERROR_MAX * vector_inf_norm(n, ws->x)) {
            double ynorm = entering_column_plain(&run, entering);
            y_error = Y_ERROR_SAFETY * max_d(run.drift, n * DBL_EPSILON) * run.growth * ynorm;
            if (isfinite(y_error)) r = ratio_test_certain(&run, y_error);
        }
        if (r == RATIO_AMBIGUOUS) {
            if (!x_fresh && !refresh_x(&run)) {
                status = PP_LCP_NUMERICAL;
                break;
            }
            x_fresh = 1;
            if (!entering_column(&run, entering)) {
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
        carry_x_error(&run, r, y_error);
        if (run.since_refine > 0) ++run.plain_updates;
        pivot(&run, r);
        ++*pivots;
        ++run.updates;
        ++run.since_refine;
        x_fresh = 0;
        leaving = ws->row_var[r];
        ws->row_var[r] = entering;
        if (!isfinite(ws->x[r])) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        if (leaving == z0_var) {
            status = refresh_x(&run) ? PP_LCP_SOLVED : PP_LCP_NUMERICAL;
            break;
        }
    }
    *refactorisations = run.refactorisations;

    return read_solution(ws->row_var, n, status, ws->x, NULL, z, basis);
}

/* ---- Rescue: Lemke in double-double arithmetic ---------------------------------------
 *
 * Some islands of the pile pass through bases with cond(B) > 1/u ~ 1e16 (a compliance-sized
 * pivot on top of another: opposite friction directions of one contact both basic while
 * the normal impulses of a face are spread by the compliance alone). There the refined
 * double-precision path ends on a basis that misses by 1e-8 (the exact solution of that
 * basis has z_B < 0), and the regularised retries only reach about the same. Run in ~32
 * digits, the same pivoting solves every such island of the pile to rel(z) ~ 1e-17
 * (measured). So when the double-precision solve fails, the whole path is run again in
 * double-double arithmetic (Dekker 1971; a value is an unevaluated sum hi + lo with
 * |lo| <= u |hi| / 2), revised form with an explicit B^-1 of double-doubles, no
 * refinement: O(n^2) double-double operations per pivot, ~40 times the cost of a double
 * pivot, which is why it is only the rescue. The data M, q, d are doubles, exact in this
 * arithmetic. Ties are a relative 1e-24 apart and pivots must exceed 1e-20 of the column,
 * the double-double analogues of tie_tol and pivot_tol.
 */

typedef struct dd {
    double hi, lo;
} dd;

#define DD_PIVOT_TOL 1e-20
#define DD_TIE_TOL 1e-24

/* hi + lo with |lo| <= u |hi| / 2, when |e| <= |s| up to rounding (Dekker's fast sum). */
static inline dd dd_normalise(double s, double e)
{
    dd r;
    r.hi = s + e;
    r.lo = e - (r.hi - s);
    return r;
}

static inline dd dd_from(double a)
{
    dd r = {a, 0.0};
    return r;
}

/* a + b, accurate also under cancellation (both parts summed exactly, then renormalised). */
static inline dd dd_add(dd a, dd b)
{
    double s, e, t, f;
    two_sum(a.hi, b.hi, &s, &e);
    two_sum(a.lo, b.lo, &t, &f);
    e += t;
    dd r = dd_normalise(s, e);
    return dd_normalise(r.hi, r.lo + f);
}

static inline dd dd_neg(dd a)
{
    dd r = {-a.hi, -a.lo};
    return r;
}

static inline dd dd_mul(dd a, dd b)
{
    double p, e;
    two_product(a.hi, b.hi, &p, &e);
    e += a.hi * b.lo + a.lo * b.hi;
    return dd_normalise(p, e);
}

static inline dd dd_mul_d(dd a, double b)
{
    double p, e;
    two_product(a.hi, b, &p, &e);
    e += a.lo * b;
    return dd_normalise(p, e);
}

/* a / b by long division: three quotient digits. */
static inline dd dd_div(dd a, dd b)
{
    double q1 = a.hi / b.hi;
    dd r = dd_add(a, dd_neg(dd_mul_d(b, q1)));
    double q2 = r.hi / b.hi;
    r = dd_add(r, dd_neg(dd_mul_d(b, q2)));
    double q3 = r.hi / b.hi;
    return dd_add(dd_normalise(q1, q2), dd_from(q3));
}

static inline int dd_positive(dd a)
{
    return a.hi > 0.0 || (a.hi == 0.0 && a.lo > 0.0);
}

/* a <= b (1 + DD_TIE_TOL) for a, b >= 0: the tie band of the ratio test. */
static inline int dd_within_band(dd a, dd b)
{
    return dd_add(a, dd_neg(b)).hi <= DD_TIE_TOL * b.hi;
}

static inline int dd_less(dd a, dd b)
{
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

typedef struct extended_run {
    pp_lcp_workspace *ws;
    int n;
    const double *M, *q, *d;
    double *inv_hi, *inv_lo; /* B^-1, row-major, as hi + lo */
    double *x_hi, *x_lo;     /* basic solution */
    double *y_hi, *y_lo;     /* entering column */
} extended_run;

static dd ext_get(const double *hi, const double *lo, size_t i)
{
    dd r = {hi[i], lo[i]};
    return r;
}

static void ext_set(double *hi, double *lo, size_t i, dd v)
{
    hi[i] = v.hi;
    lo[i] = v.lo;
}

/* y = B^-1 a_v: a column of B^-1 for w_v, else -(B^-1 data) for z and z0. */
static void ext_entering_column(extended_run *e, int v)
{
    const int n = e->n;
    if (v < n) {
        for (int i = 0; i < n; ++i) {
            e->y_hi[i] = e->inv_hi[(size_t)i * n + v];
            e->y_lo[i] = e->inv_lo[(size_t)i * n + v];
        }
        return;
    }
    const double *data = v < 2 * n ? e->M + (size_t)(v - n) * n : e->d;
    for (int i = 0; i < n; ++i) {
        dd s = dd_from(0.0);
        const double *rh = &e->inv_hi[(size_t)i * n], *rl = &e->inv_lo[(size_t)i * n];
        for (int k = 0; k < n; ++k)
            if (data[k] != 0.0) {
                dd t = {rh[k], rl[k]};
                s = dd_add(s, dd_mul_d(t, data[k]));
            }
        ext_set(e->y_hi, e->y_lo, (size_t)i, dd_neg(s));
    }
}

static void ext_pivot(extended_run *e, int r)
{
    const int n = e->n;
    dd yr = ext_get(e->y_hi, e->y_lo, (size_t)r);
    dd inv = dd_div(dd_from(1.0), yr);
    dd theta = dd_mul(ext_get(e->x_hi, e->x_lo, (size_t)r), inv);
    double *rh = &e->inv_hi[(size_t)r * n], *rl = &e->inv_lo[(size_t)r * n];
    for (int k = 0; k < n; ++k) ext_set(rh, rl, (size_t)k, dd_mul(ext_get(rh, rl, (size_t)k), inv));
    for (int i = 0; i < n; ++i) {
        dd f = ext_get(e->y_hi, e->y_lo, (size_t)i);
        if (i == r || (f.hi == 0.0 && f.lo == 0.0)) continue;
        double *ih = &e->inv_hi[(size_t)i * n], *il = &e->inv_lo[(size_t)i * n];
        for (int k = 0; k < n; ++k) {
            dd p = {rh[k], rl[k]};
            if (p.hi == 0.0) continue;
            ext_set(ih, il, (size_t)k, dd_add(ext_get(ih, il, (size_t)k), dd_neg(dd_mul(f, p))));
        }
        ext_set(e->x_hi, e->x_lo, (size_t)i,
                dd_add(ext_get(e->x_hi, e->x_lo, (size_t)i), dd_neg(dd_mul(f, theta))));
    }
    ext_set(e->x_hi, e->x_lo, (size_t)r, theta);
}

/* Minimum ratio, exact signs, lexicographic ties on the rows of B^-1 (as ratio_test). */
static int ext_ratio_test(extended_run *e, int z0_row, const pp_lcp_options *o)
{
    pp_lcp_workspace *ws = e->ws;
    const int n = e->n;
    double amax = 0.0;
    for (int i = 0; i < n; ++i) amax = fmax(amax, fabs(e->y_hi[i]));
    if (!(amax > 0.0) || !isfinite(amax)) return amax > 0.0 ? -2 : -1;
    double threshold = DD_PIVOT_TOL * amax;
    dd theta_min = dd_from(INFINITY);
    int found = 0;
    for (int i = 0; i < n; ++i) {
        if (!(e->y_hi[i] > threshold)) continue;
        dd x = ext_get(e->x_hi, e->x_lo, (size_t)i);
        dd theta = dd_positive(x) ? dd_div(x, ext_get(e->y_hi, e->y_lo, (size_t)i)) : dd_from(0.0);
        if (!found || dd_less(theta, theta_min)) theta_min = theta;
        found = 1;
    }
    if (!found) return -1;
    int count = 0;
    for (int i = 0; i < n; ++i) {
        if (!(e->y_hi[i] > threshold)) continue;
        dd x = ext_get(e->x_hi, e->x_lo, (size_t)i);
        dd theta = dd_positive(x) ? dd_div(x, ext_get(e->y_hi, e->y_lo, (size_t)i)) : dd_from(0.0);
        if (dd_within_band(theta, theta_min)) ws->ties[count++] = i;
    }
    for (int t = 0; t < count; ++t)
        if (ws->ties[t] == z0_row) return z0_row;
    if (count == 1 || o->tie_break == PP_LCP_FIRST_INDEX) return ws->ties[0];
    for (int j = 0; j < n && count > 1; ++j) {
        dd vmin = dd_from(INFINITY);
        for (int t = 0; t < count; ++t) {
            int i = ws->ties[t];
            dd v = dd_div(ext_get(e->inv_hi, e->inv_lo, (size_t)i * n + j),
                          ext_get(e->y_hi, e->y_lo, (size_t)i));
            if (t == 0 || dd_less(v, vmin)) vmin = v;
        }
        int kept = 0;
        for (int t = 0; t < count; ++t) {
            int i = ws->ties[t];
            dd v = dd_div(ext_get(e->inv_hi, e->inv_lo, (size_t)i * n + j),
                          ext_get(e->y_hi, e->y_lo, (size_t)i));
            if (fabs(dd_add(v, dd_neg(vmin)).hi) <= DD_TIE_TOL * fabs(vmin.hi)) ws->ties[kept++] = i;
        }
        count = kept;
    }
    return ws->ties[0];
}

/* Whether the rounded basic point (z0 taken as 0) passes the residual test. */
static int ext_basic_point_solves(const extended_run *e, const pp_lcp_options *o)
{
    pp_lcp_workspace *ws = e->ws;
    const int n = e->n;
    for (int i = 0; i < n; ++i) ws->z_try[i] = 0.0;
    for (int i = 0; i < n; ++i) {
        int v = ws->row_var[i];
        if (v >= n && v < 2 * n) ws->z_try[v - n] = fmax(e->x_hi[i] + e->x_lo[i], 0.0);
    }
    pp_lcp_result check;
    evaluate(n, e->M, e->q, ws->z_try, NULL, &check);
    return check.relative_residual <= o->residual_tol;
}

/* Lemke from w basic on LCP(M, q) in double-double arithmetic (see above). Fills z
 * (rounded) and basis; uses the workspace's inverse and tie_rows as B^-1 and x, residual,
 * y, sum_hi as the vectors. */
static pp_lcp_status lemke_extended(pp_lcp_workspace *ws, int n, const double *M,
                                    const double *q, const double *d, const pp_lcp_options *o,
                                    int max_pivots, double *z, unsigned char *basis, int *pivots)
{
    extended_run e = {ws,        n,           M,      q,      d,      ws->inverse, ws->tie_rows,
                      ws->x,     ws->residual, ws->y, ws->sum_hi};
    const int z0_var = 2 * n;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < n; ++k) {
            e.inv_hi[(size_t)i * n + k] = i == k ? 1.0 : 0.0;
            e.inv_lo[(size_t)i * n + k] = 0.0;
        }
        e.x_hi[i] = q[i];
        e.x_lo[i] = 0.0;
        e.y_hi[i] = -d[i];
        e.y_lo[i] = 0.0;
        ws->row_var[i] = i;
    }
    int r = -1;
    dd best = dd_from(-INFINITY);
    for (int i = 0; i < n; ++i) { /* z0 enters at max -q_i / d_i, ties: largest index */
        dd level = dd_div(dd_from(-q[i]), dd_from(d[i]));
        if (r < 0 || dd_less(best, level) ||
            (o->tie_break == PP_LCP_LEXICOGRAPHIC && !dd_less(level, best)))
            best = level, r = i;
    }
    ext_pivot(&e, r);
    *pivots = 1;
    int leaving = ws->row_var[r];
    ws->row_var[r] = z0_var;
    const int z0_row = r;
    pp_lcp_status status = PP_LCP_PIVOT_CAP;
    for (;;) {
        if (!dd_positive(ext_get(e.x_hi, e.x_lo, (size_t)z0_row)) &&
            ext_basic_point_solves(&e, o)) {
            status = PP_LCP_SOLVED;
            break;
        }
        if (*pivots >= max_pivots) break;
        int entering = leaving < n ? leaving + n : leaving - n;
        ext_entering_column(&e, entering);
        r = ext_ratio_test(&e, z0_row, o);
        if (r < 0) {
            status = r == -1 ? PP_LCP_RAY_TERMINATION : PP_LCP_NUMERICAL;
            break;
        }
        ext_pivot(&e, r);
        ++*pivots;
        leaving = ws->row_var[r];
        ws->row_var[r] = entering;
        if (!isfinite(e.x_hi[r])) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        if (leaving == z0_var) {
            status = PP_LCP_SOLVED;
            break;
        }
    }
    return read_solution(ws->row_var, n, status, e.x_hi, e.x_lo, z, basis);
}

/* ---- Public solves -------------------------------------------------------------------- */

static pp_status check_arguments(const char *who, pp_lcp_workspace *ws, int n, const double *M,
                                 const double *q, const pp_lcp_options *o, double *z,
                                 pp_lcp_result *result)
{
    if (!ws || !M || !q || !z || !result || !o) {
        pp_log(PP_LOG_ERROR, "%s: NULL argument", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    if (n < 1 || n > ws->n_max) {
        pp_log(PP_LOG_ERROR, "%s: n = %d outside 1..%d (workspace capacity)", who, n, ws->n_max);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!all_finite((size_t)n * n, M) || !all_finite((size_t)n, q)) {
        pp_log(PP_LOG_ERROR, "%s: M or q holds NaN/Inf", who);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!(o->pivot_tol > 0.0 && o->pivot_tol < 1.0) || !(o->tie_tol >= 0.0 && o->tie_tol < 1.0) ||
        !(o->residual_tol > 0.0) || !(o->regularised_tol >= 0.0)) {
        pp_log(PP_LOG_ERROR, "%s: tolerances must be pivot_tol in (0,1), tie_tol in [0,1), "
               "residual_tol > 0, regularised_tol >= 0", who);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (o->covering) {
        for (int i = 0; i < n; ++i)
            if (!(o->covering[i] > 0.0) || !isfinite(o->covering[i])) {
                pp_log(PP_LOG_ERROR, "%s: covering[%d] = %g must be finite and > 0", who, i,
                       o->covering[i]);
                return PP_ERR_INVALID_ARGUMENT;
            }
    }
    return PP_OK;
}

static void reset_result(pp_lcp_result *result)
{
    memset(result, 0, sizeof *result);
    result->status = PP_LCP_NUMERICAL;
}

/* Lemke on LCP(Me, q) from w basic (start NULL) or from the complementary basis `start`,
 * then the polish on the final basis B: solve M_BB z_B = -q_B with the original M first (for
 * eps > 0 that is the exact solution of the original LCP whenever B is its solution basis),
 * then with M + eps I; keep the accepted z with the smallest rel(z). The final basis is
 * left in ws->basis. Counts pivots and refactorisations into result. */
static pp_lcp_status lemke_run_and_polish(pp_lcp_workspace *ws, int n, const double *M,
                                          const double *Me, double eps, const double *q,
                                          const double *d, const unsigned char *start,
                                          const pp_lcp_options *o, int cap, double *z,
                                          pp_lcp_result *result)
{
    double *zt = ws->z_try, *w = ws->w_try;
    int pivots = 0, refactorisations = 0;
    pp_lcp_status status = lemke_pivot(ws, n, Me, q, d, start, o, cap, z, ws->basis, &pivots,
                                       &refactorisations);
    result->pivots += pivots;
    result->refactorisations += refactorisations;
    if (status != PP_LCP_SOLVED) return status;

    int ok = accept(n, M, q, eps, o, z, w, result);
    pp_lcp_result best = *result;
    /* The pivoting's z is refined; a basis solve adds nothing when it is already far inside
     * the tolerance. */
    int passes = ok && result->relative_residual <= POLISH_SKIP * o->residual_tol ? 0
                 : eps > 0.0                                                     ? 2
                                                                                 : 1;
    for (int pass = 0; pass < passes; ++pass) {
        const double *Mp = pass == 0 ? M : Me;
        double eps_p = pass == 0 ? 0.0 : eps;
        if (solve_basis(ws, n, Mp, q, ws->basis, zt) && accept(n, M, q, eps_p, o, zt, w, result) &&
            (!ok || result->relative_residual <= best.relative_residual)) {
            memcpy(z, zt, (size_t)n * sizeof *z);
            ok = 1;
            best = *result;
        }
    }
    *result = best;
    return ok ? PP_LCP_SOLVED : PP_LCP_NUMERICAL;
}

/* One attempt on LCP(Me, q), Me = M + eps I; acceptance is measured against (M, q). */
static pp_lcp_status solve_once(pp_lcp_workspace *ws, int n, const double *M, const double *Me,
                                double eps, const double *q, const pp_lcp_options *o,
                                const unsigned char *warm, unsigned char *basis_out, double *z,
                                pp_lcp_result *result)
{
    double *zt = ws->z_try, *w = ws->w_try;

    if (warm) {
        if (solve_basis(ws, n, Me, q, warm, zt) && accept(n, M, q, eps, o, zt, w, result)) {
            memcpy(z, zt, (size_t)n * sizeof *z);
            if (basis_out != warm) memcpy(basis_out, warm, (size_t)n);
            result->warm_started = 1;
            return PP_LCP_SOLVED;
        }
    }

    /* z = 0 when q >= 0 up to the rounding level of q (64 u ||q||_inf): a separating
     * contact's tangential rows come out as -1e-15 m/s, and pivoting on that noise in a fully
     * degenerate tableau can fail where z = 0 is the answer to working precision. */
    double q_floor = -64.0 * DBL_EPSILON * vector_inf_norm(n, q);
    int q_nonnegative = 1;
    for (int i = 0; i < n; ++i)
        if (q[i] < q_floor) q_nonnegative = 0;
    if (q_nonnegative) {
        for (int i = 0; i < n; ++i) zt[i] = 0.0;
        accept(n, M, q, eps, o, zt, w, result);
        for (int i = 0; i < n; ++i) {
            z[i] = 0.0;
            basis_out[i] = 0;
        }
        return PP_LCP_SOLVED;
    }

    const double *d = o->covering;
    if (!d) {
        for (int i = 0; i < n; ++i) ws->covering[i] = 1.0;
        d = ws->covering;
    }
    int cap = o->max_pivots > 0 ? o->max_pivots : 50 * n + 100;
    pp_lcp_status status = PP_LCP_NUMERICAL;
    if (warm) { /* Lemke from the given basis first, at most n pivots */
        status = lemke_run_and_polish(ws, n, M, Me, eps, q, d, warm, o, cap < n ? cap : n, z,
                                      result);
        if (status == PP_LCP_SOLVED) result->warm_lemke = 1;
    }
    if (status != PP_LCP_SOLVED)
        status = lemke_run_and_polish(ws, n, M, Me, eps, q, d, NULL, o, cap, z, result);
    /* The double-double rescue, for numerical trouble: not for a regularised attempt (the
     * ladder of pp_lcp_solve), not at the pivot cap (with the lexicographic rule Lemke does
     * not cycle, so a long path would be as long again), and bounded (RESCUE_MAX_N). */
    if (status != PP_LCP_SOLVED && status != PP_LCP_PIVOT_CAP && eps == 0.0 &&
        n <= RESCUE_MAX_N) {
        int pivots = 0, rescue_cap = 2 * n + 10 < cap ? 2 * n + 10 : cap;
        pp_lcp_status rescue =
            lemke_extended(ws, n, M, q, d, o, rescue_cap, z, ws->basis, &pivots);
        result->pivots += pivots;
        if (rescue == PP_LCP_SOLVED && accept(n, M, q, 0.0, o, z, ws->w_try, result)) {
            result->extended = 1;
            status = PP_LCP_SOLVED;
        }
    }
    if (status == PP_LCP_SOLVED && basis_out != ws->basis)
        memcpy(basis_out, ws->basis, (size_t)n);
    return status;
}

/* ---- Dump every solve (PP_LCP_DUMP_ALL) ------------------------------------------------
 *
 * With the environment variable PP_LCP_DUMP_ALL set to a directory, every call of
 * pp_lcp_solve and pp_lcp_solve_lemke with n >= 2 writes its problem there as
 * lcp_<pid>_<counter>_n<n>.lcp (pp_lcp_instance_save), to collect real instances for timing
 * and tests. The variable is read once; a write failure turns the dump off. Not thread-safe
 * (the counter): a diagnostic for single-threaded runs. */
static void dump_instance(int n, const double *M, const double *q, const char *who)
{
    static int state = -1; /* -1 unread, 0 off, 1 on */
    static const char *dir = NULL;
    static unsigned long counter = 0;
    if (state < 0) {
        dir = getenv("PP_LCP_DUMP_ALL");
        state = dir && *dir ? 1 : 0;
    }
    if (state == 0 || n < 2) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/lcp_%ld_%06lu_n%d.lcp", dir, (long)getpid(), counter++, n);
    if (pp_lcp_instance_save(path, n, M, q, NULL, who) != PP_OK) state = 0;
}

static void fail_clean(int n, double *z, unsigned char *basis)
{
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    if (basis) memset(basis, 0, (size_t)n);
}

pp_status pp_lcp_solve_lemke(pp_lcp_workspace *workspace, int n, const double *M,
                             const double *q, const pp_lcp_options *options,
                             unsigned char *basis, double *z, pp_lcp_result *result)
{
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *o = options ? options : &defaults;
    pp_status arg = check_arguments("pp_lcp_solve_lemke", workspace, n, M, q, o, z, result);
    if (arg != PP_OK) return arg;
    dump_instance(n, M, q, "pp_lcp_solve_lemke");
    reset_result(result);
    result->attempts = 1;

    const unsigned char *warm = (basis && o->warm_start) ? basis : NULL;
    unsigned char *out = basis ? basis : workspace->basis;
    result->status = solve_once(workspace, n, M, M, 0.0, q, o, warm, out, z, result);
    if (result->status == PP_LCP_SOLVED) return PP_OK;
    fail_clean(n, z, basis);
    evaluate(n, M, q, z, NULL, result);
    return PP_ERR_SOLVER;
}

pp_status pp_lcp_solve(pp_lcp_workspace *workspace, int n, const double *M, const double *q,
                       const pp_lcp_options *options, unsigned char *basis, double *z,
                       pp_lcp_result *result)
{
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *o = options ? options : &defaults;
    pp_status arg = check_arguments("pp_lcp_solve", workspace, n, M, q, o, z, result);
    if (arg != PP_OK) return arg;
    dump_instance(n, M, q, "pp_lcp_solve");
    reset_result(result);

    const unsigned char *warm = (basis && o->warm_start) ? basis : NULL;
    unsigned char *out = basis ? basis : workspace->basis;
    result->attempts = 1;
    pp_lcp_status first = solve_once(workspace, n, M, M, 0.0, q, o, warm, out, z, result);
    result->status = first;
    if (first == PP_LCP_SOLVED) return PP_OK;

    /* spec/PEG.md §6: the authors retry Lemke on M + eps I, eps = 1e-16 doubling to 1e-6.
     * If M + M^T is PSD, M + eps I is positive definite, hence a P-matrix with a unique
     * solution that Lemke reaches: the shift removes the rank deficiency of redundant
     * contacts. A shift below the rounding unit of a diagonal entry, eps < 2^-53 |M_ii|,
     * is lost when added, so in effect the schedule starts near 1.1e-16 max|M_ii|. */
    double *Me = workspace->regularised;
    for (double eps = PP_LCP_EPS_FIRST; eps <= PP_LCP_EPS_MAX; eps *= 2.0) {
        memcpy(Me, M, (size_t)n * n * sizeof *Me);
        for (int i = 0; i < n; ++i) Me[i + (size_t)i * n] += eps;
        int pivots = result->pivots, refactorisations = result->refactorisations;
        int attempts = result->attempts + 1;
        reset_result(result);
        result->pivots = pivots;
        result->refactorisations = refactorisations;
        result->attempts = attempts;
        pp_lcp_status s = solve_once(workspace, n, M, Me, eps, q, o, NULL, out, z, result);
        if (s == PP_LCP_SOLVED) {
            result->status = PP_LCP_SOLVED;
            result->epsilon = eps;
            pp_log(PP_LOG_WARNING,
                   "lcp: plain Lemke failed (%s); solved with M + %g I, residual %.3g",
                   pp_lcp_status_string(first), eps, result->residual);
            return PP_OK;
        }
    }
    fail_clean(n, z, basis);
    evaluate(n, M, q, z, NULL, result);
    result->status = first;
    pp_log(PP_LOG_WARNING, "lcp: Lemke failed (%s) on n = %d, also with M + eps I up to %g; "
           "z set to 0", pp_lcp_status_string(first), n, PP_LCP_EPS_MAX);
    return PP_ERR_SOLVER;
}

/* ---- Instance files -------------------------------------------------------------------- */

pp_status pp_lcp_instance_save(const char *path, int n, const double *M, const double *q,
                               const double *z, const char *comment)
{
    if (!path || !M || !q) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (n < 1) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: n = %d", n);
        return PP_ERR_INVALID_ARGUMENT;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: cannot open %s: %s", path, strerror(errno));
        return PP_ERR_INVALID_ARGUMENT;
    }
    fprintf(f, "pp_lcp 1\n");
    if (comment) {
        fputs("# ", f);
        for (const char *c = comment; *c; ++c) fputc(*c == '\n' ? ' ' : *c, f);
        fputc('\n', f);
    }
    fprintf(f, "n %d\nM\n", n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            fprintf(f, "%.17g%c", M[i + (size_t)j * n], j + 1 < n ? ' ' : '\n');
    fprintf(f, "q\n");
    for (int i = 0; i < n; ++i) fprintf(f, "%.17g%c", q[i], i + 1 < n ? ' ' : '\n');
    if (z) {
        fprintf(f, "z\n");
        for (int i = 0; i < n; ++i) fprintf(f, "%.17g%c", z[i], i + 1 < n ? ' ' : '\n');
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: write to %s failed", path);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return PP_OK;
}

/* Next whitespace-separated token, skipping '#' comments to the end of their line. */
static int next_token(FILE *f, char *buf, size_t size)
{
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == EOF) return 0;
        if (c == '#') {
            while (c != EOF && c != '\n') c = fgetc(f);
            continue;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    }
    size_t len = 0;
    while (c != EOF && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '#') {
        if (len + 1 < size) buf[len++] = (char)c;
        c = fgetc(f);
    }
    if (c == '#') ungetc(c, f);
    buf[len] = '\0';
    return 1;
}

static int read_numbers(FILE *f, size_t count, double *out)
{
    char tok[64];
    for (size_t i = 0; i < count; ++i) {
        if (!next_token(f, tok, sizeof tok)) return 0;
        char *end;
        out[i] = strtod(tok, &end);
        if (*end != '\0' || !isfinite(out[i])) return 0;
    }
    return 1;
}

void pp_lcp_instance_free(pp_lcp_instance *instance)
{
    if (!instance) return;
    free(instance->M);
    free(instance->q);
    free(instance->z);
    memset(instance, 0, sizeof *instance);
}

pp_status pp_lcp_instance_load(const char *path, pp_lcp_instance *out)
{
    if (!path || !out) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: cannot open %s: %s", path, strerror(errno));
        return PP_ERR_INVALID_ARGUMENT;
    }
    char tok[64];
    const char *what = "header 'pp_lcp 1'";
    int n = 0;
    double *rows = NULL;
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "pp_lcp") != 0) goto bad;
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "1") != 0) goto bad;
    what = "'n <n>'";
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "n") != 0) goto bad;
    if (!next_token(f, tok, sizeof tok) || sscanf(tok, "%d", &n) != 1 || n < 1 ||
        n > PP_LCP_N_MAX_LIMIT)
        goto bad;
    what = "'M' and n*n numbers";
    out->n = n;
    out->M = malloc((size_t)n * n * sizeof *out->M);
    rows = malloc((size_t)n * n * sizeof *rows);
    out->q = malloc((size_t)n * sizeof *out->q);
    if (!out->M || !rows || !out->q) {
        fclose(f);
        free(rows);
        pp_lcp_instance_free(out);
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: out of memory for n = %d", n);
        return PP_ERR_NO_MEMORY;
    }
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "M") != 0) goto bad;
    if (!read_numbers(f, (size_t)n * n, rows)) goto bad;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) out->M[i + (size_t)j * n] = rows[(size_t)i * n + j];
    what = "'q' and n numbers";
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "q") != 0) goto bad;
    if (!read_numbers(f, (size_t)n, out->q)) goto bad;
    what = "'z' and n numbers";
    if (next_token(f, tok, sizeof tok)) {
        if (strcmp(tok, "z") != 0) goto bad;
        out->z = malloc((size_t)n * sizeof *out->z);
        if (!out->z || !read_numbers(f, (size_t)n, out->z)) goto bad;
    }
    free(rows);
    fclose(f);
    return PP_OK;
bad:
    free(rows);
    fclose(f);
    pp_lcp_instance_free(out);
    pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: %s: expected %s", path, what);
    return PP_ERR_INVALID_ARGUMENT;
}
