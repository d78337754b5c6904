/*
 * An iterate of ST96's re-linearisation answered only approximately does not replace the
 * step's exact answer (relinearize.c, relinearize_step "An iterate answered approximately"),
 * and the island's pivot budget (pp_config.lcp_budget_pivots) cuts LCP solves as the clock
 * does, the same on every machine.
 *
 * The scene is soak seed 1178's island (it_hulls_1178.h: two hulls falling together onto the
 * ground, mu = 1, k = 4, h = 0.02), clock-free, under each pegplus model. At each of its first
 * 8 steps whose first solve alone (relinearize_iterations = 0) takes P > 0 pivots and is exact,
 * the same state is stepped again with the re-linearisation and a budget of P + 1 pivots: the
 * first solve is the same, and the first iterate's Lemke stops after one pivot, so the bounded
 * fallback answers that iterate's LCP. Asserted at every such step: PP_OK and no answer short
 * of the acceptance reported (lcp_status 0; an iterate the fallback answers to the acceptance
 * is a solution and is applied as one); where the rule cut the iteration (relinearize_cut),
 * the hulls bit for bit where the first solve alone puts them (positions, orientations,
 * velocities; so the same overlap volumes), one re-linearisation past P pivots, lcp_fallback 0,
 * no approximate solve, the first solve's residual, the first answer kept (relinearize_refused
 * 1); and the rule decides at least 2 steps a model (measured: steps 0, 1 and 3 under both).
 * Without the rule (answers_exact returning 0) it fails at step 0: the fallback's answer
 * reported (status 4, residual 2.59 standard, 0.528 PEG); at PEG's step 3 that answer
 * (residual 0.403) was applied, the hulls' velocities 1.61 m/s off the first solve's.
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

/* Steps 0 .. STEPS - 1 of the fall under `model`, each from the trajectory's own state (no
 * budget before it): where the first solve alone is exact, the step with the re-linearisation
 * under P + 1 pivots. Returns how many of them the rule decided. */
#define STEPS 8

static int cut_steps(pp_model model)
{
    int decided = 0;
    for (int step = 0; step < STEPS; ++step) {
        pair_world first, cut; /* the first solve alone; the re-linearisation under P + 1 */
        pp_it_hulls_make_unclocked(&first, model, G);
        pp_it_hulls_make_unclocked(&cut, model, G);
        for (int s = 0; s < step; ++s) { /* the same trajectory, no budget */
            ck_assert_int_eq(pp_world_step(first.pp, H), PP_OK);
            ck_assert_int_eq(pp_world_step(cut.pp, H), PP_OK);
        }
        ck_assert(pp_it_hulls_same_state(&first, &cut));
        pp_it_hulls_set_step(&first, 0, 0);
        ck_assert_int_eq(pp_world_step(first.pp, H), PP_OK);
        const pp_step_stats a = *pp_world_get_stats(first.pp);
        if (a.lcp_status == 0 && a.lcp_fallback == 0 && a.lcp_pivots > 0) { /* exact first */
            pp_it_hulls_set_step(&cut, 20, (long)a.lcp_pivots + 1);
            ck_assert_int_eq(pp_world_step(cut.pp, H), PP_OK);
            const pp_step_stats *t = pp_world_get_stats(cut.pp);
            /* no answer short of the acceptance reported (nor applied) after an exact one:
             * an iterate the fallback answered to the acceptance is a solution (status 0) */
            ck_assert_msg(t->lcp_status == 0, "step %d: status %d, lcp_fallback %d, residual %.3g",
                          step, t->lcp_status, t->lcp_fallback, t->lcp_residual);
            if (t->relinearize_cut) { /* the rule: only the first answer applied, reported */
                ck_assert_msg(pp_it_hulls_same_state(&first, &cut),
                              "step %d is not the first solve's: velocities %.3g apart", step,
                              velocity_difference(&first, &cut));
                ck_assert_double_eq(pp_it_hulls_overlap(&cut), pp_it_hulls_overlap(&first));
                ck_assert_int_eq(t->relinearizations, 1); /* its iterate cut, past P */
                ck_assert_int_gt(t->lcp_pivots, a.lcp_pivots);
                ck_assert_int_eq(t->lcp_fallback, 0);
                ck_assert_int_eq(t->lcp_approximate, 0);
                ck_assert_double_eq(t->lcp_residual, a.lcp_residual);
                ck_assert_int_eq(t->relinearize_refused, 1);
                ++decided;
            }
        }
        pp_it_hulls_destroy(&first);
        pp_it_hulls_destroy(&cut);
    }
    return decided;
}

START_TEST(test_approximate_iterate_keeps_first_answer)
{
    const pp_model model = _i ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    const int decided = cut_steps(model);
    /* measured: steps 0, 1 and 3 under both models (the other steps' first iterates are
     * answered by the fallback to the acceptance, or converge) */
    ck_assert_msg(decided >= 2, "the rule decided %d steps", decided);
}
END_TEST

START_TEST(test_pivot_budget_cuts_first_solve)
{
    pair_world p[2];
    for (int r = 0; r < 2; ++r) {
        pp_it_hulls_make_unclocked(&p[r], PP_MODEL_PEG, G);
        pp_it_hulls_set_step(&p[r], 20, 1);
        ck_assert_int_eq(pp_world_step(p[r].pp, H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(p[r].pp);
        ck_assert_int_eq(t->lcp_fallback, 2); /* the bounded fallback's answer, applied */
        ck_assert_int_eq(t->lcp_approximate, 1);
        ck_assert_int_eq(t->lcp_status, PP_LCP_APPROXIMATE);
        ck_assert_double_gt(t->lcp_residual, 0.0);
        for (int i = 0; i < 2; ++i) ck_assert(pp_it_hulls_finite(&p[r], i));
    }
    ck_assert(pp_it_hulls_same_state(&p[0], &p[1])); /* the same cut on every run */
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
    tcase_add_loop_test(tc, test_approximate_iterate_keeps_first_answer, 0, 2); /* standard, PEG */
    tcase_add_test(tc, test_pivot_budget_cuts_first_solve);
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
