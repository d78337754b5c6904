/*
 * Unit tests of constraint screening (contact/src/peg_screen.c): a large island's LCP solved
 * on the sets that can be active, the others completed and verified at the answer's
 * velocities.
 *  - a row of boxes, some resting and a far row hovering (its supports open): the hovering
 *    sets stay out of the LCP, and z with their completion (zero impulse, slacks of I sets,
 *    sigma, rolling bounds) solves the WHOLE island's LCP (pp_peg_last_lcp, evaluated by
 *    pp_lcp_evaluate); the resting boxes stop, the hovering ones keep nu*; the answer is the
 *    unscreened solve's; its basis is a warm start the whole LCP accepts without pivoting;
 *  - a fast box hitting a resting row: the gaps it closes join in later rounds, and no gap of
 *    the island (screened or not) ends the step closed, with no energy gained;
 *  - memory follows the solved sets: a 500-box row's island (9 998 unknowns) grows the LCP
 *    store to the 12 resting boxes' 216 unknowns only;
 *  - an island with every gap open and the bodies at relative rest forms no LCP (z = 0);
 *  - an island whose active sets hold most of its unknowns is solved whole, as without;
 *  - the give-up predicted: an island whose omitted sets touch within the acceptance on bodies
 *    S_0 acts on, enough to take S past half, is solved whole without a round.
 */
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include "../src/peg_lcp_internal.h" /* pp_peg_screening, the LCP store's capacities */
#include "peg_lcp_checks.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* peg_screen.c "A partly known landing": the island size from which a moving island the caller
 * starts cold starts screening's rounds from its known sets' bytes (default 8 000); returns
 * the previous size. */
int pp_peg_screen_partial_min_n(int n);

#define G 9.81
#define H 0.01
#define K_DIRS 4
#define TOL_LCP 1e-9        /* rel(z) of the whole LCP: every solve's acceptance (lcp.h) */
#define TOL_VELOCITY 1e-9   /* m/s */
#define TOL_GAP 1e-9        /* m: linearised end gap */

/*
 * A row of unit boxes (1 kg, inverse inertia 6) along x, `gap` apart, boxes from `resting` on
 * hovering `hover` above the ground. Each box stands on three frictional supports (mu = 0.5);
 * neighbours face each other through two frictionless contacts at gap `gap`. Options:
 * I sets: each hovering box's first support has a secondary (a tilted plane 5 mm further:
 * its slack row starts negative, so its completion c > 0); rolling: the first hovering box
 * spins, and its second support has rolling friction (its completion has sigma > 0, s > 0).
 */
typedef struct row {
    int nb, nc, ns;
    pp_mlcp_body *bodies;
    pp_contact *c;
    pp_peg_set *sets;
} row;

enum { ROW_I_SETS = 1, ROW_ROLLING = 2 };

