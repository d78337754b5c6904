/*
 * The bounded fallback's stage 1 (lcp_fallback.c) in body space: projected Gauss–Seidel
 * sweeps on a contact LCP whose M is not formed.
 *
 * Why. Past the step's clock a large island whose M the bounded fallback could not sweep once
 * is not formed (lcp_fallback.c pp_lcp_fallback_unformed), and its answer was z = 0: no
 * impulse. The convex ball's landing (docs/performance.md, "The convex ball's landing"): an
 * island of 136 547 unknowns, M = L + G^T W G with 2 850 nonzeros a column (every row on a
 * column's two bodies, 3.9e8 in all), while G has ~12 a column. A sweep over M costs nnz(M);
 * the same sweep over G costs nnz(G) (QuickStep's idea, ODE's quickstep.cpp: keep the bodies'
 * velocity change and read each row from it).
 *
 * The LCP (lcp_fallback_bodies.h, pp_lcp_bodies): M = L + Gr^T W Gc, so with u = q + L z and
 * v = W Gc z (6 per body)
 *     w = M z + q = u + Gr^T v,     w_i = u_i + sum_s g_{i,s} . v_{b(i,s)}                (1)
 * over unknown i's (at most two) row blocks. The sweep is lcp_fallback.c's stage 1,
 *     z_i <- max(0, z_i - w_i / D_i),   D_i = max(M_ii, DIAG_SHIFT m_i),                    (2)
 * with w_i read from (1) when its turn comes, and after a change delta of z_i
 *     v_b += delta W_b g   (each column block of i),   u += delta L_:i,                      (3)
 * so that (1) stays exact for the next unknown: the iterates are those of the same sweep on M
 * (with the same D) up to the order of the sums, at O(6 (row + column blocks) + nnz(L)) a
 * sweep. u and v are formed afresh every W_REFRESH sweeps against drift, as the M-space
 * sweep forms w. A zero diagonal (the sigma rows of ST's friction LCP, w_sigma = mu p -
 * sum beta: no body term, L_ss = 0) gets the shift DIAG_SHIFT m_i as there.
 *
 * Row bounds. m_i (the shift's scale, max_j |M_ij| on M) and the row sums s_i = sum_j |M_ij|
 * that rel(z) divides by need every entry of row i, nnz(M) work, which is what is avoided. So
 * both are BOUNDED from the description: for the body term Gr_i^T W_b Gc_j of a column j on
 * body b, |g . wg_j| <= sum_e |g_e| |wg_{j,e}| (componentwise), hence
 *     sum_j |M_ij| <= sum_j |L_ij| + sum_s sum_e |g_{i,s,e}| C_{b,e},
 *     max_j |M_ij| <= max_j |L_ij| + sum_s sum_e |g_{i,s,e}| X_{b,e},
 * C_{b,e} = sum_{j on b} |wg_{j,e}| and X_{b,e} = max_{j on b} |wg_{j,e}| over b's columns
 * (the two bodies of a pair of columns on the same two bodies add, which the bound's sum over
 * s covers). M_ii itself is exact (its two blocks' products and L_ii). Consequences: D_i is at
 * least the M-space rule's (a larger proximal shift where M_ii does not dominate the bound:
 * a damped step of the same iteration), and rel(z) is computed against s_i >= the exact s_i,
 * so the reported rel(z) is a LOWER bound of the exact one; r(z) = max |min(z_i, w_i)| and
 * the other measures are exact (w from (1) after a fresh u, v). The answer is therefore always
 * reported as approximate, never as solved.
 *
 * Cones (the description's cones; peg_mlcp.c gives each frictional set's betas, sigma and mu,
 * and each rolling axis's g+, g-, s and rho). Swept as above on ST's friction rows, the
 * iterate need not lie in the friction cones (ST96 Eq 27, sum_l beta_l <= mu p), which only
 * the sigma rows and their zero diagonal hold it to, through the shift; and a friction impulse
 * outside its cone accelerates the contact it should brake. Measured on the convex landing
 * (docs/performance.md, "The convex landing in body space"): with the plain sweeps ~200 of
 * 14 000 sets ended outside their cones (some with p = 0 and beta > 0), cells left the
 * landing steps spinning at 30 - 60 rad/s and the fastest at 10 - 15 m/s (falling at 8.5).
 * With cones, friction is boxed as QuickStep boxes it: sigma is not swept (z_sigma = 0 in
 * the sweeps, so a beta row reads the contact's sliding speed d_l . v), and after a cone's
 * last beta
 *     beta_l <- beta_l min(1, mu p / sum_m beta_m)     (all l of the cone)               (4)
 * (a projection onto the cone along the ray to 0, its changes applied as (3)). An iterate
 * considered for the best, and the answer, get
 *     sigma = max(0, max_l -(d_l . v)),                                                   (5)
 * the largest sliding speed against a direction, so every beta row has w_l >= 0 and every
 * sigma row w_sigma = mu p - sum beta >= 0: z is feasible in the friction rows, and the
 * residual there is complementarity's (w_l > 0 with beta_l > 0, sigma > 0 inside the cone).
 *
 * Stage 2 of lcp_fallback.c (Newton on the minimum map) and the warm start need basis solves
 * on M: not here.
 *
 * Where (pp_lcp_fallback_bodies_entries; peg_mlcp.c solve_islands). Past the clock Lemke gets
 * no pivot, and the fallback on M pays three passes over M before anything, then nnz(M) a
 * sweep: an M of more than bound / (3 + PP_FALLBACK_SWEEPS) nonzeros (4.9e6 under the
 * default 1e9) cannot have all its sweeps, and one of more than bound / 4 none (z = 0,
 * pp_lcp_fallback_unformed). Such an M is not formed and the island gets these sweeps. What
 * the M path has and this has not: a warm basis accepted without a pivot, and the fallback's
 * warm start and Newton steps (basis solves on M), which at these sizes do not fit in the
 * bound either. Measured on the convex ball's landing (docs/performance.md, "The convex
 * landing in body space"): after the first landing step the island's M (78 000 - 96 000
 * unknowns, ~2e8 nonzeros) was formed (2 s), Lemke's setup for no pivot (1 - 1.6 s) and the
 * fallback's one sweep (rel(z) 0.022), where 200 sweeps here reach rel(z) ~ 4e-3.
 *
 * Work (lcp_fallback.c's bound, pp_lcp_fallback_work_bound, in the same multiply-adds): a pass
 * P = 6 (row + column blocks) + nnz(L) + n; the bounds and the final residual 2 P charged
 * first, each sweep P, each fresh u, v and each check of rel(z) another P. A sweep that does
 * not fit ends the call with the best iterate so far.
 */
