/*
 * The solve of a large LCP given by compressed columns (pp_lcp_csc, lcp_internal.h): the
 * PEG step's islands of PP_LCP_SPARSE_MIN_N unknowns or more (peg_mlcp.c), whose M = J^T W J
 * + (the set blocks) couples two unknowns only through a shared body, so an island of
 * n ~ 17 000 (ODE's convex demo) or 43 000 (the crash wall after the ball) holds a few
 * hundred thousand nonzeros where the dense M would be 2.3 GB or 15 GB.
 *
 * The order and the rules are pp_lcp_solve's, run by the same code (pp_lcp_solve_order, lcp.c,
 * which carries their reasons) with every stage reading the columns: the given
 * basis (warm start); q >= 0 (z = 0); Lemke from the given basis (n pivots at most), then from
 * w basic, each polished by a basis solve; the regularised retries on M + eps I (the diagonal
 * shifted on the fly, as lcp.c does for every large LCP); the bounded fallback. Every step
 * that reads M reads its columns' nonzeros: the Lemke path's sparse basis (lcp_sparse.c,
 * built on the given pattern instead of a scan of n^2 entries), the basis solves (KLU on
 * M_BB), the start-basis repair (lemke.c), the fallback (lcp_fallback.c), and the independent
 * residual below, which forms the same sums in the same order as pp_lcp_residual (a zero
 * entry adds nothing). A large LCP never reaches the dense-only stages (the double-double
 * rescue runs up to RESCUE_MAX_N < PP_LCP_SPARSE_MIN_N). So nothing here is of order n^2:
 * memory is the workspace's vectors, the pattern (the caller's), and the factors.
 */
#include "lcp_internal.h"

#include <stdlib.h>
#include <string.h>

void pp_lcp_csc_scatter(const pp_lcp_csc *A, double *M)
{
    const int n = A->n;
    for (int j = 0; j < n; ++j)
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            M[A->row_index[t] + (size_t)j * n] = A->values[t];
}

/* pp_lcp_residual (lcp.c) for A by columns: w = A z + q and the row sums of |A|, column by
 * column (j increasing, as the dense loop adds them), then the same measures. */
void pp_lcp_csc_residual(const pp_lcp_csc *A, const double *q, const double *z, double *w,
                         pp_lcp_result *result)
{
    const int n = A->n;
    double z_norm = pp_lcp_inf_norm(n, z);
    double *wb = malloc((size_t)n * sizeof *wb), *rowb = malloc((size_t)n * sizeof *rowb);
    if (!wb || !rowb) { /* no room for two vectors: no claim of a small residual */
        free(wb);
        free(rowb);
        result->residual = result->relative_residual = result->scale = INFINITY;
        result->min_z = result->min_w = -INFINITY;
        result->complementarity = INFINITY;
        return;
    }
    for (int i = 0; i < n; ++i) {
        wb[i] = q[i];
        rowb[i] = 0.0;
    }
    for (int j = 0; j < n; ++j) {
        const double zj = z[j];
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int i = A->row_index[t];
            if (zj != 0.0) wb[i] += A->values[t] * zj;
            rowb[i] += fabs(A->values[t]);
        }
    }
    pp_lcp_measures measures;
    pp_lcp_measures_start(&measures);
    for (int i = 0; i < n; ++i) {
        if (w) w[i] = wb[i];
        pp_lcp_measure_row(&measures, q[i], rowb[i], z_norm, z[i], wb[i]);
    }
    free(wb);
    free(rowb);
    pp_lcp_measures_store(&measures, n, result);
}

/* pp_lcp_accept (lcp.c) against A by columns: the same tests. */
int pp_lcp_csc_accept(const pp_lcp_csc *A, const double *q, double eps,
                      const pp_lcp_options *o, double *z, double *w, pp_lcp_result *result)
{
    if (!pp_lcp_clamp_finite(A->n, z)) return 0;
    pp_lcp_csc_residual(A, q, z, w, result);
    return pp_lcp_accept_measured(A->n, q, eps, o, z, result);
}

/* ---- The solve: lcp.c's order (pp_lcp_solve_order) on the columns -------------------- */

static pp_status check_csc(const char *who, pp_lcp_workspace *ws, const pp_lcp_csc *A,
                           const double *q, const pp_lcp_options *o, double *z,
                           pp_lcp_result *result)
{
    if (!ws || !A || !A->col_start || !A->row_index || !A->values || !q || !z || !result ||
        !o) {
        pp_log(PP_LOG_ERROR, "%s: NULL argument", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    const int n = A->n;
    if (n < PP_LCP_SPARSE_MIN_N || n > ws->n_max) {
        pp_log(PP_LOG_ERROR, "%s: n = %d outside %d..%d (sparse threshold, workspace "
               "capacity)", who, n, PP_LCP_SPARSE_MIN_N, ws->n_max);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (A->col_start[0] != 0) {
        pp_log(PP_LOG_ERROR, "%s: col_start[0] = %d, not 0", who, A->col_start[0]);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int j = 0; j < n; ++j) { /* rows increasing, in range, the diagonal present */
        int diagonal = 0;
        if (A->col_start[j + 1] < A->col_start[j]) {
            pp_log(PP_LOG_ERROR, "%s: col_start decreases at column %d", who, j);
            return PP_ERR_INVALID_ARGUMENT;
        }
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int i = A->row_index[t];
            if (i < 0 || i >= n || (t > A->col_start[j] && i <= A->row_index[t - 1])) {
                pp_log(PP_LOG_ERROR, "%s: column %d: row %d out of range or out of order", who,
                       j, i);
                return PP_ERR_INVALID_ARGUMENT;
            }
            diagonal |= i == j;
        }
        if (!diagonal) {
            pp_log(PP_LOG_ERROR, "%s: column %d holds no diagonal entry", who, j);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    if (!pp_lcp_all_finite((size_t)A->col_start[n], A->values) ||
        !pp_lcp_all_finite((size_t)n, q)) {
        pp_log(PP_LOG_ERROR, "%s: M or q holds NaN/Inf", who);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return pp_lcp_check_options(who, n, o);
}

pp_status pp_lcp_solve_csc(pp_lcp_workspace *workspace, const pp_lcp_csc *A, const double *q,
                           const pp_lcp_options *options, unsigned char *basis, double *z,
                           pp_lcp_result *result)
{
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *o = options ? options : &defaults;
    if (workspace) workspace->row_sums_of = NULL; /* no dense M's row sums kept */
    pp_status arg = check_csc("pp_lcp_solve_csc", workspace, A, q, o, z, result);
    if (arg != PP_OK) return arg;
    pp_lcp_dump_instance(A->n, NULL, A, q, "pp_lcp_solve_csc");
    /* the paths share M by rows (lcp_sparse.c rows_of_m), built by the first that needs it */
    pp_lcp_pattern_begin(workspace);
    pp_status st = pp_lcp_solve_order(workspace, A->n, NULL, A, q, o, basis, z, result);
    pp_lcp_pattern_end(workspace);
    return st;
}