static void row_build(row *r, int boxes, int resting, double hover, double gap, double v0,
                      int options)
{
    r->nb = boxes;
    const int max_c = 4 * boxes + 2 * boxes;
    r->bodies = calloc((size_t)boxes, sizeof *r->bodies);
    r->c = calloc((size_t)max_c, sizeof *r->c);
    r->sets = calloc((size_t)max_c, sizeof *r->sets);
    ck_assert(r->bodies && r->c && r->sets);
    int nc = 0, ns = 0;
    for (int b = 0; b < boxes; ++b) {
        pp_mlcp_body *body = &r->bodies[b];
        const int hovering = b >= resting;
        body->inv_mass = 1.0;
        for (int i = 0; i < 3; ++i) body->inv_inertia[4 * i] = 6.0;
        body->x[0] = (1.0 + gap) * b;
        body->x[2] = 0.5 + (hovering ? hover : 0.0);
        body->v[0] = b == 0 ? v0 : 0.0;
        body->v[2] = -G * H;
        if ((options & ROW_ROLLING) && b == resting) {
            body->w[0] = 0.5;
            body->w[1] = 0.2;
            body->w[2] = 0.1;
        }
        const double support[3][2] = {{-0.4, -0.4}, {0.4, -0.4}, {0.0, 0.4}};
        for (int t = 0; t < 3; ++t) {
            r->sets[ns] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, nc, 1};
            pp_contact *c = &r->c[nc++];
            c->body_a = -1;
            c->body_b = b;
            c->p_a[0] = body->x[0] + support[t][0];
            c->p_a[1] = support[t][1];
            c->n[2] = 1.0;
            c->psi = hovering ? hover : 0.0;
            c->mu = 0.5;
            if (hovering && t == 1 && (options & ROW_ROLLING) && b == resting) {
                c->surface = PP_CONTACT_ROLLING;
                c->rho[0] = c->rho[1] = c->rho[2] = 0.01;
                c->t1[0] = 1.0;
            }
            if (hovering && t == 0 && (options & ROW_I_SETS)) {
                pp_contact *s = &r->c[nc++];
                *s = *c;
                const double tilt = 0.1 / sqrt(1.01);
                s->n[0] = tilt;
                s->n[2] = 1.0 / sqrt(1.01);
                s->p_a[0] += 0.1;
                s->psi = hover + 0.005;
                r->sets[ns] = (pp_peg_set){PP_PEG_SET_I, PP_PEG_VERTEX_FACE, nc - 2, 2};
            }
            ++ns;
        }
        for (int t = 0; t < 2 && b + 1 < boxes; ++t) {
            r->sets[ns++] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, nc, 1};
            pp_contact *c = &r->c[nc++];
            c->body_a = b;
            c->body_b = b + 1;
            c->p_a[0] = body->x[0] + 0.5;
            c->p_a[1] = t ? 0.25 : -0.25;
            c->p_a[2] = b + 1 >= resting ? 0.5 + hover : 0.5;
            c->n[0] = 1.0;
            c->psi = gap;
        }
    }
    r->nc = nc;
    r->ns = ns;
}

static void row_free(row *r)
{
    free(r->bodies);
    free(r->c);
    free(r->sets);
}

static pp_peg_problem row_problem(const row *r)
{
    pp_peg_problem p = {.base = {.h = H, .body_count = r->nb, .bodies = r->bodies,
                                 .contact_count = r->nc, .contacts = r->c,
                                 .friction_directions = K_DIRS, .keep_lemke_vertex = 1},
                        .set_count = r->ns, .sets = r->sets};
    return p;
}

/* A workspace for the row's bodies, contacts and sets, K_DIRS directions. */
static pp_peg_workspace *row_workspace(const row *r)
{
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(r->nb, r->nc, r->ns, K_DIRS, &ws), PP_OK);
    return ws;
}

/* The fast box's row (test_fast_box_brings_in_gaps): 30 boxes, 10 of them resting 1 mm apart,
 * the others 2 cm up, the first box moving at v0 (m/s) along x. */
static void fast_box_row(row *r, double v0)
{
    row_build(r, 30, 10, 0.02, 0.001, v0, 0);
}

typedef struct solved {
    double *pn, *nu;
    unsigned char *basis;
    pp_peg_stats stats;
    pp_status status;
} solved;

static void solve(pp_peg_workspace *ws, const row *r, const unsigned char *warm, int screen,
                  solved *out)
{
    const int n_max = pp_peg_lcp_size(r->ns, r->nc, K_DIRS) + 9 * r->ns;
    out->pn = calloc((size_t)r->nc, sizeof *out->pn);
    out->nu = calloc(6 * (size_t)r->nb, sizeof *out->nu);
    out->basis = calloc((size_t)n_max, 1);
    ck_assert(out->pn && out->nu && out->basis);
    if (warm) memcpy(out->basis, warm, (size_t)n_max);
    pp_mlcp_solution sol = {out->pn, NULL, NULL, NULL, out->nu, NULL};
    pp_peg_problem p = row_problem(r);
    pp_lcp_options o = pp_lcp_options_default();
    o.warm_start = warm != NULL;
    const int before = pp_peg_screening(screen);
    out->status = pp_peg_solve(ws, &p, &o, out->basis, &sol, NULL, &out->stats);
    pp_peg_screening(before);
}

