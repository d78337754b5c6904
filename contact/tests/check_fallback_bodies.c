/*
 * The bounded fallback's sweeps in body space (contact/src/lcp_fallback_bodies.c), for an LCP
 * whose M is not formed past the clock.
 *
 * 1. A contact island described by its bodies (random 6 x 6 SPD inverse masses W_b; contacts
 *    between two bodies or a body and the ground, each with a random normal and arms and
 *    ST's k = 4 pyramid, q the rows' speeds under random free velocities; ST's friction cone,
 *    E and a compliance shift in L; unknowns with random row blocks but no column blocks as
 *    PEG's slacks): M = L + Gr^T W Gc formed densely from the same description. The row bounds hold
 *    (row sums and the shift's scale at least M's, D at least the M-space rule's), w from the
 *    bodies is M z + q, and each body-space sweep gives the iterate of lcp_fallback.c's sweep
 *    on M (w kept by M's columns) from the same z with the same D, to round-off; the
 *    fallback's answer's measures are those computed from M (rel(z) at most M's: the bound).
 *    With the friction cones given, the answer lies in them (sum beta <= mu p) and every
 *    beta and sigma row has w >= 0.
 *
 * 2. A PEG island where the M path is refused: two plates, one on 7 x 7 supports on the
 *    ground and one on 7 x 7 supports on the first, both falling (v_z = -0.5 and -1 m/s),
 *    solved by pp_peg_solve past the clock with a fallback work bound below 4 nnz(M) (under
 *    which the fallback on M could not sweep once: its answer was z = 0) but large enough
 *    for body-space sweeps (M is not formed above bound / 203 nonzeros past the clock,
 *    pp_lcp_fallback_bodies_entries). The answer is checked on the island's own LCP formed
 *    afterwards (pp_peg_last_lcp): nonzero, its residual below z = 0's (that of no impulse),
 *    the normal rows' w_n = (M z + q)_n (the contacts' separating speeds) at least -1e-2 of
 *    the approach speed (z = 0 has w_n = -0.5 and -0.5 m/s: the bodies would approach), the
 *    reported residual the one from M, the friction rows' w >= 0 (in the cones).
 */
#include "pegplus/lcp.h"
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include "../src/lcp_fallback_bodies.h"
#include "../src/peg_lcp_internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. a described island against its formed M ------------------------------------- */

#define NB 5          /* bodies */
#define NC 40         /* contacts: p, 4 beta, sigma each */
#define NS 6          /* unknowns with row blocks only (as PEG's slacks) */
#define KD 4
#define NU (NC * (KD + 2) + NS)
#define SWEEPS 40

static unsigned long long rng = 88172645463325252ull;
static double uniform(void) /* [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static int body[4 * NU];
static double g[24 * NU], W[NB][36], Md[NU * NU], q1[NU];
static int l_start[NU + 1], l_rows[8 * NU];
static double l_values[8 * NU];

/* the island: contact c's p at c, beta at NC + KD c + l, sigma at NC (KD + 1) + c, the
 * row-only unknowns after them */
