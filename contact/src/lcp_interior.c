/*
 * A primal-dual interior-point solve of a monotone LCP (the sticking solve's (2) + eps D,
 * lcp_sticking.c; docs/performance.md "An interior-point solve of the sticking LCP").
 *
 * The problem: x >= 0, v = M x + q >= 0, x^T v = 0, with M positive semidefinite
 * (x^T M x >= 0 for all x; M need not be symmetric: Q's skew part [[0, -C^T], [C, 0]]).
 * The iterates stay inside (x, v > 0) and follow the central path x_i v_i = mu, mu -> 0
 * (Kojima, Megiddo, Noma, Yoshise, "A unified approach to interior point algorithms for
 * linear complementarity problems", 1991; Wright, "Primal-Dual Interior-Point Methods",
 * 1997, ch. 8), from an infeasible start (v = M x + q only in the limit). The Newton step of
 *     M x - v + q = 0,   X V e = sigma mu e
 * at (x, v), with r = M x + q - v and a target t for the products, is
 *     M dx - dv = -r,   V dx + X dv = t - X V e,                                         (1)
 * and with dv from the second row, dv = X^-1 (t - X V e - V dx):
 *     (M + X^-1 V) dx = -r + X^-1 (t - X V e).                                           (2)
 * Scaled by S = (X V^-1)^(1/2) (dx = S y):
 *     (S M S + I) y = S (-r + X^-1 (t - X V e)),                                          (3)
 * whose symmetric part S (M + M^T)/2 S + I is >= I for any PSD M: the matrix is nonsingular
 * at every iterate and elimination needs no row exchanges to be stable (its pivots are
 * >= 1), however far apart the scales x_i / v_i are near the end (~1/mu on the basic
 * unknowns, ~mu on the others). (3) has M's pattern, the same at every iterate: KLU's
 * symbolic analysis runs once per solve, the first iterate's LU chooses the pivot order
 * (klu_factor) and every later one keeps it (klu_refactor), chosen anew only when the
 * refactorisation's pivots grow (klu_rgrowth below INTERIOR_RGROWTH). dv is then taken
 * from the first row of (1), dv = M dx + r, so that the residual r falls by the step's
 * factor exactly.
 *
 * Mehrotra's predictor-corrector (Wright ch. 10): the affine direction (t = 0) gives the
 * step alpha_aff to the boundary and mu_aff = (x + alpha dx)^T (v + alpha dv) / n; the
 * centring sigma = (mu_aff / mu)^3, and the direction solved again with the same LU for
 * t = sigma mu e - dX_aff dV_aff e (the second-order term). One step length for x and v
 * (they are coupled by v = M x + q), INTERIOR_STEP of the way to the boundary.
 *
 * Convergence: the gap x^T v / n below tol ||x||_inf ||q||_inf and ||r||_inf below
 * INTERIOR_FEASIBLE ||q||_inf (the level of rounding: r is 1e-16 ... 2e-14 of ||q|| at the
 * end on the heaps' LCPs). For a monotone LCP with a solution the iterates converge to a maximally
 * complementary solution (the analytic centre of the solution set's relative interior):
 * x_i stays away from 0 on every unknown that is positive in some solution, v_i on every
 * row that is positive in some solution, so the partition x_i > v_i (both scaled) names a
 * basis of the solution set's relative interior (lcp_sticking.c takes it to its limit).
 * Where M is not monotone (a contact in ST's own form) none of this is guaranteed: (3) may
 * be singular or the iterates stall (PP_INTERIOR_STALLED / _FAILED, measured).
 *
 * Not monotone (ip->first_order). ST's lambda row holds mu p and no diagonal, so on a sliding
 * contact with lambda basic the symmetric part of (3) stops being definite once
 * s_lambda mu / 2 > sqrt(A_pp + 1/s_p^2); the affine directions are then huge near the end,
 * and the second-order term -dX_aff dV_aff e, their product, throws the gap back up by
 * 10^2 - 10^3 every few iterations (the crash demo's impact island: docs/performance.md
 * "The interior-point solve on the crash impact's own LCPs"). Without it (t = sigma mu e,
 * sigma from the predictor as above) the iterates creep along instead and reach an answer
 * the acceptance takes there; on a monotone problem Mehrotra's term is kept (fewer
 * iterations).
 *
 * The augmented (body-space) form. A contact island's M is M = L + G^T W G (the caller's
 * description, pp_interior_bodies): G the contact Jacobian columns, W = blockdiag(W_d) the
 * dynamic bodies' inverse mass and inertia, L the rest (eps D, the cone rows and the lambda
 * columns), nonzero only inside each contact's group of unknowns. G^T W G is dense over the
 * unknowns of each body (a settled heap: ~90 entries a column, n nnz(M) beyond the work bound
 * at heap100), G is not (6 entries a column per body). With W_d = R_d R_d^T (pivoted Cholesky,
 * LAPACK dpstrf: R_d has the rank of W_d columns) and B = R^T G (m = sum of the ranks rows),
 * M = L + B^T B, and (3) is the first block of
 *     [ S L S + I   S B^T ] [ y ]   [ S (...) ]
 *     [ B S         -I    ] [ u ] = [ 0       ],                                         (4)
 * whose Schur complement on the first block, S L S + I + S B^T B S, is the matrix of (3)
 * (the second row gives u = B S y). (4) has nnz(L) + 2 nnz(B) + m entries; eliminating a
 * contact's unknowns first (they touch only their group and their two bodies' rows) leaves
 * the bodies' m x m block, sparse over the contact graph. Its symmetric part is not
 * definite, but diag(I, -I) (4) has the symmetric part of (3)'s first block and I: >= I on a
 * monotone L, so (4) is nonsingular wherever (3) is, and any symmetric order has pivots of
 * modulus >= 1; KLU analyses its pattern once per solve and refactorises it as (3)'s (the
 * pivots chosen anew below INTERIOR_AUGMENTED_RGROWTH, unscaled: INTERIOR_AUGMENTED_SCALE).
 * The description is checked entry by entry before it is used: L is taken as M - B^T B on
 * M's pattern inside the groups, and M - B^T B between groups (also where M stores nothing)
 * must be rounding, |.| <= INTERIOR_DESCRIPTION sqrt((B^T B)_ii (B^T B)_jj); otherwise the
 * description is refused and (3) is solved on M's pattern. Only the direction differs: r and
 * the convergence test use M itself; dv = M dx + r is taken on the description,
 * (L + B^T B) dx + r (nnz(L) + 2 nnz(B) products against nnz(M): 45 k against 152 k on
 * heap50), equal to rounding where the description holds (each step's r then falls by its
 * factor to rounding of ||B^T B dx||, below INTERIOR_FEASIBLE). Each solve of (4) is refined
 * (INTERIOR_REFINE steps) against (3) with the residual S (L + B^T B) S y + y - rhs, formed
 * unfactorised at nnz(L) + 2 nnz(B) products: the body block's elimination (entries up to
 * s_i s_j |B|^2, s ~ mu^-1/2 on the basic unknowns near the end) loses the directions'
 * accuracy where (3)'s LU did not.
 */