/* The fast box's row at v0 built in *r and solved cold with screening into *s: answered, its
 * gaps brought in over 3 rounds or more. Returns the workspace, sized by the row. */
static pp_peg_workspace *fast_box_solved(row *r, double v0, solved *s)
{
    fast_box_row(r, v0);
    pp_peg_workspace *ws = row_workspace(r);
    solve(ws, r, NULL, 1, s);
    ck_assert_int_eq(s->status, PP_OK);
    ck_assert_int_ge(s->stats.screen_rounds, 3); /* gaps brought in round by round */
    return ws;
}

static void solved_free(solved *s)
{
    free(s->pn);
    free(s->nu);
    free(s->basis);
}


/* Linearised end gap psi + h G^T nu of contact c. */
static double end_gap(const row *r, const pp_contact *c, const double *nu)
{
    double ga[6], gb[6];
    const double *xa = c->body_a >= 0 ? r->bodies[c->body_a].x : NULL;
    const double *xb = c->body_b >= 0 ? r->bodies[c->body_b].x : NULL;
    pp_mlcp_contact_jacobian(c, xa, xb, c->n, ga, gb);
    double rate = 0.0;
    for (int i = 0; i < 6; ++i) {
        if (c->body_a >= 0) rate += ga[i] * nu[6 * c->body_a + i];
        if (c->body_b >= 0) rate += gb[i] * nu[6 * c->body_b + i];
    }
    return c->psi + H * rate;
}

static double kinetic_energy(const row *r, const double *nu)
{
    double e = 0.0;
    for (int b = 0; b < r->nb; ++b)
        for (int i = 0; i < 3; ++i)
            e += 0.5 * nu[6 * b + i] * nu[6 * b + i] + 0.5 / 6.0 * nu[6 * b + 3 + i] * nu[6 * b + 3 + i];
    return e;
}

/*
 * The far row screened out (loop: U sets with 8 resting boxes, S solved dense (144 unknowns);
 * with I sets, 12 resting, S by columns (216); with I sets and a spinning box with rolling
 * friction). 40 boxes, the others 2 cm up; the only sets that can be active are the resting
 * boxes' supports.
 */
/* The row's answer nu of the LCP that ws solved last, as the tests below ask of it: exact on
 * the whole LCP (expect_peg_lcp_solved), no contact's gap ending closed (screened or not), and
 * no kinetic energy gained over the row's velocities before the step; `what` names the solve
 * in the messages. */
static void expect_row_answer(pp_peg_workspace *ws, const row *r, const double *nu,
                              const char *what)
{
    expect_peg_lcp_solved(ws, TOL_LCP);
    for (int i = 0; i < r->nc; ++i)
        ck_assert_msg(end_gap(r, &r->c[i], nu) >= -TOL_GAP, "%s: contact %d ends %g m closed",
                      what, i, -end_gap(r, &r->c[i], nu));
    double *before = malloc(6 * (size_t)r->nb * sizeof *before);
    ck_assert_ptr_nonnull(before);
    for (int b = 0; b < r->nb; ++b) {
        memcpy(&before[6 * b], r->bodies[b].v, 3 * sizeof(double));
        memcpy(&before[6 * b + 3], r->bodies[b].w, 3 * sizeof(double));
    }
    const double e_before = kinetic_energy(r, before), e_after = kinetic_energy(r, nu);
    free(before);
    ck_assert_msg(e_after <= e_before, "%s: kinetic energy %.17g after, %.17g before", what,
                  e_after, e_before);
}

