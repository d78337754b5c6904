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
 */
#include "lcp_interior.h"

#include <klu.h>
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

struct pp_interior_lu {
    klu_common common;
    klu_symbolic *symbolic;
    klu_numeric *numeric;
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
    memset(ip, 0, sizeof *ip);
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

/* The scaled Newton matrix S M S + I of (3) at (x, v), factorised: 1, or 0 (singular,
 * out of memory). */
static int factor_newton(pp_interior *ip, const pp_lcp_csc *M, const double *x,
                         const double *v)
{
    const int n = M->n;
    for (int i = 0; i < n; ++i) ip->scale[i] = sqrt(x[i] / v[i]);
    for (int j = 0; j < n; ++j)
        for (int t = M->col_start[j]; t < M->col_start[j + 1]; ++t) {
            const int i = M->row_index[t];
            ip->Kx[t] = ip->scale[i] * M->values[t] * ip->scale[j] + (i == j ? 1.0 : 0.0);
        }
    int *Ap = (int *)M->col_start, *Ai = (int *)M->row_index;
    struct pp_interior_lu *lu = ip->lu;
    if (lu->numeric) {
        if (klu_refactor(Ap, Ai, ip->Kx, lu->symbolic, lu->numeric, &lu->common) &&
            klu_rgrowth(Ap, Ai, ip->Kx, lu->symbolic, lu->numeric, &lu->common) &&
            lu->common.rgrowth >= INTERIOR_RGROWTH) {
            ++ip->refactorisations;
            return 1;
        }
        klu_free_numeric(&lu->numeric, &lu->common);
    }
    lu->numeric = klu_factor(Ap, Ai, ip->Kx, lu->symbolic, &lu->common);
    ++ip->factorisations;
    return lu->numeric != NULL && lu->common.status == KLU_OK;
}

/* The direction (dx, dv) of (1) for the target products t (dx_aff dv_aff terms included
 * where `second` is set), on the factorised matrix: dx from (3), dv = M dx + r. */
static void direction(pp_interior *ip, const pp_lcp_csc *M, const double *x, const double *v,
                      double target, int second, double *dx, double *dv)
{
    const int n = M->n;
    for (int i = 0; i < n; ++i) {
        double t = target - x[i] * v[i];
        if (second) t -= ip->dx_aff[i] * ip->dv_aff[i];
        ip->rhs[i] = ip->scale[i] * (-ip->r[i] + t / x[i]);
    }
    klu_solve(ip->lu->symbolic, ip->lu->numeric, n, 1, ip->rhs, &ip->lu->common);
    for (int i = 0; i < n; ++i) dx[i] = ip->scale[i] * ip->rhs[i];
    multiply(M, dx, ip->r, dv);
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
    struct pp_interior_lu *lu = ip->lu;
    free_factors(lu);
    klu_defaults(&lu->common);
    lu->symbolic = klu_analyze(n, (int *)M->col_start, (int *)M->row_index, &lu->common);
    if (!lu->symbolic) return PP_INTERIOR_FAILED;
    /* the work bound of every large factorisation (lcp_internal.h, PP_LCP_FACTOR_WORK) */
    if (pp_lcp_factor_over_bound(lu->symbolic->lnz + lu->symbolic->unz, n, M->col_start[n]))
        return PP_INTERIOR_FAILED;
    pp_interior_status status = PP_INTERIOR_STALLED;
    while (ip->iterations < max_iterations) {
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
        if (pp_lcp_clock() > deadline) break; /* the caller's clock: stalled where it is */
        if (!factor_newton(ip, M, x, v)) return PP_INTERIOR_FAILED;
        ++ip->iterations;
        /* predictor: the affine direction */
        direction(ip, M, x, v, 0.0, 0, ip->dx_aff, ip->dv_aff);
        const double a_aff = step_to_boundary(n, x, v, ip->dx_aff, ip->dv_aff);
        double gap_aff = 0.0;
        for (int i = 0; i < n; ++i)
            gap_aff += (x[i] + a_aff * ip->dx_aff[i]) * (v[i] + a_aff * ip->dv_aff[i]);
        const double ratio = fmax(gap_aff, 0.0) / gap;
        const double sigma = ratio * ratio * ratio;
        /* corrector: centred, with the second-order term */
        direction(ip, M, x, v, sigma * mu, 1, ip->dx, ip->dv);
        const double alpha = INTERIOR_STEP * step_to_boundary(n, x, v, ip->dx, ip->dv);
        if (!(alpha >= INTERIOR_ALPHA_MIN)) break; /* no progress (or NaN) */
        for (int i = 0; i < n; ++i) {
            x[i] += alpha * ip->dx[i];
            v[i] += alpha * ip->dv[i];
        }
    }
    return status;
}