#include "lcp_interior.h"

#include <klu.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fraction of the way to the boundary each step takes. */
#define INTERIOR_STEP 0.995
/* The infeasibility ||M x + q - v||_inf / ||q||_inf of a converged iterate. */
#define INTERIOR_FEASIBLE 1e-12
/* Step lengths below this are no progress. */
#define INTERIOR_ALPHA_MIN 1e-10
/* KLU's reciprocal pivot growth of a refactorisation below which the pivots are chosen
 * anew (klu_factor). Measured on heap50's first LCP (n = 1 962, round 1): at 1e-8 95
 * iterations (1 factorisation, 738 ms; the kept pivots lose the directions' accuracy and the
 * iterates slow down), at 1e-5 46 (2 factorisations, 352 ms), pivots chosen anew every
 * iteration 46 (680 ms); heap20's first LCP 31 iterations with 1 factorisation at all three. */
#define INTERIOR_RGROWTH 1e-5
/* The largest |M - B^T B|_ij between groups of a description that holds, relative to
 * sqrt((B^T B)_ii (B^T B)_jj): rounding of the 6-term products, measured 4.4e-16 - 5.5e-16
 * on heap50's and heap100's islands. */
#define INTERIOR_DESCRIPTION 1e-12
/* Steps of iterative refinement of each solve of (4) against (3). Without them the directions
 * lose accuracy near the end (heap50's first LCPs: 80 iterations, stalled at a gap of 2e-17,
 * where (3) on M's pattern converges in 46-70); with 2 the same iterations as (3). */
#define INTERIOR_REFINE 2
/* KLU's partial-pivoting threshold for (4) (its default 1e-3 for (3)): the diagonal pivot is
 * kept unless it is below this fraction of its column's largest entry. (4)'s pivots are
 * >= 1 in modulus in any symmetric order on a monotone L (the header), but its columns hold
 * s_j B entries ~ mu^-1/2: at 1e-3 heap100's first factorisation took 585 - 807 pivots off
 * the diagonal, KLU's fill 424 000 - 587 000 against AMD's 137 000, 19 - 29 ms an iteration
 * against 4.4 ms for the later rounds; at 1e-6 233 off the diagonal, fill 143 000, 5.5 ms,
 * the same 42 iterations; heap50's 12 steps the same iterations (2.5 -> 2.1 ms). */
#define INTERIOR_AUGMENTED_PIVOT 1e-6
/* KLU's row scaling of (4): none (-1: nor KLU's O(nnz) check of the pattern at every
 * refactorisation). (4)'s rows hold entries of the same scales as its columns (s_i s_j L,
 * s_j B, -1) and its diagonal pivots are >= 1 unscaled; KLU's default (2, by the rows'
 * largest entries) cost klu_scale 7.6 % and klu_rgrowth's divisions a further share of a
 * heap50 run (12 steps, perf): without it the same iterations on every solve (one to three
 * more pivot choices a solve), ~100 -> ~70 ms a solve. */