static const struct {
    int resting, options;
} k_far[] = {{8, 0}, {12, ROW_I_SETS}, {12, ROW_I_SETS | ROW_ROLLING}};

START_TEST(test_far_row_screened)
{
    row r;
    const int resting = k_far[_i].resting, options = k_far[_i].options;
    row_build(&r, 40, resting, 0.02, 0.002, 0.0, options);
    pp_peg_workspace *ws = row_workspace(&r);
    solved s;
    solve(ws, &r, NULL, 1, &s);
    ck_assert_int_eq(s.status, PP_OK);
    ck_assert_int_eq(s.stats.islands, 1);
    ck_assert_int_ge(s.stats.lcp_size, 257);
    /* S: the resting boxes' 3 supports, 6 unknowns each; every other set verified */
    ck_assert_int_eq(s.stats.largest_island, 18 * resting);
    ck_assert_int_eq(s.stats.screened_sets, r.ns - 3 * resting);
    ck_assert_int_eq(s.stats.screened_unknowns, s.stats.lcp_size - 18 * resting);
    ck_assert_int_eq(s.stats.screen_rounds, 1);
    ck_assert_int_eq(s.stats.screen_whole, 0);
    expect_peg_lcp_solved(ws, TOL_LCP);
    /* the resting boxes stop; the hovering ones keep nu* (no impulse) */
    for (int b = 0; b < r.nb; ++b)
        for (int i = 0; i < 6; ++i) {
            const double v = s.nu[6 * b + i];
            if (b < resting)
                ck_assert_msg(fabs(v) <= TOL_VELOCITY, "box %d nu[%d] = %g", b, i, v);
            else
                ck_assert_msg(v == (i < 3 ? r.bodies[b].v[i] : r.bodies[b].w[i - 3]),
                              "box %d nu[%d] = %.17g", b, i, v);
        }
    /* the unscreened solve's answer: the resting supports' impulses (unique: three
     * independent supports a box) */
    solved whole;
    solve(ws, &r, NULL, 0, &whole);
    ck_assert_int_eq(whole.status, PP_OK);
    ck_assert_int_eq(whole.stats.screened_sets, 0);
    ck_assert_int_eq(whole.stats.largest_island, whole.stats.lcp_size);
    for (int i = 0; i < r.nc; ++i)
        ck_assert_msg(fabs(s.pn[i] - whole.pn[i]) <= 1e-12, "p[%d]: screened %.17g, whole %.17g",
                      i, s.pn[i], whole.pn[i]);
    /* Without a completed sigma or s > 0 (no spin), the screened basis (omitted impulses
     * nonbasic, completed slacks basic) is a solution basis of the whole LCP: the unscreened
     * solve accepts it without a pivot. */
    if (!(options & ROW_ROLLING)) {
        solved warm;
        solve(ws, &r, s.basis, 0, &warm);
        ck_assert_int_eq(warm.status, PP_OK);
        ck_assert_int_eq(warm.stats.lcp.pivots, 0);
        ck_assert_int_eq(warm.stats.lcp.warm_started, 1);
        solved_free(&warm);
    }
    /* warm-started screened solve: the same sets, no pivot */
    solved again;
    solve(ws, &r, s.basis, 1, &again);
    ck_assert_int_eq(again.status, PP_OK);
    ck_assert_int_eq(again.stats.lcp.pivots, 0);
    ck_assert_int_eq(again.stats.largest_island, 18 * resting);
    solved_free(&again);
    solved_free(&whole);
    solved_free(&s);
    pp_peg_workspace_destroy(ws);
    row_free(&r);
}
END_TEST

/*
 * A fast box (1.5 m/s along x) hits a row of 10 resting boxes 1 mm apart; 20 more hover 2 cm
 * up beyond them. The row's gaps are open at the free motion (psi/h = 0.1 m/s) but close as the
 * push goes down the row: each round's answer moves the next box, whose gap then joins. The
 * answer solves the whole LCP, no gap ends closed (screened or not), no energy is gained.
 */
