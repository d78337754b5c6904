/*
 * Load sharing on an island assembled by columns (n >= pp_peg_csc_min_n, 257 unknowns by
 * default: contact/src/lcp_load_sharing.c, "By columns"): the compliance limit computed on
 * the sparse M by KLU, and the next step answered from the kept compliant basis alone.
 *
 * The scene: a rigid plate of mass m resting on an N x N grid of identical supports (static
 * ground, normal +z, gap 0), symmetric about its centre of mass, free velocity
 * v* = (delta, 0, -g h). Lemke's answer is a vertex (at most rank(A) = 3 of the normals
 * loaded when frictionless); the compliance limit is the minimum-norm impulse set that
 * balances the free momentum (every contact sticks: locally monotone, the same closed form as
 * check_load_sharing.c's block on four supports), here with the supports at x_i, y_i about
 * the centre and c below it:
 *     p_i = m g h / N^2 + c m delta x_i / sum_j x_j^2,    f_i = (-m delta / N^2, 0).
 */
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include "../src/lcp_internal.h"
#include "../src/peg_lcp_internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define H 0.01
/* The limit from sparse LU solves of condition ~1/LS_EPS: rounding ~1e-10 relative to the
 * reference it is computed from, Lemke's vertex, whose loads are of the order of the whole
 * weight m g h (not of one share, m g h / N^2): the tolerance is relative to m g h. */
#define TOL_SHARE 1e-9
/* No overlap after the step beyond this (m). */
#define TOL_OVERLAP 1e-9

static pp_mlcp_workspace *g_ws;

static void setup(void)
{
    pp_set_log_hook(pp_log_discard, NULL);
    ck_assert_int_eq(pp_mlcp_workspace_create(1, 400, 8, &g_ws), PP_OK);
}

static void teardown(void)
{
    pp_mlcp_workspace_destroy(g_ws);
    pp_set_log_hook(NULL, NULL);
}

typedef struct plate {
    int N, nc, k, open; /* nc supports, then `open` contacts from a ceiling */
    double m, mu, delta, e[3];
    pp_mlcp_body body;
    pp_contact c[400];
    double xy[400][2];
    double sum_x2;
} plate;

/* Plate of half extents (a, a, cz), centre at height cz; supports at a grid of pitch
 * 2 a / N centred under it. */
static void plate_build(plate *p, int N, double mu, int k, double delta)
{
    memset(p, 0, sizeof *p);
    p->N = N;
    p->nc = N * N;
    p->k = k;
    p->m = 3.0;
    p->mu = mu;
    p->delta = delta;
    const double a = 0.5, cz = 0.05;
    p->e[0] = p->e[1] = a;
    p->e[2] = cz;
    pp_mlcp_body *b = &p->body;
    b->inv_mass = 1.0 / p->m;
    b->inv_inertia[0] = 3.0 / (p->m * (a * a + cz * cz));
    b->inv_inertia[4] = 3.0 / (p->m * (a * a + cz * cz));
    b->inv_inertia[8] = 3.0 / (p->m * (a * a + a * a));
    b->x[2] = cz;
    b->v[0] = delta;
    b->v[2] = -G * H;
    const double pitch = 2.0 * a / N;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            const int t = i * N + j;
            p->xy[t][0] = (i - 0.5 * (N - 1)) * pitch;
            p->xy[t][1] = (j - 0.5 * (N - 1)) * pitch;
            p->sum_x2 += p->xy[t][0] * p->xy[t][0];
            pp_contact *c = &p->c[t];
            c->body_a = -1;
            c->body_b = 0;
            c->p_a[0] = p->xy[t][0];
            c->p_a[1] = p->xy[t][1];
            c->n[2] = 1.0;
            c->mu = mu;
        }
}

/* A ceiling CEILING m above the plate's top face: `open` contacts at its points over a grid
 * (gap CEILING, normal -z), which stay open in the step. */