#define INTERIOR_AUGMENTED_SCALE (-1)
/* INTERIOR_RGROWTH for (4): each solve of (4) is refined against (3) (INTERIOR_REFINE), so
 * the kept pivots' growth costs no accuracy of the directions until far later. heap50's 12
 * steps (26 interior solves, the warm start), the threshold against the iterations, the
 * klu_factor calls and the interior solves' CPU (the least of 3 runs, load ~2.7): 1e-5
 * 1 101, 348, 1.76 s; 1e-6 1 101, 196, 1.59 s; 1e-7 1 106, 108, 1.53 s; 1e-8 1 109, 56,
 * 1.43 s; 1e-10 1 101, 30, 1.40 s. */
#define INTERIOR_AUGMENTED_RGROWTH 1e-8

/* The warm start (ip->start): the least x_i and v_i of the start, relative to ||x||_inf and
 * ||q||_inf. Measured on heap50's 12 steps (the last answer of the island of the same size,
 * standard model): 1e-2 left iterates that stalled and a step answered by the fallback,
 * 1e-4 one stalled solve (Lemke 623 pivots), 1e-3 none (1 625 -> 1 078 iterations). */
#define INTERIOR_WARM_SHIFT 1e-3

struct pp_interior_lu {
    klu_common common;
    klu_symbolic *symbolic;
    klu_numeric *numeric;
};

/* The augmented matrix (4) by columns and its parts: L on M's pattern inside the groups,
 * B = R^T G by columns and by rows, the scratch of the check. */
struct pp_interior_augmented {
    int n, m;                      /* unknowns, rows of B */
    int *Lp, *Li;                  /* n + 1, nnz(L) */
    double *Lx;
    size_t l_capacity;
    int *Bp, *Bi;                  /* n + 1, nnz(B) */
    double *Bx;
    size_t b_capacity;
    int *Tp, *Ti;                  /* m + 1, nnz(B): B by rows (the columns j of row r) */
    double *Tx;
    int *offset, *rank;            /* bodies: B's first row of body d, its rows */
    double *R;                     /* 36 bodies: R_d column-major (W_d = R_d R_d^T) */
    int *Kp, *Ki;                  /* n + m + 1, nnz(K): (4) */
    double *Kx;
    size_t k_capacity;
    double *acc, *norm, *rhs;      /* n, n, n + m: (B^T B)_ij of one column, (B^T B)_ii */
    double *f, *y;                 /* n: (3)'s right-hand side and solution, refined */
    double *Bu;                    /* m: B u */
    int *stamp, *list;             /* n: the rows of that column */
    int n_capacity, m_capacity, order_capacity, body_capacity;
};

static void free_factors(struct pp_interior_lu *lu)
{
    if (lu->numeric) klu_free_numeric(&lu->numeric, &lu->common);
    if (lu->symbolic) klu_free_symbolic(&lu->symbolic, &lu->common);
}

void pp_interior_free(pp_interior *ip)
{
    double **d[] = {&ip->r, &ip->dx, &ip->dv, &ip->dx_aff, &ip->dv_aff, &ip->scale, &ip->rhs,
                    &ip->Kx};
    for (size_t t = 0; t < sizeof d / sizeof *d; ++t) free(*d[t]);
    if (ip->lu) free_factors(ip->lu);
    free(ip->lu);
    pp_interior_bodies *bd = &ip->bodies;
    free(bd->group);
    free(bd->col_start);
    free(bd->row_index);
    free(bd->values);
    free(bd->W);
    struct pp_interior_augmented *a = ip->aug;
    if (a) {
        void *p[] = {a->Lp, a->Li, a->Lx, a->Bp, a->Bi, a->Bx, a->Tp, a->Ti, a->Tx, a->offset,
                     a->rank, a->R, a->Kp, a->Ki, a->Kx, a->acc, a->rhs, a->stamp, a->list,
                     a->norm, a->f, a->y, a->Bu};
        for (size_t t = 0; t < sizeof p / sizeof *p; ++t) free(p[t]);
        free(a);
    }
    memset(ip, 0, sizeof *ip);
}

pp_status pp_interior_bodies_reserve(pp_interior *ip, int n, int bodies, size_t entries)
{
    pp_interior_bodies *bd = &ip->bodies;
    bd->n = 0;
    if (n > bd->capacity) {
        int *g = realloc(bd->group, (size_t)n * sizeof *g);
        if (g) bd->group = g;
        int *c = realloc(bd->col_start, ((size_t)n + 1) * sizeof *c);
        if (c) bd->col_start = c;
        if (!g || !c) return PP_ERR_NO_MEMORY;
        bd->capacity = n;
    }
    if (bodies > bd->body_capacity) {
        double *w = realloc(bd->W, (size_t)bodies * 36 * sizeof *w);
        if (!w) return PP_ERR_NO_MEMORY;
        bd->W = w;
        bd->body_capacity = bodies;
    }
    size_t cap_i = bd->entry_capacity, cap_x = bd->entry_capacity;
    if (!pp_lcp_grow((void **)&bd->row_index, &cap_i, entries, sizeof(int)) ||
        !pp_lcp_grow((void **)&bd->values, &cap_x, entries, sizeof(double)))
        return PP_ERR_NO_MEMORY;
    bd->entry_capacity = cap_i < cap_x ? cap_i : cap_x;
    bd->n = n;
    bd->bodies = bodies;
    return PP_OK;
}