#include "lcp_fallback_bodies.h"

#include <stdlib.h>
#include <string.h>

double pp_lcp_fallback_bodies_entries(const pp_lcp_options *o)
{
    if (pp_lcp_fallback_idle_entries(o) == HUGE_VAL) return HUGE_VAL;
    const int sweeps = o->fallback_iterations > 0 ? o->fallback_iterations : PP_FALLBACK_SWEEPS;
    return pp_lcp_fallback_work_bound(o) / (3.0 + sweeps);
}

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

int pp_lcp_bodies_bounds(const pp_lcp_bodies *B, double *diag, double *row_sums)
{
    const int n = B->n;
    double *cx = calloc((size_t)B->bodies * 12 + 1, sizeof *cx); /* C_b, X_b */
    double *lmax = calloc((size_t)n + 1, sizeof *lmax);
    double *ldiag = calloc((size_t)n + 1, sizeof *ldiag);
    if (!cx || !lmax || !ldiag) {
        free(cx);
        free(lmax);
        free(ldiag);
        return 0;
    }
    for (int i = 0; i < n; ++i) row_sums[i] = 0.0;
    for (int j = 0; j < n; ++j) {
        for (int s = 0; s < 2; ++s) {
            const int b = B->body[4 * j + 2 + s];
            if (b < 0) continue;
            const double *wg = &B->g[24 * (size_t)j + 12 + 6 * s];
            for (int e = 0; e < 6; ++e) {
                const double a = fabs(wg[e]);
                cx[12 * (size_t)b + e] += a;
                if (a > cx[12 * (size_t)b + 6 + e]) cx[12 * (size_t)b + 6 + e] = a;
            }
        }
        for (int t = B->L.col_start[j]; t < B->L.col_start[j + 1]; ++t) {
            const int i = B->L.row_index[t];
            const double a = fabs(B->L.values[t]);
            row_sums[i] += a;
            if (a > lmax[i]) lmax[i] = a;
            if (i == j) ldiag[i] = B->L.values[t];
        }
    }
    for (int i = 0; i < n; ++i) {
        double mii = ldiag[i], m = lmax[i];
        for (int s = 0; s < 2; ++s) {
            const int b = B->body[4 * i + s];
            if (b < 0) continue;
            const double *g = &B->g[24 * (size_t)i + 6 * s], *c = &cx[12 * (size_t)b];
            for (int e = 0; e < 6; ++e) {
                row_sums[i] += fabs(g[e]) * c[e];
                m += fabs(g[e]) * c[6 + e];
            }
            for (int u = 0; u < 2; ++u)
                if (B->body[4 * i + 2 + u] == b) mii += dot6(g, &B->g[24 * (size_t)i + 12 + 6 * u]);
        }
        diag[i] = mii > PP_FALLBACK_DIAG_SHIFT * m ? mii : PP_FALLBACK_DIAG_SHIFT * m;
        if (!(diag[i] > 0.0)) diag[i] = 1.0; /* a zero row: w_i = q_i whatever z is */
    }
    free(cx);
    free(lmax);
    free(ldiag);
    return 1;
}

