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
#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
#include <immintrin.h>
#endif

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
    double *eta_dense; /* etas x n: y of each eta with y_r = 0 (rows of B^-1, unit_row) */
    int eta_cap;
    size_t entry_cap, dense_cap;
    int *dense_of_var; /* n + 1: D index of z_j (j) and z0 (n) when basic in D, else -1 */
    int *c_start;      /* m + 1: C by columns, as the data at the W equations: */
    int *c_pos;        /*   the position whose w_k is basic (row k of C) */
    double *c_data;    /*   data_d[k] (C_kd = -data_d[k]) */
    size_t c_cap, c_start_cap;
} factor_state;

struct pp_lcp_sparse {
    int n;
    double shift;             /* the matrix pivoted on is M + shift I: the regularised
                                 retries' eps (pp_lcp_solve), else 0 */
    const double *d;          /* z0's data (the covering vector) */
    const int *col_start;     /* n + 1: M by columns (CSC, pp_lcp_csc): pattern, */
    const int *row_index;     /* col_start[n]: rows of the nonzeros, increasing, */
    const double *values;     /* col_start[n]: and entries */
    int *own_start, *own_rows; /* a pattern built for this path alone (else NULL) */
    double *own_values;
    double *pairs;            /* 2n: the residual's accumulators (hi_k, lo_k) side by side */
    double *shifted;          /* shift != 0: values with the diagonal entries M_jj + shift
                                 (entry()), for the residuals' column updates; else NULL */
    klu_common common;
    factor_state state[2];
    int current;
    int refactor_at;          /* etas after which the next forced refactorisation is tried */
    int *Ap, *Ai;             /* A in CSC for KLU */
    double *Ax;
    size_t a_cap;
    double *t;                /* n: scratch of the solves with A */
    double *work;             /* n: scratch (BTRAN) */
    double *unit;             /* n: zeros but while a row of B^-1 is formed (unit_row) */
    unsigned char *mark;      /* n: zeros but while a row of B^-1 is formed */
    int *list;                /* n: the nonzeros of unit */
    int *row_start;           /* n + 1: M's pattern by rows (CSR), formed by the first row of */
    int *col_index;           /*   B^-1 asked for (unit_row: a path without a tie never */
    double *row_values;       /*   needs it), with M's entries in that order */
    pp_lcp_workspace *ws;     /* whose m_row_* share them between the paths of a solve */
    int rows_shared;          /* 1: row_start etc. are the workspace's (not freed here) */
    double *rows;             /* tied rows of B^-1 (ratio test), count x n, grown */
    size_t rows_cap;
    int work_exceeded;        /* 1 once a factorisation was refused by the work bound */
};

/* The estimated work of the LU KLU's analysis plans for an m x m matrix: with fill = lnz +
 * unz its predicted fill, about fill^2 / m flops (a left-looking LU's work is
 * the sum over its columns of the column's count times the rows it updates). */
static double lu_work(double fill, int m)
{
    return fill * fill / (m > 0 ? m : 1);
}

static double factor_work = PP_LCP_FACTOR_WORK;

/* 1 when the LU of the m x m block with `entries` nonzeros, as analysed in `symbolic`, is
 * above the bound (PP_LCP_FACTOR_WORK, lcp_internal.h): by AMD's estimate (lu_work) or by the
 * charge m * entries, the estimate the bounded fallback charges a basis solve (lcp_fallback.c),
 * which partial pivoting's fill does not make run low as it does AMD's. */
static int over_bound(const klu_symbolic *symbolic, int m, double entries)
{
    return lu_work(symbolic->lnz + symbolic->unz, m) > factor_work ||
           (double)m * entries > factor_work;
}

/* The predicted work of that LU, as the clock reads it (pp_lcp_work_fits): the larger of the
 * two estimates the bound is held to. */
static double factor_charge(const klu_symbolic *symbolic, int m, double entries)
{
    return fmax(lu_work(symbolic->lnz + symbolic->unz, m), (double)m * entries);
}

double pp_lcp_factor_work_bound(double flops)
{
    double previous = factor_work;
    if (flops > 0.0) factor_work = flops;
    return previous;
}

/* 1 once a factorisation of this path's basis was refused by the work bound. */
int pp_lcp_sparse_work_exceeded(const pp_lcp_sparse *s)
{
    return s->work_exceeded;
}

/* The AVX2 copies of FTRAN's and the residuals' loops below (ftran_columns_avx2,
 * apply_etas_avx2, basis_residual_avx2_fma, basis_dots_avx2_fma) run when the CPU has AVX2
 * and FMA and this is 1; the tests set it to 0 to compare them with the scalar loops bit for
 * bit. */
static int vector_kernels = 1;

int pp_lcp_sparse_vector_kernels(int on)
{
    int previous = vector_kernels;
    if (on >= 0) vector_kernels = on != 0;
    return previous;
}

/* Dense copies of the etas' y are kept for at most this many pivots since a factorisation
 * (they make a row of B^-1 cheap, unit_row); when refactorisations keep failing and the
 * file grows past it, rows go through the general BTRAN instead, so memory stays
 * ETA_DENSE_MAX n plus the etas' nonzeros. */
#define ETA_DENSE_MAX (4 * PP_LCP_SPARSE_ETA_MAX)

int pp_lcp_grow(void **p, size_t *cap, size_t need, size_t size)
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
        free(f->eta_dense);
        free(f->dense_of_var);
        free(f->c_start);
        free(f->c_pos);
        free(f->c_data);
    }
    free(s->own_start);
    free(s->own_rows);
    free(s->own_values);
    free(s->shifted);
    free(s->pairs);
    free(s->Ap);
    free(s->Ai);
    free(s->Ax);
    free(s->t);
    free(s->work);
    free(s->unit);
    free(s->mark);
    free(s->list);
    if (!s->rows_shared) {
        free(s->row_start);
        free(s->col_index);
        free(s->row_values);
    }
    free(s->rows);
    free(s);
}

/* The n x n column-major M by columns (pp_lcp_csc), with every diagonal entry (so that it
 * serves M + eps I too): rows of column j are row_index[col_start[j] .. col_start[j + 1] - 1],
 * increasing, their entries values[] at the same places. 0 when out of memory. */
