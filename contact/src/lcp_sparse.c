/*
 * The basis of Lemke's revised form for large LCPs (n >= PP_LCP_SPARSE_MIN_N): a sparse LU
 * of the basis, refactorised now and then, with the pivots since kept as a product of
 * elementary matrices (an eta file), instead of the explicit n x n inverse of lcp_basis.c.
 *
 * Why. An island's M is sparse: contacts couple only through shared bodies, so a column of
 * a brick wall's M (ODE's crash demo, n ~ 8 000) holds a few hundred entries. The explicit
 * inverse costs n^2 doubles (0.5 GB at n = 8 000) and every pivot streams it two to four
 * times (the entering column, the refinement of x, the update): ~80 ms a pivot there, and
 * a refactorisation was a dense LU of the basis's dense part (about n/2 square). Here a
 * pivot costs a few sparse triangular solves.
 *
 * Factorisation (the block form of lcp_basis.c, pp_lcp_refactorise). With D the positions
 * whose basic variable has a dense column (z_j: -M_:j, z0: -d), W the others (w_k basic,
 * column e_k), R the equations k whose w_k is not basic (|R| = |D|),
 *     B = [A 0; C I] (equations R then W; positions D then W),  A = B[R, D], C = B[W, D],
 * so only A is factorised, sparse, by KLU (Davis & Palamadai Natarajan 2010: BTF, AMD,
 * left-looking LU with partial pivoting; tol = 1 asks for plain partial pivoting, as the
 * dense LU does). Then, for B0 the basis at the factorisation,
 *     B0 v = b:      A v_D = b_R,  v_W = b_W - C v_D                               (FTRAN)
 *     B0^T u = c:    u_W = c_W,    A^T u_R = c_D - C^T u_W                         (BTRAN)
 * Pivots. A pivot on row r with entering column y multiplies B^-1 on the left by the
 * elementary matrix E = I + (e_r - y) e_r^T / y_r (row r / y_r, row i - y_i row r: the
 * update lcp_basis.c applies to the explicit inverse), so B^-1 = E_t ... E_1 B0^-1 and
 *     B^-1 b    = E_t (... (E_1 (B0^-1 b)))                 (E v: v_r /= y_r, v_i -= y_i v_r)
 *     c^T B^-1  = ((c^T E_t) ... E_1) B0^-1                 (c^T E: only c_r changes,
 *                                                            c_r = (c_r - sum_{i!=r} c_i y_i) / y_r)
 * Each E is kept as the nonzeros of y (the eta file). The file grows a pivot at a time,
 * so the basis is refactorised after PP_LCP_SPARSE_ETA_MAX pivots besides the refactorisations
 * the refinement asks for (lcp_basis.c).
 *
 * Exactness is not the factorisation's: every quantity the pivot rule reads is refined with
 * compensated residuals (lemke.c, "Accuracy"), and the residuals here run over the nonzero
 * pattern of M (the same sums in the same order as the dense loops that skip zeros), and
 * the answer is judged by the independent residual at the end.
 */
#include "lcp_internal.h"

#include <klu.h>
#include <stdlib.h>
#include <string.h>

/* One factorisation B0 and the pivots since. */
typedef struct factor_state {
    klu_symbolic *symbolic;
    klu_numeric *numeric;
    int m;          /* |D| */
    int *dense;     /* n: positions D */
    int *equation;  /* n: equations R */
    int *var0;      /* n: basic variable of each position at the factorisation */
    int *eq_rank;   /* n: rank of equation k in R; -1 - i when w_k is basic in position i */
    int etas;       /* pivots since the factorisation */
    int *eta_row;   /* etas: pivot row */
    double *eta_inverse_pivot; /* etas: 1 / y_r */
    size_t *eta_start; /* etas + 1: start of each eta's entries */
    int *eta_index;    /* entries (i != r with y_i != 0) */
    double *eta_value;
    int eta_cap;
    size_t entry_cap;
} factor_state;

struct pp_lcp_sparse {
    int n;
    const double *M;          /* the matrix pivoted on (column-major) */
    const double *d;          /* z0's data (the covering vector) */
    int *col_start;           /* n + 1: pattern of M by columns (CSC) */
    int *row_index;           /* col_start[n]: rows of the nonzeros, increasing */
    klu_common common;
    factor_state state[2];
    int current;
    int refactor_at;          /* etas after which the next forced refactorisation is tried */
    int *Ap, *Ai;             /* A in CSC for KLU */
    double *Ax;
    size_t a_cap;
    double *t;                /* n: scratch of the solves with A */
    double *work;             /* n: scratch (BTRAN) */
    double *unit;             /* n: zeros, but for e_i while row i of B^-1 is formed */
    double *rows;             /* tied rows of B^-1 (ratio test), count x n, grown */
    size_t rows_cap;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 1;
    size_t c = *cap > 0 ? *cap : 64;
    while (c < need) c *= 2;
    void *g = realloc(*p, c * size);
    if (!g) return 0;
    *p = g;
    *cap = c;
    return 1;
}

