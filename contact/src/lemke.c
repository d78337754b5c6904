/*
 * Lemke's method for LCP(M, q) (pegplus/lcp.h), as Stewart & Trinkle 1996 §4 use it:
 * explicit tableau, lexicographic degeneracy resolution, plus a warm start from the
 * previous complementary basis and the regularisation fallback of spec/PEG.md §6.
 *
 * Lemke (Cottle–Pang–Stone 1992, Algorithm 4.4.1). Append an artificial z0 with covering
 * vector d > 0 and solve
 *     w - M z - d z0 = q,   w, z, z0 >= 0,   w_i z_i = 0   (i = 1..n).            (L1)
 * With w basic the system is complementary but infeasible where q_i < 0. Let z0 enter at the
 * level z0 = max_i(-q_i / d_i); the row r attaining it leaves (w_r). From then on the basis
 * is feasible and "almost complementary": exactly one pair (w_r, z_r) is nonbasic, and the
 * complement of the variable that just left enters (complementary pivot rule). The
 * minimum-ratio test keeps feasibility; the path ends when z0 leaves (a solution), when
 * the entering column has no positive entry (a secondary ray), or at the pivot cap.
 *
 * Tableau. Rows i = 0..n-1, columns [w_0..w_{n-1} | z_0..z_{n-1} | z0 | rhs], initially
 *     T = [ I | -M | -d | q ],
 * so after any sequence of pivots T = B^{-1} [I | -M | -d | q] and the w block of T is
 * B^{-1}, the inverse of the current basis matrix.
 *
 * Lexicographic rule (CPS §4.9). Perturb q to q(e) = q + (e, e^2, ..., e^n) for a tiny
 * e > 0; in the tableau this is rhs row i -> (q_bar_i, B^{-1}_i). The perturbed problem is
 * nondegenerate, because the rows of B^{-1} are linearly independent, so the path cannot
 * revisit a basis. Its ratio test compares, among rows with a positive entry a_i in the
 * entering column, the vectors (q_bar_i, B^{-1}_{i,0}, ..., B^{-1}_{i,n-1}) / a_i
 * lexicographically and takes the smallest: compare q_bar_i/a_i; among ties compare
 * B^{-1}_{i,0}/a_i; and so on. The first pivot (z0 entering, column -d) must leave every
 * row lexicographically positive: with r the leaving row, row i becomes
 * (q_i - d_i q_r/d_r, e_i - (d_i/d_r) e_r), which for a tie in the first entry is
 * lexicographically positive only if i < r; so among rows attaining max(-q_i/d_i) the one
 * with the LARGEST index leaves. If z0's row is among the ties of the first entry it is
 * taken at once: z0 = 0 ends the path at a solution.
 *
 * Warm start. A complementary basis B (z_i basic for i in B, w_i basic otherwise) gives
 * w_B = 0, z_N = 0, hence M_BB z_B = -q_B and w_N = M_NB z_B + q_N. When this z (LU via
 * LAPACK dgesv) is a solution by the independent residual, no pivot is needed. The same
 * solve "polishes" Lemke's final basis, removing the error the explicit tableau has
 * accumulated; the better of the two z by residual is kept.
 */
#include "pegplus/lcp.h"

#include <errno.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_LCP_N_MAX_LIMIT (1 << 20)

struct pp_lcp_workspace {
    int n_max;
    int owned;
    double *tableau;      /* n x (2n + 2), row-major with the current n */
    double *regularised;  /* n x n: M + eps I */
    double *lu;           /* n x n: M_BB for dgesv */
    double *rhs;          /* n */
    double *z_try;        /* n: candidate z */
    double *w_try;        /* n: its w */
    double *covering;     /* n: d */
    lapack_int *ipiv;     /* n */
    int *row_var;         /* n: basic variable of each row (0..n-1 w, n..2n-1 z, 2n z0) */
    int *ties;            /* n: rows tied in the ratio test */
    int *index;           /* n: basic z indices */
    unsigned char *basis; /* n: internal basis flags */
};

static size_t align_up(size_t bytes)
{
    return (bytes + 15u) & ~(size_t)15u;
}