#define CEILING 0.5
static void plate_ceiling(plate *p, int open)
{
    p->open = open;
    for (int t = 0; t < open; ++t) {
        pp_contact *c = &p->c[p->nc + t];
        memset(c, 0, sizeof *c);
        c->body_a = -1;
        c->body_b = 0;
        c->p_a[0] = -p->e[0] + 2.0 * p->e[0] * (t % 10 + 0.5) / 10.0;
        c->p_a[1] = -p->e[1] + 2.0 * p->e[1] * (t / 10 + 0.5) / 10.0;
        c->p_a[2] = 2.0 * p->e[2] + CEILING;
        c->n[2] = -1.0;
        c->psi = CEILING;
        c->mu = p->mu;
    }
}

/* The closed form, the friction cone and no overlap after the step checked on an answer. */
static void plate_check(const plate *p, const double *pn, const double *beta, const double *f,
                        const double *nu)
{
    const double share = p->m * G * H / p->nc, cz = p->e[2], tol = TOL_SHARE * p->m * G * H;
    double largest = 0.0;
    for (int t = 0; t < p->nc; ++t) {
        const double expect = share + cz * p->m * p->delta * p->xy[t][0] / p->sum_x2;
        ck_assert_msg(fabs(pn[t] - expect) <= tol,
                      "support %d of %d: p = %.17g, closed form %.17g (mu %g, k %d)", t, p->nc,
                      pn[t], expect, p->mu, p->k);
        largest = fmax(largest, pn[t]);
        if (p->mu > 0.0) {
            const double fx = -p->m * p->delta / p->nc;
            ck_assert_msg(fabs(f[3 * t] - fx) <= tol && fabs(f[3 * t + 1]) <= tol,
                          "support %d: friction (%g, %g), closed form (%g, 0)", t, f[3 * t],
                          f[3 * t + 1], fx);
            /* inside the friction cone (the pyramid: sum of beta <= mu p) */
            double sum = 0.0;
            for (int l = 0; l < p->k; ++l) {
                ck_assert(beta[t * p->k + l] >= 0.0);
                sum += beta[t * p->k + l];
            }
            ck_assert_msg(sum <= p->mu * pn[t] * (1.0 + 1e-12), "support %d: outside the "
                          "friction cone, %g > mu p = %g", t, sum, p->mu * pn[t]);
        }
        /* the support point's normal velocity after the step: no overlap beyond TOL_OVERLAP
         * (gap 0 now: the gap after the step is h v_n) */
        const double *w = nu + 3;
        const double r[2] = {p->xy[t][0], p->xy[t][1]};
        const double vz = nu[2] + w[0] * r[1] - w[1] * r[0];
        ck_assert_msg(H * vz >= -TOL_OVERLAP, "support %d sinks %g m", t, -H * vz);
    }
    /* Lemke's vertex loads a few supports: the limit loads every one (what this tests) */
    ck_assert(largest < 2.0 * share);
}

/* One solve; plate_check. */
static void plate_solve_and_check(plate *p, unsigned char *basis, pp_mlcp_stats *st)
{
    pp_mlcp_problem prob = {H, 1, &p->body, p->nc, p->c, p->k, 0.0, 0, 0.0};
    static double pn[400], beta[400 * 8], sigma[400], f[1200], nu[6];
    pp_mlcp_solution s = {pn, beta, sigma, f, nu, NULL};
    pp_lcp_options o = pp_lcp_options_default();
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &prob, &o, basis, &s, st), PP_OK);
    ck_assert_int_ge(st->largest_island, 257); /* by columns */
    ck_assert_int_eq(st->load_shared, 1);
    plate_check(p, pn, beta, f, nu);
}

/* The first solve (cold, an all-zero basis): answered by the compliant LCP's active-set
 * steps from the crash basis, no Lemke pivot. The second, with only the compliant basis kept
 * (bit 1; bit 0, Lemke's warm start, cleared): one factorisation of the kept basis, no pivot,
 * accepted from the basis. */