static int build_pattern(int n, const double *M, int **col_start, int **row_index,
                         double **values)
{
    const size_t un = (size_t)n;
    size_t nnz = 0;
    for (size_t j = 0; j < un; ++j) {
        const double *col = M + j * un;
        for (size_t k = 0; k < un; ++k) nnz += col[k] != 0.0 || k == j;
    }
    if (nnz >= (size_t)1 << 31) return 0;
    *col_start = malloc((un + 1) * sizeof **col_start);
    *row_index = malloc(nnz * sizeof **row_index);
    *values = malloc(nnz * sizeof **values);
    if (!*col_start || !*row_index || !*values) {
        free(*col_start);
        free(*row_index);
        free(*values);
        *col_start = *row_index = NULL;
        *values = NULL;
        return 0;
    }
    size_t p = 0;
    for (int j = 0; j < n; ++j) {
        (*col_start)[j] = (int)p;
        const double *col = M + (size_t)j * un;
        for (int k = 0; k < n; ++k)
            if (col[k] != 0.0 || k == j) {
                (*row_index)[p] = k;
                (*values)[p++] = col[k];
            }
    }
    (*col_start)[n] = (int)p;
    return 1;
}

/* The pattern of M serves every Lemke path of one solve (the regularised retries change only
 * the diagonal): from pp_lcp_pattern_begin to _end (the public solves) the first path builds
 * it into the workspace and the later ones reuse it. A solve that does not pivot (q >= 0, a
 * warm start) never builds it. */
void pp_lcp_pattern_begin(pp_lcp_workspace *ws)
{
    ws->pattern_start = ws->pattern_rows = NULL;
    ws->pattern_values = NULL;
    ws->m_row_start = ws->m_col_index = NULL;
    ws->m_row_values = NULL;
    ws->pattern_shared = 1;
}

void pp_lcp_pattern_end(pp_lcp_workspace *ws)
{
    free(ws->pattern_start);
    free(ws->pattern_rows);
    free(ws->pattern_values);
    free(ws->m_row_start);
    free(ws->m_col_index);
    free(ws->m_row_values);
    ws->pattern_start = ws->pattern_rows = NULL;
    ws->pattern_values = NULL;
    ws->m_row_start = ws->m_col_index = NULL;
    ws->m_row_values = NULL;
    ws->pattern_shared = 0;
}

/* The sparse basis of a Lemke path on M (z0's data d), given either dense (column-major M,
 * whose nonzeros are gathered by columns once per solve) or by columns (csc; M NULL). NULL
 * when out of memory. */
pp_lcp_sparse *pp_lcp_sparse_create(pp_lcp_workspace *ws, int n, const double *M,
                                    const pp_lcp_csc *csc, const double *d)
{
    pp_lcp_sparse *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->n = n;
    s->shift = ws->shift;
    s->d = d;
    s->ws = ws;
    int ok = 1;
    if (csc) {
        s->col_start = csc->col_start;
        s->row_index = csc->row_index;
        s->values = csc->values;
    } else {
        if (ws->pattern_shared && !ws->pattern_start &&
            !build_pattern(n, M, &ws->pattern_start, &ws->pattern_rows, &ws->pattern_values))
            ws->pattern_shared = 0; /* out of memory: each path tries its own */
        if (ws->pattern_start) {
            s->col_start = ws->pattern_start;
            s->row_index = ws->pattern_rows;
            s->values = ws->pattern_values;
        } else {
            ok = build_pattern(n, M, &s->own_start, &s->own_rows, &s->own_values);
            s->col_start = s->own_start;
            s->row_index = s->own_rows;
            s->values = s->own_values;
        }
    }
    const size_t un = (size_t)n;
    if (ok && s->shift != 0.0) { /* M + shift I by columns, each entry as entry() rounds it */
        const size_t nnz = (size_t)s->col_start[n];
        s->shifted = malloc((nnz > 0 ? nnz : 1) * sizeof *s->shifted);
        ok = s->shifted != NULL;
        for (int j = 0; ok && j < n; ++j)
            for (int p = s->col_start[j]; p < s->col_start[j + 1]; ++p)
                s->shifted[p] = s->row_index[p] == j ? s->values[p] + s->shift : s->values[p];
    }
    if (ok) {
        s->Ap = malloc((un + 1) * sizeof *s->Ap);
        s->t = malloc(un * sizeof *s->t);
        s->work = malloc(un * sizeof *s->work);
        s->unit = calloc(un, sizeof *s->unit);
        s->mark = calloc(un, 1);
        s->list = malloc(un * sizeof *s->list);
        s->pairs = malloc(2 * un * sizeof *s->pairs);
        ok = s->Ap && s->t && s->work && s->unit && s->mark && s->list && s->pairs;
    }
    for (int i = 0; ok && i < 2; ++i) {
        factor_state *f = &s->state[i];
        f->dense = malloc(un * sizeof *f->dense);
        f->equation = malloc(un * sizeof *f->equation);
        f->var0 = malloc(un * sizeof *f->var0);
        f->eq_rank = malloc(un * sizeof *f->eq_rank);
        f->dense_of_var = malloc((un + 1) * sizeof *f->dense_of_var);
        ok = f->dense && f->equation && f->var0 && f->eq_rank && f->dense_of_var;
    }
    if (!ok) {
        pp_lcp_sparse_destroy(s);
        return NULL;
    }
    klu_defaults(&s->common);
    s->common.tol = 1.0; /* partial pivoting, as the dense LU */
    s->common.halt_if_singular = 1;
    s->refactor_at = PP_LCP_SPARSE_ETA_MAX;
    return s;
}

/* The nonzero rows of the data column of variable v (z_j: M_:j), *count of them, and their
 * entries data[0 .. count - 1]; NULL for z0 (data d, dense: the caller runs over every row,
 * *count = n, and skips zeros). */
static inline const int *column_pattern(const pp_lcp_sparse *s, int v, int *count, const double **data)
{
    const int n = s->n;
    if (v < 2 * n) {
        int j = v - n;
        *data = s->values + s->col_start[j];
        *count = s->col_start[j + 1] - s->col_start[j];
        return s->row_index + s->col_start[j];
    }
    *data = s->d;
    *count = n;
    return NULL; /* every row */
}

/* Entry `value` at row k of variable v's data column: M_kj (+ shift on the diagonal) for
 * z_j, d_k for z0; M_jj + shift is rounded as the copy M + eps I of the dense path rounds it. */
static inline double entry(const pp_lcp_sparse *s, int v, double value, int k)
{
    return k == v - s->n ? value + s->shift : value;
}

/* a = the column of variable v (a z) in [I | -M | -d]: -(M + shift I)_:v-n, with -0 off the
 * pattern (as the negated dense column has). */