static void state_release(pp_lcp_sparse *s, factor_state *f)
{
    if (f->numeric) klu_free_numeric(&f->numeric, &s->common);
    if (f->symbolic) klu_free_symbolic(&f->symbolic, &s->common);
    f->numeric = NULL;
    f->symbolic = NULL;
}

void pp_lcp_sparse_destroy(pp_lcp_sparse *s)
{
    if (!s) return;
    for (int i = 0; i < 2; ++i) {
        factor_state *f = &s->state[i];
        state_release(s, f);
        free(f->dense);
        free(f->equation);
        free(f->var0);
        free(f->eq_rank);
        free(f->eta_row);
        free(f->eta_inverse_pivot);
        free(f->eta_start);
        free(f->eta_index);
        free(f->eta_value);
    }
    free(s->col_start);
    free(s->row_index);
    free(s->Ap);
    free(s->Ai);
    free(s->Ax);
    free(s->t);
    free(s->work);
    free(s->unit);
    free(s->rows);
    free(s);
}

/* The nonzero pattern of the n x n column-major M, by columns; NULL when out of memory. */
pp_lcp_sparse *pp_lcp_sparse_create(int n, const double *M, const double *d)
{
    pp_lcp_sparse *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->n = n;
    s->M = M;
    s->d = d;
    size_t nnz = 0;
    for (size_t k = 0; k < (size_t)n * n; ++k) nnz += M[k] != 0.0;
    int ok = nnz < (size_t)1 << 30;
    const size_t un = (size_t)n;
    if (ok) {
        s->col_start = malloc((un + 1) * sizeof *s->col_start);
        s->row_index = malloc((nnz > 0 ? nnz : 1) * sizeof *s->row_index);
        s->Ap = malloc((un + 1) * sizeof *s->Ap);
        s->t = malloc(un * sizeof *s->t);
        s->work = malloc(un * sizeof *s->work);
        s->unit = calloc(un, sizeof *s->unit);
        ok = s->col_start && s->row_index && s->Ap && s->t && s->work && s->unit;
    }
    for (int i = 0; ok && i < 2; ++i) {
        factor_state *f = &s->state[i];
        f->dense = malloc(un * sizeof *f->dense);
        f->equation = malloc(un * sizeof *f->equation);
        f->var0 = malloc(un * sizeof *f->var0);
        f->eq_rank = malloc(un * sizeof *f->eq_rank);
        ok = f->dense && f->equation && f->var0 && f->eq_rank;
    }
    if (!ok) {
        pp_lcp_sparse_destroy(s);
        return NULL;
    }
    size_t p = 0;
    for (int j = 0; j < n; ++j) {
        s->col_start[j] = (int)p;
        const double *col = M + (size_t)j * un;
        for (int k = 0; k < n; ++k)
            if (col[k] != 0.0) s->row_index[p++] = k;
    }
    s->col_start[n] = (int)p;
    klu_defaults(&s->common);
    s->common.tol = 1.0; /* partial pivoting, as the dense LU */
    s->common.halt_if_singular = 1;
    s->refactor_at = PP_LCP_SPARSE_ETA_MAX;
    return s;
}

/* The nonzero rows of the data column of variable v (z_j: M_:j), *count of them; NULL for
 * z0 (data d, dense: the caller runs over every row, *count = n, and skips zeros). */
static const int *column_pattern(const pp_lcp_sparse *s, int v, int *count, const double **data)
{
    const int n = s->n;
    if (v < 2 * n) {
        int j = v - n;
        *data = s->M + (size_t)j * n;
        *count = s->col_start[j + 1] - s->col_start[j];
        return s->row_index + s->col_start[j];
    }
    *data = s->d;
    *count = n;
    return NULL; /* every row */
}

/* (hi, lo) -= a * data over the nonzeros of variable v's data column (v a z or z0), the
 * sums of pp_lcp_subtract_columns over one column, in the same order. */
