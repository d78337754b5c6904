/*
 * The violations the warm repair leaves to the clamp, exchanged by a ratio test (issue 11;
 * docs/performance.md "The warm repair's exchanges").
 *
 * pp_lcp_warm_moves (lcp_warm_repair.c) leaves some violations of a warm basis B to the clamp:
 * an open contact's approach and w_sigma < 0 below W_LOAD_FLOOR times the floor, a loaded
 * contact's slip, a loaded contact's sigma above -SIGMA_PULL times the floor. Moved as
 * principal swaps (one unknown in or out) they add or drop a velocity row of a body whose rows
 * already determine it: the pivot of such a swap is the Schur complement
 *   s = M_ee - M_eB M_BB^-1 M_Be,
 * the compliance of the redundant row, and M_BB is singular up to it. The exact form is the
 * first step of a principal pivoting method (Cottle and Dantzig's, as in Murty, "Linear
 * complementarity, linear and nonlinear programming", ch. 4): the violated unknown's
 * complement is driven from zero, every other complementary pair keeps its place, and a ratio
 * test picks the first basic variable that blocks. For a nonbasic w_e < 0 the driving variable
 * is z_e,
 *   dz_e = 1,  dz_B = -M_BB^-1 M_Be,  dw = M dz  (dw_B = 0),
 * and for a basic z_i < 0 it is w_i (w_i = t, the other w_B held at zero),
 *   dz_B = M_BB^-1 e_i,  dw = M dz  (dw_i = 1, dw_N = M_NB dz_B).
 * The violated unknown itself reaches zero at t_d = -w_e / dw_e (dw_e = s), resp. -z_i / dz_i;
 * a basic z_k (dz_k < 0) blocks at z_k / -dz_k, a nonbasic w_j (dw_j < 0) at w_j / -dw_j.
 * Where the violated unknown comes first, it is the principal swap (e into B, or i out of B);
 * where another variable blocks by then, its pair changes sides too: B + e - k (the
 * approaching corner's p in, the unloaded corner's p out), B + e + j, B - i - k, B - i + j,
 * a pivot on the blocking entry dz_k or dw_j (det M_B'B' = det M_BB times it, up to sign),
 * not on s. The ratio test takes two passes (Harris: the bound with every variable allowed
 * to its floor below zero, then the largest pivot, relative to its column, among the variables
 * blocking by that bound), so on a degenerate resting vertex (many w_j and z_k at zero) the
 * exchange is made on a pivot of the size of the column, not of its rounding.
 *
 * At most EXCHANGE_MAX exchanges, the first from the basis the repair ends on, each for the
 * last basis's most violated unknown (violation over its floor; Murty's restart, where
 * Cottle and Dantzig would continue one major cycle), each solved as the warm branch solves
 * a basis. The result is kept only when it is an LCP answer by the warm branch's acceptance
 * (rel(z) <= the tolerance) with no violation beyond the floors; else the clamped answer and
 * its basis are given back unchanged. Contact blocks are not consulted: the ratio test, not a
 * block pattern, keeps M_B'B' nonsingular, and a result outside the ST96 vertex patterns is
 * held to the same acceptance.
 */
#include "lcp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A pivot below this fraction of its column's largest entry does not block (the column's
 * rounding on a degenerate vertex). */
#define EXCHANGE_PIVOT_TOL 1e-9
/* Exchanges in a row, each from the last basis's most violated unknown. */
#define EXCHANGE_MAX 4

typedef struct exchange_matrix {
    pp_lcp_workspace *ws;
    int n;
    const double *M, *Me, *row_sums;
    const pp_lcp_csc *A;
    double eps;
} exchange_matrix;

/* The warm branch's basis solve (lcp.c matrix_solve_basis, shifted): (Me)_BB z_B = -q_B. */
static int solve(const exchange_matrix *x, const double *q, const unsigned char *basis,
                 double *z)
{
    return x->A ? pp_lcp_csc_solve_basis(x->ws, x->A, q, basis, z)
                : pp_lcp_solve_basis(x->ws, x->n, x->Me, q, basis, z);
}

static int accept(const exchange_matrix *x, const double *q, const pp_lcp_options *o, double *z,
                  double *w, pp_lcp_result *result)
{
    return x->A ? pp_lcp_csc_accept(x->A, q, x->eps, o, z, w, result)
                : pp_lcp_accept_sums(x->n, x->M, x->row_sums, q, x->eps, o, z, w, result);
}

/* y = Me x (the basis solve's matrix: Me, or M with the workspace's shift where Me is M). */
static void multiply(const exchange_matrix *x, const double *v, double *y)
{
    const int n = x->n;
    const double shift = x->A || n >= PP_LCP_SPARSE_MIN_N ? x->ws->shift : 0.0;
    for (int i = 0; i < n; ++i) y[i] = shift * v[i];
    for (int j = 0; j < n; ++j) {
        if (v[j] == 0.0) continue;
        if (x->A) {
            for (int t = x->A->col_start[j]; t < x->A->col_start[j + 1]; ++t)
                y[x->A->row_index[t]] += x->A->values[t] * v[j];
        } else {
            pp_lcp_vec_axpy(n, y, x->Me + (size_t)j * n, v[j]);
        }
    }
}

/* The most violated unknown by violation over its floor (basic z_i < -z_floor, nonbasic w_i <
 * -w_floor), -1: none. */