void pp_lcp_sparse_load_column(const pp_lcp_sparse *s, int v, double *a)
{
    const double *data;
    int count;
    const int *rows = column_pattern(s, v, &count, &data);
    for (int k = 0; k < s->n; ++k) a[k] = -0.0;
    for (int t = 0; t < count; ++t) a[rows[t]] = -entry(s, v, data[t], rows[t]);
}

/* (hi, lo) -= a * data over the nonzeros of variable v's data column (v a z or z0), the
 * sums of pp_lcp_subtract_columns over one column, in the same order. */
static inline __attribute__((always_inline)) void
sparse_subtract(const pp_lcp_sparse *s, int v, double a, double *hi, double *lo, const int fused)
{
    const double *data;
    int count;
    const int *rows = column_pattern(s, v, &count, &data);
    double at = -a;
    if (rows) {
        if (s->shift != 0.0) { /* M + shift I: the diagonal entry alone */
            for (int t = 0; t < count; ++t) {
                int k = rows[t];
                double e = entry(s, v, data[t], k);
                if (e != 0.0) accumulate_with(&hi[k], &lo[k], at, e, fused);
            }
            return;
        }
        for (int t = 0; t < count; ++t) {
            int k = rows[t];
            if (data[t] != 0.0) accumulate_with(&hi[k], &lo[k], at, data[t], fused);
        }
    } else {
        for (int k = 0; k < count; ++k)
            if (data[k] != 0.0) accumulate_with(&hi[k], &lo[k], at, data[k], fused);
    }
}

#ifdef PP_LCP_FMA_DISPATCH
PP_LCP_FMA_TARGET static void sparse_subtract_fma(const pp_lcp_sparse *s, int v, double a,
                                                   double *hi, double *lo)
{
    sparse_subtract(s, v, a, hi, lo, 1);
}
#endif

#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
/* (hi_k, lo_k) += at e_t at the rows k = rows[t], t < count (distinct rows: a column's
 * pattern), the accumulators in pairs hl[2k] = hi_k, hl[2k + 1] = lo_k, four entries at a
 * time: each row's pair in one 16-byte load and store (which the previous column's stores
 * forward to: AVX2 gathers do not, and on the Zen 4 measured they made the residuals 5-8 %
 * slower), four pairs turned into a vector of hi and one of lo by two inserts and two unpacks
 * (and back), each lane doing accumulate_with's fused operations, a lane whose e_t is 0
 * keeping its (hi, lo) as the scalar loop skips it (a blend). The rows are distinct, so the
 * order within the column does not matter: the same bits as the scalar loop. (The hi and lo
 * of separate arrays, loaded and stored lane by lane, took ~3 % more time.) */
__attribute__((target("avx2,fma"))) static void
gathered_subtract_pairs(const int *rows, const double *e, int count, double at, double *hl)
{
    const __m256d av = _mm256_set1_pd(at);
    int t = 0;
    for (; t + 4 <= count; t += 4) {
        double *p0 = hl + 2 * rows[t], *p1 = hl + 2 * rows[t + 1];
        double *p2 = hl + 2 * rows[t + 2], *p3 = hl + 2 * rows[t + 3];
        __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p0)),
                                         _mm_loadu_pd(p2), 1); /* h0 l0 h2 l2 */
        __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p1)),
                                         _mm_loadu_pd(p3), 1); /* h1 l1 h3 l3 */
        __m256d h = _mm256_unpacklo_pd(a, b), l = _mm256_unpackhi_pd(a, b);
        pp_lcp_accumulate4(av, _mm256_loadu_pd(e + t), &h, &l);
        a = _mm256_unpacklo_pd(h, l);
        b = _mm256_unpackhi_pd(h, l);
        _mm_storeu_pd(p0, _mm256_castpd256_pd128(a));
        _mm_storeu_pd(p1, _mm256_castpd256_pd128(b));
        _mm_storeu_pd(p2, _mm256_extractf128_pd(a, 1));
        _mm_storeu_pd(p3, _mm256_extractf128_pd(b, 1));
    }
    for (; t < count; ++t)
        if (e[t] != 0.0) accumulate_with(&hl[2 * rows[t]], &hl[2 * rows[t] + 1], at, e[t], 1);
}

/* basis_residual (lcp_basis.c): out = b - B v, compensated, over the basic positions in
 * order (the columns of [I | -M | -d] are -data, so a z's or z0's adds +v_i data): w_k's unit
 * column by TwoSum, z0's dense d as the scalar loop, a z's column (of M + shift I: the shifted
 * copy) by gathered_subtract_pairs. */
__attribute__((target("avx2,fma"))) static void
basis_residual_avx2_fma(const pp_lcp_sparse *s, const int *row_var, const double *b,
                        const double *v, double *out)
{
    const int n = s->n;
    double *hl = s->pairs;
    for (int k = 0; k < n; ++k) {
        hl[2 * k] = b[k];
        hl[2 * k + 1] = 0.0;
    }
    for (int i = 0; i < n; ++i) {
        const int var = row_var[i];
        const double vi = v[i];
        if (vi == 0.0) continue;
        if (var < n) {
            double sum, e;
            two_sum(hl[2 * var], -vi, &sum, &e);
            hl[2 * var] = sum;
            hl[2 * var + 1] += e;
            continue;
        }
        const double *data;
        int count;
        const int *rows = column_pattern(s, var, &count, &data);
        if (!rows) { /* z0: d, dense */
            for (int k = 0; k < count; ++k)
                if (data[k] != 0.0) accumulate_with(&hl[2 * k], &hl[2 * k + 1], vi, data[k], 1);
            continue;
        }
        if (s->shifted) data = s->shifted + s->col_start[var - n];
        gathered_subtract_pairs(rows, data, count, vi, hl);
    }
    for (int k = 0; k < n; ++k) out[k] = hl[2 * k] + hl[2 * k + 1];
}
#endif

/* basis_residual's out = b - B v for the basis row_var when the vector kernels run: 1; else
 * 0 and nothing is done (the caller runs its loop). The loop inside one call also saves a
 * call, two CPU tests and a column look-up a basic column (4 % of heap20's cold LCP). */
int pp_lcp_sparse_basis_residual(const pp_lcp_sparse *s, const int *row_var, const double *b,
                                 const double *v, double *out)
{
#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
    if (vector_kernels && pp_lcp_cpu_fma() && pp_lcp_cpu_avx2()) {
        basis_residual_avx2_fma(s, row_var, b, v, out);
        return 1;
    }
#endif
    (void)s;
    (void)row_var;
    (void)b;
    (void)v;
    (void)out;
    return 0;
}