/* u += L_:j a and v += W Gc_:j a: unknown j's column times a, as (3). */
static inline void add_column(const pp_lcp_bodies *B, int j, double a, double *u, double *v)
{
    for (int s = 0; s < 2; ++s) {
        const int b = B->body[4 * j + 2 + s];
        if (b < 0) continue;
        const double *wg = &B->g[24 * (size_t)j + 12 + 6 * s];
        for (int e = 0; e < 6; ++e) v[6 * (size_t)b + e] += wg[e] * a;
    }
    for (int t = B->L.col_start[j]; t < B->L.col_start[j + 1]; ++t)
        u[B->L.row_index[t]] += B->L.values[t] * a;
}

void pp_lcp_bodies_state(const pp_lcp_bodies *B, const double *q, const double *z, double *u,
                         double *v)
{
    const int n = B->n;
    memcpy(u, q, (size_t)n * sizeof *u);
    memset(v, 0, (size_t)B->bodies * 6 * sizeof *v);
    for (int j = 0; j < n; ++j)
        if (z[j] != 0.0) add_column(B, j, z[j], u, v);
}

/* w_i of (1). */
static inline double row_w(const pp_lcp_bodies *B, const double *u, const double *v, int i)
{
    double wi = u[i];
    for (int s = 0; s < 2; ++s) {
        const int b = B->body[4 * i + s];
        if (b >= 0) wi += dot6(&B->g[24 * (size_t)i + 6 * s], &v[6 * (size_t)b]);
    }
    return wi;
}

void pp_lcp_bodies_w(const pp_lcp_bodies *B, const double *u, const double *v, double *w)
{
    for (int i = 0; i < B->n; ++i) w[i] = row_w(B, u, v, i);
}

/* z_i += delta, with u and v as (3). */
static inline void change(const pp_lcp_bodies *B, int i, double delta, double *z, double *u,
                          double *v)
{
    z[i] += delta;
    add_column(B, i, delta, u, v);
}

