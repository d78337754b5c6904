/*
 * An iterate of ST96's re-linearisation answered only approximately does not replace the
 * step's exact answer (relinearize.c, relinearize_step "An iterate answered approximately"),
 * and the island's pivot budget (pp_config.lcp_budget_pivots) cuts LCP solves as the clock
 * does, the same on every machine.
 *
 * The scene is soak seed 1178's island (it_hulls_1178.h: two hulls falling together onto the
 * ground, mu = 1, k = 4, h = 0.02), clock-free. At a step whose first solve alone
 * (relinearize_iterations = 0) takes P pivots and is exact, the step is run again from the
 * same state with the re-linearisation on and a budget of P + 1 pivots: the first solve is
 * the same, and the first iterate's Lemke stops after one pivot, so the bounded fallback
 * answers that iterate's LCP short of its acceptance (measured: residual 2.59 at step 0 under
 * the standard model, 0.528 at step 0 and 0.403 at step 3 under PEG). Asserted: the step
 * returns PP_OK with only the first solve's answer applied and reported (lcp_status 0,
 * lcp_fallback 0, no approximate solve, the first solve's residual), the re-linearisation cut
 * there (relinearize_cut 1, one re-linearisation, the first answer kept: relinearize_refused
 * 1), and the hulls exactly where the first solve alone puts them (positions, orientations,
 * velocities bit for bit), so their overlap volumes are the first solve's too. Before the
 * rule the fallback's answer was reported (lcp_fallback 2) at every one of these steps, and
 * at PEG's step 3 it was applied: the hulls' velocities 1.6 m/s off the first solve's.
 * And the budget itself: one pivot, below the first solve's P, cuts the first solve: the step
 * is answered by the bounded fallback (lcp_fallback 2, one approximate solve), PP_OK, the
 * hulls finite, and the same budget gives the same bits again.
 */
#include "pegplus/pegplus.h"
#include "pegplus/lcp.h"
#include "it_common.h"
#include "it_hulls_1178.h"

#include <check.h>
#include <math.h>
#include <string.h>

static const double H = 0.02, G = 9.81;

static void make(pair_world *p, pp_model model)
{
    pp_config c = pp_config_default();
    c.model = model;
    c.surface.mu = 1.0;
    c.surface.bounce = 0.0;
    c.friction_directions = 4;
    c.lcp_budget_seconds = 0.0; /* no clock: the cuts are the pivot budget's */
    pp_it_hulls_make(p, &c, G);
}

static void set_step(pair_world *p, int relinearize_iterations, long pivots)
{
    pp_config c = pp_world_get_config(p->pp);
    c.relinearize_iterations = relinearize_iterations;
    c.lcp_budget_pivots = pivots;
    ck_assert_int_eq(pp_world_set_config(p->pp, &c), PP_OK);
}

/* Are the hulls of a and b in the same state, bit for bit? */
static int same_state(const pair_world *a, const pair_world *b)
{
    for (int i = 0; i < 2; ++i) {
        const dReal *x[4] = {dBodyGetPosition(a->body[i]), dBodyGetQuaternion(a->body[i]),
                             dBodyGetLinearVel(a->body[i]), dBodyGetAngularVel(a->body[i])};
        const dReal *y[4] = {dBodyGetPosition(b->body[i]), dBodyGetQuaternion(b->body[i]),
                             dBodyGetLinearVel(b->body[i]), dBodyGetAngularVel(b->body[i])};
        for (int k = 0; k < 4; ++k)
            if (memcmp(x[k], y[k], (k == 1 ? 4 : 3) * sizeof(dReal)) != 0) return 0;
    }
    return 1;
}

/* The largest difference of the hulls' velocities in a and b, m/s or rad/s. */
static double velocity_difference(const pair_world *a, const pair_world *b)
{
    double d = 0.0;
    for (int i = 0; i < 2; ++i) {
        const dReal *va = dBodyGetLinearVel(a->body[i]), *vb = dBodyGetLinearVel(b->body[i]);
        const dReal *wa = dBodyGetAngularVel(a->body[i]), *wb = dBodyGetAngularVel(b->body[i]);
        for (int j = 0; j < 3; ++j) d = fmax(d, fmax(fabs(va[j] - vb[j]), fabs(wa[j] - wb[j])));
    }
    return d;
}