/* (hi, lo) -= a times variable v's data column over its nonzeros, compensated (with FMA
 * where the CPU has it: lcp_internal.h, accumulate_with). */
void pp_lcp_sparse_subtract(const pp_lcp_sparse *s, int v, double a, double *hi, double *lo)
{
#ifdef PP_LCP_FMA_DISPATCH
    if (pp_lcp_cpu_fma()) {
        sparse_subtract_fma(s, v, a, hi, lo);
        return;
    }
#endif
    sparse_subtract(s, v, a, hi, lo, 0);
}

static inline __attribute__((always_inline)) void
sparse_dot(const pp_lcp_sparse *s, int v, const double *u, double *hi, double *lo, const int fused)
{
    const double *data;
    int count;
    const int *rows = column_pattern(s, v, &count, &data);
    if (rows) {
        for (int t = 0; t < count; ++t) {
            double e = entry(s, v, data[t], rows[t]);
            if (e != 0.0) accumulate_with(hi, lo, e, u[rows[t]], fused);
        }
    } else {
        for (int k = 0; k < count; ++k)
            if (data[k] != 0.0) accumulate_with(hi, lo, data[k], u[k], fused);
    }
}

#ifdef PP_LCP_FMA_DISPATCH
PP_LCP_FMA_TARGET static void sparse_dot_fma(const pp_lcp_sparse *s, int v, const double *u,
                                              double *hi, double *lo)
{
    sparse_dot(s, v, u, hi, lo, 1);
}
#endif

/* data . u over the nonzeros of variable v's data column, compensated into (hi, lo). */
void pp_lcp_sparse_dot(const pp_lcp_sparse *s, int v, const double *u, double *hi, double *lo)
{
#ifdef PP_LCP_FMA_DISPATCH
    if (pp_lcp_cpu_fma()) {
        sparse_dot_fma(s, v, u, hi, lo);
        return;
    }
#endif
    sparse_dot(s, v, u, hi, lo, 0);
}

#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
/* r_at[t] = [at[t] == i] + data . u for the z columns var[t], t < lanes <= 4, one column a
 * lane: lane t does sparse_dot's fused operations on its column's nonzeros in their order
 * (the entries of M + shift I from the shifted copy), a lane at a zero entry or past its
 * column's end keeping its (hi, lo) (pp_lcp_accumulate4's blend), so each r_j has the scalar
 * loop's bits. One compensated sum waits on its additions; four run side by side. */
__attribute__((target("avx2,fma"))) static void dots4(const pp_lcp_sparse *s, const int *at,
                                                      const int *var, int lanes, int i,
                                                      const double *u, double *r)
{
    const int *rows[4];
    const double *data[4];
    int count[4] = {0, 0, 0, 0}, shortest = lanes < 4 ? 0 : s->n, longest = 0;
    double h0[4] = {0.0, 0.0, 0.0, 0.0};
    for (int t = 0; t < lanes; ++t) {
        rows[t] = column_pattern(s, var[t], &count[t], &data[t]);
        if (s->shifted) data[t] = s->shifted + s->col_start[var[t] - s->n];
        if (count[t] < shortest) shortest = count[t];
        if (count[t] > longest) longest = count[t];
        h0[t] = at[t] == i ? 1.0 : 0.0;
    }
    double a0 = h0[0], a1 = h0[1], a2 = h0[2], a3 = h0[3];
    double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0;
    int k = 0;
    for (; k < shortest; ++k) {
        double e;
        if ((e = data[0][k]) != 0.0) accumulate_with(&a0, &b0, e, u[rows[0][k]], 1);
        if ((e = data[1][k]) != 0.0) accumulate_with(&a1, &b1, e, u[rows[1][k]], 1);
        if ((e = data[2][k]) != 0.0) accumulate_with(&a2, &b2, e, u[rows[2][k]], 1);
        if ((e = data[3][k]) != 0.0) accumulate_with(&a3, &b3, e, u[rows[3][k]], 1);
    }
    double hv[4] = {a0, a1, a2, a3}, lv[4] = {b0, b1, b2, b3}, out[4];
    for (int t = 0; t < lanes; ++t) {
        for (int q = k; q < count[t]; ++q)
            if (data[t][q] != 0.0) accumulate_with(&hv[t], &lv[t], data[t][q], u[rows[t][q]], 1);
        out[t] = hv[t] + lv[t];
    }
    for (int t = 0; t < lanes; ++t) r[at[t]] = out[t];
}

/* pp_lcp_refined_inverse_row's residual (lcp_basis.c), r_j = delta_ij - a_{row_var[j]} . u
 * for every position j: w_k's unit column by TwoSum, z0's by sparse_dot, the z columns four
 * at a time (dots4). */
__attribute__((target("avx2,fma"))) static void
basis_dots_avx2_fma(const pp_lcp_sparse *s, const int *row_var, int i, const double *u,
                    double *r)
{
    const int n = s->n;
    int at[4], var[4], lanes = 0;
    for (int j = 0; j < n; ++j) {
        const int v = row_var[j];
        double hi = j == i ? 1.0 : 0.0, lo = 0.0;
        if (v < n) {
            two_sum(hi, -u[v], &hi, &lo);
            r[j] = hi + lo;
        } else if (v == 2 * n) {
            sparse_dot(s, v, u, &hi, &lo, 1);
            r[j] = hi + lo;
        } else {
            at[lanes] = j;
            var[lanes++] = v;
            if (lanes == 4) {
                dots4(s, at, var, 4, i, u, r);
                lanes = 0;
            }
        }
    }
    if (lanes > 0) dots4(s, at, var, lanes, i, u, r);
}
#endif

/* The residual of a row of B^-1 (pp_lcp_refined_inverse_row, lcp_basis.c): r_j = delta_ij -
 * a_{row_var[j]} . u for every position j, each sum as pp_lcp_sparse_dot forms it, when the
 * vector kernels run: 1; else 0 and nothing is done (the caller runs its loop). */
int pp_lcp_sparse_basis_dots(const pp_lcp_sparse *s, const int *row_var, int i, const double *u,
                             double *r)
{
#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
    if (vector_kernels && pp_lcp_cpu_fma() && pp_lcp_cpu_avx2()) {
        basis_dots_avx2_fma(s, row_var, i, u, r);
        return 1;
    }
#endif
    (void)s;
    (void)row_var;
    (void)i;
    (void)u;
    (void)r;
    return 0;
}

