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

void pp_lcp_subtract_columns(int n, double *restrict hi, double *restrict lo,
                             const double *const *c, const double *a, int count)
{
#ifdef PP_LCP_FMA_DISPATCH
    if (pp_lcp_cpu_fma()) {
        subtract_columns_fma(n, hi, lo, c, a, count);
        return;
    }
#endif
    subtract_columns(n, hi, lo, c, a, count, 0);
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
int pp_lcp_lu_factor(int n, double *A, int *piv)
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
void pp_lcp_lu_solve(int n, const double *LU, const int *piv, double *b)
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
        if (!pp_lcp_sparse_solve_basis(n, M, ws->shift, q, ws->index, nb, zb, r, hi, lo))
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
void pp_lcp_apply_inverse(const lemke_run *run, const double *b, double *v)
{
    const int n = run->n;
    if (run->sparse) {
        pp_lcp_sparse_ftran(run->sparse, b, v);
        return;
    }
    for (int i = 0; i < n; ++i) v[i] = dot(n, pp_lcp_inverse_row(run, i), b);
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
        for (int j = 0; j < n; ++j) {
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
                const double *row = pp_lcp_inverse_row(run, j);
                for (int k = 0; k < n; ++k) c[k] += r[j] * row[k];
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
    double *row_r = pp_lcp_inverse_row(run, r);
    double inv = 1.0 / y[r];
    double theta = x[r] * inv;
    for (int k = 0; k < n; ++k) row_r[k] *= inv;
    for (int i = 0; i < n; ++i) {
        double f = y[i];
        if (i == r || f == 0.0) continue;
        double *restrict row_i = pp_lcp_inverse_row(run, i);
        const double *restrict pivot_row = row_r;
        for (int k = 0; k < n; ++k) row_i[k] -= f * pivot_row[k];
        x[i] -= f * theta;
    }
    x[r] = theta;
    return 1;
}