size_t pp_lcp_workspace_size(int n_max)
{
    if (n_max < 1 || n_max > PP_LCP_N_MAX_LIMIT) return 0;
    size_t n = (size_t)n_max;
    size_t bytes = align_up(sizeof(struct pp_lcp_workspace));
    bytes += align_up(n * (2 * n + 2) * sizeof(double));
    bytes += 2 * align_up(n * n * sizeof(double));
    bytes += 4 * align_up(n * sizeof(double));
    bytes += align_up(n * sizeof(lapack_int));
    bytes += 3 * align_up(n * sizeof(int));
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
    ws->tableau = (double *)p;
    p += align_up(n * (2 * n + 2) * sizeof(double));
    ws->regularised = (double *)p;
    p += align_up(n * n * sizeof(double));
    ws->lu = (double *)p;
    p += align_up(n * n * sizeof(double));
    ws->rhs = (double *)p;
    p += align_up(n * sizeof(double));
    ws->z_try = (double *)p;
    p += align_up(n * sizeof(double));
    ws->w_try = (double *)p;
    p += align_up(n * sizeof(double));
    ws->covering = (double *)p;
    p += align_up(n * sizeof(double));
    ws->ipiv = (lapack_int *)p;
    p += align_up(n * sizeof(lapack_int));
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

/* ---- Basis solve (warm start and polish) -------------------------------------------- */

/* z from the complementary basis: M_BB z_B = -q_B (LU with partial pivoting), z_N = 0.
 * Returns 0 when M_BB is exactly singular. */
static int solve_basis(pp_lcp_workspace *ws, int n, const double *M, const double *q,
                       const unsigned char *basis, double *z)
{
    int nb = 0;
    for (int i = 0; i < n; ++i)
        if (basis[i]) ws->index[nb++] = i;
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    if (nb == 0) return 1;
    for (int b = 0; b < nb; ++b) {
        const double *col = M + (size_t)ws->index[b] * n;
        for (int a = 0; a < nb; ++a) ws->lu[a + (size_t)b * nb] = col[ws->index[a]];
        ws->rhs[b] = -q[ws->index[b]];
    }
    lapack_int info = LAPACKE_dgesv_work(LAPACK_COL_MAJOR, nb, 1, ws->lu, nb, ws->ipiv, ws->rhs,
                                         nb);
    if (info != 0) return 0;
    for (int b = 0; b < nb; ++b) z[ws->index[b]] = ws->rhs[b];
    return 1;
}

/* ---- Lemke's pivoting ---------------------------------------------------------------- */

typedef struct lemke_run {
    int n;
    int cols;           /* 2n + 2 */
    double *T;
    double rhs_zero;    /* |q_bar_i| below this counts as 0 in ratios */
} lemke_run;

#define T_AT(run, i, j) ((run)->T[(size_t)(i) * (run)->cols + (j)])

/* Gauss–Jordan pivot on (r, c): row r /= T_rc, then eliminate column c from every other row. */
static void pivot(lemke_run *run, int r, int c)
{
    double *row_r = &T_AT(run, r, 0);
    double inv = 1.0 / row_r[c];
    for (int j = 0; j < run->cols; ++j) row_r[j] *= inv;
    row_r[c] = 1.0;
    for (int i = 0; i < run->n; ++i) {
        if (i == r) continue;
        double *row_i = &T_AT(run, i, 0);
        double f = row_i[c];
        if (f == 0.0) continue;
        for (int j = 0; j < run->cols; ++j) row_i[j] -= f * row_r[j];
        row_i[c] = 0.0;
    }
}

/*
 * Minimum-ratio test for entering column c (see the file comment). Returns the leaving row,
 * -1 when no entry is positive (ray), -2 when the blocking pivot is unusably small.
 */
static int ratio_test(const lemke_run *run, pp_lcp_workspace *ws, int c, int z0_row,
                      const pp_lcp_options *o)
{
    const int n = run->n, rhs = run->cols - 1;
    double amax = 0.0;
    for (int i = 0; i < n; ++i)
        if (fabs(T_AT(run, i, c)) > amax) amax = fabs(T_AT(run, i, c));
    if (!(amax > 0.0) || !isfinite(amax)) return amax > 0.0 ? -2 : -1;
    double threshold = o->pivot_tol * amax;

    double theta_min = INFINITY;
    for (int i = 0; i < n; ++i) {
        double a = T_AT(run, i, c);
        if (!(a > threshold)) continue;
        double b = T_AT(run, i, rhs);
        double theta = b > run->rhs_zero ? b / a : 0.0;
        if (theta < theta_min) theta_min = theta;
    }
    if (theta_min == INFINITY) return -1;

    int count = 0;
    double band = o->tie_tol * theta_min;
    for (int i = 0; i < n; ++i) {
        double a = T_AT(run, i, c);
        if (!(a > threshold)) continue;
        double b = T_AT(run, i, rhs);
        double theta = b > run->rhs_zero ? b / a : 0.0;
        if (theta <= theta_min + band) ws->ties[count++] = i;
    }
    for (int t = 0; t < count; ++t)
        if (ws->ties[t] == z0_row) return z0_row;
    if (count == 1 || o->tie_break == PP_LCP_FIRST_INDEX) return ws->ties[0];

    /* Lexicographic: compare column j of B^{-1} (= w column j of T) divided by a_i. */
    for (int j = 0; j < n && count > 1; ++j) {
        double vmin = INFINITY, vabs = 0.0;
        for (int t = 0; t < count; ++t) {
            int i = ws->ties[t];
            double v = T_AT(run, i, j) / T_AT(run, i, c);
            if (v < vmin) vmin = v;
            if (fabs(v) > vabs) vabs = fabs(v);
        }
        double vband = o->tie_tol * vabs;
        int kept = 0;
        for (int t = 0; t < count; ++t) {
            int i = ws->ties[t];
            double v = T_AT(run, i, j) / T_AT(run, i, c);
            if (v <= vmin + vband) ws->ties[kept++] = i;
        }
        count = kept;
    }
    return ws->ties[0];
}

/*
 * Lemke from w basic on LCP(Me, q). Fills z (unclamped) and basis; returns the status of
 * the pivoting alone (SOLVED = z0 left the basis) and counts pivots.
 */
static pp_lcp_status lemke_pivot(pp_lcp_workspace *ws, int n, const double *Me, const double *q,
                                 const double *d, const pp_lcp_options *o, int max_pivots,
                                 double *z, unsigned char *basis, int *pivots)
{
    lemke_run run;
    run.n = n;
    run.cols = 2 * n + 2;
    run.T = ws->tableau;
    run.rhs_zero = o->tie_tol * vector_inf_norm(n, q);
    const int z0_col = 2 * n, rhs = 2 * n + 1;

    for (int i = 0; i < n; ++i) {
        double *row = &T_AT(&run, i, 0);
        for (int j = 0; j < n; ++j) row[j] = 0.0;
        row[i] = 1.0;
        for (int j = 0; j < n; ++j) row[n + j] = -Me[i + (size_t)j * n];
        row[z0_col] = -d[i];
        row[rhs] = q[i];
        ws->row_var[i] = i;
    }

    /* First pivot: z0 enters at max_i(-q_i/d_i); ties -> largest index (lexicographic) or
     * smallest (first-index rule). */
    int r = -1;
    double best = -INFINITY;
    for (int i = 0; i < n; ++i) {
        double level = -q[i] / d[i];
        double band = o->tie_tol * fabs(best);
        if (r < 0 || level > best + band) {
            best = level;
            r = i;
        } else if (o->tie_break == PP_LCP_LEXICOGRAPHIC && level >= best - band) {
            r = i;
        }
    }
    pivot(&run, r, z0_col);
    *pivots = 1;
    int leaving = ws->row_var[r];
    ws->row_var[r] = z0_col;
    const int z0_row = r; /* a row changes its basic variable only when pivoted on, so z0
                             stays in this row until it leaves */
    pp_lcp_status status = PP_LCP_PIVOT_CAP;

    for (;;) {
        int entering = leaving < n ? leaving + n : leaving - n; /* complement */
        if (*pivots >= max_pivots) {
            status = PP_LCP_PIVOT_CAP;
            break;
        }
        r = ratio_test(&run, ws, entering, z0_row, o);
        if (r == -1) {
            status = PP_LCP_RAY_TERMINATION;
            break;
        }
        if (r == -2) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        pivot(&run, r, entering);
        ++*pivots;
        leaving = ws->row_var[r];
        ws->row_var[r] = entering;
        if (!isfinite(T_AT(&run, r, rhs))) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        if (leaving == z0_col) {
            status = PP_LCP_SOLVED;
            break;
        }
    }

    for (int i = 0; i < n; ++i) {
        z[i] = 0.0;
        basis[i] = 0;
    }
    if (status != PP_LCP_SOLVED) return status;
    for (int i = 0; i < n; ++i) {
        int v = ws->row_var[i];
        if (v >= n && v < 2 * n) {
            z[v - n] = T_AT(&run, i, rhs);
            basis[v - n] = 1;
        }
    }
    return status;
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
    int pivots = 0;
    pp_lcp_status status = lemke_pivot(ws, n, Me, q, d, o, cap, z, ws->basis, &pivots);
    result->pivots += pivots;
    if (status != PP_LCP_SOLVED) return status;

    /* Polish on Lemke's final basis B: solve M_BB z_B = -q_B with the original M first (for
     * eps > 0 that is the exact solution of the original LCP whenever B is its solution
     * basis), then with M + eps I; keep the accepted z with the smallest rel(z). */
    int ok = accept(n, M, q, eps, o, z, w, result);
    pp_lcp_result best = *result;
    for (int pass = 0; pass < (eps > 0.0 ? 2 : 1); ++pass) {
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
    if (basis_out != ws->basis) memcpy(basis_out, ws->basis, (size_t)n);
    return ok ? PP_LCP_SOLVED : PP_LCP_NUMERICAL;
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
        int pivots = result->pivots;
        int attempts = result->attempts + 1;
        reset_result(result);
        result->pivots = pivots;
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