/* the steps whose first iterate the budget cuts: (model, step) */
static const struct {
    pp_model model;
    int step;
} CASES[] = {{PP_MODEL_STANDARD, 0}, {PP_MODEL_PEG, 0}, {PP_MODEL_PEG, 3}};

START_TEST(test_approximate_iterate_keeps_first_answer)
{
    const pp_model model = CASES[_i].model;
    const int step = CASES[_i].step;
    pair_world first, cut; /* the first solve alone; the re-linearisation under P + 1 pivots */
    make(&first, model);
    make(&cut, model);
    for (int s = 0; s < step; ++s) { /* the same trajectory, no budget */
        ck_assert_int_eq(pp_world_step(first.pp, H), PP_OK);
        ck_assert_int_eq(pp_world_step(cut.pp, H), PP_OK);
    }
    ck_assert(same_state(&first, &cut));

    set_step(&first, 0, 0);
    ck_assert_int_eq(pp_world_step(first.pp, H), PP_OK);
    const pp_step_stats a = *pp_world_get_stats(first.pp);
    ck_assert_int_eq(a.lcp_status, 0); /* an exact first answer */
    ck_assert_int_eq(a.lcp_fallback, 0);
    ck_assert_msg(a.lcp_residual <= 1e-12, "first solve's residual %.3g", a.lcp_residual);
    ck_assert_int_gt(a.lcp_pivots, 0);

    set_step(&cut, 20, (long)a.lcp_pivots + 1);
    ck_assert_int_eq(pp_world_step(cut.pp, H), PP_OK);
    const pp_step_stats *t = pp_world_get_stats(cut.pp);
    /* the iterate ran and its LCP was cut (it pivoted, past the first solve's P) */
    ck_assert_int_eq(t->relinearizations, 1);
    ck_assert_int_gt(t->lcp_pivots, a.lcp_pivots);
    ck_assert_int_eq(t->lcp_solves, 2);
    /* only the first answer applied, and reported */
    ck_assert_msg(same_state(&first, &cut),
                  "the step is not the first solve's: velocities %.3g apart",
                  velocity_difference(&first, &cut));
    ck_assert_double_eq(pp_it_hulls_overlap(&cut), pp_it_hulls_overlap(&first));
    ck_assert_int_eq(t->lcp_status, 0);
    ck_assert_int_eq(t->lcp_fallback, 0);
    ck_assert_int_eq(t->lcp_approximate, 0);
    ck_assert_double_eq(t->lcp_residual, a.lcp_residual);
    ck_assert_int_eq(t->relinearize_cut, 1);
    ck_assert_int_eq(t->relinearize_refused, 1);
    pp_it_hulls_destroy(&first);
    pp_it_hulls_destroy(&cut);
}
END_TEST

START_TEST(test_pivot_budget_cuts_first_solve)
{
    pair_world p[2];
    for (int r = 0; r < 2; ++r) {
        make(&p[r], PP_MODEL_PEG);
        set_step(&p[r], 20, 1);
        ck_assert_int_eq(pp_world_step(p[r].pp, H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(p[r].pp);
        ck_assert_int_eq(t->lcp_fallback, 2); /* the bounded fallback's answer, applied */
        ck_assert_int_eq(t->lcp_approximate, 1);
        ck_assert_int_eq(t->lcp_status, PP_LCP_APPROXIMATE);
        ck_assert_double_gt(t->lcp_residual, 0.0);
        for (int i = 0; i < 2; ++i) ck_assert(pp_it_hulls_finite(&p[r], i));
    }
    ck_assert(same_state(&p[0], &p[1])); /* the same cut on every run */
    pp_it_hulls_destroy(&p[0]);
    pp_it_hulls_destroy(&p[1]);
}
END_TEST

int main(void)
{
    dInitODE();
    Suite *s = suite_create("relinearize approximate");
    TCase *tc = tcase_create("soak 1178");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_approximate_iterate_keeps_first_answer, 0,
                        (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_test(tc, test_pivot_budget_cuts_first_solve);
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