static void plate_two_steps(int N, double mu, int k, double delta)
{
    static plate p;
    plate_build(&p, N, mu, k, delta);
    const int size = pp_mlcp_lcp_size(p.nc, k);
    unsigned char *basis = calloc((size_t)size, 1);
    ck_assert_ptr_nonnull(basis);
    pp_mlcp_stats st;
    plate_solve_and_check(&p, basis, &st);
    ck_assert_int_eq(st.lcp.pivots, 0);
    int kept = 0;
    for (int i = 0; i < size; ++i) {
        kept |= basis[i] >> 1;
        basis[i] &= 2;
    }
    ck_assert_msg(kept, "the compliant basis is kept in bit 1");
    plate_solve_and_check(&p, basis, &st);
    ck_assert_int_eq(st.lcp.pivots, 0);
    ck_assert_int_eq(st.lcp.warm_started, 1);
    free(basis);
}

/* After Lemke: the plate's LCP (pp_mlcp_last_lcp) by columns, solved by Lemke
 * (pp_lcp_solve_csc: a vertex, a few supports loaded), then pp_load_sharing_apply on the
 * columns: the closed form. */
static void plate_after_lemke(int N, double mu, int k, double delta)
{
    static plate p;
    plate_build(&p, N, mu, k, delta);
    pp_mlcp_stats st;
    plate_solve_and_check(&p, NULL, &st);
    int n;
    const double *M, *q;
    pp_mlcp_last_lcp(g_ws, &n, &M, &q);
    ck_assert_int_ge(n, PP_LCP_SPARSE_MIN_N);
    /* M by columns, every diagonal entry present */
    int *start = malloc(((size_t)n + 1) * sizeof *start), *rows = malloc((size_t)n * n * sizeof *rows);
    double *values = malloc((size_t)n * n * sizeof *values);
    ck_assert(start && rows && values);
    int nnz = 0;
    for (int j = 0; j < n; ++j) {
        start[j] = nnz;
        for (int i = 0; i < n; ++i)
            if (M[i + (size_t)j * n] != 0.0 || i == j) {
                rows[nnz] = i;
                values[nnz++] = M[i + (size_t)j * n];
            }
    }
    start[n] = nnz;
    const pp_lcp_csc A = {n, start, rows, values};
    pp_lcp_workspace *lcp = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &lcp), PP_OK);
    double *z = calloc((size_t)n, sizeof *z);
    unsigned char *basis = calloc((size_t)n, 1);
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve_csc(lcp, &A, q, NULL, basis, z, &r), PP_OK);
    const double share = p.m * G * H / p.nc, tol = TOL_SHARE * p.m * G * H;
    double largest = 0.0;
    for (int t = 0; t < p.nc; ++t) largest = fmax(largest, z[t]);
    ck_assert_msg(largest > 2.0 * share, "Lemke's answer is a vertex: largest load %g, share %g",
                  largest, share);
    /* the layout [p (nc); beta (nc k); sigma (nc)] of one island holding every contact */
    pp_load_sharing ls;
    memset(&ls, 0, sizeof ls);
    ck_assert_int_eq(pp_load_sharing_reserve(&ls, n), PP_OK);
    memset(ls.force, 0, (size_t)n);
    for (int t = 0; t < p.nc; ++t) {
        ls.normal[t] = t;
        ls.beta[t] = mu > 0.0 ? p.nc + t * k : -1;
        ls.force[t] = 1;
        for (int l = 0; mu > 0.0 && l < k; ++l) ls.force[p.nc + t * k + l] = 1;
    }
    pp_lcp_options o = pp_lcp_options_default();
    /* Lemke's answer, for the runs under a work bound below */
    double *z_lemke = malloc((size_t)n * sizeof *z_lemke);
    double *z_again = malloc((size_t)n * sizeof *z_again);
    ck_assert(z_lemke && z_again);
    memcpy(z_lemke, z, (size_t)n * sizeof *z);
    const pp_lcp_result r_lemke = r;
    pp_load_sharing_outcome out =
        pp_load_sharing_apply(&ls, lcp, n, NULL, &A, q, p.nc, k, 6, &o, basis, z, &r);
    ck_assert_msg(out == PP_LOAD_SHARED || out == PP_LOAD_SHARED_IMPULSES, "outcome %d", out);
    ck_assert(ls.found);
    for (int t = 0; t < p.nc; ++t) {
        const double expect = share + p.e[2] * p.m * p.delta * p.xy[t][0] / p.sum_x2;
        ck_assert_msg(fabs(z[t] - expect) <= tol, "support %d: p = %.17g, closed form %.17g",
                      t, z[t], expect);
    }
    /* The call's work bound (lcp_load_sharing.c, "Work"): every factorisation and solve by
     * columns is charged before it runs. The call above charged c; under a bound of c it is
     * the same bit for bit, under c - 1 its last charge does not fit: Lemke's answer is kept
     * as it was (PP_LOAD_KEPT), the cut reported, the charge within the bound. */
    const double c = ls.work;
    ck_assert_int_eq(ls.work_cut, 0);
    ck_assert_double_gt(c, 0.0);
    for (int under = 0; under < 2; ++under) {
        memcpy(z_again, z_lemke, (size_t)n * sizeof *z);
        pp_lcp_result r_again = r_lemke;
        ls.work_bound = under ? c - 1.0 : c;
        out = pp_load_sharing_apply(&ls, lcp, n, NULL, &A, q, p.nc, k, 6, &o, basis, z_again,
                                    &r_again);
        ck_assert_int_eq(ls.work_cut, under);
        ck_assert_double_le(ls.work, ls.work_bound);
        if (!under) {
            ck_assert_double_eq(ls.work, c);
            ck_assert_msg(out == PP_LOAD_SHARED || out == PP_LOAD_SHARED_IMPULSES, "outcome %d",
                          out);
            ck_assert_int_eq(memcmp(z_again, z, (size_t)n * sizeof *z), 0);
        } else {
            ck_assert_int_eq(out, PP_LOAD_KEPT);
            ck_assert_int_eq(memcmp(z_again, z_lemke, (size_t)n * sizeof *z), 0);
        }
    }
    printf("check_load_sharing_large: %d x %d plate, %d unknowns: load sharing charged %.4g; "
           "under %.4g Lemke's answer kept\n", N, N, n, c, c - 1.0);
    free(z_lemke);
    free(z_again);
    pp_load_sharing_free(&ls);
    pp_lcp_workspace_destroy(lcp);
    free(z);
    free(basis);
    free(start);
    free(rows);
    free(values);
}