static int reserve(pp_interior *ip, int n, size_t nnz)
{
    if (n > ip->capacity) {
        double **d[] = {&ip->r, &ip->dx, &ip->dv, &ip->dx_aff, &ip->dv_aff, &ip->scale,
                        &ip->rhs};
        for (size_t t = 0; t < sizeof d / sizeof *d; ++t) {
            double *p = realloc(*d[t], (size_t)n * sizeof **d[t]);
            if (!p) return 0;
            *d[t] = p;
        }
        ip->capacity = n;
    }
    if (!ip->lu && !(ip->lu = calloc(1, sizeof *ip->lu))) return 0;
    return pp_lcp_grow((void **)&ip->Kx, &ip->k_capacity, nnz, sizeof(double));
}

/* Grows one array of `size`-byte elements from `have` to `need` elements: 1, or 0. */
static int grow_to(void **p, int need, int have, size_t size)
{
    if (need <= have) return 1;
    void *q = realloc(*p, (size_t)need * size);
    if (!q) return 0;
    *p = q;
    return 1;
}

/* Room in ip->aug for n unknowns, `bodies` bodies (m <= 6 bodies rows), nnz(L) <= l_need,
 * nnz(B) <= b_need: 1, or 0 out of memory. */
static int augmented_reserve(pp_interior *ip, int n, int bodies, size_t l_need, size_t b_need)
{
    if (!ip->aug && !(ip->aug = calloc(1, sizeof *ip->aug))) return 0;
    struct pp_interior_augmented *a = ip->aug;
    const int m = 6 * bodies;
    if (!grow_to((void **)&a->Lp, n + 1, a->n_capacity + 1, sizeof(int)) ||
        !grow_to((void **)&a->Bp, n + 1, a->n_capacity + 1, sizeof(int)) ||
        !grow_to((void **)&a->acc, n, a->n_capacity, sizeof(double)) ||
        !grow_to((void **)&a->norm, n, a->n_capacity, sizeof(double)) ||
        !grow_to((void **)&a->stamp, n, a->n_capacity, sizeof(int)) ||
        !grow_to((void **)&a->list, n, a->n_capacity, sizeof(int)) ||
        !grow_to((void **)&a->f, n, a->n_capacity, sizeof(double)) ||
        !grow_to((void **)&a->y, n, a->n_capacity, sizeof(double)))
        return 0;
    if (n > a->n_capacity) a->n_capacity = n;
    if (!grow_to((void **)&a->Tp, m + 1, a->m_capacity + 1, sizeof(int)) ||
        !grow_to((void **)&a->Bu, m, a->m_capacity, sizeof(double)))
        return 0;
    if (m > a->m_capacity) a->m_capacity = m;
    if (!grow_to((void **)&a->Kp, n + m + 1, a->order_capacity + 1, sizeof(int)) ||
        !grow_to((void **)&a->rhs, n + m, a->order_capacity, sizeof(double)))
        return 0;
    if (n + m > a->order_capacity) a->order_capacity = n + m;
    if (!grow_to((void **)&a->offset, bodies, a->body_capacity, sizeof(int)) ||
        !grow_to((void **)&a->rank, bodies, a->body_capacity, sizeof(int)) ||
        !grow_to((void **)&a->R, 36 * bodies, 36 * a->body_capacity, sizeof(double)))
        return 0;
    if (bodies > a->body_capacity) a->body_capacity = bodies;
    size_t li = a->l_capacity, lx = a->l_capacity, bi = a->b_capacity, bx = a->b_capacity,
           ti = a->b_capacity, tx = a->b_capacity;
    if (!pp_lcp_grow((void **)&a->Li, &li, l_need, sizeof(int)) ||
        !pp_lcp_grow((void **)&a->Lx, &lx, l_need, sizeof(double)) ||
        !pp_lcp_grow((void **)&a->Bi, &bi, b_need, sizeof(int)) ||
        !pp_lcp_grow((void **)&a->Bx, &bx, b_need, sizeof(double)) ||
        !pp_lcp_grow((void **)&a->Ti, &ti, b_need, sizeof(int)) ||
        !pp_lcp_grow((void **)&a->Tx, &tx, b_need, sizeof(double)))
        return 0;
    a->l_capacity = li < lx ? li : lx;
    const size_t b_cap = bi < bx ? bi : bx, t_cap = ti < tx ? ti : tx;
    a->b_capacity = b_cap < t_cap ? b_cap : t_cap;
    const size_t k_need = l_need + 2 * b_need + (size_t)m;
    size_t ki = a->k_capacity, kx = a->k_capacity;
    if (!pp_lcp_grow((void **)&a->Ki, &ki, k_need, sizeof(int)) ||
        !pp_lcp_grow((void **)&a->Kx, &kx, k_need, sizeof(double)))
        return 0;
    a->k_capacity = ki < kx ? ki : kx;
    return 1;
}

/* The caller's description of M (ip->bodies) checked and (4)'s pattern built: 1 where it
 * holds, 0 where there is none, it does not describe M (ip->description_error above
 * INTERIOR_DESCRIPTION), or out of memory. */