/* Factorise the basis row_var into the spare state; 1 on success (the spare state is then
 * made current by pp_lcp_sparse_swap). 0 when A is singular, memory ran out, or the LU's
 * estimated work is above the bound PP_LCP_FACTOR_WORK (lcp_internal.h; then
 * pp_lcp_sparse_work_exceeded is 1 from here on and the path ends). */
int pp_lcp_sparse_factor(pp_lcp_sparse *s, const int *row_var)
{
    const int n = s->n;
    factor_state *f = &s->state[1 - s->current];
    state_release(s, f);
    f->etas = 0;
    memcpy(f->var0, row_var, (size_t)n * sizeof *row_var);
    int m = 0;
    for (int k = 0; k < n; ++k) f->eq_rank[k] = 0;
    for (int k = 0; k <= n; ++k) f->dense_of_var[k] = -1;
    for (int i = 0; i < n; ++i) {
        int var = row_var[i];
        if (var < n) {
            f->eq_rank[var] = -1 - i;
        } else {
            f->dense_of_var[var - n] = m;
            f->dense[m++] = i;
        }
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
    if (!pp_lcp_grow((void **)&s->Ai, &s->a_cap, nnz, sizeof *s->Ai)) return 0;
    size_t cap = s->a_cap;
    s->a_cap = 0; /* Ax grows to the same capacity */
    if (!pp_lcp_grow((void **)&s->Ax, &s->a_cap, cap, sizeof *s->Ax)) return 0;
    cap = f->c_cap;
    if (!pp_lcp_grow((void **)&f->c_pos, &cap, nnz, sizeof *f->c_pos)) return 0;
    cap = f->c_cap;
    if (!pp_lcp_grow((void **)&f->c_data, &cap, nnz, sizeof *f->c_data)) return 0;
    f->c_cap = cap;
    if (!pp_lcp_grow((void **)&f->c_start, &f->c_start_cap, (size_t)m + 1, sizeof *f->c_start))
        return 0;
    size_t p = 0, pc = 0;
    for (int d = 0; d < m; ++d) {
        s->Ap[d] = (int)p;
        f->c_start[d] = (int)pc;
        int var = row_var[f->dense[d]], count;
        const double *data;
        const int *rows = column_pattern(s, var, &count, &data);
        for (int t = 0; t < count; ++t) {
            int k = rows ? rows[t] : t;
            int r = f->eq_rank[k];
            double e = entry(s, var, data[t], k);
            if (e == 0.0) continue;
            if (r < 0) {
                f->c_pos[pc] = -1 - r;
                f->c_data[pc++] = e;
                continue;
            }
            s->Ai[p] = r;
            s->Ax[p++] = -e;
        }
    }
    s->Ap[m] = (int)p;
    f->c_start[m] = (int)pc;
    /* the clock (lcp.c, "The hard clock"): a factorisation whose predicted time would cross
     * the solve's deadline does not start, and the path stops as at its deadline; its
     * charge m * nnz first, AMD's analysis (a pass over the block) only if that fits. A
     * charge above the work bound is the bound's (over_bound below: the path ends as at its
     * cap, and the solve's retries may run), whatever the clock. */
    pp_lcp_limits *l = &s->ws->limits;
    const double charge = (double)m * (double)p;
    if (charge <= factor_work && !pp_lcp_work_fits(charge, l->factor_deadline)) {
        l->hit = l->stopped = 1;
        return 0;
    }
    f->symbolic = klu_analyze(m, s->Ap, s->Ai, &s->common);
    if (!f->symbolic) return 0;
    if (over_bound(f->symbolic, m, (double)p)) { /* PP_LCP_FACTOR_WORK: not run at all */
        state_release(s, f);
        s->work_exceeded = 1;
        return 0;
    }
    if (!pp_lcp_work_fits(factor_charge(f->symbolic, m, (double)p), l->factor_deadline)) {
        state_release(s, f);
        l->hit = l->stopped = 1;
        return 0;
    }
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

/* v -= vr y over the entries i with y_i != 0, y dense (an eta's dense copy, y_r = 0), four
 * lanes at a time: a lane computes v_i - y_i vr as the eta file's loop over y's nonzeros does
 * (the product commutes exactly, ISO C compiles without contraction), and a lane whose y_i is
 * 0 keeps v_i by a mask, not by subtracting 0 (-0 - -0 would be +0, 0 Inf NaN), so v is the
 * same bits as from the sparse loop. */
static inline __attribute__((always_inline)) void eta_dense_apply(int n, double *restrict v,
                                                                  const double *restrict y,
                                                                  double vr)
{
    typedef long long v4i __attribute__((vector_size(4 * sizeof(long long))));
    const pp_lcp_v4 rv = {vr, vr, vr, vr}, zero = {0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const pp_lcp_v4 yi = PP_LCP_V4(y + i), vi = PP_LCP_V4(v + i);
        const pp_lcp_v4 updated = vi - yi * rv;
        const v4i keep = yi != zero; /* -1 where y_i != 0 (or NaN), as the scalar test */
        PP_LCP_V4(v + i) = (pp_lcp_v4)(((v4i)updated & keep) | ((v4i)vi & ~keep));
    }
    for (; i < n; ++i)
        if (y[i] != 0.0) v[i] -= y[i] * vr;
}

/* An eta with more than n / ETA_DENSE_SHARE nonzeros is applied by FTRAN through its dense
 * copy (eta_dense_apply, no index loads) where it has one. heap20's cold LCP (n = 678): the
 * entering columns are nearly dense, and the eta file's indexed loop was 29 % of a solve's
 * instructions. */
#define ETA_DENSE_SHARE 4

/* v = E_t ... E_1 v, the eta file of f (ftran's last stage); dense: through the etas' dense
 * copies where they pay (else every eta by its nonzeros, the scalar loop). */
static inline __attribute__((always_inline)) void apply_etas(const factor_state *f, int n,
                                                             double *v, const int dense)
{
    for (int e = 0; e < f->etas; ++e) {
        int r = f->eta_row[e];
        double vr = v[r] * f->eta_inverse_pivot[e];
        v[r] = vr;
        if (vr == 0.0) continue;
        const size_t begin = f->eta_start[e], end = f->eta_start[e + 1];
        if (dense && e < ETA_DENSE_MAX && (end - begin) * ETA_DENSE_SHARE > (size_t)n) {
            eta_dense_apply(n, v, f->eta_dense + (size_t)e * n, vr);
            continue;
        }
        for (size_t q = begin; q < end; ++q) v[f->eta_index[q]] -= f->eta_value[q] * vr;
    }
}

#ifdef PP_LCP_AVX2_DISPATCH
PP_LCP_AVX2_TARGET static void apply_etas_avx2(const factor_state *f, int n, double *v)
{
    apply_etas(f, n, v, 1);
}
#endif

#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
/* FTRAN's v_D = t and v_W -= C v_D (C = -data at the W equations: v_W += data t_d), column d
 * of C four entries at a time: v loaded lane by lane at the column's positions (distinct: one
 * a W equation), v_i + data t_d as the scalar loop (a product, then a sum: no FMA here),
 * stored back lane by lane. The columns run in order, so each v_i sums its terms in the
 * scalar loop's order: the same bits. */
__attribute__((target("avx2"))) static void ftran_columns_avx2(const factor_state *f,
                                                               const double *t, double *v)
{
    for (int d = 0; d < f->m; ++d) {
        const double td = t[d];
        v[f->dense[d]] = td;
        if (td == 0.0) continue;
        const __m256d tv = _mm256_set1_pd(td);
        int q = f->c_start[d];
        const int end = f->c_start[d + 1];
        for (; q + 4 <= end; q += 4) {
            const int *pos = f->c_pos + q;
            const __m256d old = _mm256_set_pd(v[pos[3]], v[pos[2]], v[pos[1]], v[pos[0]]);
            const __m256d sum =
                _mm256_add_pd(old, _mm256_mul_pd(_mm256_loadu_pd(f->c_data + q), tv));
            const __m128d s01 = _mm256_castpd256_pd128(sum), s23 = _mm256_extractf128_pd(sum, 1);
            _mm_storel_pd(v + pos[0], s01);
            _mm_storeh_pd(v + pos[1], s01);
            _mm_storel_pd(v + pos[2], s23);
            _mm_storeh_pd(v + pos[3], s23);
        }
        for (; q < end; ++q) v[f->c_pos[q]] += f->c_data[q] * td;
    }
}
#endif

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
#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
    if (vector_kernels && pp_lcp_cpu_avx2()) {
        ftran_columns_avx2(f, t, v);
        apply_etas_avx2(f, n, v);
        return;
    }
#endif
    for (int d = 0; d < m; ++d) {
        double td = t[d];
        v[f->dense[d]] = td;
        if (td == 0.0) continue;
        for (int q = f->c_start[d]; q < f->c_start[d + 1]; ++q) /* v_W -= C v_D */
            v[f->c_pos[q]] += f->c_data[q] * td;
    }
    apply_etas(f, n, v, vector_kernels);
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
    for (int d = 0; d < m; ++d) { /* t = c_D - C^T u_W (u_W: w at the W positions) */
        double sum = w[f->dense[d]];
        for (int q = f->c_start[d]; q < f->c_start[d + 1]; ++q) sum += f->c_data[q] * w[f->c_pos[q]];
        t[d] = sum;
    }
    klu_tsolve(f->symbolic, f->numeric, m, 1, t, &s->common);
    for (int r = 0; r < m; ++r) u[f->equation[r]] = t[r];
}

/* The relative residual of pp_lcp_residual (lcp.c) for LCP(M, q) at z, over M's nonzeros:
 * the same sums in the same order (a zero entry adds nothing to them). */
double pp_lcp_sparse_relative_residual(pp_lcp_sparse *s, const double *q, const double *z)
{
    const int n = s->n;
    double *w = s->t, *row = s->work, relative = 0.0;
    double z_norm = pp_lcp_inf_norm(n, z);
    for (int i = 0; i < n; ++i) {
        w[i] = q[i];
        row[i] = 0.0;
    }
    for (int j = 0; j < n; ++j) {
        const double zj = z[j];
        for (int p = s->col_start[j]; p < s->col_start[j + 1]; ++p) {
            int k = s->row_index[p];
            double e = k == j ? s->values[p] + s->shift : s->values[p];
            w[k] += e * zj;
            row[k] += fabs(e);
        }
    }
    for (int i = 0; i < n; ++i) {
        double si = fabs(q[i]) + row[i] * z_norm;
        double ri = fabs(fmin(z[i], w[i]));
        if (isnan(w[i]) || isnan(z[i])) ri = NAN;
        double rel = si > 0.0 ? ri / si : (ri > 0.0 ? INFINITY : ri);
        if (!(rel <= relative)) relative = rel;
    }
    return relative;
}

/* M by rows (row_start, col_index, row_values): columns of row k in increasing order.
 * 0 when out of memory. Built once per public solve (the workspace keeps it from
 * pp_lcp_pattern_begin to _end) and taken by the solve's later paths as it is: a transposition
 * of M's nonzeros, not interrupted by the clock, which each path of the crash demo's
 * 36 431-unknown PEG LCP had built again at its first lexicographic tie (1.0 - 1.1 s each, the
 * second past the solve's deadline). */
static int rows_of_m(pp_lcp_sparse *s)
{
    if (s->row_start) return 1;
    pp_lcp_workspace *ws = s->ws;
    if (ws->pattern_shared && ws->m_row_start) { /* built by an earlier path of this solve */
        s->row_start = ws->m_row_start;
        s->col_index = ws->m_col_index;
        s->row_values = ws->m_row_values;
        s->rows_shared = 1;
        return 1;
    }
    const int n = s->n;
    const size_t nnz = (size_t)s->col_start[n];
    s->row_start = calloc((size_t)n + 1, sizeof *s->row_start);
    s->col_index = malloc((nnz + 1) * sizeof *s->col_index);
    s->row_values = malloc((nnz + 1) * sizeof *s->row_values);
    if (!s->row_start || !s->col_index || !s->row_values) {
        free(s->row_start);
        free(s->col_index);
        free(s->row_values);
        s->row_start = s->col_index = NULL;
        s->row_values = NULL;
        return 0;
    }
    for (size_t p = 0; p < nnz; ++p) ++s->row_start[s->row_index[p] + 1];
    for (int k = 0; k < n; ++k) s->row_start[k + 1] += s->row_start[k];
    for (int j = 0; j < n; ++j)
        for (int p = s->col_start[j]; p < s->col_start[j + 1]; ++p) {
            const int at = s->row_start[s->row_index[p]]++;
            s->col_index[at] = j;
            s->row_values[at] = s->values[p];
        }
    for (int k = n; k > 0; --k) s->row_start[k] = s->row_start[k - 1];
    s->row_start[0] = 0;
    if (ws->pattern_shared) { /* the solve's later paths take them as they are */
        ws->m_row_start = s->row_start;
        ws->m_col_index = s->col_index;
        ws->m_row_values = s->row_values;
        s->rows_shared = 1;
    }
    return 1;
}

/* Row i of B^-1: e_i^T B^-1, BTRAN of a unit vector. Each E_s^T changes one entry (c_r),
 * so c = e_i E_t ... E_1 has at most t + 1 nonzeros: the etas run over them (with the dense
 * copies of y), and C^T u_W over the rows of M of the W equations among them (CSR). */
void pp_lcp_sparse_unit_row(pp_lcp_sparse *s, int i, double *row)
{
    const int n = s->n;
    factor_state *f = &s->state[s->current];
    if (f->etas > ETA_DENSE_MAX || !rows_of_m(s)) { /* refactorisations kept failing, or no
                                                     room for M by rows: the general BTRAN */
        s->unit[i] = 1.0;
        pp_lcp_sparse_btran(s, s->unit, row);
        s->unit[i] = 0.0;
        return;
    }
    double *w = s->unit, *t = s->t;
    int *list = s->list, count = 0;
    w[i] = 1.0;
    s->mark[i] = 1;
    list[count++] = i;
    for (int e = f->etas - 1; e >= 0; --e) {
        int r = f->eta_row[e];
        const double *y = f->eta_dense + (size_t)e * n; /* y_r = 0 there */
        double sum = w[r];
        for (int q = 0; q < count; ++q) sum -= w[list[q]] * y[list[q]];
        w[r] = sum * f->eta_inverse_pivot[e];
        if (!s->mark[r] && w[r] != 0.0) {
            s->mark[r] = 1;
            list[count++] = r;
        }
    }
    for (int k = 0; k < n; ++k) row[k] = 0.0;
    for (int q = 0; q < count; ++q)
        if (f->var0[list[q]] < n) row[f->var0[list[q]]] = w[list[q]];
    const int m = f->m;
    if (m > 0) {
        for (int d = 0; d < m; ++d) t[d] = w[f->dense[d]];
        const int z0_d = f->dense_of_var[n];
        for (int q = 0; q < count; ++q) { /* t += -C^T u_W: C = -data at the W equations */
            int k = f->var0[list[q]];
            double uk = w[list[q]];
            if (k >= n || uk == 0.0) continue;
            for (int p = s->row_start[k]; p < s->row_start[k + 1]; ++p) {
                int j = s->col_index[p], d = f->dense_of_var[j];
                if (d >= 0) t[d] += (s->row_values[p] + (j == k ? s->shift : 0.0)) * uk;
            }
            if (z0_d >= 0) t[z0_d] += s->d[k] * uk;
        }
        klu_tsolve(f->symbolic, f->numeric, m, 1, t, &s->common);
        for (int r = 0; r < m; ++r) row[f->equation[r]] = t[r];
    }
    for (int q = 0; q < count; ++q) {
        w[list[q]] = 0.0;
        s->mark[list[q]] = 0;
    }
}

/* Record the pivot on row r with entering column y (B^-1 <- E B^-1). 0: out of memory. */
int pp_lcp_sparse_pivot(pp_lcp_sparse *s, int r, const double *y)
{
    const int n = s->n;
    factor_state *f = &s->state[s->current];
    size_t cap = (size_t)f->eta_cap;
    if ((size_t)f->etas + 1 >= cap) {
        size_t c1 = cap, c2 = cap, c3 = cap;
        if (!pp_lcp_grow((void **)&f->eta_row, &c1, (size_t)f->etas + 2, sizeof *f->eta_row) ||
            !pp_lcp_grow((void **)&f->eta_inverse_pivot, &c2, (size_t)f->etas + 2,
                  sizeof *f->eta_inverse_pivot) ||
            !pp_lcp_grow((void **)&f->eta_start, &c3, (size_t)f->etas + 2, sizeof *f->eta_start))
            return 0;
        f->eta_cap = (int)c1;
    }
    if (f->etas == 0) f->eta_start[0] = 0;
    size_t start = f->eta_start[f->etas];
    size_t count = 0;
    for (int i = 0; i < n; ++i) count += i != r && y[i] != 0.0;
    size_t ecap = f->entry_cap;
    if (!pp_lcp_grow((void **)&f->eta_index, &ecap, start + count, sizeof *f->eta_index)) return 0;
    ecap = f->entry_cap;
    if (!pp_lcp_grow((void **)&f->eta_value, &ecap, start + count, sizeof *f->eta_value)) return 0;
    f->entry_cap = ecap;
    size_t p = start;
    for (int i = 0; i < n; ++i)
        if (i != r && y[i] != 0.0) {
            f->eta_index[p] = i;
            f->eta_value[p++] = y[i];
        }
    if (f->etas < ETA_DENSE_MAX) {
        if (!pp_lcp_grow((void **)&f->eta_dense, &f->dense_cap, ((size_t)f->etas + 1) * n,
                  sizeof *f->eta_dense))
            return 0;
        double *yd = f->eta_dense + (size_t)f->etas * n;
        memcpy(yd, y, (size_t)n * sizeof *yd);
        yd[r] = 0.0;
    }
    f->eta_row[f->etas] = r;
    f->eta_inverse_pivot[f->etas] = 1.0 / y[r];
    f->eta_start[++f->etas] = p;
    return 1;
}

/* Room for `count` rows of n (the ratio test's tied rows); NULL when out of memory. */
double *pp_lcp_sparse_rows(pp_lcp_sparse *s, int count)
{

    if (!pp_lcp_grow((void **)&s->rows, &s->rows_cap, (size_t)count * s->n, sizeof *s->rows))
        return NULL;
    return s->rows;
}

/* ---- Basis solves (warm start and polish) of large LCPs ---------------------------------
 *
 * (M + shift I)_BB z_B = -q_B for the basic set index[0..nb-1] (increasing) by KLU on the
 * sparse M_BB, refined with compensated residuals over its nonzeros (the same iteration as
 * the dense pp_lcp_solve_basis). M_BB is gathered by columns (Ap, Ai, Ax: rows increasing)
 * from the dense M or from M by columns, the same entries in the same order either way.
 * Returns 0 when M_BB is exactly singular, memory runs out, or the solve is not finite, and
 * without factorising when the LU's estimated work (lu_work) is above the bound every large
 * basis is held to (PP_LCP_FACTOR_WORK), or when its predicted time would end past
 * `deadline` (pp_lcp_work_fits; INFINITY: none). zb, r, hi, lo: nb each. Frees Ap, Ai, Ax. */
static int solve_gathered(int nb, int *Ap, int *Ai, double *Ax, int ok, const double *q,
                          const int *index, double deadline, double *zb, double *r, double *hi,
                          double *lo)
{
    klu_common common;
    klu_symbolic *symbolic = NULL;
    klu_numeric *numeric = NULL;
    if (ok && !pp_lcp_work_fits((double)nb * (double)Ap[nb], deadline)) ok = 0;
    if (ok) {
        klu_defaults(&common);
        common.tol = 1.0;
        symbolic = klu_analyze(nb, Ap, Ai, &common);
        if (symbolic && (over_bound(symbolic, nb, (double)Ap[nb]) ||
                         !pp_lcp_work_fits(factor_charge(symbolic, nb, (double)Ap[nb]),
                                           deadline)))
            ok = 0;
        numeric = ok && symbolic ? klu_factor(Ap, Ai, Ax, symbolic, &common) : NULL;
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

int pp_lcp_sparse_solve_basis(int n, const double *M, double shift, const double *q,
                              const int *index, int nb, double deadline, double *zb, double *r,
                              double *hi, double *lo)
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
            double v = a == b ? col[index[a]] + shift : col[index[a]];
            if (v == 0.0) continue;
            ok = pp_lcp_grow((void **)&Ai, &cap, p + 1, sizeof *Ai) &&
                 pp_lcp_grow((void **)&Ax, &cap_x, p + 1, sizeof *Ax);
            if (!ok) break;
            Ai[p] = a;
            Ax[p++] = v;
        }
    }
    if (ok) Ap[nb] = (int)p;
    return solve_gathered(nb, Ap, Ai, Ax, ok, q, index, deadline, zb, r, hi, lo);
}