START_TEST(test_fast_box_brings_in_gaps)
{
    row r;
    solved s;
    pp_peg_workspace *ws = fast_box_solved(&r, 1.5, &s);
    ck_assert_int_eq(s.stats.screen_whole, 0);
    ck_assert_int_gt(s.stats.screened_sets, 0); /* the hovering boxes stay out */
    ck_assert_int_lt(s.stats.largest_island, s.stats.lcp_size);
    expect_row_answer(ws, &r, s.nu, "fast box");
    /* the push reached past box 1: the gaps of boxes 1-2 and 2-3 carried impulse */
    ck_assert_double_gt(s.nu[6 * 2], 0.1);
    ck_assert_double_gt(s.nu[6 * 3], 0.0);
    solved_free(&s);
    pp_peg_workspace_destroy(ws);
    row_free(&r);
}
END_TEST

/*
 * Memory follows the solved sets: 500 boxes (9 998 unknowns, one island), 12 resting. The LCP
 * store (Lemke workspace, q/z/basis/map, columns) grows to the 12 boxes' 216 unknowns, not the
 * island's; the answer holds the resting boxes, the others fall freely.
 */
START_TEST(test_memory_follows_solved)
{
    row r;
    row_build(&r, 500, 12, 0.02, 0.002, 0.0, 0);
    pp_peg_workspace *ws = row_workspace(&r);
    solved s;
    solve(ws, &r, NULL, 1, &s);
    ck_assert_int_eq(s.status, PP_OK);
    ck_assert_int_eq(s.stats.islands, 1);
    ck_assert_int_eq(s.stats.lcp_size, 18 * 500 + 2 * 499);
    ck_assert_int_eq(s.stats.largest_island, 216);
    ck_assert_int_eq(s.stats.screened_unknowns, s.stats.lcp_size - 216);
    ck_assert_int_le(ws->dense->lcp_capacity, 216);
    ck_assert_int_le(ws->dense->capacity, 216);
    ck_assert_int_le((int)ws->dense->csc.n_capacity, 217);
    ck_assert_int_eq(ws->dense->matrix_capacity, 0);
    double weight = 0.0;
    for (int i = 0; i < r.nc; ++i) weight += r.c[i].n[2] * s.pn[i];
    ck_assert_double_eq_tol(weight, 12 * G * H, 1e-9 * 12 * G * H);
    for (int b = 0; b < r.nb; ++b)
        for (int i = 0; i < 6; ++i) {
            const double want = b < 12 || i != 2 ? 0.0 : -G * H;
            ck_assert_msg(fabs(s.nu[6 * b + i] - want) <= TOL_VELOCITY, "box %d nu[%d] = %g",
                          b, i, s.nu[6 * b + i]);
        }
    solved_free(&s);
    pp_peg_workspace_destroy(ws);
    row_free(&r);
}
END_TEST

/* Every gap open, the bodies at relative rest (a falling row): S is empty, no LCP is formed
 * (the store never grows), z = 0 solves the whole LCP and every body keeps nu*. */
START_TEST(test_all_open_no_lcp)
{
    row r;
    row_build(&r, 40, 0, 0.02, 0.002, 0.0, ROW_I_SETS);
    pp_peg_workspace *ws = row_workspace(&r);
    solved s;
    solve(ws, &r, NULL, 1, &s);
    ck_assert_int_eq(s.status, PP_OK);
    ck_assert_int_eq(s.stats.largest_island, 0);
    ck_assert_int_eq(s.stats.screened_sets, r.ns);
    ck_assert_int_eq(s.stats.lcp.pivots, 0);
    ck_assert_int_eq(ws->dense->lcp_capacity, 0);
    for (int i = 0; i < r.nc; ++i) ck_assert(s.pn[i] == 0.0);
    for (int b = 0; b < r.nb; ++b) ck_assert(s.nu[6 * b + 2] == -G * H);
    expect_peg_lcp_solved(ws, TOL_LCP);
    solved_free(&s);
    pp_peg_workspace_destroy(ws);
    row_free(&r);
}
END_TEST