static int describe(pp_interior *ip, const pp_lcp_csc *M)
{
    const pp_interior_bodies *bd = &ip->bodies;
    const int n = M->n, bodies = bd->bodies;
    ip->description_error = INFINITY;
    if (bd->n != n || n < 1 || bodies < 0) return 0;
    /* B = R^T G has rank(W_d) <= 6 entries for each (column, body) run of G's rows */
    size_t runs = 0;
    for (int j = 0; j < n; ++j)
        for (int t = bd->col_start[j]; t < bd->col_start[j + 1]; ++t) {
            const int d = bd->row_index[t] / 6;
            if (d < 0 || d >= bodies) return 0;
            if (t > bd->col_start[j] && bd->row_index[t] <= bd->row_index[t - 1]) return 0;
            runs += t == bd->col_start[j] || d != bd->row_index[t - 1] / 6;
        }
    if (!augmented_reserve(ip, n, bodies, (size_t)M->col_start[n], 6 * runs)) return 0;
    struct pp_interior_augmented *a = ip->aug;
    /* W_d = R_d R_d^T: P^T W_d P = C C^T (dpstrf, C lower, rank r), R_d = P C, 6 x r */
    int m = 0;
    for (int d = 0; d < bodies; ++d) {
        double c[36], *R = a->R + 36 * (size_t)d;
        lapack_int piv[6], rank = 0;
        memcpy(c, bd->W + 36 * (size_t)d, sizeof c);
        if (LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', 6, c, 6, piv, &rank, -1.0,
                                (double[12]){0}) < 0)
            return 0;
        for (int e = 0; e < 36; ++e) R[e] = 0.0;
        for (int k = 0; k < rank; ++k)
            for (int i = k; i < 6; ++i) R[(piv[i] - 1) + 6 * k] = c[i + 6 * k];
        a->offset[d] = m;
        a->rank[d] = (int)rank;
        m += (int)rank;
    }
    a->n = n;
    a->m = m;
    /* B by columns: each run of body d's rows of G column j, g, gives R_d^T g */
    size_t p = 0;
    for (int j = 0; j < n; ++j) {
        a->Bp[j] = (int)p;
        for (int t = bd->col_start[j]; t < bd->col_start[j + 1];) {
            const int d = bd->row_index[t] / 6;
            double g[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            for (; t < bd->col_start[j + 1] && bd->row_index[t] / 6 == d; ++t)
                g[bd->row_index[t] % 6] = bd->values[t];
            const double *R = a->R + 36 * (size_t)d;
            for (int k = 0; k < a->rank[d]; ++k) {
                double b = 0.0;
                for (int e = 0; e < 6; ++e) b += R[e + 6 * k] * g[e];
                a->Bi[p] = a->offset[d] + k;
                a->Bx[p++] = b;
            }
        }
    }
    a->Bp[n] = (int)p;
    /* B by rows (columns increasing in each row), and (B^T B)_ii */
    for (int r = 0; r <= m; ++r) a->Tp[r] = 0;
    for (size_t t = 0; t < p; ++t) ++a->Tp[a->Bi[t] + 1];
    for (int r = 0; r < m; ++r) a->Tp[r + 1] += a->Tp[r];
    for (int j = 0; j < n; ++j) {
        a->norm[j] = 0.0;
        for (int t = a->Bp[j]; t < a->Bp[j + 1]; ++t) {
            const int at = a->Tp[a->Bi[t]]++;
            a->Ti[at] = j;
            a->Tx[at] = a->Bx[t];
            a->norm[j] += a->Bx[t] * a->Bx[t];
        }
    }
    for (int r = m; r > 0; --r) a->Tp[r] = a->Tp[r - 1];
    a->Tp[0] = 0;
    /* L = M - B^T B on M's pattern inside the groups; between them (and wherever M stores
     * nothing) M - B^T B must be rounding */
    double error = 0.0;
    size_t l = 0;
    for (int i = 0; i < n; ++i) a->stamp[i] = -1;
    for (int j = 0; j < n; ++j) {
        int listed = 0;
        for (int t = a->Bp[j]; t < a->Bp[j + 1]; ++t) {
            const int r = a->Bi[t];
            for (int u = a->Tp[r]; u < a->Tp[r + 1]; ++u) {
                const int i = a->Ti[u];
                if (a->stamp[i] != j) {
                    a->stamp[i] = j;
                    a->acc[i] = 0.0;
                    a->list[listed++] = i;
                }
                a->acc[i] += a->Tx[u] * a->Bx[t];
            }
        }
        a->Lp[j] = (int)l;
        for (int t = M->col_start[j]; t < M->col_start[j + 1]; ++t) {
            const int i = M->row_index[t];
            double difference = M->values[t];
            if (a->stamp[i] == j) {
                difference -= a->acc[i];
                a->acc[i] = 0.0; /* taken */
            }
            if (bd->group[i] == bd->group[j]) {
                a->Li[l] = i;
                a->Lx[l++] = difference;
            } else if (difference != 0.0) {
                const double size = sqrt(a->norm[i] * a->norm[j]);
                error = fmax(error, size > 0.0 ? fabs(difference) / size : INFINITY);
            }
        }
        for (int e = 0; e < listed; ++e) {
            const int i = a->list[e];
            if (a->acc[i] == 0.0) continue;
            const double size = sqrt(a->norm[i] * a->norm[j]);
            error = fmax(error, size > 0.0 ? fabs(a->acc[i]) / size : INFINITY);
        }
    }
    a->Lp[n] = (int)l;
    ip->description_error = error;
    if (!(error <= INTERIOR_DESCRIPTION)) {
        pp_log(PP_LOG_WARNING, "interior-point solve: the bodies' description does not "
                               "reproduce M (%.3g): its Newton systems on M's pattern", error);
        return 0;
    }
    /* (4) by columns, rows increasing: column j < n holds L's column j, then B's (rows
     * n + r); column n + r holds B's row r (rows j), then -1 */
    p = 0;
    for (int j = 0; j < n; ++j) {
        a->Kp[j] = (int)p;
        for (int t = a->Lp[j]; t < a->Lp[j + 1]; ++t) a->Ki[p++] = a->Li[t];
        for (int t = a->Bp[j]; t < a->Bp[j + 1]; ++t) a->Ki[p++] = n + a->Bi[t];
    }
    for (int r = 0; r < m; ++r) {
        a->Kp[n + r] = (int)p;
        for (int u = a->Tp[r]; u < a->Tp[r + 1]; ++u) a->Ki[p++] = a->Ti[u];
        a->Ki[p++] = n + r;
    }
    a->Kp[n + m] = (int)p;
    return 1;
}