/* pp_lcp_solve_basis (lcp_basis.c) for M by columns: z from the complementary basis,
 * (M + shift I)_BB z_B = -q_B, z_N = 0; M_BB is gathered through the basic columns' nonzeros
 * (ws->pivots maps a row to its place in B). No solve (0) when the LU's estimated work is
 * above PP_LCP_FACTOR_WORK's bound, or its predicted time crosses the running solve's
 * factor_deadline (solve_gathered). */
int pp_lcp_csc_solve_basis(pp_lcp_workspace *ws, const pp_lcp_csc *A, const double *q,
                           const unsigned char *basis, double *z)
{
    const int n = A->n;
    int nb = 0, *place = ws->pivots;
    for (int i = 0; i < n; ++i) {
        place[i] = basis[i] ? nb : -1;
        if (basis[i]) ws->index[nb++] = i;
    }
    for (int i = 0; i < n; ++i) z[i] = 0.0;
    if (nb == 0) return 1;
    size_t nnz = 0;
    for (int b = 0; b < nb; ++b)
        nnz += (size_t)(A->col_start[ws->index[b] + 1] - A->col_start[ws->index[b]]);
    int *Ap = malloc(((size_t)nb + 1) * sizeof *Ap);
    int *Ai = malloc((nnz + 1) * sizeof *Ai);
    double *Ax = malloc((nnz + 1) * sizeof *Ax);
    int ok = Ap && Ai && Ax;
    size_t p = 0;
    for (int b = 0; ok && b < nb; ++b) {
        const int j = ws->index[b];
        Ap[b] = (int)p;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int a = place[A->row_index[t]];
            if (a < 0) continue;
            double v = a == b ? A->values[t] + ws->shift : A->values[t];
            if (v == 0.0) continue;
            Ai[p] = a;
            Ax[p++] = v;
        }
    }
    if (ok) Ap[nb] = (int)p;
    double *zb = ws->rhs;
    if (!solve_gathered(nb, Ap, Ai, Ax, ok, q, ws->index, ws->limits.factor_deadline, zb,
                        ws->residual, ws->sum_hi, ws->sum_lo))
        return 0;
    for (int b = 0; b < nb; ++b) z[ws->index[b]] = zb[b];
    return 1;
}