START_TEST(test_plate_after_lemke_frictionless)
{
    plate_after_lemke(17, 0.0, 4, 0.0);
}
END_TEST

START_TEST(test_plate_after_lemke_friction)
{
    plate_after_lemke(7, 0.5, 4, 0.005);
}
END_TEST

START_TEST(test_plate_frictionless)
{
    plate_two_steps(17, 0.0, 4, 0.0); /* 289 normals */
}
END_TEST

START_TEST(test_plate_friction_at_rest)
{
    plate_two_steps(7, 0.5, 4, 0.0); /* 49 contacts x 6 = 294 unknowns */
}
END_TEST

START_TEST(test_plate_friction_pushed)
{
    /* m delta = 0.015 N s < mu m g h = 0.147 N s: sticking */
    plate_two_steps(7, 0.5, 4, 0.005);
}
END_TEST

/* Velocities from the limit (no Lemke answer in a step answered from the kept basis): the
 * plate at rest stepped for 2 s (200 steps; its free velocity v + g h, its supports' gaps
 * moved by h v_n, the contact points kept: the rotation stays below 1e-12 rad). Every step
 * after the first is answered from the kept compliant basis; the plate must not creep: its
 * speed stays at rounding level, and no support sinks beyond TOL_OVERLAP. */
START_TEST(test_plate_rests)
{
    static plate p;
    plate_build(&p, 7, 0.5, 4, 0.0);
    const int size = pp_mlcp_lcp_size(p.nc, p.k);
    unsigned char *basis = calloc((size_t)size, 1);
    ck_assert_ptr_nonnull(basis);
    static double pn[400], nu[6];
    pp_mlcp_solution s = {pn, NULL, NULL, NULL, nu, NULL};
    pp_lcp_options o = pp_lcp_options_default();
    double fastest = 0.0, deepest = 0.0;
    int pivots = 0, shared = 0;
    for (int step = 0; step < 200; ++step) {
        pp_mlcp_problem prob = {H, 1, &p.body, p.nc, p.c, p.k, 0.0, 0, 0.0};
        pp_mlcp_stats st;
        ck_assert_int_eq(pp_mlcp_solve(g_ws, &prob, &o, basis, &s, &st), PP_OK);
        pivots += st.lcp.pivots;
        shared += st.load_shared;
        double speed = 0.0;
        for (int r = 0; r < 6; ++r) speed = fmax(speed, fabs(nu[r]));
        fastest = fmax(fastest, speed);
        for (int t = 0; t < p.nc; ++t) {
            const double vz = nu[2] + nu[3] * p.xy[t][1] - nu[4] * p.xy[t][0];
            p.c[t].psi += H * vz;
            deepest = fmin(deepest, p.c[t].psi);
        }
        memcpy(p.body.v, nu, 3 * sizeof *nu);
        memcpy(p.body.w, nu + 3, 3 * sizeof *nu);
        p.body.v[2] -= G * H;
    }
    ck_assert_int_eq(pivots, 0);
    ck_assert_int_eq(shared, 200);
    ck_assert_msg(fastest <= 1e-12, "the plate creeps: %g m/s", fastest);
    ck_assert_msg(deepest >= -TOL_OVERLAP, "a support sank %g m", -deepest);
    free(basis);
}
END_TEST