static void described_island(pp_lcp_bodies *B)
{
    for (int b = 0; b < NB; ++b) { /* W_b = A A^T + 0.1 I */
        double A[36];
        for (int e = 0; e < 36; ++e) A[e] = uniform();
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) {
                double s = r == c ? 0.1 : 0.0;
                for (int t = 0; t < 6; ++t) s += A[r + 6 * t] * A[c + 6 * t];
                W[b][r + 6 * c] = s;
            }
    }
    for (int t = 0; t < 4 * NU; ++t) body[t] = -1;
    int lb[NC][2];
    for (int c = 0; c < NC; ++c) {
        lb[c][0] = c % NB;
        lb[c][1] = c % 3 == 0 ? -1 : (c % NB + 1 + c % (NB - 1)) % NB; /* -1: the ground */
        if (lb[c][1] == lb[c][0]) lb[c][1] = -1;
    }
    /* contact c: a random normal n and tangents t1, t2; impulse direction l, d_0 = n, d_l =
     * cos(l pi / 2) t1 + sin(l pi / 2) t2 (ST96's pyramid, k = 4), acting on body B (side 0)
     * at arm r_B as (d, r_B x d) and on A (side 1) as -(d, r_A x d); a row's block is its
     * column's Jacobian (Gr = Gc), the column's W_b g */
    for (int c = 0; c < NC; ++c) {
        double n[3], t1[3], t2[3], arm[2][3];
        for (int e = 0; e < 3; ++e) n[e] = uniform();
        double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int e = 0; e < 3; ++e) n[e] /= nn;
        t1[0] = -n[1];
        t1[1] = n[0];
        t1[2] = 0.0;
        nn = sqrt(t1[0] * t1[0] + t1[1] * t1[1]);
        for (int e = 0; e < 3; ++e) t1[e] /= nn;
        t2[0] = n[1] * t1[2] - n[2] * t1[1];
        t2[1] = n[2] * t1[0] - n[0] * t1[2];
        t2[2] = n[0] * t1[1] - n[1] * t1[0];
        for (int s = 0; s < 2; ++s)
            for (int e = 0; e < 3; ++e) arm[s][e] = 0.5 * uniform();
        for (int l = 0; l <= KD; ++l) {
            const int i = l == 0 ? c : NC + KD * c + (l - 1);
            const double an = 0.5 * 3.14159265358979323846 * (l - 1);
            double d[3];
            for (int e = 0; e < 3; ++e) d[e] = l == 0 ? n[e] : cos(an) * t1[e] + sin(an) * t2[e];
            for (int s = 0; s < 2; ++s) {
                const int b = lb[c][s];
                if (b < 0) continue;
                body[4 * i + s] = body[4 * i + 2 + s] = b;
                double *gr = &g[24 * i + 6 * s], *wg = &g[24 * i + 12 + 6 * s];
                const double *r = arm[s], sign = s == 0 ? 1.0 : -1.0;
                const double x[6] = {d[0], d[1], d[2], r[1] * d[2] - r[2] * d[1],
                                     r[2] * d[0] - r[0] * d[2], r[0] * d[1] - r[1] * d[0]};
                for (int e = 0; e < 6; ++e) gr[e] = sign * x[e];
                for (int row = 0; row < 6; ++row) {
                    wg[row] = 0.0;
                    for (int e = 0; e < 6; ++e) wg[row] += W[b][row + 6 * e] * gr[e];
                }
            }
        }
    }
    for (int u = 0; u < NS; ++u) { /* rows on a contact's bodies, no column blocks */
        const int i = NC * (KD + 2) + u, c = 7 * u + 1;
        for (int s = 0; s < 2; ++s) {
            if (lb[c][s] < 0) continue;
            body[4 * i + s] = lb[c][s];
            for (int e = 0; e < 6; ++e) g[24 * i + 6 * s + e] = uniform();
        }
    }
    /* L by columns: p: the compliance shift and mu in sigma's row; beta: -1 there; sigma:
     * +1 in its betas' rows (E); the row-only unknowns: 1 on the diagonal and in p's row */
    int t = 0;
    for (int j = 0; j < NU; ++j) {
        l_start[j] = t;
        if (j < NC) {
            l_rows[t] = j;
            l_values[t++] = 1e-3;
            l_rows[t] = NC * (KD + 1) + j;
            l_values[t++] = 0.5;
        } else if (j < NC * (KD + 1)) {
            l_rows[t] = NC * (KD + 1) + (j - NC) / KD;
            l_values[t++] = -1.0;
        } else if (j < NC * (KD + 2)) {
            const int c = j - NC * (KD + 1);
            for (int l = 0; l < KD; ++l) {
                l_rows[t] = NC + KD * c + l;
                l_values[t++] = 1.0;
            }
        } else {
            const int c = 7 * (j - NC * (KD + 2)) + 1;
            l_rows[t] = c;
            l_values[t++] = 1.0;
            l_rows[t] = j;
            l_values[t++] = 1.0;
        }
    }
    l_start[NU] = t;
    *B = (pp_lcp_bodies){NU,   NB,   body, g,    {NU, l_start, l_rows, l_values},
                         0,    NULL, NULL, NULL, NULL, NULL};
    /* M from the same description, dense */
    memset(Md, 0, sizeof Md);
    for (int i = 0; i < NU; ++i)
        for (int j = 0; j < NU; ++j)
            for (int s = 0; s < 2; ++s)
                for (int s2 = 0; s2 < 2; ++s2) {
                    const int b = body[4 * i + s];
                    if (b < 0 || body[4 * j + 2 + s2] != b) continue;
                    for (int e = 0; e < 6; ++e)
                        Md[i + NU * j] += g[24 * i + 6 * s + e] * g[24 * j + 12 + 6 * s2 + e];
                }
    for (int j = 0; j < NU; ++j)
        for (int u = l_start[j]; u < l_start[j + 1]; ++u) Md[l_rows[u] + NU * j] += l_values[u];
    /* q = Gr^T v*, the rows' speeds under the bodies' free velocities v* (0 on sigma's), and
     * 0.2 more on the row-only unknowns' */
    double vfree[6 * NB];
    for (int e = 0; e < 6 * NB; ++e) vfree[e] = uniform();
    for (int i = 0; i < NU; ++i) {
        q1[i] = i >= NC * (KD + 2) ? 0.2 : 0.0;
        for (int s = 0; s < 2; ++s)
            for (int e = 0; body[4 * i + s] >= 0 && e < 6; ++e)
                q1[i] += g[24 * i + 6 * s + e] * vfree[6 * body[4 * i + s] + e];
    }
}