/* ---- One sparse LU outside a Lemke path (load sharing, lcp_load_sharing.c) -------------
 *
 * KLU (BTF, AMD, partial pivoting: tol = 1, as solve_gathered) of one m x m matrix by
 * columns, kept for repeated solves. Held to the work bound of every large basis
 * (PP_LCP_FACTOR_WORK, lu_work): above it nothing is factorised and *refused is set. */
struct pp_lcp_lu {
    int m;
    klu_common common;
    klu_symbolic *symbolic;
    klu_numeric *numeric;
};

pp_lcp_lu *pp_lcp_lu_sparse_factor(int m, const int *Ap, const int *Ai, const double *Ax,
                                   int *refused)
{
    *refused = 0;
    pp_lcp_lu *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->m = m;
    klu_defaults(&f->common);
    f->common.tol = 1.0;
    f->symbolic = klu_analyze(m, (int *)Ap, (int *)Ai, &f->common);
    if (f->symbolic && over_bound(f->symbolic, m, (double)Ap[m])) *refused = 1;
    else if (f->symbolic)
        f->numeric = klu_factor((int *)Ap, (int *)Ai, (double *)Ax, f->symbolic, &f->common);
    if (!f->numeric || f->common.status != KLU_OK) {
        pp_lcp_lu_sparse_free(f);
        return NULL;
    }
    return f;
}

/* The entries of the factors L and U (KLU's count, off-diagonal blocks included): the
 * multiply-adds of one solve. */
double pp_lcp_lu_sparse_entries(const pp_lcp_lu *f)
{
    return (double)f->numeric->lnz + (double)f->numeric->unz + (double)f->numeric->nzoff;
}

void pp_lcp_lu_sparse_solve(pp_lcp_lu *f, double *b)
{
    klu_solve(f->symbolic, f->numeric, f->m, 1, b, &f->common);
}

void pp_lcp_lu_sparse_free(pp_lcp_lu *f)
{
    if (!f) return;
    if (f->numeric) klu_free_numeric(&f->numeric, &f->common);
    if (f->symbolic) klu_free_symbolic(&f->symbolic, &f->common);
    free(f);
}