/* Screened (contact/src/peg_screen.c): the plate on its 7 x 7 supports under a ceiling with
 * 70 open contacts, one island of 119 sets, 714 unknowns, solved by pp_peg_solve (U sets).
 * Screening solves the supports' LCP (294 unknowns) and verifies the ceiling's contacts at
 * the answer's velocities; load sharing then runs on the supports' LCP as on any island by
 * columns. Checked on each step: the closed form on every support (plate_check), no load on
 * the ceiling, and z solving the WHOLE island's LCP (pp_peg_last_lcp, dense): rel(z) <= 1e-9,
 * r(z) <= 1e-4 ||q||, z >= 0 (lcp.h's acceptance). */
static void plate_peg_step(plate *p, pp_peg_workspace *ws, int screen, unsigned char *basis,
                           pp_peg_stats *st)
{
    const int total = p->nc + p->open;
    static pp_peg_set sets[400];
    for (int i = 0; i < total; ++i)
        sets[i] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, i, 1};
    pp_peg_problem prob = {.base = {.h = H, .body_count = 1, .bodies = &p->body,
                                    .contact_count = total, .contacts = p->c,
                                    .friction_directions = p->k},
                           .set_count = total, .sets = sets};
    static double pn[400], beta[400 * 8], sigma[400], f[1200], nu[6];
    pp_mlcp_solution s = {pn, beta, sigma, f, nu, NULL};
    pp_lcp_options o = pp_lcp_options_default();
    o.warm_start = 1;
    const int before = pp_peg_screening(screen);
    const pp_status status = pp_peg_solve(ws, &prob, &o, basis, &s, NULL, st);
    pp_peg_screening(before);
    ck_assert_int_eq(status, PP_OK);
    ck_assert_int_eq(st->lcp_size, 714);
    ck_assert_int_eq(st->screened_sets, screen ? p->open : 0);
    ck_assert_int_eq(st->load_shared, 1);
    plate_check(p, pn, beta, f, nu);
    for (int t = p->nc; t < total; ++t)
        ck_assert_msg(pn[t] == 0.0, "ceiling contact %d loaded: %g", t - p->nc, pn[t]);
    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    ck_assert_int_eq(n, 714);
    double *w = malloc(sizeof(double) * (size_t)n);
    ck_assert_ptr_nonnull(w);
    pp_lcp_result e;
    pp_lcp_evaluate(n, M, q, ws->z, w, &e);
    double qmax = 0.0;
    for (int i = 0; i < n; ++i) qmax = fmax(qmax, fabs(q[i]));
    ck_assert_msg(e.relative_residual <= 1e-9, "whole LCP: rel(z) = %g", e.relative_residual);
    ck_assert_msg(e.residual <= 1e-4 * qmax, "whole LCP: r(z) = %g, |q| = %g", e.residual, qmax);
    ck_assert_msg(e.min_z >= 0.0, "whole LCP: min z = %g", e.min_z);
    free(w);
}