void pp_lcp_sparse_subtract(const pp_lcp_sparse *s, int v, double a, double *hi, double *lo)
{
    const double *data;
    int count;
    const int *rows = column_pattern(s, v, &count, &data);
    double at = -a;
    if (rows) {
        for (int t = 0; t < count; ++t) {
            int k = rows[t];
            accumulate(&hi[k], &lo[k], at, data[k]);
        }
    } else {
        for (int k = 0; k < count; ++k)
            if (data[k] != 0.0) accumulate(&hi[k], &lo[k], at, data[k]);
    }
}

/* data . u over the nonzeros of variable v's data column, compensated into (hi, lo). */
void pp_lcp_sparse_dot(const pp_lcp_sparse *s, int v, const double *u, double *hi, double *lo)
{
    const double *data;
    int count;
    const int *rows = column_pattern(s, v, &count, &data);
    if (rows) {
        for (int t = 0; t < count; ++t) accumulate(hi, lo, data[rows[t]], u[rows[t]]);
    } else {
        for (int k = 0; k < count; ++k)
            if (data[k] != 0.0) accumulate(hi, lo, data[k], u[k]);
    }
}

/* Factorise the basis row_var into the spare state; 1 on success (the spare state is then
 * made current by pp_lcp_sparse_swap). 0 when A is singular or memory ran out. */
int pp_lcp_sparse_factor(pp_lcp_sparse *s, const int *row_var)
{
    const int n = s->n;
    factor_state *f = &s->state[1 - s->current];
    state_release(s, f);
    f->etas = 0;
    memcpy(f->var0, row_var, (size_t)n * sizeof *row_var);
    int m = 0;
    for (int k = 0; k < n; ++k) f->eq_rank[k] = 0;
    for (int i = 0; i < n; ++i) {
        int var = row_var[i];
        if (var < n) f->eq_rank[var] = -1 - i;
        else f->dense[m++] = i;
    }
    int mr = 0;
    for (int k = 0; k < n; ++k)
        if (f->eq_rank[k] >= 0) {
            f->equation[mr] = k;
            f->eq_rank[k] = mr++;
        }
    f->m = m;
    if (mr != m) return 0;
    if (m == 0) return 1;
    /* A in CSC: column d is -data of the variable in position D_d, at the equations R */
    size_t nnz = 0;
    for (int d = 0; d < m; ++d) {
        int var = row_var[f->dense[d]], count;
        const double *data;
        column_pattern(s, var, &count, &data);
        nnz += (size_t)count;
    }
    if (!grow((void **)&s->Ai, &s->a_cap, nnz, sizeof *s->Ai)) return 0;
    size_t cap = s->a_cap;
    s->a_cap = 0; /* Ax grows to the same capacity */
    if (!grow((void **)&s->Ax, &s->a_cap, cap, sizeof *s->Ax)) return 0;
    size_t p = 0;
    for (int d = 0; d < m; ++d) {
        s->Ap[d] = (int)p;
        int var = row_var[f->dense[d]], count;
        const double *data;
        const int *rows = column_pattern(s, var, &count, &data);
        for (int t = 0; t < count; ++t) {
            int k = rows ? rows[t] : t;
            int r = f->eq_rank[k];
            if (r < 0 || data[k] == 0.0) continue;
            s->Ai[p] = r;
            s->Ax[p++] = -data[k];
        }
    }
    s->Ap[m] = (int)p;
    f->symbolic = klu_analyze(m, s->Ap, s->Ai, &s->common);
    if (!f->symbolic) return 0;
    f->numeric = klu_factor(s->Ap, s->Ai, s->Ax, f->symbolic, &s->common);
    if (!f->numeric || s->common.status != KLU_OK) {
        state_release(s, f);
        return 0;
    }
    return 1;
}

/* Exchange the current and the spare state (the one just factorised, or, after a
 * refactorisation that is not kept, the one before it). */
void pp_lcp_sparse_swap(pp_lcp_sparse *s)
{
    s->current = 1 - s->current;
    s->refactor_at = s->state[s->current].etas + PP_LCP_SPARSE_ETA_MAX;
}

/* The forced refactorisation after PP_LCP_SPARSE_ETA_MAX pivots is due (one that kept the
 * old factors is retried after as many pivots again). */
int pp_lcp_sparse_refactor_due(const pp_lcp_sparse *s)
{
    return s->state[s->current].etas >= s->refactor_at;
}

void pp_lcp_sparse_postpone(pp_lcp_sparse *s)
{
    s->refactor_at = s->state[s->current].etas + PP_LCP_SPARSE_ETA_MAX;
}