static int most_violated(int n, const unsigned char *basis, const double *z, const double *w,
                         double z_floor, double w_floor)
{
    int e = -1;
    double worst = 1.0;
    for (int i = 0; i < n; ++i) {
        const double v = basis[i] ? -z[i] / z_floor : -w[i] / w_floor;
        if (v > worst) {
            worst = v;
            e = i;
        }
    }
    return e;
}

/* One exchange on basis for the violated unknown e (z, w: the basis solution before its clamp
 * and its w); dz, dw, rhs: n each. Returns 0 when the direction cannot be solved or nothing
 * moves e towards zero. */
static int exchange(const exchange_matrix *x, int e, const double *z, const double *w,
                    unsigned char *basis, double z_floor, double w_floor, double *dz,
                    double *dw, double *rhs)
{
    const int n = x->n;
    const int z_side = basis[e] != 0;
    for (int i = 0; i < n; ++i) rhs[i] = 0.0;
    if (z_side) { /* (Me)_BB dz_B = e_e: q' = -e_e */
        rhs[e] = -1.0;
    } else { /* (Me)_BB dz_B = -Me_Be: q' = Me_:e */
        for (int i = 0; i < n; ++i) dz[i] = i == e;
        multiply(x, dz, rhs);
    }
    if (!solve(x, rhs, basis, dz)) return 0;
    if (!z_side) dz[e] = 1.0;
    multiply(x, dz, dw);
    double t_d;
    if (z_side) {
        if (!(dz[e] > 0.0)) return 0;
        t_d = -z[e] / dz[e];
    } else {
        t_d = dw[e] > 0.0 ? -w[e] / dw[e] : INFINITY;
    }
    double dz_max = 0.0, dw_max = 0.0;
    for (int i = 0; i < n; ++i) {
        if (i == e) continue;
        if (basis[i]) dz_max = fmax(dz_max, fabs(dz[i]));
        else dw_max = fmax(dw_max, fabs(dw[i]));
    }
    const double z_tol = EXCHANGE_PIVOT_TOL * dz_max, w_tol = EXCHANGE_PIVOT_TOL * dw_max;
    /* pass 1: the bound with every blocking variable allowed to its floor below zero */
    double bound = t_d;
    for (int i = 0; i < n; ++i) {
        if (i == e) continue;
        if (basis[i] && dz[i] < -z_tol) bound = fmin(bound, (fmax(z[i], 0.0) + z_floor) / -dz[i]);
        if (!basis[i] && dw[i] < -w_tol) bound = fmin(bound, (fmax(w[i], 0.0) + w_floor) / -dw[i]);
    }
    if (!(bound < INFINITY)) return 0;
    /* pass 2: the largest pivot, relative to its column, among those blocking by the bound */
    int k = -1;
    double best = 0.0;
    for (int i = 0; i < n; ++i) {
        if (i == e) continue;
        double pivot = 0.0;
        if (basis[i] && dz[i] < -z_tol && fmax(z[i], 0.0) / -dz[i] <= bound)
            pivot = -dz[i] / dz_max;
        else if (!basis[i] && dw[i] < -w_tol && fmax(w[i], 0.0) / -dw[i] <= bound)
            pivot = -dw[i] / dw_max;
        if (pivot > best) {
            best = pivot;
            k = i;
        }
    }
    if (k < 0 && !(t_d <= bound)) return 0;
    basis[e] = !basis[e];
    if (k >= 0) basis[k] = !basis[k];
    return 1;
}


int pp_lcp_warm_exchanged(pp_lcp_workspace *ws, int n, const double *M, const double *Me,
                          const double *row_sums, const pp_lcp_csc *A, double eps,
                          const double *q, const pp_lcp_options *o, const double *raw,
                          unsigned char *basis, double *z, double *w, pp_lcp_result *result,
                          double floor)
{
    const exchange_matrix x = {ws, n, M, Me, row_sums, A, eps};
    const double w_floor = floor * pp_lcp_inf_norm(n, q);
    int e = most_violated(n, basis, raw, w, floor * pp_lcp_inf_norm(n, raw), w_floor);
    if (e < 0 || pp_lcp_clock_out(ws)) return 0;
    double *store = malloc((size_t)6 * n * sizeof *store);
    unsigned char *b = malloc((size_t)n);
    int kept = 0;
    if (store && b) {
        double *zt = store, *wt = store + n, *dz = store + 2 * (size_t)n,
               *dw = store + 3 * (size_t)n, *rhs = store + 4 * (size_t)n, *zr = store + 5 * (size_t)n;
        pp_lcp_result r = *result;
        memcpy(b, basis, (size_t)n);
        memcpy(zr, raw, (size_t)n * sizeof *zr);
        memcpy(wt, w, (size_t)n * sizeof *wt);
        for (int c = 0; c < EXCHANGE_MAX && e >= 0 && !pp_lcp_clock_out(ws); ++c) {
            const double z_floor = floor * pp_lcp_inf_norm(n, zr);
            if (!exchange(&x, e, zr, wt, b, z_floor, w_floor, dz, dw, rhs) || !solve(&x, q, b, zt))
                break;
            memcpy(zr, zt, (size_t)n * sizeof *zr); /* z before its clamp */
            const int ok = accept(&x, q, o, zt, wt, &r);
            e = most_violated(n, b, zr, wt, floor * pp_lcp_inf_norm(n, zr), w_floor);
            kept = ok && e < 0;
            if (!ok) break;
        }
        if (kept) {
            memcpy(basis, b, (size_t)n);
            memcpy(z, zt, (size_t)n * sizeof *z);
            memcpy(w, wt, (size_t)n * sizeof *w);
            *result = r;
        }
    }
    free(store);
    free(b);
    return kept;
}