/* Screened steps share the load: the first (cold) after Lemke on the supports' LCP, the
 * second from the compliant basis kept in bit 1 (no pivot). Pushed (sticking) and at rest. */
static void plate_screened(double delta)
{
    static plate p;
    plate_build(&p, 7, 0.5, 4, delta);
    plate_ceiling(&p, 70);
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(1, 119, 119, 4, &ws), PP_OK);
    unsigned char *basis = calloc(714, 1);
    ck_assert_ptr_nonnull(basis);
    pp_peg_stats st;
    plate_peg_step(&p, ws, 1, basis, &st);
    ck_assert_int_eq(st.largest_island, 294); /* the supports' LCP */
    plate_peg_step(&p, ws, 1, basis, &st);
    ck_assert_int_eq(st.lcp.pivots, 0);
    free(basis);
    pp_peg_workspace_destroy(ws);
}

START_TEST(test_plate_screened_pushed)
{
    plate_screened(0.005);
}
END_TEST

START_TEST(test_plate_screened_at_rest)
{
    plate_screened(0.0);
}
END_TEST

/* A screened step, then steps of the same island solved whole (screening off): from the
 * screened basis with its compliant basis (bit 1), and from Lemke's basis alone (bit 1
 * cleared), which the whole LCP accepts without pivoting. The latter is where solve_islands'
 * shortcut skips load sharing when it ran from that basis before and left the answer: it
 * did not (it changed the screened answer), so load sharing runs and shares the load. */
START_TEST(test_plate_screened_then_whole)
{
    static plate p;
    plate_build(&p, 7, 0.5, 4, 0.0);
    plate_ceiling(&p, 70);
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(1, 119, 119, 4, &ws), PP_OK);
    unsigned char *basis = calloc(714, 1), *lemke = calloc(714, 1);
    ck_assert(basis && lemke);
    pp_peg_stats st;
    plate_peg_step(&p, ws, 1, basis, &st);
    for (int i = 0; i < 714; ++i) lemke[i] = basis[i] & (unsigned char)~2;
    plate_peg_step(&p, ws, 0, basis, &st);
    ck_assert_int_eq(st.lcp.pivots, 0);
    plate_peg_step(&p, ws, 0, lemke, &st);
    ck_assert_int_eq(st.lcp.pivots, 0);
    free(basis);
    free(lemke);
    pp_peg_workspace_destroy(ws);
}
END_TEST