void pp_lcp_bodies_cone_last(const pp_lcp_bodies *B, int *cone_last)
{
    for (int i = 0; i < B->n; ++i) cone_last[i] = -1;
    for (int c = 0; c < B->cones; ++c) {
        cone_last[B->cone_sigma[c]] = -2;
        if (B->cone_first[c + 1] > B->cone_first[c])
            cone_last[B->cone_beta[B->cone_first[c + 1] - 1]] = c;
    }
}

/* (4): cone c's betas scaled onto sum_l beta_l <= mu p. */
static void project_cone(const pp_lcp_bodies *B, int c, double *z, double *u, double *v)
{
    double sum = 0.0;
    for (int t = B->cone_first[c]; t < B->cone_first[c + 1]; ++t) sum += z[B->cone_beta[t]];
    const double cap = B->cone_mu[c] * z[B->cone_p[c]];
    if (!(sum > cap)) return;
    const double scale = cap > 0.0 ? cap / sum : 0.0;
    for (int t = B->cone_first[c]; t < B->cone_first[c + 1]; ++t) {
        const int i = B->cone_beta[t];
        change(B, i, z[i] * scale - z[i], z, u, v);
    }
}

/* (5): every cone's sigma = max(0, max_l -(w_l - sigma)), the sliding speed its betas' rows
 * read; clear: sigma = 0 (the sweeps' value). */
static void set_sigmas(const pp_lcp_bodies *B, int clear, double *z, double *u, double *v)
{
    for (int c = 0; c < B->cones; ++c) {
        const int sg = B->cone_sigma[c];
        if (z[sg] != 0.0) change(B, sg, -z[sg], z, u, v);
        if (clear) continue;
        double speed = 0.0;
        for (int t = B->cone_first[c]; t < B->cone_first[c + 1]; ++t)
            speed = fmax(speed, -row_w(B, u, v, B->cone_beta[t]));
        if (speed > 0.0) change(B, sg, speed, z, u, v);
    }
}

void pp_lcp_bodies_sweep(const pp_lcp_bodies *B, const double *diag, const int *cone_last,
                         double *z, double *u, double *v)
{
    for (int i = 0; i < B->n; ++i) {
        if (cone_last && cone_last[i] == -2) continue; /* sigma: (5) */
        double zn = z[i] - row_w(B, u, v, i) / diag[i]; /* (2) */
        if (zn < 0.0) zn = 0.0;
        const double delta = zn - z[i];
        if (delta != 0.0) change(B, i, delta, z, u, v); /* (3) */
        if (cone_last && cone_last[i] >= 0) project_cone(B, cone_last[i], z, u, v); /* (4) */
    }
}

/* The iterate z (sigma 0 with cones) considered for the best: with cones its sigma set (5)
 * first and cleared after; kept in best, *best_r and *best_rel when better
 * (pp_lcp_fallback_better: usable, of lesser r(z)). */
static void consider(const pp_lcp_bodies *B, const double *q, const double *row_sums,
                     double q_norm, double *z, double *u, double *v, double *w, double *best,
                     double *best_r, double *best_rel)
{
    const int n = B->n;
    if (!pp_lcp_all_finite((size_t)n, z)) return;
    set_sigmas(B, 0, z, u, v);
    pp_lcp_bodies_w(B, u, v, w);
    double r_it, rel = pp_lcp_fallback_relative(n, q, row_sums, z, w, &r_it);
    if (pp_lcp_fallback_better(r_it, rel, q_norm, *best_r, *best_rel)) {
        *best_r = r_it;
        *best_rel = rel;
        memcpy(best, z, (size_t)n * sizeof *best);
    }
    set_sigmas(B, 1, z, u, v);
}