/* v = B^-1 b (v indexed by positions, b by equations; v may not alias b). */
void pp_lcp_sparse_ftran(pp_lcp_sparse *s, const double *b, double *v)
{
    const int n = s->n;
    factor_state *f = &s->state[s->current];
    double *t = s->t;
    const int m = f->m;
    if (m > 0) {
        for (int r = 0; r < m; ++r) t[r] = b[f->equation[r]];
        klu_solve(f->symbolic, f->numeric, m, 1, t, &s->common);
    }
    for (int i = 0; i < n; ++i)
        if (f->var0[i] < n) v[i] = b[f->var0[i]];
    for (int d = 0; d < m; ++d) {
        double td = t[d];
        v[f->dense[d]] = td;
        if (td == 0.0) continue;
        int count;
        const double *data;
        const int *rows = column_pattern(s, f->var0[f->dense[d]], &count, &data);
        for (int q = 0; q < count; ++q) { /* v_W -= C v_D, C = -data at the equations W */
            int k = rows ? rows[q] : q;
            int rank = f->eq_rank[k];
            if (rank < 0 && data[k] != 0.0) v[-1 - rank] += data[k] * td;
        }
    }
    for (int e = 0; e < f->etas; ++e) {
        int r = f->eta_row[e];
        double vr = v[r] * f->eta_inverse_pivot[e];
        v[r] = vr;
        if (vr == 0.0) continue;
        for (size_t q = f->eta_start[e]; q < f->eta_start[e + 1]; ++q)
            v[f->eta_index[q]] -= f->eta_value[q] * vr;
    }
}

/* u^T = c^T B^-1 (c indexed by positions, u by equations; u may not alias c). */
void pp_lcp_sparse_btran(pp_lcp_sparse *s, const double *c, double *u)
{
    const int n = s->n;
    factor_state *f = &s->state[s->current];
    double *w = s->work, *t = s->t;
    const int m = f->m;
    memcpy(w, c, (size_t)n * sizeof *w);
    for (int e = f->etas - 1; e >= 0; --e) {
        int r = f->eta_row[e];
        double sum = w[r];
        for (size_t q = f->eta_start[e]; q < f->eta_start[e + 1]; ++q)
            sum -= w[f->eta_index[q]] * f->eta_value[q];
        w[r] = sum * f->eta_inverse_pivot[e];
    }
    for (int i = 0; i < n; ++i)
        if (f->var0[i] < n) u[f->var0[i]] = w[i];
    if (m == 0) return;
    for (int d = 0; d < m; ++d) { /* t = c_D - C^T u_W */
        double sum = w[f->dense[d]];
        int count;
        const double *data;
        const int *rows = column_pattern(s, f->var0[f->dense[d]], &count, &data);
        for (int q = 0; q < count; ++q) {
            int k = rows ? rows[q] : q;
            if (f->eq_rank[k] < 0 && data[k] != 0.0) sum += data[k] * u[k];
        }
        t[d] = sum;
    }
    klu_tsolve(f->symbolic, f->numeric, m, 1, t, &s->common);
    for (int r = 0; r < m; ++r) u[f->equation[r]] = t[r];
}

/* Row i of B^-1: e_i^T B^-1. */
void pp_lcp_sparse_unit_row(pp_lcp_sparse *s, int i, double *row)
{
    s->unit[i] = 1.0;
    pp_lcp_sparse_btran(s, s->unit, row);
    s->unit[i] = 0.0;
}

/* Record the pivot on row r with entering column y (B^-1 <- E B^-1). 0: out of memory. */
int pp_lcp_sparse_pivot(pp_lcp_sparse *s, int r, const double *y)
{
    const int n = s->n;
    factor_state *f = &s->state[s->current];
    size_t cap = (size_t)f->eta_cap;
    if ((size_t)f->etas + 1 >= cap) {
        size_t c1 = cap, c2 = cap, c3 = cap;
        if (!grow((void **)&f->eta_row, &c1, (size_t)f->etas + 2, sizeof *f->eta_row) ||
            !grow((void **)&f->eta_inverse_pivot, &c2, (size_t)f->etas + 2,
                  sizeof *f->eta_inverse_pivot) ||
            !grow((void **)&f->eta_start, &c3, (size_t)f->etas + 2, sizeof *f->eta_start))
            return 0;
        f->eta_cap = (int)c1;
    }
    if (f->etas == 0) f->eta_start[0] = 0;
    size_t start = f->eta_start[f->etas];
    size_t count = 0;
    for (int i = 0; i < n; ++i) count += i != r && y[i] != 0.0;
    size_t ecap = f->entry_cap;
    if (!grow((void **)&f->eta_index, &ecap, start + count, sizeof *f->eta_index)) return 0;
    ecap = f->entry_cap;
    if (!grow((void **)&f->eta_value, &ecap, start + count, sizeof *f->eta_value)) return 0;
    f->entry_cap = ecap;
    size_t p = start;
    for (int i = 0; i < n; ++i)
        if (i != r && y[i] != 0.0) {
            f->eta_index[p] = i;
            f->eta_value[p++] = y[i];
        }
    f->eta_row[f->etas] = r;
    f->eta_inverse_pivot[f->etas] = 1.0 / y[r];
    f->eta_start[++f->etas] = p;
    return 1;
}