START_TEST(body_sweeps_are_the_m_sweeps)
{
    pp_lcp_bodies B;
    described_island(&B);
    static double diag[NU], sums[NU], zb[NU], zm[NU], wm[NU], u[NU], v[6 * NB], w[NU];
    ck_assert(pp_lcp_bodies_bounds(&B, diag, sums));
    for (int i = 0; i < NU; ++i) {
        double sum = 0.0, mx = 0.0;
        for (int j = 0; j < NU; ++j) {
            sum += fabs(Md[i + NU * j]);
            mx = fmax(mx, fabs(Md[i + NU * j]));
        }
        const double mii = Md[i + NU * i];
        const double rule = fmax(mii, PP_FALLBACK_DIAG_SHIFT * mx);
        ck_assert_msg(sums[i] >= sum * (1.0 - 1e-12), "row %d: sum bound %g < %g", i, sums[i], sum);
        ck_assert_msg(diag[i] >= rule * (1.0 - 1e-12), "row %d: D %g < rule %g", i, diag[i], rule);
        ck_assert(diag[i] > 0.0);
        if (diag[i] > mii * (1.0 + 1e-12)) /* shifted: the bound's scale */
            ck_assert(diag[i] >= PP_FALLBACK_DIAG_SHIFT * mx * (1.0 - 1e-12));
        else /* M_ii itself, exact */
            ck_assert_msg(fabs(diag[i] - mii) <= 1e-12 * fabs(mii), "row %d: D %.17g, M_ii %.17g",
                          i, diag[i], mii);
    }
    /* the sweeps: body space against lcp_fallback.c's on M (w by M's columns), the same D */
    memset(zb, 0, sizeof zb);
    pp_lcp_bodies_state(&B, q1, zb, u, v);
    double worst = 0.0;
    for (int k = 0; k < SWEEPS; ++k) {
        /* both sweeps from the same z (the body sweeps' iterate, w = M z + q on M): the
         * iteration is not contracting on this random island, and round-off carried over
         * sweeps grows with it */
        memcpy(zm, zb, sizeof zm);
        for (int i = 0; i < NU; ++i) {
            wm[i] = q1[i];
            for (int j = 0; j < NU; ++j) wm[i] += Md[i + NU * j] * zm[j];
        }
        pp_lcp_bodies_sweep(&B, diag, NULL, zb, u, v);
        for (int i = 0; i < NU; ++i) {
            double zn = zm[i] - wm[i] / diag[i];
            if (zn < 0.0) zn = 0.0;
            const double delta = zn - zm[i];
            if (delta == 0.0) continue;
            zm[i] = zn;
            for (int r = 0; r < NU; ++r) wm[r] += Md[r + NU * i] * delta;
        }
        double znorm = 0.0, diff = 0.0;
        for (int i = 0; i < NU; ++i) {
            znorm = fmax(znorm, fabs(zm[i]));
            diff = fmax(diff, fabs(zb[i] - zm[i]));
        }
        ck_assert_msg(diff <= 1e-12 * fmax(znorm, 1.0), "sweep %d: |z_bodies - z_M| = %g, |z| = %g",
                      k + 1, diff, znorm);
        worst = fmax(worst, diff / fmax(znorm, 1.0));
        pp_lcp_bodies_w(&B, u, v, w);
        for (int i = 0; i < NU; ++i) {
            double wi = q1[i];
            for (int j = 0; j < NU; ++j) wi += Md[i + NU * j] * zb[j];
            ck_assert_msg(fabs(w[i] - wi) <= 1e-10 * (1.0 + fabs(wi)),
                          "sweep %d row %d: w %g, Mz + q %g",
                          k + 1, i, w[i], wi);
        }
    }
    /* the fallback's answer: its measures are M's (rel(z): a lower bound of M's) */
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_result r, e;
    ck_assert_int_eq(pp_lcp_fallback_bodies(&B, q1, &o, zb, &r), PP_LCP_APPROXIMATE);
    pp_lcp_evaluate(NU, Md, q1, zb, w, &e);
    ck_assert_int_gt(r.fallback_iterations, 0);
    ck_assert(fabs(r.residual - e.residual) <= 1e-10 * (1.0 + e.residual));
    ck_assert(fabs(r.min_w - e.min_w) <= 1e-10 * (1.0 + fabs(e.min_w)));
    ck_assert(r.relative_residual <= e.relative_residual * (1.0 + 1e-12));
    ck_assert_double_lt(e.relative_residual, 0.1); /* z = 0's is 1 */
    ck_assert(e.min_z >= 0.0);
    /* with the cones: the answer in them (sum beta <= mu p: the sigma rows' w >= 0), sigma
     * the largest sliding speed its betas' rows read (their w >= 0), the measures M's */
    static int cone_first[NC + 1], cone_beta[NC * KD], cone_p[NC], cone_sigma[NC];
    static double cone_mu[NC];
    for (int c = 0; c < NC; ++c) {
        cone_first[c] = KD * c;
        for (int l = 0; l < KD; ++l) cone_beta[KD * c + l] = NC + KD * c + l;
        cone_p[c] = c;
        cone_sigma[c] = NC * (KD + 1) + c;
        cone_mu[c] = 0.5;
    }
    cone_first[NC] = KD * NC;
    B.cones = NC;
    B.cone_first = cone_first;
    B.cone_beta = cone_beta;
    B.cone_p = cone_p;
    B.cone_sigma = cone_sigma;
    B.cone_mu = cone_mu;
    pp_lcp_result rc, ec;
    ck_assert_int_eq(pp_lcp_fallback_bodies(&B, q1, &o, zb, &rc), PP_LCP_APPROXIMATE);
    pp_lcp_evaluate(NU, Md, q1, zb, w, &ec);
    double wmin = INFINITY, projected = 0.0;
    for (int c = 0; c < NC; ++c) {
        double sum = 0.0;
        for (int l = 0; l < KD; ++l) sum += zb[NC + KD * c + l];
        projected += sum > 0.0 && fabs(sum - 0.5 * zb[c]) <= 1e-12 * sum;
        ck_assert_msg(sum <= 0.5 * zb[c] * (1.0 + 1e-12), "cone %d: sum beta %g, mu p %g", c, sum,
                      0.5 * zb[c]);
    }
    for (int i = NC; i < NC * (KD + 2); ++i) wmin = fmin(wmin, w[i]); /* beta and sigma rows */
    ck_assert_msg(wmin >= -1e-12 * ec.scale, "beta, sigma rows: min w %g", wmin);
    ck_assert(fabs(rc.residual - ec.residual) <= 1e-10 * (1.0 + ec.residual));
    ck_assert(rc.relative_residual <= ec.relative_residual * (1.0 + 1e-12));
    ck_assert_double_lt(ec.relative_residual, 0.1);
    printf("check_fallback_bodies: with the cones, %d sweeps: r(z) %.3g, rel(z) %.3g, %g of %d "
           "cones on their boundary\n", rc.fallback_iterations, ec.residual,
           ec.relative_residual, projected, NC);
    printf("check_fallback_bodies: %d unknowns, %d sweeps: |z_bodies - z_M| <= %.2g |z|; the "
           "answer after %d sweeps: r(z) %.3g, rel(z) %.3g (on M; %.3g against the bounds)\n",
           NU, SWEEPS, worst, r.fallback_iterations, e.residual, e.relative_residual,
           r.relative_residual);
}
END_TEST