/* out = (L + B^T B) u, M as described (to rounding), at nnz(L) + 2 nnz(B) products */
static void described_multiply(const struct pp_interior_augmented *a, const double *u,
                               double *out)
{
    for (int r = 0; r < a->m; ++r) a->Bu[r] = 0.0;
    for (int j = 0; j < a->n; ++j) {
        for (int t = a->Bp[j]; t < a->Bp[j + 1]; ++t) a->Bu[a->Bi[t]] += a->Bx[t] * u[j];
    }
    for (int i = 0; i < a->n; ++i) out[i] = 0.0;
    for (int j = 0; j < a->n; ++j) {
        const double uj = u[j];
        for (int t = a->Lp[j]; t < a->Lp[j + 1]; ++t) out[a->Li[t]] += a->Lx[t] * uj;
        double o = 0.0;
        for (int t = a->Bp[j]; t < a->Bp[j + 1]; ++t) o += a->Bx[t] * a->Bu[a->Bi[t]];
        out[j] += o;
    }
}

/* (4)'s values at the scale S (ip->scale) */
static void augmented_values(pp_interior *ip)
{
    struct pp_interior_augmented *a = ip->aug;
    const double *s = ip->scale;
    size_t p = 0;
    for (int j = 0; j < a->n; ++j) {
        for (int t = a->Lp[j]; t < a->Lp[j + 1]; ++t) {
            const int i = a->Li[t];
            a->Kx[p++] = s[i] * a->Lx[t] * s[j] + (i == j ? 1.0 : 0.0);
        }
        for (int t = a->Bp[j]; t < a->Bp[j + 1]; ++t) a->Kx[p++] = a->Bx[t] * s[j];
    }
    for (int r = 0; r < a->m; ++r) {
        for (int u = a->Tp[r]; u < a->Tp[r + 1]; ++u) a->Kx[p++] = s[a->Ti[u]] * a->Tx[u];
        a->Kx[p++] = -1.0;
    }
}

/* out = M u (+ add where add is not NULL) */
static void multiply(const pp_lcp_csc *M, const double *u, const double *add, double *out)
{
    const int n = M->n;
    for (int i = 0; i < n; ++i) out[i] = add ? add[i] : 0.0;
    for (int j = 0; j < n; ++j) {
        const double uj = u[j];
        if (uj == 0.0) continue;
        for (int t = M->col_start[j]; t < M->col_start[j + 1]; ++t)
            out[M->row_index[t]] += M->values[t] * uj;
    }
}

/* The scaled Newton matrix S M S + I of (3) at (x, v), or (4) where the description holds
 * (ip->augmented), factorised: 1, or 0 (singular, out of memory). */
static int factor_newton(pp_interior *ip, const pp_lcp_csc *M, const double *x,
                         const double *v)
{
    const int n = M->n;
    for (int i = 0; i < n; ++i) ip->scale[i] = sqrt(x[i] / v[i]);
    int *Ap, *Ai;
    double *Ax;
    if (ip->augmented) {
        augmented_values(ip);
        Ap = ip->aug->Kp;
        Ai = ip->aug->Ki;
        Ax = ip->aug->Kx;
    } else {
        for (int j = 0; j < n; ++j)
            for (int t = M->col_start[j]; t < M->col_start[j + 1]; ++t) {
                const int i = M->row_index[t];
                ip->Kx[t] = ip->scale[i] * M->values[t] * ip->scale[j] + (i == j ? 1.0 : 0.0);
            }
        Ap = (int *)M->col_start;
        Ai = (int *)M->row_index;
        Ax = ip->Kx;
    }
    struct pp_interior_lu *lu = ip->lu;
    if (lu->numeric) {
        if (klu_refactor(Ap, Ai, Ax, lu->symbolic, lu->numeric, &lu->common) &&
            klu_rgrowth(Ap, Ai, Ax, lu->symbolic, lu->numeric, &lu->common) &&
            lu->common.rgrowth >=
                (ip->augmented ? INTERIOR_AUGMENTED_RGROWTH : INTERIOR_RGROWTH)) {
            ++ip->refactorisations;
            return 1;
        }
        klu_free_numeric(&lu->numeric, &lu->common);
    }
    lu->numeric = klu_factor(Ap, Ai, Ax, lu->symbolic, &lu->common);
    ++ip->factorisations;
    return lu->numeric != NULL && lu->common.status == KLU_OK;
}