/* A resting row (every support active: more than half the unknowns) is solved whole, and an
 * island below the by-columns threshold is never screened. */
START_TEST(test_active_island_solved_whole)
{
    for (int boxes = 20; boxes >= 5; boxes -= 15) {
        row r;
        row_build(&r, boxes, boxes, 0.0, 0.002, 0.0, 0);
        pp_peg_workspace *ws = row_workspace(&r);
        solved s;
        solve(ws, &r, NULL, 1, &s);
        ck_assert_int_eq(s.status, PP_OK);
        ck_assert_int_eq(s.stats.screen_rounds, 0);
        ck_assert_int_eq(s.stats.screened_sets, 0);
        ck_assert_int_eq(s.stats.largest_island, s.stats.lcp_size);
        expect_peg_lcp_solved(ws, TOL_LCP);
        solved_free(&s);
        pp_peg_workspace_destroy(ws);
        row_free(&r);
    }
}
END_TEST

/*
 * The give-up predicted at S_0 (peg_screen.c, "Touching within the acceptance"). The fast box
 * of test_fast_box_brings_in_gaps pushes a row of 16 resting boxes (14 more hover), S_0 = their
 * supports and the first gap, 290 of 598 unknowns. With the row's gaps 1e-9 m apart (open at
 * the free motion by 1e-7 m/s) the push closes them round by round until S passes half: the
 * rounds run and are thrown away. With the gaps 1e-16 m apart (open by 1e-14 m/s, below the
 * acceptance's 1e-9 ||q||) the sets between the resting boxes are counted with S_0 and take it
 * past half: solved whole at once, no round, the pivots and the answer those of the solve
 * without screening.
 */
START_TEST(test_give_up_predicted)
{
    const double gaps[2] = {1e-9, 1e-16};
    for (int g = 0; g < 2; ++g) {
        row r;
        row_build(&r, 30, 16, 0.02, gaps[g], 1.5, 0);
        pp_peg_workspace *ws = row_workspace(&r);
        solved s, whole;
        solve(ws, &r, NULL, 0, &whole);
        solve(ws, &r, NULL, 1, &s);
        ck_assert_int_eq(s.status, PP_OK);
        ck_assert_int_eq(whole.status, PP_OK);
        ck_assert_int_eq(s.stats.lcp_size, 598);
        ck_assert_int_eq(s.stats.screened_sets, 0);
        ck_assert_int_eq(s.stats.largest_island, s.stats.lcp_size);
        expect_peg_lcp_solved(ws, TOL_LCP);
        if (g == 0) { /* rounds run, then given up */
            ck_assert_int_ge(s.stats.screen_rounds, 2);
            ck_assert_int_eq(s.stats.screen_whole, 1);
            ck_assert_int_gt(s.stats.lcp.pivots, whole.stats.lcp.pivots);
        } else { /* predicted: no round */
            ck_assert_int_eq(s.stats.screen_rounds, 0);
            ck_assert_int_eq(s.stats.screen_whole, 0);
            ck_assert_int_eq(s.stats.lcp.pivots, whole.stats.lcp.pivots);
        }
        for (int i = 0; i < r.nc; ++i) /* the unscreened answer, bit for bit */
            ck_assert_msg(s.pn[i] == whole.pn[i], "gap %g, p[%d]: %.17g, whole %.17g",
                          gaps[g], i, s.pn[i], whole.pn[i]);
        printf("check_peg_screen: gaps %g m: %d rounds, %d pivots (whole alone %d)\n",
               gaps[g], s.stats.screen_rounds, s.stats.lcp.pivots, whole.stats.lcp.pivots);
        solved_free(&s);
        solved_free(&whole);
        pp_peg_workspace_destroy(ws);
        row_free(&r);
    }
}
END_TEST