/* The sticking solve's entry in solve_islands (lcp_sticking.c; its threshold lowered to this
 * island's size): the plate at rest (answered by load sharing's cold entry), then pushed at
 * delta = 0.2 m/s > mu g h with mu = 0.5: every support must slide. Load sharing's kept
 * basis no longer answers, Lemke's warm basis is empty, so the sticking solve runs: its
 * convex problem has lambda > 0 on the loaded supports, and the second round, with them in
 * ST's form, gives ST's sliding answer: friction mu m g h against the push, so v_x = delta -
 * mu g h, the plate flat on its supports (v_z = w = 0). Its state is kept in the basis bytes
 * (PP_PEG_STICKING on the island's unknowns, PP_PEG_STICKING_SLIDES on the sigma). */
START_TEST(test_plate_pushed_slides_sticking)
{
    static plate p;
    const int before = pp_peg_sticking_min_n(257);
    plate_build(&p, 7, 0.5, 4, 0.0);
    const int size = pp_mlcp_lcp_size(p.nc, 4);
    unsigned char *basis = calloc((size_t)size, 1);
    ck_assert_ptr_nonnull(basis);
    pp_mlcp_stats st;
    plate_solve_and_check(&p, basis, &st); /* at rest: load sharing's cold entry */
    for (int i = 0; i < size; ++i) ck_assert_int_eq(basis[i] & PP_PEG_STICKING, 0);
    const double delta = 0.2;
    p.body.v[0] = delta;
    pp_mlcp_problem prob = {H, 1, &p.body, p.nc, p.c, p.k, 0.0, 0, 0.0};
    static double pn[400], beta[400 * 8], sigma[400], f[1200], nu[6];
    pp_mlcp_solution s = {pn, beta, sigma, f, nu, NULL};
    pp_lcp_options o = pp_lcp_options_default();
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &prob, &o, basis, &s, &st), PP_OK);
    pp_peg_sticking_min_n(before);
    ck_assert_int_eq(st.largest_island, 294);
    ck_assert_int_eq(st.lcp.status, PP_LCP_SOLVED);
    const double tol = 1e-9 * G * H;
    ck_assert_msg(fabs(nu[0] - (delta - p.mu * G * H)) <= tol, "v_x %.17g, closed form %.17g",
                  nu[0], delta - p.mu * G * H);
    for (int t = 1; t < 6; ++t) ck_assert_msg(fabs(nu[t]) <= tol, "nu[%d] = %g", t, nu[t]);
    double total = 0.0, friction = 0.0;
    for (int t = 0; t < p.nc; ++t) {
        total += pn[t];
        friction += f[3 * t];
        ck_assert_double_ge(pn[t], 0.0);
        ck_assert_double_eq_tol(sigma[t], delta - p.mu * G * H, tol); /* every support slides */
    }
    ck_assert_double_eq_tol(total, p.m * G * H, 1e-9 * p.m * G * H);
    ck_assert_double_eq_tol(friction, -p.mu * p.m * G * H, 1e-9 * p.m * G * H);
    int answered = 0, slides = 0;
    ck_assert_int_eq(st.lcp_size, 294);
    for (int i = 0; i < st.lcp_size; ++i) {
        answered += (basis[i] & PP_PEG_STICKING) != 0;
        slides += (basis[i] & PP_PEG_STICKING_SLIDES) != 0;
    }
    ck_assert_int_eq(answered, st.lcp_size); /* the sticking solve answered the island */
    ck_assert_int_eq(slides, p.nc);
    free(basis);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load_sharing_large");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_plate_frictionless);
    tcase_add_test(tc, test_plate_friction_at_rest);
    tcase_add_test(tc, test_plate_friction_pushed);
    tcase_add_test(tc, test_plate_after_lemke_frictionless);
    tcase_add_test(tc, test_plate_after_lemke_friction);
    tcase_add_test(tc, test_plate_rests);
    tcase_add_test(tc, test_plate_screened_pushed);
    tcase_add_test(tc, test_plate_screened_at_rest);
    tcase_add_test(tc, test_plate_screened_then_whole);
    tcase_add_test(tc, test_plate_pushed_slides_sticking);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