/* The direction (dx, dv) of (1) for the target products t (dx_aff dv_aff terms included
 * where `second` is set), on the factorised matrix: dx from (3), dv = M dx + r. */
static void direction(pp_interior *ip, const pp_lcp_csc *M, const double *x, const double *v,
                      double target, int second, double *dx, double *dv)
{
    const int n = M->n, order = ip->augmented ? n + ip->aug->m : n;
    double *rhs = ip->augmented ? ip->aug->rhs : ip->rhs; /* (4): u's rows 0 */
    for (int i = 0; i < n; ++i) {
        double t = target - x[i] * v[i];
        if (second) t -= ip->dx_aff[i] * ip->dv_aff[i];
        rhs[i] = ip->scale[i] * (-ip->r[i] + t / x[i]);
    }
    if (!ip->augmented) {
        klu_solve(ip->lu->symbolic, ip->lu->numeric, n, 1, rhs, &ip->lu->common);
        for (int i = 0; i < n; ++i) dx[i] = ip->scale[i] * rhs[i];
        multiply(M, dx, ip->r, dv);
        return;
    }
    /* (4), then INTERIOR_REFINE steps of iterative refinement on (3) (its residual
     * S ((L + B^T B) (S y)) + y, unfactorised) */
    struct pp_interior_augmented *a = ip->aug;
    memcpy(a->f, rhs, (size_t)n * sizeof *rhs);
    for (int i = 0; i < n; ++i) a->y[i] = 0.0;
    for (int step = 0; step <= INTERIOR_REFINE; ++step) {
        for (int i = n; i < order; ++i) rhs[i] = 0.0;
        klu_solve(ip->lu->symbolic, ip->lu->numeric, order, 1, rhs, &ip->lu->common);
        for (int i = 0; i < n; ++i) {
            a->y[i] += rhs[i];
            dx[i] = ip->scale[i] * a->y[i];
        }
        if (step == INTERIOR_REFINE) break;
        described_multiply(a, dx, dv);
        for (int i = 0; i < n; ++i) rhs[i] = a->f[i] - (ip->scale[i] * dv[i] + a->y[i]);
    }
    /* dv = (L + B^T B) dx + r: M dx to rounding at nnz(L) + 2 nnz(B) products */
    described_multiply(a, dx, dv);
    for (int i = 0; i < n; ++i) dv[i] += ip->r[i];
}

/* The largest alpha <= 1 with x + alpha dx >= 0 and v + alpha dv >= 0. */
static double step_to_boundary(int n, const double *x, const double *v, const double *dx,
                               const double *dv)
{
    double alpha = 1.0;
    for (int i = 0; i < n; ++i) {
        if (dx[i] < 0.0) alpha = fmin(alpha, -x[i] / dx[i]);
        if (dv[i] < 0.0) alpha = fmin(alpha, -v[i] / dv[i]);
    }
    return alpha;
}