pp_lcp_status pp_lcp_fallback_bodies(const pp_lcp_bodies *B, const double *q,
                                     const pp_lcp_options *o, double *z, pp_lcp_result *result)
{
    const int n = B->n;
    memset(result, 0, sizeof *result);
    memset(z, 0, (size_t)n * sizeof *z);
    double *u = malloc((size_t)n * sizeof *u), *w = malloc((size_t)n * sizeof *w);
    double *best = calloc((size_t)n, sizeof *best), *diag = malloc((size_t)n * sizeof *diag);
    double *row_sums = malloc((size_t)n * sizeof *row_sums);
    double *v = calloc((size_t)B->bodies * 6 + 1, sizeof *v);
    int *cone_last = B->cones > 0 ? malloc((size_t)n * sizeof *cone_last) : NULL;
    const int room = u && w && best && diag && row_sums && v && (cone_last || !B->cones) &&
                     pp_lcp_bodies_bounds(B, diag, row_sums);
    /* a pass (file comment) */
    double blocks = 0.0;
    for (size_t t = 0; t < 4 * (size_t)n; ++t) blocks += B->body[t] >= 0;
    const double pass = 6.0 * blocks + (double)B->L.col_start[n] + n;
    const double bound = pp_lcp_fallback_work_bound(o);
    double work = 2.0 * pass;
    int cut = 0, sweep = 0;
    int sweeps = o->fallback_iterations > 0 ? o->fallback_iterations : PP_FALLBACK_SWEEPS;
    if (room) {
        if (cone_last) pp_lcp_bodies_cone_last(B, cone_last);
        const double q_norm = pp_lcp_inf_norm(n, q);
        double best_r;
        memcpy(u, q, (size_t)n * sizeof *u);
        double best_rel = pp_lcp_fallback_relative(n, q, row_sums, z, q, &best_r); /* z = 0: usable */
        while (sweep < sweeps &&
               !(best_rel <= o->residual_tol && best_r <= o->regularised_tol * q_norm)) {
            const int next = sweep + 1;
            const double charge =
                pass * (1.0 + (next % PP_FALLBACK_W_REFRESH == 0) +
                        (next % PP_FALLBACK_CHECK_EVERY == 0 || next == sweeps));
            if (!(work + charge <= bound)) {
                cut = 1;
                if (sweep % PP_FALLBACK_CHECK_EVERY != 0) /* the last sweeps' */
                    consider(B, q, row_sums, q_norm, z, u, v, w, best, &best_r, &best_rel);
                break;
            }
            work += charge;
            pp_lcp_bodies_sweep(B, diag, cone_last, z, u, v);
            sweep = next;
            if (sweep % PP_FALLBACK_W_REFRESH == 0) pp_lcp_bodies_state(B, q, z, u, v);
            if (sweep % PP_FALLBACK_CHECK_EVERY == 0 || sweep == sweeps) {
                if (!pp_lcp_all_finite((size_t)n, z)) break; /* diverged: keep the best */
                consider(B, q, row_sums, q_norm, z, u, v, w, best, &best_r, &best_rel);
            }
        }
        memcpy(z, best, (size_t)n * sizeof *z);
        pp_lcp_bodies_state(B, q, z, u, v); /* the answer's w afresh */
        pp_lcp_bodies_w(B, u, v, w);
    } else {
        cut = 1;
    }
    free(cone_last);
    pp_lcp_measures measures;
    pp_lcp_measures_start(&measures);
    const double z_norm = pp_lcp_inf_norm(n, z);
    for (int i = 0; i < n; ++i)
        pp_lcp_measure_row(&measures, q[i], room ? row_sums[i] : 0.0, z_norm, z[i],
                           room ? w[i] : q[i]);
    pp_lcp_measures_store(&measures, n, result);
    free(u);
    free(w);
    free(best);
    free(diag);
    free(row_sums);
    free(v);
    result->status = PP_LCP_APPROXIMATE;
    result->budget_exhausted = 1;
    result->attempts = 1;
    result->fallback = 1;
    result->fallback_iterations = sweep;
    result->fallback_cut = cut;
    result->fallback_work = work;
    if (o->budget) {
        if (o->budget->fallback_work >= 0.0)
            o->budget->fallback_work = fmax(0.0, o->budget->fallback_work - work);
        o->budget->exhausted++;
    }
    return PP_LCP_APPROXIMATE;
}