/*
 * A partly known landing (peg_screen.c "A partly known landing"): a large moving island that
 * the caller starts cold (o.warm_start = 0: some of its sets are new) but whose known sets'
 * bytes it passes starts screening's rounds from those bytes. The fast box of
 * test_fast_box_brings_in_gaps (1.5 m/s) solved cold; then the same row with the box at 1.6
 * m/s, cold, its basis bytes the first answer's, the rule's size lowered to the island's: the
 * rounds start from the first answer's active sets, and take fewer rounds and fewer pivots
 * than the same solve with the rule off (main's: from w basic), every answer exact on the
 * whole LCP, no gap ending closed, no energy gained.
 */
START_TEST(test_partly_known_starts_rounds)
{
    row first, r;
    solved s;
    pp_peg_workspace *ws = fast_box_solved(&first, 1.5, &s);
    fast_box_row(&r, 1.6); /* the same boxes and sets as the first: ws is sized for it */
    ck_assert(r.nb == first.nb && r.nc == first.nc && r.ns == first.ns);
    const int n_max = pp_peg_lcp_size(r.ns, r.nc, K_DIRS) + 9 * r.ns;
    solved out[2]; /* [0]: the rule off (main's cold rounds), [1]: on */
    for (int on = 0; on < 2; ++on) {
        solved *o = &out[on];
        o->pn = calloc((size_t)r.nc, sizeof *o->pn);
        o->nu = calloc(6 * (size_t)r.nb, sizeof *o->nu);
        o->basis = malloc((size_t)n_max);
        ck_assert(o->pn && o->nu && o->basis);
        memcpy(o->basis, s.basis, (size_t)n_max); /* the known sets' bytes */
        pp_mlcp_solution sol = {o->pn, NULL, NULL, NULL, o->nu, NULL};
        pp_peg_problem p = row_problem(&r);
        pp_lcp_options opt = pp_lcp_options_default();
        opt.warm_start = 0; /* started cold by the caller */
        const int before = pp_peg_screen_partial_min_n(on ? 257 : 1 << 30);
        o->status = pp_peg_solve(ws, &p, &opt, o->basis, &sol, NULL, &o->stats);
        pp_peg_screen_partial_min_n(before);
        ck_assert_int_eq(o->status, PP_OK);
        ck_assert_int_eq(o->stats.screen_whole, 0);
        ck_assert_int_lt(o->stats.largest_island, o->stats.lcp_size);
        expect_row_answer(ws, &r, o->nu, on ? "the rule on" : "the rule off");
        printf("check_peg_screen: partly known, rule %s: %d rounds, %d pivots (the first "
               "answer cold: %d rounds, %d pivots)\n", on ? "on" : "off",
               o->stats.screen_rounds, o->stats.lcp.pivots, s.stats.screen_rounds,
               s.stats.lcp.pivots);
    }
    ck_assert_int_lt(out[1].stats.screen_rounds, out[0].stats.screen_rounds);
    ck_assert_int_lt(out[1].stats.lcp.pivots, out[0].stats.lcp.pivots);
    solved_free(&out[0]);
    solved_free(&out[1]);
    solved_free(&s);
    pp_peg_workspace_destroy(ws);
    row_free(&r);
    row_free(&first);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_screen");
    TCase *tc = tcase_create("peg_screen");
    tcase_set_timeout(tc, 120); /* the whole LCPs are assembled dense for the checks */
    tcase_add_loop_test(tc, test_far_row_screened, 0, (int)(sizeof k_far / sizeof k_far[0]));
    tcase_add_test(tc, test_fast_box_brings_in_gaps);
    tcase_add_test(tc, test_memory_follows_solved);
    tcase_add_test(tc, test_all_open_no_lcp);
    tcase_add_test(tc, test_active_island_solved_whole);
    tcase_add_test(tc, test_give_up_predicted);
    tcase_add_test(tc, test_partly_known_starts_rounds);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
