/* The bounded fallback's sweeps in body space (lcp_fallback_bodies.c has the derivation), for
 * a contact LCP whose M is not formed. */
#ifndef PP_LCP_FALLBACK_BODIES_H
#define PP_LCP_FALLBACK_BODIES_H

#include "lcp_internal.h"

/* Stage 1 of the bounded fallback (lcp_fallback.c), shared by its body-space form: the
 * diagonal shift of the projected Gauss–Seidel step, the sweeps of a call, how often rel(z)
 * is checked and w formed afresh. */
#define PP_FALLBACK_DIAG_SHIFT 0.1
#define PP_FALLBACK_SWEEPS 200
#define PP_FALLBACK_CHECK_EVERY 4
#define PP_FALLBACK_W_REFRESH 32

/* The bound of one fallback call's work under o (lcp_fallback.c): the smaller of its own
 * (o->fallback_work, or PP_LCP_FALLBACK_WORK) and what the solves sharing o->budget have left. */
double pp_lcp_fallback_work_bound(const pp_lcp_options *o);

/* Past the clock, the nonzeros of M above which an island by columns is not formed and gets
 * the sweeps in body space instead (lcp_fallback_bodies.c, "Where"): the M-space fallback
 * could not pay its passes and all its sweeps (3 + PP_FALLBACK_SWEEPS, or
 * o->fallback_iterations, passes over M) within its bound. HUGE_VAL while the clock runs,
 * without a budget, or without the fallback (pp_lcp_fallback_idle_entries). */
double pp_lcp_fallback_bodies_entries(const pp_lcp_options *o);

/*
 * M = L + Gr^T W Gc described by its bodies: every row and every column of a contact LCP
 * involves at most two bodies (a constraint between two bodies; a static or kinematic one is
 * no body here). Unknown i has
 *     row blocks   (body[4i + s], g[24i + 6s ..]),       s = 0, 1: w_i = q_i + (L z)_i
 *                                                          + sum_s g_s . v_{body s}
 *     column blocks (body[4i + 2 + s], g[24i + 12 + 6s ..]): W_b g, the velocity change of
 *                                                          body b per unit z_i,
 * body -1 where the block is absent, v = W Gc z the bodies' velocity change (6 per body,
 * linear then angular as the caller's blocks), L the rest of M by columns (the entries inside
 * a contact: its cone rows, E, mu, compliance shifts). Signs are in the values.
 */
typedef struct pp_lcp_bodies {
    int n;                 /* unknowns */
    int bodies;            /* v has 6 bodies entries; every body index below it */
    const int *body;       /* 4 n */
    const double *g;       /* 24 n */
    pp_lcp_csc L;          /* n = the unknowns; diagonal entries where nonzero */
    /* Friction cones (ST96 Eq 27: mu p - sum_l beta_l >= 0 ⊥ sigma >= 0; 0: none): the sweeps
     * keep z in them and give sigma its value from the rows (lcp_fallback_bodies.c, "Cones") */
    int cones;
    const int *cone_first;  /* cones + 1: cone c's betas cone_beta[cone_first[c] .. [c + 1]),
                               increasing */
    const int *cone_beta;
    const int *cone_p;      /* cones: its normal unknown p */
    const int *cone_sigma;  /* cones: its sigma */
    const double *cone_mu;  /* cones: mu */
} pp_lcp_bodies;

/* The row sums of |M| and the sweep's diagonal D (lcp_fallback_bodies.c, "Row bounds"), from
 * the description alone: row_sums[i] >= sum_j |M_ij| and diag[i] = max(M_ii, DIAG_SHIFT m_i)
 * with m_i >= max_j |M_ij| (1 where that is not positive). 0: out of memory. */
int pp_lcp_bodies_bounds(const pp_lcp_bodies *B, double *diag, double *row_sums);

/* u = q + L z and v = W Gc z afresh. */
void pp_lcp_bodies_state(const pp_lcp_bodies *B, const double *q, const double *z, double *u,
                         double *v);

/* w = M z + q from u = q + L z and v (w_i = u_i + sum_s g_s . v_{body s}). */
void pp_lcp_bodies_w(const pp_lcp_bodies *B, const double *u, const double *v, double *w);

/* One projected Gauss–Seidel sweep i = 0 .. n - 1, z_i <- max(0, z_i - w_i / D_i), with u and
 * v kept equal to q + L z and W Gc z: O(nnz(G) + nnz(L)). cone_last (with cones; NULL: none)
 * from pp_lcp_bodies_cone_last: the cones' sigma skipped, each cone's betas projected onto
 * sum_l beta_l <= mu p after its last one. */
void pp_lcp_bodies_sweep(const pp_lcp_bodies *B, const double *diag, const int *cone_last,
                         double *z, double *u, double *v);

/* cone_last[i] (n): c where i is cone c's last beta, -2 on a cone's sigma, -1 elsewhere. */
void pp_lcp_bodies_cone_last(const pp_lcp_bodies *B, int *cone_last);

/* rel(z) from z, w and row sums s_i of |M| (exact, or bounds from above: then a lower bound of
 * rel(z)), max_i |min(z_i, w_i)| / (|q_i| + s_i ||z||_inf); r(z) = max_i |min(z_i, w_i)| in
 * *residual (lcp_fallback.c). */
double pp_lcp_fallback_relative(int n, const double *q, const double *row_sums, const double *z,
                                const double *w, double *residual);

/* The bounded fallback's order of its iterates (lcp_fallback.c, "Which iterate"), also the
 * sticking solve's for its best round (lcp_sticking.c keep_best): 1 when an iterate of
 * residual r(z) and rel(z) rel is usable, r(z) <= q_norm = ||q||_inf, and better than the best
 * so far (best_residual, best_rel): of lesser r(z), or of equal r(z) and lesser rel(z). NaN
 * is never better. */
int pp_lcp_fallback_better(double residual, double rel, double q_norm, double best_residual,
                           double best_rel);

/* The bounded fallback's stage 1 on M described by B (M not formed): the shifted projected
 * Gauss–Seidel sweeps from z = 0 (in B's cones, sigma from the rows), the best iterate by
 * pp_lcp_fallback_better kept, its work charged and
 * bounded as lcp_fallback.c charges and bounds it, the budget marked exhausted (the caller
 * comes past its clock). z and result's measures (against the row-sum bounds: rel(z) is
 * divided by s_i >= the exact s_i), fallback, fallback_iterations, fallback_work,
 * fallback_cut. Always PP_LCP_APPROXIMATE (r(z) <= ||q||_inf, applied as the fallback's
 * answers are); out of memory: z = 0 with its measures. */
pp_lcp_status pp_lcp_fallback_bodies(const pp_lcp_bodies *B, const double *q,
                                     const pp_lcp_options *o, double *z, pp_lcp_result *result);

#endif