/* ---- 2. a PEG island past the clock, M not formed ------------------------------------- */

#define GRID 7
#define H 0.01
#define K_DIRS 4

START_TEST(unformed_island_gets_an_impulse)
{
    static pp_contact c[4 * GRID * GRID];
    static pp_peg_set sets[2 * GRID * GRID];
    pp_mlcp_body plates[2];
    memset(plates, 0, sizeof plates);
    memset(c, 0, sizeof c);
    const double a = 0.5, cz = 0.05, m = 3.0;
    for (int b = 0; b < 2; ++b) {
        plates[b].inv_mass = 1.0 / m;
        plates[b].inv_inertia[0] = plates[b].inv_inertia[4] = 3.0 / (m * (a * a + cz * cz));
        plates[b].inv_inertia[8] = 3.0 / (m * (a * a + a * a));
        plates[b].x[2] = cz + 2.0 * cz * b;
        plates[b].v[2] = b ? -1.0 : -0.5;
        plates[b].v[0] = 0.01 * b;
    }
    int nc = 0, ns = 0;
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < GRID; ++i)
            for (int j = 0; j < GRID; ++j) {
                pp_contact *ct = &c[nc];
                ct->body_a = b - 1; /* the ground, or plate 0 under plate 1 */
                ct->body_b = b;
                ct->p_a[0] = (i - 0.5 * (GRID - 1)) * 2.0 * a / GRID;
                ct->p_a[1] = (j - 0.5 * (GRID - 1)) * 2.0 * a / GRID;
                ct->p_a[2] = 2.0 * cz * b;
                ct->n[2] = 1.0;
                ct->mu = 0.5;
                if ((i + j + b) % 3 != 0) {
                    sets[ns++] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, nc, 1};
                    ++nc;
                    continue;
                }
                /* an I set: a secondary through the same point, its normal tilted about y,
                 * 5 mm closed or open */
                pp_contact *sec = &c[nc + 1];
                *sec = *ct;
                sec->n[0] = sin(0.3);
                sec->n[2] = cos(0.3);
                sec->psi = (i + j) % 2 ? -0.005 : 0.005;
                sets[ns++] = (pp_peg_set){PP_PEG_SET_I, PP_PEG_VERTEX_EDGE, nc, 2};
                nc += 2;
            }
    static double pn[4 * GRID * GRID], beta[4 * GRID * GRID * K_DIRS], sigma[4 * GRID * GRID],
        f[12 * GRID * GRID], nu[12];
    static unsigned char basis[16 * GRID * GRID];
    pp_peg_problem p = {.base = {.h = H, .body_count = 2, .bodies = plates, .contact_count = nc,
                                 .contacts = c, .friction_directions = K_DIRS},
                        .set_count = ns, .sets = sets};
    pp_mlcp_solution sol = {pn, beta, sigma, f, nu, NULL};
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(2, nc, ns, K_DIRS, &ws), PP_OK);
    /* past the clock; 4 nnz(M) above the bound: each of the 2 x 49 sets' 5 impulse columns
     * holds every row on plate 0, 5 x 98 (csc_entries_least: 240 100 in all) */
    pp_lcp_budget budget = pp_lcp_budget_start(1e-9, -1);
    while (pp_lcp_clock() <= budget.deadline) continue;
    pp_lcp_options o = pp_lcp_options_default();
    o.fallback_work = 9e5;
    pp_lcp_budget running = pp_lcp_budget_start(100.0, -1);
    o.budget = &running;
    ck_assert(pp_lcp_fallback_bodies_entries(&o) == HUGE_VAL); /* the clock runs: M formed */
    o.budget = &budget;
    ck_assert_double_eq(pp_lcp_fallback_bodies_entries(&o), 9e5 / (3.0 + PP_FALLBACK_SWEEPS));
    pp_peg_stats stats;
    memset(basis, 0, sizeof basis);
    const pp_status st = pp_peg_solve(ws, &p, &o, basis, &sol, NULL, &stats);
    ck_assert(st == PP_OK || st == PP_ERR_SOLVER);
    ck_assert_int_eq(stats.islands, 1);
    ck_assert_int_eq(stats.lcp.status, PP_LCP_APPROXIMATE);
    ck_assert_int_eq(stats.lcp.fallback, 1);
    ck_assert_int_gt(stats.lcp.fallback_iterations, 0);
    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    ck_assert_int_eq(n, ns * (K_DIRS + 2) + (nc - ns)); /* p, the slacks c, beta, sigma */
    double *w = malloc(sizeof *w * (size_t)n), *zero = calloc((size_t)n, sizeof *zero);
    ck_assert(w && zero);
    pp_lcp_result e, e0;
    pp_lcp_evaluate(n, M, q, ws->z, w, &e);
    pp_lcp_evaluate(n, M, q, zero, NULL, &e0);
    double zmax = 0.0, wn = INFINITY;
    for (int i = 0; i < n; ++i) zmax = fmax(zmax, ws->z[i]);
    for (int s = 0; s < ns; ++s) wn = fmin(wn, w[s]); /* the normal rows: p first */
    ck_assert_double_gt(zmax, 0.0);
    ck_assert_msg(e.residual < 0.1 * e0.residual, "r(z) %g, r(0) %g", e.residual, e0.residual);
    ck_assert_msg(e.relative_residual < 0.1, "rel(z) %g", e.relative_residual);
    ck_assert_msg(wn >= -1e-2 * 0.5, "min w_n = %g m/s", wn);
    double wf = INFINITY; /* the beta and sigma rows (every set frictional): in the cones */
    for (int i = ns + (nc - ns); i < n; ++i) wf = fmin(wf, w[i]);
    ck_assert_msg(wf >= -1e-9 * e.scale, "beta, sigma rows: min w %g", wf);
    ck_assert_msg(fabs(stats.lcp.residual - e.residual) <= 1e-9 * (1.0 + e.residual),
                  "reported r(z) %.17g, from M %.17g", stats.lcp.residual, e.residual);
    printf("check_fallback_bodies: PEG island of %d unknowns past the clock, M not formed: %d "
           "sweeps in body space, r(z) %.3g (z = 0: %.3g), rel(z) %.3g, min w_n %.3g m/s, "
           "plate speeds %.3g, %.3g m/s\n",
           n, stats.lcp.fallback_iterations, e.residual, e0.residual, e.relative_residual, wn,
           nu[2], nu[8]);
    free(w);
    free(zero);
    pp_peg_workspace_destroy(ws);
}
END_TEST

static Suite *fallback_bodies_suite(void)
{
    Suite *s = suite_create("fallback_bodies");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, body_sweeps_are_the_m_sweeps);
    tcase_add_test(tc, unformed_island_gets_an_impulse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(fallback_bodies_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