/* Room for `count` rows of n (the ratio test's tied rows); NULL when out of memory. */
double *pp_lcp_sparse_rows(pp_lcp_sparse *s, int count)
{
    if (!grow((void **)&s->rows, &s->rows_cap, (size_t)count * s->n, sizeof *s->rows))
        return NULL;
    return s->rows;
}

/* ---- Basis solves (warm start and polish) of large LCPs ---------------------------------
 *
 * M_BB z_B = -q_B for the basic set index[0..nb-1] by KLU on the sparse M_BB, refined with
 * compensated residuals over its nonzeros (the same iteration as the dense
 * pp_lcp_solve_basis). Returns 0 when M_BB is exactly singular, memory runs out, or the
 * solve is not finite. zb, r, hi, lo: nb each. */
int pp_lcp_sparse_solve_basis(int n, const double *M, const double *q, const int *index, int nb,
                              double *zb, double *r, double *hi, double *lo)
{
    int *Ap = malloc(((size_t)nb + 1) * sizeof *Ap);
    int *Ai = NULL;
    double *Ax = NULL;
    size_t cap = 0, cap_x = 0;
    int ok = Ap != NULL;
    size_t p = 0;
    for (int b = 0; ok && b < nb; ++b) {
        Ap[b] = (int)p;
        const double *col = M + (size_t)index[b] * n;
        for (int a = 0; ok && a < nb; ++a) {
            double v = col[index[a]];
            if (v == 0.0) continue;
            ok = grow((void **)&Ai, &cap, p + 1, sizeof *Ai) &&
                 grow((void **)&Ax, &cap_x, p + 1, sizeof *Ax);
            if (!ok) break;
            Ai[p] = a;
            Ax[p++] = v;
        }
    }
    klu_common common;
    klu_symbolic *symbolic = NULL;
    klu_numeric *numeric = NULL;
    if (ok) {
        Ap[nb] = (int)p;
        klu_defaults(&common);
        common.tol = 1.0;
        symbolic = klu_analyze(nb, Ap, Ai, &common);
        numeric = symbolic ? klu_factor(Ap, Ai, Ax, symbolic, &common) : NULL;
        ok = numeric && common.status == KLU_OK;
    }
    if (ok) {
        for (int b = 0; b < nb; ++b) zb[b] = -q[index[b]];
        klu_solve(symbolic, numeric, nb, 1, zb, &common);
        for (int step = 0; step < REFINE_STEPS; ++step) {
            for (int a = 0; a < nb; ++a) { /* r = -q_B - M_BB z_B, column by column */
                hi[a] = -q[index[a]];
                lo[a] = 0.0;
            }
            for (int b = 0; b < nb; ++b) {
                if (zb[b] == 0.0) continue;
                double at = -zb[b];
                for (int t = Ap[b]; t < Ap[b + 1]; ++t)
                    accumulate(&hi[Ai[t]], &lo[Ai[t]], at, Ax[t]);
            }
            for (int a = 0; a < nb; ++a) r[a] = hi[a] + lo[a];
            klu_solve(symbolic, numeric, nb, 1, r, &common);
            double c = 0.0, size = 0.0;
            for (int b = 0; b < nb; ++b) {
                zb[b] += r[b];
                c = max_d(c, fabs(r[b]));
                size = max_d(size, fabs(zb[b]));
            }
            if (!(c > REFINE_SETTLED * size) || (step == 0 && c <= REFINE_ONE_STEP * size))
                break;
        }
        ok = pp_lcp_all_finite((size_t)nb, zb);
    }
    if (numeric) klu_free_numeric(&numeric, &common);
    if (symbolic) klu_free_symbolic(&symbolic, &common);
    free(Ap);
    free(Ai);
    free(Ax);
    return ok;
}
