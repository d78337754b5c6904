/*
 * The LCP solver's public entry points (pegplus/lcp.h): workspace, options, the independent
 * residual, and the order of a solve (warm start, Lemke, the double-double rescue, the
 * regularised retries, the bounded fallback). The pivoting is in lemke.c.
 */
#define _POSIX_C_SOURCE 200809L /* getpid (PP_LCP_DUMP_ALL), clock_gettime */
#include "lcp_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static size_t align_up(size_t bytes)
{
    return (bytes + 15u) & ~(size_t)15u;
}

/* The order of the workspace's square arrays (inverse, lu, tie_rows, regularised): an LCP of
 * PP_LCP_SPARSE_MIN_N unknowns or more keeps its basis sparse (lcp_sparse.c) and shifts the
 * diagonal of M on the fly in its regularised retries, so it needs none of them, and the
 * workspace holds no array of n_max^2. */
static size_t square_order(int n_max)
{
    return (size_t)(n_max < PP_LCP_SPARSE_MIN_N ? n_max : PP_LCP_SPARSE_MIN_N - 1);
}

size_t pp_lcp_workspace_size(int n_max)
{
    if (n_max < 1 || n_max > PP_LCP_N_MAX_LIMIT) return 0;
    size_t n = (size_t)n_max, s = square_order(n_max);
    size_t bytes = align_up(sizeof(struct pp_lcp_workspace));
    bytes += 4 * align_up(s * s * sizeof(double));
    bytes += 13 * align_up(n * sizeof(double));
    bytes += 4 * align_up(n * sizeof(int));
    bytes += 3 * align_up(n);
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
    const size_t s = square_order(n_max);
    ws->square_n = (int)s;
    double **squares[4] = {&ws->inverse, &ws->lu, &ws->tie_rows, &ws->regularised};
    for (int i = 0; i < 4; ++i) {
        *squares[i] = (double *)p;
        p += align_up(s * s * sizeof(double));
    }
    double **vectors[13] = {&ws->x,      &ws->y,        &ws->residual, &ws->sum_hi,
                            &ws->sum_lo, &ws->column,   &ws->rhs,      &ws->z_try,
                            &ws->w_try,  &ws->covering, &ws->start_covering,
                            &ws->row_sums, &ws->repair_z};
    for (int i = 0; i < 13; ++i) {
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
    p += align_up(n);
    ws->start_basis = p;
    p += align_up(n);
    ws->repair_basis = p;
    ws->pattern_start = ws->pattern_rows = NULL;
    ws->pattern_shared = 0;
    ws->m_row_start = ws->m_col_index = NULL;
    ws->m_row_values = NULL;
    ws->shift = 0.0;
    ws->cycled = 0;
    ws->false_end = 0;
    ws->row_sums_of = NULL;
    ws->row_sums_n = 0;
    ws->limits.factor_deadline = INFINITY;
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
    case PP_LCP_APPROXIMATE: return "approximate (fallback)";
    case PP_LCP_BUDGET_EXHAUSTED: return "budget exhausted";
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
    o.max_total_pivots = 0;
    o.max_seconds = 10.0;
    o.budget = NULL;
    o.fallback = 1;
    o.fallback_iterations = 0;
    o.fallback_work = 0.0;
    o.fallback_start = NULL;
    o.contact_block = NULL;
    o.set_slack = NULL;
    o.first_rung = 0.0;
    return o;
}

/* ---- Budgets ---------------------------------------------------------------------------- */

double pp_lcp_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

pp_lcp_budget pp_lcp_budget_start(double seconds, long pivots)
{
    pp_lcp_budget b;
    b.deadline = seconds > 0.0 ? pp_lcp_clock() + seconds : INFINITY;
    b.pivots = pivots < 0 ? -1 : pivots;
    b.pivots_used = 0;
    b.exhausted = 0;
    b.fallback_work = PP_LCP_FALLBACK_STEP_WORK;
    b.work = -1.0;
    b.work_used = 0.0;
    return b;
}

/* Regularised retries of pp_lcp_solve: eps = PP_LCP_EPS_FIRST ... PP_LCP_EPS_MAX by
 * PP_LCP_EPS_FACTOR (lcp.h). */
#define PP_LCP_RETRIES 6

double pp_lcp_deadline(const pp_lcp_options *o, double start)
{
    double deadline = o->max_seconds > 0.0 ? start + o->max_seconds : INFINITY;
    if (o->budget && o->budget->deadline < deadline) deadline = o->budget->deadline;
    return deadline;
}

/* The limits of one solve starting at `start`: the smaller of its own bounds and what is
 * left of the shared budget. */
static void start_limits(pp_lcp_workspace *ws, int n, const pp_lcp_options *o, double start)
{
    pp_lcp_limits *l = &ws->limits;
    long cap = o->max_pivots > 0 ? o->max_pivots : 50L * n + 100;
    long own = o->max_total_pivots > 0 ? o->max_total_pivots : 2 * cap;
    l->pivots_left = own;
    l->deadline = pp_lcp_deadline(o, start);
    if (o->budget && o->budget->pivots >= 0 && o->budget->pivots < l->pivots_left)
        l->pivots_left = o->budget->pivots;
    /* the budget's work (pp_lcp_budget.work) as pivots on n unknowns */
    l->pivot_work = PP_LCP_PIVOT_WORK(n);
    l->pivots_left = pp_lcp_budget_work_cap(o->budget, l->pivot_work, l->pivots_left);
    l->attempt_deadline = l->deadline;
    l->attempt_pivots = 0;
    l->attempt_path = 0;
    l->factor_deadline = l->deadline;
    l->clock_every = n >= PP_LCP_SPARSE_MIN_N ? 1 : PP_LCP_CLOCK_EVERY;
    l->countdown = 1; /* read the clock at the first pivot */
    l->hit = 0;
    l->attempt_hit = 0;
    l->stopped = 0;
    l->factor_work_hits = 0;
}

/* The share of the time left for attempt `left` before the last (0: the last gets it all):
 * the plain attempt half, each regularised retry an equal part of the rest. A plain path
 * that runs long (a degenerate problem wandering for tens of thousands of pivots) then leaves
 * time for the retries, which finish such problems in about n pivots (a PEG column of 523
 * unknowns from the pouring test: 0.6 s with M + 1e-12 I).
 *
 * A first attempt still within FIRST_ATTEMPT_PATH n pivots at its share keeps the clock: it
 * is stopped only once it is past both its share and that many pivots (or at the solve's
 * deadline, which no attempt passes). The retries are for a plain attempt that fails; one that
 * ends (a numerical failure, a ray, the cycling detector) leaves them the clock anyway, and one
 * cut by its share while on a path of ordinary length leaves them cold paths on M + eps I,
 * pivoted refined (lemke.c, "Plain pivots"), which take at least as many pivots at 2-3x the
 * cost and cannot finish where it could not. Measured on the convex landing (docs/
 * performance.md, "The landing's clock", 2026-11-27): its screening rounds' first attempts are
 * a given-basis path of at most n pivots and a cold plain path of 1.0-1.2 n (4 988 pivots on
 * 4 788 unknowns, 5 811 on 5 028; the crash's impact islands 0.8-1.6 n), and the half share
 * cut them where the whole clock would not have. A path that wanders (the pouring column's)
 * passes 3 n pivots long before it leaves the retries too little. */
#define FIRST_ATTEMPT_PATH 3
static void start_attempt(pp_lcp_workspace *ws, int left, int n)
{
    pp_lcp_limits *l = &ws->limits;
    l->attempt_hit = 0;
    l->countdown = 1;
    l->attempt_pivots = 0;
    l->attempt_path = left > PP_LCP_RETRIES ? (long)FIRST_ATTEMPT_PATH * n : 0;
    if (left == 0 || l->deadline == INFINITY) {
        l->attempt_deadline = l->deadline;
        return;
    }
    double now = pp_lcp_clock();
    double share = left > PP_LCP_RETRIES ? 0.5 : 1.0 / (left + 1);
    l->attempt_deadline = now + share * (l->deadline - now);
}

/* ---- The hard clock --------------------------------------------------------------------
 *
 * Issue 11: no step may take unbounded time, and a solve that cannot finish returns the
 * best bounded answer with its residual. The deadline (pp_lcp_deadline: the solve's
 * max_seconds, the shared budget's clock) is read between pivots, at every pivot of a
 * large LCP (pp_lcp_take_pivot); what the clock cannot interrupt is held to it here:
 *  - nothing of Lemke starts past the deadline: not the warm start's basis solve, not a path
 *    (its setup alone, the sparse basis and M + eps I by columns, is a pass over M), not a
 *    regularised retry (solve_once, pp_lcp_solve_order);
 *  - a factorisation inside a path or a basis solve of the attempts (the warm start, the
 *    polish) starts only when its charge (PP_LCP_FACTOR_WORK's estimates) at
 *    PP_LCP_WORK_RATE ends by the deadline (lcp_sparse.c, pp_lcp_work_fits); a path whose
 *    refactorisation does not fit stops as at its deadline;
 *  - the fallback, which answers when the clock ran out, runs within what is left of the
 *    clock at PP_LCP_WORK_RATE plus PP_LCP_PAST_CLOCK_WORK (fallback_clock_bound), and once
 *    a solve has finished past the deadline the budget's shared fallback work is held to
 *    PP_LCP_PAST_CLOCK_WORK for the rest of the step (also the threshold above which a
 *    caller does not form an M, pp_lcp_fallback_idle_entries). A call whose first pass and
 *    sweep do not fit answers z = 0 without reading M (the fallback's own answer there:
 *    lcp_fallback.c, "idle"), its residual from q alone.
 * So past the deadline a solve does at most: the q >= 0 test (a pass), and its share of
 * PP_LCP_PAST_CLOCK_WORK (the work of screening's rounds that gave up is given back,
 * peg_screen.c budget_restore, so an island's step may spend it twice). Without a clock
 * (deadline INFINITY) nothing here changes a solve: clock-free runs take the same pivots.
 * With a clock not reached the answers are the same unless a factorisation's predicted end
 * crosses the deadline. */

void pp_lcp_budget_past_clock(pp_lcp_budget *budget)
{
    if (budget && budget->deadline < INFINITY && pp_lcp_clock() > budget->deadline &&
        !(budget->fallback_work >= 0.0 && budget->fallback_work <= PP_LCP_PAST_CLOCK_WORK))
        budget->fallback_work = PP_LCP_PAST_CLOCK_WORK;
}

/* Charge the solve to the shared budget and time it. */
static void finish_limits(pp_lcp_workspace *ws, const pp_lcp_options *o, double start,
                          pp_lcp_result *result)
{
    ws->limits.factor_deadline = INFINITY; /* no deadline left for the workspace's next user */
    result->budget_exhausted = ws->limits.stopped;
    result->factor_work_exceeded = ws->limits.factor_work_hits;
    const double now = pp_lcp_clock();
    result->seconds = now - start;
    if (!o->budget) return;
    /* A solve whose Lemke the budget's clock stopped (its deadline, or a factorisation whose
     * predicted end crossed it; not the pivot budget: pivots are left) has had the clock, and
     * its fallback may answer a little before the deadline. What is left then is no clock for
     * the budget's next solve, whose setup alone may cross it: on the convex landing (docs/
     * performance.md, "The landing's clock") a screening round cut at the deadline answered
     * 0.08 s before it, and the whole island's M (1.5e7 nonzeros), formed because the clock
     * still ran, ended 1.6 s past it with z = 0. So the budget's deadline becomes now: its
     * next solves start past the clock, as they would a moment later. */
    if (ws->limits.hit && ws->limits.pivots_left > 0 && o->budget->deadline > now &&
        o->budget->deadline <= ws->limits.deadline)
        o->budget->deadline = now;
    pp_lcp_budget_past_clock(o->budget);
    o->budget->pivots_used += result->pivots;
    if (o->budget->pivots >= 0)
        o->budget->pivots = result->pivots < o->budget->pivots ? o->budget->pivots - result->pivots
                                                               : 0;
    o->budget->exhausted += ws->limits.stopped;
    pp_lcp_budget_charge_work(o->budget, (double)result->pivots * ws->limits.pivot_work);
}

/* ---- The independent residual ------------------------------------------------------ */

double pp_lcp_inf_norm(int n, const double *x)
{
    return pp_lcp_vec_inf_norm(n, x); /* max |x_i| over the x_i not NaN (lcp_basis.c) */
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
void pp_lcp_residual(int n, const double *M, const double *q, const double *z, double *w,
                     pp_lcp_result *result)
{
    pp_lcp_residual_sums(n, M, NULL, q, z, w, result);
}

/* The row sums alone, column by column (contiguous), each row's in j order as above. */
void pp_lcp_row_sums(int n, const double *M, double *sums)
{
    for (int i = 0; i < n; ++i) sums[i] = 0.0;
    for (int j = 0; j < n; ++j) pp_lcp_vec_abs_add(n, sums, &M[(size_t)j * n]);
}

/* With the row sums given, w alone: the columns with z_j = 0 add nothing to it (above), so
 * only the others are read; each w_i is the same sum in the same order. An island's answer
 * has most of its unknowns at 0 (a resting pile: the nonbasic friction and sliding rows), and
 * its solve and load sharing measure several answers against one M (pp_lcp_row_sums_kept). */
void pp_lcp_residual_sums(int n, const double *M, const double *row_sums, const double *q,
                          const double *z, double *w, pp_lcp_result *result)
{
    pp_lcp_measures measures;
    pp_lcp_measures_start(&measures);
    double z_norm = pp_lcp_inf_norm(n, z);
    /* M is column-major: w and the row sums are accumulated column by column (contiguous),
     * in blocks of rows that stay in cache, in the same order for every entry of a row as a
     * row-wise loop (j increasing), so the result is the same bit for bit. */
    enum { BLOCK = 256 };
    double wb[BLOCK], rowb[BLOCK];
    for (int i0 = 0; i0 < n; i0 += BLOCK) {
        const int m = n - i0 < BLOCK ? n - i0 : BLOCK;
        for (int r = 0; r < m; ++r) {
            wb[r] = q[i0 + r];
            rowb[r] = row_sums ? row_sums[i0 + r] : 0.0;
        }
        /* A column whose z_j is 0 adds only to the row sums (its products are zeros, which
         * leave w unchanged up to the sign of a zero w_i); the rows four at a time, each
         * row's own sums kept apart (lcp_basis.c's vector kernels). */
        for (int j = 0; j < n; ++j) {
            const double *col = &M[(size_t)j * n + i0], zj = z[j];
            if (row_sums) {
                if (zj != 0.0) pp_lcp_vec_axpy(m, wb, col, zj);
            } else if (zj != 0.0) {
                pp_lcp_vec_axpy_abs(m, wb, rowb, col, zj);
            } else {
                pp_lcp_vec_abs_add(m, rowb, col);
            }
        }
        for (int r = 0; r < m; ++r) {
            const int i = i0 + r;
            if (w) w[i] = wb[r];
            pp_lcp_measure_row(&measures, q[i], rowb[r], z_norm, z[i], wb[r]);
        }
    }
    pp_lcp_measures_store(&measures, n, result);
}

const double *pp_lcp_row_sums_kept(const pp_lcp_workspace *ws, int n, const double *M)
{
    return ws && M && ws->row_sums_of == M && ws->row_sums_n == n ? ws->row_sums : NULL;
}

void pp_lcp_measures_store(const pp_lcp_measures *m, int n, pp_lcp_result *result)
{
    result->residual = m->residual;
    result->relative_residual = m->relative;
    result->scale = m->scale;
    result->min_z = n > 0 ? m->min_z : 0.0;
    result->min_w = n > 0 ? m->min_w : 0.0;
    result->complementarity = m->comp;
}

void pp_lcp_evaluate(int n, const double *M, const double *q, const double *z, double *w_out,
                     pp_lcp_result *result)
{
    PP_ASSERT(n >= 0 && M && q && z && result, "pp_lcp_evaluate: valid arguments");
    pp_lcp_residual(n, M, q, z, w_out, result);
}

/* Branch-free (it runs over every entry of M before each solve): x * 0 is 0 for a finite x
 * and NaN for NaN or Inf; sums in vector lanes keep the adds from waiting on each other. */
int pp_lcp_all_finite(size_t count, const double *x)
{
    return pp_lcp_vec_finite(count, x); /* four lanes (lcp_basis.c) */
}

/* Accept z (clamped to z >= 0): rel(z), measured against the original M and q, must be
 * <= residual_tol. A solve of M + eps I (eps > 0) moves w by eps z, so there rel(z) may
 * reach max(residual_tol, regularised_tol), and the shift itself must be a small part of
 * the data, eps ||z||_inf <= regularised_tol ||q||_inf: otherwise the "solution" exists
 * only because of eps (for an infeasible LCP, z grows like 1/eps along a ray and the
 * row-wise residual can look small by cancellation).
 * In every case also r(z) <= DATA_RESIDUAL max(||q||_inf, DBL_MIN) (DBL_MIN: the subnormal
 * grid, pp_lcp_measure_row): rel(z) divides by ||z||, so a basis
 * whose solution is enormous passes it however large its residual is. The soak
 * (pegplus-soak --seed 490 --model peg) met plain Lemke "solutions" with ||z|| = 3e16 .. 3.7e33,
 * r(z) = 0.4 .. 9.8e15 and rel(z) <= 4e-17 at ||q|| = 0.6 .. 2; applied, they wrote velocities
 * of 1e15 m/s into ODE and every later step was refused. A genuine solution has r(z) of the
 * order of u ||M|| ||z|| (u = 1.1e-16), below 1e-4 ||q|| up to a condition of 1e12: over 1.1
 * million solves of 800 soak scenes, 99.95 % had r(z) <= 1e-8 ||q||. (PP_LCP_DATA_RESIDUAL,
 * lcp_internal.h.) */

int pp_lcp_clamp_finite(int n, double *z)
{
    if (!pp_lcp_all_finite((size_t)n, z)) return 0;
    for (int i = 0; i < n; ++i)
        if (z[i] < 0.0) z[i] = 0.0;
    return 1;
}

int pp_lcp_accept_measured(int n, const double *q, double eps, const pp_lcp_options *o,
                           const double *z, const pp_lcp_result *result)
{
    if (!(result->residual <= PP_LCP_DATA_RESIDUAL * fmax(pp_lcp_inf_norm(n, q), DBL_MIN)))
        return 0;
    if (eps == 0.0) return result->relative_residual <= o->residual_tol;
    return result->relative_residual <= fmax(o->residual_tol, o->regularised_tol) &&
           eps * pp_lcp_inf_norm(n, z) <= o->regularised_tol * pp_lcp_inf_norm(n, q);
}

int pp_lcp_accept(int n, const double *M, const double *q, double eps, const pp_lcp_options *o,
                  double *z, double *w, pp_lcp_result *result)
{
    return pp_lcp_accept_sums(n, M, NULL, q, eps, o, z, w, result);
}

int pp_lcp_accept_sums(int n, const double *M, const double *row_sums, const double *q,
                       double eps, const pp_lcp_options *o, double *z, double *w,
                       pp_lcp_result *result)
{
    if (!pp_lcp_clamp_finite(n, z)) return 0;
    pp_lcp_residual_sums(n, M, row_sums, q, z, w, result);
    return pp_lcp_accept_measured(n, q, eps, o, z, result);
}

/* ---- Public solves -------------------------------------------------------------------- */

/* The arguments of a dense public solve. With keep_sums (pp_lcp_solve) the pass over M that
 * tests it for NaN/Inf forms its row sums (pp_lcp_row_sums) into ws->row_sums instead, kept
 * for the solve's residuals and pp_lcp_row_sums_kept: |M_ij| <= sum_j |M_ij|, and a NaN or
 * Inf entry makes its row's sum NaN or Inf (the terms are >= 0), so finite sums say M is
 * finite; where some sum is not (an Inf entry, or finite entries whose sum overflows) M is
 * tested entry by entry as before. */
static pp_status check_arguments(const char *who, pp_lcp_workspace *ws, int n, const double *M,
                                 const double *q, const pp_lcp_options *o, double *z,
                                 pp_lcp_result *result, int keep_sums)
{
    if (ws) ws->row_sums_of = NULL;
    if (!ws || !M || !q || !z || !result || !o) {
        pp_log(PP_LOG_ERROR, "%s: NULL argument", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    if (n < 1 || n > ws->n_max) {
        pp_log(PP_LOG_ERROR, "%s: n = %d outside 1..%d (workspace capacity)", who, n, ws->n_max);
        return PP_ERR_INVALID_ARGUMENT;
    }
    int finite;
    if (keep_sums) {
        pp_lcp_row_sums(n, M, ws->row_sums);
        finite = pp_lcp_all_finite((size_t)n, ws->row_sums) ||
                 pp_lcp_all_finite((size_t)n * n, M);
    } else {
        finite = pp_lcp_all_finite((size_t)n * n, M);
    }
    if (!finite || !pp_lcp_all_finite((size_t)n, q)) {
        pp_log(PP_LOG_ERROR, "%s: M or q holds NaN/Inf", who);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_status st = pp_lcp_check_options(who, n, o);
    if (st == PP_OK && keep_sums) {
        ws->row_sums_of = M;
        ws->row_sums_n = n;
    }
    return st;
}

pp_status pp_lcp_check_options(const char *who, int n, const pp_lcp_options *o)
{
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
    /* the contact blocks index the warm basis in its repair (lcp_warm_repair.c): each entry
     * -1 or the index P <= i of a p whose own entry is P */
    if (o->contact_block) {
        const int *blocks = o->contact_block;
        for (int i = 0; i < n; ++i) {
            const int P = blocks[i];
            if (P < -1 || P > i || (P >= 0 && blocks[P] != P)) {
                pp_log(PP_LOG_ERROR, "%s: contact_block[%d] = %d is not -1 or the index of a "
                       "p at or before it whose own entry is itself", who, i, P);
                return PP_ERR_INVALID_ARGUMENT;
            }
        }
    }
    /* a slack's set: -1 or the index P < i of a p of contact_block, the slack itself in no
     * contact block, each set's slacks consecutive (the sets' runs in increasing P); given
     * only with contact_block */
    if (o->set_slack) {
        for (int i = 0, last = -1; i < n; ++i) {
            const int P = o->set_slack[i];
            const int starts = P >= 0 && (i == 0 || o->set_slack[i - 1] != P);
            if (!o->contact_block || P < -1 || P >= i ||
                (P >= 0 && (o->contact_block[P] != P || o->contact_block[i] != -1)) ||
                (starts && P <= last)) {
                pp_log(PP_LOG_ERROR, "%s: set_slack[%d] = %d is not -1 or the index of a p of "
                       "contact_block before it (the slack in no block, its set's slacks "
                       "consecutive, the sets' runs in the order of their p's), or "
                       "contact_block is not given", who, i, P);
                return PP_ERR_INVALID_ARGUMENT;
            }
            if (starts) last = P;
        }
    }
    return PP_OK;
}

static void reset_result(pp_lcp_result *result)
{
    memset(result, 0, sizeof *result);
    result->status = PP_LCP_NUMERICAL;
}

/* The matrix of one solve: dense, M (and Me = M + eps I, a regularised copy for a small LCP's
 * retry, else M itself with the workspace's shift added as it is read), or by columns, A
 * (lcp_csc.c; its retries always use the shift). Every stage below reads it through these. */
typedef struct lcp_matrix {
    int n;
    const double *M, *Me;
    const pp_lcp_csc *A;
    const double *row_sums; /* of M, formed by pp_lcp_solve's argument check, or NULL */
} lcp_matrix;

static int matrix_accept(const lcp_matrix *m, const double *q, double eps,
                         const pp_lcp_options *o, double *z, double *w, pp_lcp_result *result)
{
    return m->A ? pp_lcp_csc_accept(m->A, q, eps, o, z, w, result)
                : pp_lcp_accept_sums(m->n, m->M, m->row_sums, q, eps, o, z, w, result);
}

/* The basis solve M_BB z_B = -q_B on Me (`shifted`) or M; by columns the workspace's shift
 * decides. */
static int matrix_solve_basis(pp_lcp_workspace *ws, const lcp_matrix *m, int shifted,
                              const double *q, const unsigned char *basis, double *z)
{
    return m->A ? pp_lcp_csc_solve_basis(ws, m->A, q, basis, z)
                : pp_lcp_solve_basis(ws, m->n, shifted ? m->Me : m->M, q, basis, z);
}

/* Lemke on LCP(Me, q) from w basic (start NULL) or from the complementary basis `start`,
 * then the polish on the final basis B: solve M_BB z_B = -q_B with the original M first (for
 * eps > 0 that is the exact solution of the original LCP whenever B is its solution basis),
 * then with M + eps I; keep the accepted z with the smallest rel(z). The final basis is
 * left in ws->basis. Counts pivots and refactorisations into result. */
static pp_lcp_status lemke_run_and_polish(pp_lcp_workspace *ws, const lcp_matrix *m, double eps,
                                          const double *q, const double *d,
                                          const unsigned char *start, const pp_lcp_options *o,
                                          int cap, double *z, pp_lcp_result *result)
{
    const int n = m->n;
    double *zt = ws->z_try, *w = ws->w_try;
    int pivots = 0, refactorisations = 0;
    pp_lcp_status status =
        m->A ? pp_lcp_lemke_pivot_csc(ws, m->A, q, d, start, o, cap, z, ws->basis, &pivots,
                                      &refactorisations)
             : pp_lcp_lemke_pivot(ws, n, m->Me, q, d, start, o, cap, z, ws->basis, &pivots,
                                  &refactorisations);
    result->pivots += pivots;
    result->refactorisations += refactorisations;
    ws->false_end = 0;
    if (status != PP_LCP_SOLVED) return status;

    result->relative_residual = INFINITY; /* a z not finite is measured so (no residual) */
    int ok = matrix_accept(m, q, eps, o, z, w, result);
    const double path_rel = result->relative_residual; /* "The ladder after a false end" */
    pp_lcp_result best = *result;
    /* The pivoting's z is refined; a basis solve adds nothing when it is already far inside
     * the tolerance. */
    int passes = ok && result->relative_residual <= POLISH_SKIP * o->residual_tol ? 0
                 : eps > 0.0                                                     ? 2
                                                                                 : 1;
    const double shift = ws->shift; /* a large LCP's eps (Me is M itself there) */
    for (int pass = 0; pass < passes; ++pass) {
        double eps_p = pass == 0 ? 0.0 : eps;
        ws->shift = pass == 0 ? 0.0 : shift;
        if (matrix_solve_basis(ws, m, pass != 0, q, ws->basis, zt) &&
            matrix_accept(m, q, eps_p, o, zt, w, result) &&
            (!ok || result->relative_residual <= best.relative_residual)) {
            memcpy(z, zt, (size_t)n * sizeof *z);
            ok = 1;
            best = *result;
        }
    }
    ws->shift = shift;
    *result = best;
    ws->false_end = !ok && !(path_rel <= o->regularised_tol);
    return ok ? PP_LCP_SOLVED : PP_LCP_NUMERICAL;
}

/* The warm basis repaired by contact blocks (lcp_warm_repair.c), zt its basis solution: each
 * round takes the violated contacts' blocks out of or into the basis (pp_lcp_warm_moves) and
 * solves again, at most WARM_REPAIR_ROUNDS times; a basis without violation beyond
 * WARM_REPAIR_FLOOR (relative to ||z||_inf on the z side, ||q||_inf on the w side) is accepted
 * as usual (rel(z) <= the tolerance), and left in ws->repair_basis. 0: not repaired (Lemke
 * from the given basis follows, as for a warm basis refused). Only a warm basis whose own
 * answer is near one (rel(z) <= WARM_REPAIR_NEAR) is repaired: a basis far off (a contact
 * opened, another closed) is Lemke's, as before (the symmetric cylinder across a cylinder,
 * check_cylinder, fell to another vertex and overlapped 3.1e-9 m when every basis was). With
 * PEG's I/X sets (o->set_slack) at most WARM_REPAIR_SET_ROUNDS rounds (lcp_warm_repair.c,
 * "Islands with PEG's I/X sets": one approach closed a round). */
#define WARM_REPAIR_ROUNDS 6
#define WARM_REPAIR_SET_ROUNDS 12
#define WARM_REPAIR_FLOOR 1e-12
#define WARM_REPAIR_NEAR 1e-1
static int warm_repaired(pp_lcp_workspace *ws, const lcp_matrix *m, double eps, const double *q,
                         const pp_lcp_options *o, const unsigned char *warm, double *zt,
                         double *w, pp_lcp_result *result)
{
    const int n = m->n;
    unsigned char *b = ws->repair_basis;
    double *raw = ws->repair_z;
    const double w_floor = WARM_REPAIR_FLOOR * pp_lcp_inf_norm(n, q);
    memcpy(b, warm, (size_t)n);
    for (int round = 0;; ++round) {
        memcpy(raw, zt, (size_t)n * sizeof *raw);
        const int ok = matrix_accept(m, q, eps, o, zt, w, result);
        const double z_floor = WARM_REPAIR_FLOOR * pp_lcp_inf_norm(n, raw);
        const int moved = pp_lcp_warm_moves(n, o->contact_block, o->set_slack, raw, w, b,
                                            z_floor, w_floor);
        if (!moved || (round == 0 && !(result->relative_residual <= WARM_REPAIR_NEAR)))
            return ok && !moved;
        if (round == (o->set_slack ? WARM_REPAIR_SET_ROUNDS : WARM_REPAIR_ROUNDS) ||
            pp_lcp_clock_out(ws) ||
            !matrix_solve_basis(ws, m, 1, q, b, zt))
            return 0;
    }
}

/* One attempt on LCP(Me, q), Me = M + eps I; acceptance is measured against (M, q). */
static pp_lcp_status solve_once(pp_lcp_workspace *ws, const lcp_matrix *m, double eps,
                                const double *q, const pp_lcp_options *o,
                                const unsigned char *warm, unsigned char *basis_out, double *z,
                                pp_lcp_result *result)
{
    const int n = m->n;
    double *zt = ws->z_try, *w = ws->w_try;
    const int out_of_time = pp_lcp_clock_out(ws); /* "The hard clock": no basis solve, no path */

    if (warm && !out_of_time) {
        const int repair = o->contact_block != NULL;
        if (matrix_solve_basis(ws, m, 1, q, warm, zt) &&
            (repair ? warm_repaired(ws, m, eps, q, o, warm, zt, w, result)
                    : matrix_accept(m, q, eps, o, zt, w, result))) {
            memcpy(z, zt, (size_t)n * sizeof *z);
            const unsigned char *b = repair ? ws->repair_basis : warm;
            if (basis_out != b) memcpy(basis_out, b, (size_t)n);
            result->warm_started = 1;
            return PP_LCP_SOLVED;
        }
    }

    /* z = 0 when q >= 0 up to the rounding level of q (64 u ||q||_inf): a separating
     * contact's tangential rows come out as -1e-15 m/s, and pivoting on that noise in a fully
     * degenerate tableau can fail where z = 0 is the answer to working precision. */
    double q_floor = -64.0 * DBL_EPSILON * pp_lcp_inf_norm(n, q);
    int q_nonnegative = 1;
    for (int i = 0; i < n; ++i)
        if (q[i] < q_floor) q_nonnegative = 0;
    if (q_nonnegative) {
        for (int i = 0; i < n; ++i) zt[i] = 0.0;
        matrix_accept(m, q, eps, o, zt, w, result);
        for (int i = 0; i < n; ++i) {
            z[i] = 0.0;
            basis_out[i] = 0;
        }
        return PP_LCP_SOLVED;
    }

    if (out_of_time || pp_lcp_clock_out(ws)) return PP_LCP_BUDGET_EXHAUSTED;
    const double *d = o->covering;
    if (!d) {
        for (int i = 0; i < n; ++i) ws->covering[i] = 1.0;
        d = ws->covering;
    }
    int cap = o->max_pivots > 0 ? o->max_pivots : 50 * n + 100;
    pp_lcp_status status = PP_LCP_NUMERICAL;
    if (warm) { /* Lemke from the given basis first, at most n pivots */
        status = lemke_run_and_polish(ws, m, eps, q, d, warm, o, cap < n ? cap : n, z, result);
        if (status == PP_LCP_SOLVED) result->warm_lemke = 1;
    }
    if (status != PP_LCP_SOLVED && !ws->limits.hit && !ws->limits.attempt_hit)
        status = lemke_run_and_polish(ws, m, eps, q, d, NULL, o, cap, z, result);
    if ((ws->limits.hit || ws->limits.attempt_hit) && status != PP_LCP_SOLVED)
        return PP_LCP_BUDGET_EXHAUSTED;
    /* The double-double rescue, for numerical trouble: not for a regularised attempt (the
     * ladder of pp_lcp_solve), not at the pivot cap (with the lexicographic rule Lemke does
     * not cycle, so a long path would be as long again), and bounded (RESCUE_MAX_N: dense
     * only, below the columns' PP_LCP_SPARSE_MIN_N). */
    if (status != PP_LCP_SOLVED && status != PP_LCP_PIVOT_CAP && eps == 0.0 && !m->A &&
        n <= RESCUE_MAX_N) {
        int pivots = 0, rescue_cap = 2 * n + 10 < cap ? 2 * n + 10 : cap;
        pp_lcp_status rescue =
            pp_lcp_lemke_extended(ws, n, m->M, q, d, o, rescue_cap, z, ws->basis, &pivots);
        result->pivots += pivots;
        if (rescue == PP_LCP_SOLVED &&
            pp_lcp_accept_sums(n, m->M, m->row_sums, q, 0.0, o, z, ws->w_try, result)) {
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
 * pp_lcp_solve, pp_lcp_solve_lemke and pp_lcp_solve_csc (lcp_csc.c; its M written dense) with
 * n >= 2 writes its problem there as lcp_<pid>_<counter>_n<n>.lcp (pp_lcp_instance_save), to
 * collect real instances for timing and tests. The variable is read once; a write failure turns the dump off. Not thread-safe
 * (the counter): a diagnostic for single-threaded runs. */
void pp_lcp_dump_instance(int n, const double *M, const pp_lcp_csc *A, const double *q,
                          const char *who)
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
    double *dense = NULL;
    if (A) { /* by columns: the file holds M dense */
        dense = calloc((size_t)n * n, sizeof *dense);
        if (!dense) {
            state = 0;
            return;
        }
        pp_lcp_csc_scatter(A, dense);
        M = dense;
    }
    if (pp_lcp_instance_save(path, n, M, q, NULL, who) != PP_OK) state = 0;
    free(dense);
}

static void fail_clean(int n, double *z, unsigned char *basis)
{
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    if (basis) memset(basis, 0, (size_t)n);
}

static pp_status solve_lemke(pp_lcp_workspace *workspace, int n, const double *M,
                             const double *q, const pp_lcp_options *options,
                             unsigned char *basis, double *z, pp_lcp_result *result)
{
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *o = options ? options : &defaults;
    pp_status arg = check_arguments("pp_lcp_solve_lemke", workspace, n, M, q, o, z, result, 0);
    if (arg != PP_OK) return arg;
    pp_lcp_dump_instance(n, M, NULL, q, "pp_lcp_solve_lemke");
    double start = pp_lcp_clock();
    start_limits(workspace, n, o, start);
    reset_result(result);
    result->attempts = 1;

    const unsigned char *warm = (basis && o->warm_start) ? basis : NULL;
    unsigned char *out = basis ? basis : workspace->basis;
    const lcp_matrix m = {n, M, M, NULL, NULL};
    result->status = solve_once(workspace, &m, 0.0, q, o, warm, out, z, result);
    finish_limits(workspace, o, start, result);
    if (result->status == PP_LCP_SOLVED) return PP_OK;
    fail_clean(n, z, basis);
    pp_lcp_residual(n, M, q, z, NULL, result);
    return PP_ERR_SOLVER;
}

/* ---- The ladder after a cycle --------------------------------------------------------
 *
 * The ladder below climbs eps = 1e-16, 1e-14, ... from w basic each time, because the smallest
 * shift that solves keeps the answer closest to LCP(M, q) (and the polish then tries M_BB
 * itself first). On a large LCP whose plain path went round a degenerate face and ended on
 * the cycling detector (lemke.c, "Cycling") after more than n pivots, the rungs with
 * eps <= tie_tol max_i |M_ii| are skipped: such a shift changes the entries of B and B^-1 by
 * less than the band within which the ratio test's lexicographic comparisons call two
 * candidates equal (tie_tol, relative), so its path takes the same tie decisions up to
 * rounding, and a cycle made by rounded ties comes round again. Measured on ODE's crash
 * demo's impact LCP (n = 4 980, max |M_ii| = 11.2; docs/performance.md, "The crash impact's
 * pivots, measured"): the plain path cycled at 6 841 pivots, M + 1e-16, 1e-14, 1e-12 I at
 * 4 429, 6 894 and 4 438 pivots, and M + 1e-10 I, the first rung above 1.1e-11, solved in
 * 8 685. The path of a rung depends only on M + eps I, q and d, so the answer is the one the
 * full ladder reaches, bit for bit, with 15 526 pivots instead of 31 287. Kept to long paths
 * of the sparse basis: the plain paths that cycle in the tests (soak_short, n = 50;
 * check_joint_scenes, n = 80-208, after 74-126 pivots) were solved by M + 1e-14 I, below
 * that band; there a rung costs little, and a path of at most n pivots or a dense LCP keeps
 * the full ladder.
 *
 * ---- The ladder after a false end ------------------------------------------------------
 *
 * The same rungs are skipped on a large LCP whose plain attempt's last path ended falsely: z0
 * left the basis (the pivoting's SOLVED), but its answer, and the polish's basis solves on M
 * and M + eps I, miss by rel(z) > regularised_tol, far beyond what the path's refinement
 * leaves on a basis it can factorise (ws->false_end, set in lemke_run_and_polish). The basis
 * is numerically singular: M_BB of redundant supports (a brick on a brick, no compliance)
 * has a null space that rounding fills, so z_B carries an arbitrary component of that space
 * and w_N = M_NB z_B + q_N goes negative by the size of the data. A rung below the tie band
 * lifts that null space by eps, which leaves M_BB + eps I singular to within the band where
 * the path's tie decisions are the rounding's (above), so its path meets the same
 * near-singular bases. Measured on ODE's crash demo under the standard model (docs/
 * performance.md, "The ladder after a false end"; max |M_ii| 11.6, band 1.2e-11): on the
 * three screening rounds whose plain attempt ended falsely (1 794, 3 156, 3 174 unknowns,
 * rel(z) 7.8e-4 to 0.22, ||z|| 1 to 2 900 times the answer's), every rung below the band
 * failed (M + 1e-16 I a false end again, 1e-14 and 1e-12 a ray or the cycling detector)
 * and M + 1e-10 I solved; with the rule the same answer bit for bit, 2 952 / 5 877 / 5 856
 * pivots instead of 5 424 / 12 750 / 12 436. A ray is not a false end: on that scene's
 * round of 1 512 unknowns plain Lemke and M + 1e-16 I end on rays and M + 1e-14 I, below
 * the band, solves; that ladder is kept whole. No length condition: the false end is the
 * evidence, where a cycle of a short path (at most n pivots) is cheap to climb past. Not for
 * PEG's LCPs with I/X sets (o->set_slack): on check_peg_pouring's seed 4 (mu 0.5, h 0.01) the
 * rule there left 1.58e-12 m^3 of overlap after step 364 (the test's bound 1e-12); their
 * ladder is kept whole. */

/* max_i |M_ii|: dense M, or A by columns (each column holds its diagonal entry). */
static double diagonal_scale(int n, const double *M, const pp_lcp_csc *A)
{
    double scale = 0.0;
    for (int j = 0; j < n; ++j) {
        if (!A) {
            scale = max_d(scale, fabs(M[j + (size_t)j * n]));
            continue;
        }
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            if (A->row_index[t] == j) scale = max_d(scale, fabs(A->values[t]));
    }
    return scale;
}

int pp_lcp_rungs_skipped(int n, const double *M, const pp_lcp_csc *A, const pp_lcp_options *o,
                         int cycled, int false_end, int pivots)
{
    if (!(A || n >= PP_LCP_SPARSE_MIN_N) ||
        !((cycled && pivots > n) || (false_end && !o->set_slack)))
        return 0;
    const double below = o->tie_tol * diagonal_scale(n, M, A);
    int skipped = 0;
    for (double eps = PP_LCP_EPS_FIRST; eps <= below && skipped < PP_LCP_RETRIES - 1;
         eps *= PP_LCP_EPS_FACTOR)
        ++skipped;
    return skipped;
}

/* ---- The rung handed on ----------------------------------------------------------------
 *
 * A caller that solves a sequence of LCPs of one island (peg_screen.c: the screening rounds
 * of one solve, each S_k's LCP the previous one's with more sets) hands the eps of the rung
 * the previous LCP was answered on (pp_lcp_options.first_rung); that rung is tried first,
 * from w basic as on the ladder, before the plain attempt. The rounds share the redundant
 * supports that made M_SS numerically singular, and a larger S keeps them, so a round whose
 * predecessor needed M + eps I ends its plain attempt and its rungs below eps as that one
 * did. Measured on ODE's crash demo under the standard model, step 17 (docs/performance.md,
 * "The rung handed on"; s19: "The ladder after a false end"): rounds 2 and 3 (3 156, 3 174
 * unknowns) each paid a plain attempt of ~3 100 pivots (a given basis singular on M, then w
 * basic: a false end) before M + 1e-10 I solved in 2 779, as round 1 had. The answer of a
 * rung is its path's (it depends only on M + eps I, q and d), so it is the one the ladder
 * reaches whenever the plain attempt and the rungs below would have failed; where the plain
 * attempt would have solved, the handed rung's answer replaces it: the polish (lemke.c)
 * still tries M_BB itself first, and the answer passes the same residual test on M. Failing,
 * the plain attempt and the ladder follow as without it, the handed rung not run twice.
 * Only a rung above the tie band (eps > tie_tol max |M_ii|), the rungs a false end or a
 * long cycle leads to (above): the rungs below it fail on such bases by the rounding of the
 * redundant supports that the rounds share, whereas a rung below the band that solved after
 * a ray is its own path's (step 17's S_0, 1 512 unknowns, M + 1e-14 I after a ray: handed
 * on, it answered round 1 on 1e-14 where main's ladder reached 1e-10, which moved the
 * trajectory; step 18 then took 92 830 pivots instead of 55 028, docs/performance.md). With
 * that, a handed rung answers as the ladder would have wherever the plain attempt fails. Only
 * on a large LCP (a short path costs little) without PEG's I/X sets (their ladder is kept
 * whole, "The ladder after a false end"); eps outside the ladder or in the band: ignored. */
static double handed_rung(int n, const double *M, const pp_lcp_csc *A, int large,
                          const pp_lcp_options *o)
{
    if (!large || o->set_slack || !(o->first_rung > 0.0)) return 0.0;
    for (double eps = PP_LCP_EPS_FIRST; eps <= PP_LCP_EPS_MAX * (1.0 + 1e-9);
         eps *= PP_LCP_EPS_FACTOR)
        if (fabs(eps - o->first_rung) <= 1e-9 * eps)
            return eps > o->tie_tol * diagonal_scale(n, M, A) ? eps : 0.0;
    return 0.0;
}

/* The bound of the fallback's work under the clock ("The hard clock"): the smaller of its
 * own (options.fallback_work, PP_LCP_FALLBACK_WORK), of what the shared budget has left
 * (held to PP_LCP_PAST_CLOCK_WORK once its deadline has passed), and of what is left of the
 * solve's clock at PP_LCP_WORK_RATE plus PP_LCP_PAST_CLOCK_WORK. Without a clock, its own and
 * the budget's, as the fallback takes them. */
static double fallback_clock_bound(const pp_lcp_limits *l, const pp_lcp_options *o)
{
    double bound = o->fallback_work > 0.0 ? o->fallback_work : PP_LCP_FALLBACK_WORK;
    pp_lcp_budget_past_clock(o->budget);
    if (o->budget && o->budget->fallback_work >= 0.0)
        bound = fmin(bound, o->budget->fallback_work);
    if (l->deadline < INFINITY)
        bound = fmin(bound, fmax(0.0, l->deadline - pp_lcp_clock()) * PP_LCP_WORK_RATE +
                                PP_LCP_PAST_CLOCK_WORK);
    return bound;
}

/* The fallback's answer where its bound does not hold its first pass and sweep (4 nnz(M):
 * the row sums, the sweep, the pass before its Newton steps, the final residual), which is
 * its start, z = 0 (lcp_fallback.c, pp_lcp_fallback_idle_entries): here without reading M,
 * its residual from q alone (w = q, s_i = |q_i|), charged as the fallback charges its three
 * passes (`entries` each), so the budget's bookkeeping is the fallback's. */
static pp_lcp_status clock_out_answer(int n, const double *q, double entries,
                                      const pp_lcp_options *o, double *z, pp_lcp_result *result)
{
    pp_lcp_fallback_zero(n, q, entries, o, z, result);
    return result->relative_residual <= o->residual_tol ? PP_LCP_SOLVED : PP_LCP_APPROXIMATE;
}

/*
 * The order of a full solve: the plain attempt (solve_once), the regularised retries of
 * docs/references.md, then the bounded fallback; all under one set of limits. The fallback starts from the caller's basis (still unchanged:
 * solve_once writes it only on success). Dense M or A by columns (pp_lcp_solve_csc).
 */
pp_status pp_lcp_solve_order(pp_lcp_workspace *workspace, int n, const double *M,
                             const pp_lcp_csc *A, const double *q, const pp_lcp_options *o,
                             unsigned char *basis, double *z, pp_lcp_result *result)
{
    double start = pp_lcp_clock();
    start_limits(workspace, n, o, start);
    reset_result(result);
    workspace->shift = 0.0;
    const unsigned char *warm = (basis && o->warm_start) ? basis : NULL;
    unsigned char *out = basis ? basis : workspace->basis;
    result->attempts = 1;
    start_attempt(workspace, PP_LCP_RETRIES + 1, n);
    workspace->false_end = 0;
    lcp_matrix m = {n, M, M, A, pp_lcp_row_sums_kept(workspace, n, M)};
    const int large = A || n >= PP_LCP_SPARSE_MIN_N;
    const double handed = handed_rung(n, M, A, large, o);
    if (handed > 0.0) { /* "The rung handed on": M + eps I from w basic, first */
        workspace->shift = handed;
        pp_lcp_status s = solve_once(workspace, &m, handed, q, o, NULL, out, z, result);
        workspace->shift = 0.0;
        if (s == PP_LCP_SOLVED) {
            result->status = PP_LCP_SOLVED;
            result->epsilon = handed;
            finish_limits(workspace, o, start, result);
            pp_log(PP_LOG_WARNING, "lcp: solved with M + %g I (the rung handed on), residual "
                   "%.3g", handed, result->residual);
            return PP_OK;
        }
        int pivots = result->pivots, refactorisations = result->refactorisations;
        reset_result(result);
        result->pivots = pivots;
        result->refactorisations = refactorisations;
        result->attempts = 2;
        start_attempt(workspace, PP_LCP_RETRIES + 1, n);
        workspace->false_end = 0;
    }
    pp_lcp_status first = solve_once(workspace, &m, 0.0, q, o, warm, out, z, result);
    result->status = first;
    if (first == PP_LCP_SOLVED) {
        finish_limits(workspace, o, start, result);
        return PP_OK;
    }

    /* docs/references.md: the authors retry Lemke on M + eps I, eps = 1e-16 doubling to 1e-6;
     * here eps grows by PP_LCP_EPS_FACTOR (six retries instead of 34). If M + M^T is PSD,
     * M + eps I is positive definite, hence a P-matrix with a unique solution that Lemke
     * reaches: the shift removes the rank deficiency of redundant contacts. A shift below the
     * rounding unit of a diagonal entry, eps < 2^-53 |M_ii|, is lost when added, so in effect
     * the schedule starts near 1.1e-16 max|M_ii|. */
    /* A large LCP (sparse basis) is not copied: its Lemke paths and basis solves add eps to
     * the diagonal as they read it (workspace shift). */
    m.Me = large ? M : workspace->regularised;
    int retries_left = PP_LCP_RETRIES;
    double eps = PP_LCP_EPS_FIRST;
    for (int skip = pp_lcp_rungs_skipped(n, M, A, o, workspace->cycled, workspace->false_end,
                                         result->pivots);
         skip > 0; --skip) { /* "The ladder after a cycle", "... after a false end" */
        eps *= PP_LCP_EPS_FACTOR;
        --retries_left;
    }
    for (; eps <= PP_LCP_EPS_MAX * (1.0 + 1e-9) && !workspace->limits.hit &&
           !pp_lcp_clock_out(workspace); /* "The hard clock": no retry's setup past it */
         eps *= PP_LCP_EPS_FACTOR) {
        if (handed > 0.0 && fabs(eps - handed) <= 1e-9 * handed) continue; /* tried first */
        if (large) {
            workspace->shift = eps;
        } else {
            memcpy(workspace->regularised, M, (size_t)n * n * sizeof *M);
            for (int i = 0; i < n; ++i) workspace->regularised[i + (size_t)i * n] += eps;
        }
        int pivots = result->pivots, refactorisations = result->refactorisations;
        int attempts = result->attempts + 1;
        reset_result(result);
        result->pivots = pivots;
        result->refactorisations = refactorisations;
        result->attempts = attempts;
        start_attempt(workspace, --retries_left, n);
        pp_lcp_status s = solve_once(workspace, &m, eps, q, o, NULL, out, z, result);
        workspace->shift = 0.0;
        if (s == PP_LCP_SOLVED) {
            result->status = PP_LCP_SOLVED;
            result->epsilon = eps;
            finish_limits(workspace, o, start, result);
            pp_log(PP_LOG_WARNING,
                   "lcp: plain Lemke failed (%s); solved with M + %g I, residual %.3g",
                   pp_lcp_status_string(first), eps, result->residual);
            return PP_OK;
        }
    }
    int hit = workspace->limits.stopped; /* some attempt ran out: the problem may well be
                                            solvable, the fallback's answer is kept */

    /* The bounded fallback: its answer replaces z = 0 when the budget ran out, and when it
     * reaches regularised_tol after every exact attempt failed (lcp.h). */
    if (o->fallback) {
        int pivots = result->pivots, refactorisations = result->refactorisations;
        int attempts = result->attempts;
        /* "The hard clock": the fallback held to the clock left, its factorisations to its
         * work bound alone */
        pp_lcp_options timed = *o;
        const double bound = fallback_clock_bound(&workspace->limits, o);
        timed.fallback_work = bound;
        workspace->limits.factor_deadline = INFINITY;
        const double entries = A ? (double)A->col_start[n] : (double)n * n;
        pp_lcp_status s = 4.0 * entries > bound ? clock_out_answer(n, q, entries, o, z, result)
                          : A ? pp_lcp_fallback_csc(workspace, A, q, &timed, warm, z, result)
                              : pp_lcp_fallback(workspace, n, M, q, &timed, warm, z, result);
        result->pivots = pivots;
        result->refactorisations = refactorisations;
        result->attempts = attempts;
        result->epsilon = 0.0;
        /* kept: solved; or the budget ran out (the problem may be solvable: the best iterate
         * is kept); or every exact attempt failed and it reaches regularised_tol — in every
         * case only with a residual bounded by the data (pp_lcp_fallback_bounded). The
         * fallback keeps only iterates with r(z) <= ||q||_inf (lcp_fallback.c, `usable`), so
         * when the budget ran out its answer is applied; refused only if the independent
         * residual below, formed afresh, puts it above ||q||_inf by rounding (then z = 0) */
        if (s == PP_LCP_SOLVED || (hit && pp_lcp_fallback_bounded(n, q, 1.0, result)) ||
            (result->relative_residual <= o->regularised_tol &&
             pp_lcp_fallback_bounded(n, q, o->regularised_tol, result))) {
            result->status = s;
            if (basis)
                for (int i = 0; i < n; ++i) basis[i] = z[i] > 0.0;
            finish_limits(workspace, o, start, result);
            if (s != PP_LCP_SOLVED)
                pp_log(PP_LOG_WARNING,
                       "lcp: Lemke failed (%s) on n = %d after %d pivots in %.3g s; fallback "
                       "answer, rel residual %.3g%s",
                       pp_lcp_status_string(first), n, result->pivots, result->seconds,
                       result->relative_residual,
                       result->fallback_cut ? " (cut by its work bound)" : "");
            return s == PP_LCP_SOLVED ? PP_OK : PP_ERR_SOLVER;
        }
        result->fallback = 0; /* not kept: z = 0 below */
    }
    fail_clean(n, z, basis);
    if (A) pp_lcp_csc_residual(A, q, z, NULL, result);
    else pp_lcp_residual_sums(n, M, m.row_sums, q, z, NULL, result);
    result->status = first;
    finish_limits(workspace, o, start, result);
    pp_log(PP_LOG_WARNING, "lcp: Lemke failed (%s) on n = %d, also with M + eps I up to %g; "
           "z set to 0", pp_lcp_status_string(first), n, PP_LCP_EPS_MAX);
    return PP_ERR_SOLVER;
}

static pp_status solve(pp_lcp_workspace *workspace, int n, const double *M, const double *q,
                       const pp_lcp_options *options, unsigned char *basis, double *z,
                       pp_lcp_result *result)
{
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *o = options ? options : &defaults;
    pp_status arg = check_arguments("pp_lcp_solve", workspace, n, M, q, o, z, result, 1);
    if (arg != PP_OK) return arg;
    pp_lcp_dump_instance(n, M, NULL, q, "pp_lcp_solve");
    return pp_lcp_solve_order(workspace, n, M, NULL, q, o, basis, z, result);
}

/* The Lemke paths of a large LCP's solve share M's nonzero pattern (lcp_sparse.c), built by
 * the first and freed at the end of the call. */
pp_status pp_lcp_solve_lemke(pp_lcp_workspace *workspace, int n, const double *M,
                             const double *q, const pp_lcp_options *options,
                             unsigned char *basis, double *z, pp_lcp_result *result)
{
    if (workspace) pp_lcp_pattern_begin(workspace);
    pp_status st = solve_lemke(workspace, n, M, q, options, basis, z, result);
    if (workspace) pp_lcp_pattern_end(workspace);
    return st;
}

pp_status pp_lcp_solve(pp_lcp_workspace *workspace, int n, const double *M, const double *q,
                       const pp_lcp_options *options, unsigned char *basis, double *z,
                       pp_lcp_result *result)
{
    if (workspace) pp_lcp_pattern_begin(workspace);
    pp_status st = solve(workspace, n, M, q, options, basis, z, result);
    if (workspace) pp_lcp_pattern_end(workspace);
    return st;
}

pp_status pp_lcp_solve_fallback(pp_lcp_workspace *workspace, int n, const double *M,
                                const double *q, const pp_lcp_options *options,
                                unsigned char *basis, double *z, pp_lcp_result *result)
{
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *o = options ? options : &defaults;
    pp_status arg = check_arguments("pp_lcp_solve_fallback", workspace, n, M, q, o, z, result, 0);
    if (arg != PP_OK) return arg;
    double start = pp_lcp_clock();
    reset_result(result);
    const unsigned char *warm = (basis && o->warm_start) ? basis : NULL;
    result->status = pp_lcp_fallback(workspace, n, M, q, o, warm, z, result);
    if (basis)
        for (int i = 0; i < n; ++i) basis[i] = z[i] > 0.0;
    result->seconds = pp_lcp_clock() - start;
    return result->status == PP_LCP_SOLVED ? PP_OK : PP_ERR_SOLVER;
}