pp_interior_status pp_interior_solve(pp_interior *ip, const pp_lcp_csc *M, const double *q,
                                     double tol, int max_iterations, double deadline,
                                     double *x, double *v)
{
    const int n = M->n;
    ip->iterations = ip->factorisations = ip->refactorisations = 0;
    ip->gap = ip->infeasibility = INFINITY;
    ip->augmented = 0;
    const int first_order = ip->first_order;
    ip->first_order = 0;
    int (*const stop)(void *, const double *) = ip->stop;
    void *const stop_context = ip->stop_context;
    const int stop_every = ip->stop_every > 0 ? ip->stop_every : 1;
    ip->stop = NULL;
    ip->stop_context = NULL;
    ip->stopped = 0;
    /* the clock (lcp.c, "The hard clock"): past it nothing is set up (the description of M
     * and KLU's analysis are passes over M's entries: 4 s on the convex ball's 76 104
     * unknowns), and an iterate's factorisation starts only if its predicted time ends by
     * the deadline (below) */
    if (pp_lcp_clock() > deadline) return PP_INTERIOR_STALLED;
    if (!reserve(ip, n, (size_t)M->col_start[n])) {
        pp_log(PP_LOG_ERROR, "interior-point solve: out of memory for %d unknowns", n);
        return PP_INTERIOR_FAILED;
    }
    /* the start: v = ||q|| e, x the same over the largest diagonal of M (the scale of an
     * impulse that changes a velocity by ||q||) */
    const double q_norm = fmax(pp_lcp_inf_norm(n, q), 1e-300);
    double diag = 0.0;
    for (int j = 0; j < n; ++j)
        for (int t = M->col_start[j]; t < M->col_start[j + 1]; ++t)
            if (M->row_index[t] == j) diag = fmax(diag, fabs(M->values[t]));
    const double x0 = q_norm / (diag > 0.0 ? diag : 1.0);
    for (int i = 0; i < n; ++i) {
        x[i] = x0;
        v[i] = q_norm;
    }
    /* or the caller's point near the answer, each x_i and v_i = (M x + q)_i raised to
     * INTERIOR_WARM_SHIFT of ||x||_inf and of ||q||_inf */
    const double *start = ip->start;
    ip->start = NULL;
    ip->warm = 0;
    const double start_norm = start ? pp_lcp_inf_norm(n, start) : 0.0;
    if (start_norm > 0.0 && isfinite(start_norm)) {
        for (int i = 0; i < n; ++i) x[i] = fmax(start[i], INTERIOR_WARM_SHIFT * start_norm);
        multiply(M, x, q, v);
        for (int i = 0; i < n; ++i) v[i] = fmax(v[i], INTERIOR_WARM_SHIFT * q_norm);
        ip->warm = 1;
    }
    struct pp_interior_lu *lu = ip->lu;
    free_factors(lu);
    klu_defaults(&lu->common);
    /* the Newton matrix: (4) where the caller's description of M holds, else (3) */
    ip->augmented = describe(ip, M);
    if (ip->augmented) {
        lu->common.tol = INTERIOR_AUGMENTED_PIVOT;
        lu->common.scale = INTERIOR_AUGMENTED_SCALE;
    }
    const int order = ip->augmented ? n + ip->aug->m : n;
    int *Ap = ip->augmented ? ip->aug->Kp : (int *)M->col_start;
    int *Ai = ip->augmented ? ip->aug->Ki : (int *)M->row_index;
    lu->symbolic = klu_analyze(order, Ap, Ai, &lu->common);
    if (!lu->symbolic) return PP_INTERIOR_FAILED;
    ip->newton_order = order;
    ip->newton_entries = Ap[order];
    ip->newton_fill = lu->symbolic->lnz + lu->symbolic->unz;
    /* the work bound of every large factorisation (lcp_internal.h, PP_LCP_FACTOR_WORK), on
     * the pattern factorised: (3) by both of its estimates, AMD's fill^2 / order and the
     * charge order * entries (partial pivoting can fill far beyond AMD's there). (4) by AMD's,
     * and after each factorisation by the fill KLU made: its pivots stay on the diagonal
     * unless below INTERIOR_AUGMENTED_PIVOT of their column, so it fills about as AMD
     * predicts (the crash demo's impact island: order 5 436, 125 000 entries, AMD's fill
     * 168 000, 5-7 ms an iterate, where order * entries, 6.8e8, refused it outright) */
    const double bound = pp_lcp_factor_work_bound(0.0); /* 0: read, not set */
    double charge = ip->newton_fill * ip->newton_fill / order;
    if (!ip->augmented) charge = fmax(charge, (double)order * ip->newton_entries);
    if (charge > bound) return PP_INTERIOR_FAILED; /* (3): lcp_sparse.c over_bound's test */
    pp_interior_status status = PP_INTERIOR_STALLED;
    while (ip->iterations < max_iterations) {
        if (stop && ip->iterations > 0 && ip->iterations % stop_every == 0 &&
            stop(stop_context, x)) {
            ip->stopped = 1;
            break;
        }
        multiply(M, x, q, ip->r);
        double gap = 0.0;
        for (int i = 0; i < n; ++i) {
            ip->r[i] -= v[i];
            gap += x[i] * v[i];
        }
        const double mu = gap / n;
        ip->gap = mu / (pp_lcp_inf_norm(n, x) * q_norm);
        ip->infeasibility = pp_lcp_inf_norm(n, ip->r) / q_norm;
        if (ip->gap <= tol && ip->infeasibility <= INTERIOR_FEASIBLE) {
            status = PP_INTERIOR_CONVERGED;
            break;
        }
        /* the caller's clock: stalled where it is when this iterate's factorisation (its
         * charge at PP_LCP_WORK_RATE) would end past it */
        if (!pp_lcp_work_fits(charge, deadline)) break;
        if (!factor_newton(ip, M, x, v)) return PP_INTERIOR_FAILED;
        ++ip->iterations;
        if (ip->augmented) {
            const double made = (double)lu->numeric->lnz + (double)lu->numeric->unz;
            charge = fmax(charge, made * made / order);
            if (charge > bound) return PP_INTERIOR_FAILED;
        }
        /* predictor: the affine direction */
        direction(ip, M, x, v, 0.0, 0, ip->dx_aff, ip->dv_aff);
        const double a_aff = step_to_boundary(n, x, v, ip->dx_aff, ip->dv_aff);
        double gap_aff = 0.0;
        for (int i = 0; i < n; ++i)
            gap_aff += (x[i] + a_aff * ip->dx_aff[i]) * (v[i] + a_aff * ip->dv_aff[i]);
        const double ratio = fmax(gap_aff, 0.0) / gap;
        const double sigma = ratio * ratio * ratio;
        /* corrector: centred, with the second-order term unless first_order */
        direction(ip, M, x, v, sigma * mu, !first_order, ip->dx, ip->dv);
        const double alpha = INTERIOR_STEP * step_to_boundary(n, x, v, ip->dx, ip->dv);
        if (!(alpha >= INTERIOR_ALPHA_MIN)) break; /* no progress (or NaN) */
        for (int i = 0; i < n; ++i) {
            x[i] += alpha * ip->dx[i];
            v[i] += alpha * ip->dv[i];
        }
    }
    return status;
}
