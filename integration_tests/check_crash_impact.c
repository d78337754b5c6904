/*
 * The crash demo's impact answered exactly (docs/performance.md "The crash impact's steps
 * 15-19 solve by solve"): ODE's demo_crash without the car (pp_scene_crash: 75 bricks, a
 * 10 kg ball fired at 20 m/s, h = 0.05 s), clock-free, each step's first answer kept (no
 * re-linearisation: the trajectory the 10 s clock leaves where a step's first solve is exact
 * and its iterate is cut), the island's Lemke pivots bounded by ISLAND_PIVOTS a step. The
 * ball meets the wall at step 15; under the standard model and under PEG (which declines the
 * moving island and answers it with the standard model's contacts) steps 15 and 16 are
 * answered by the sticking solve's creeping round (lcp_sticking.c), whose iterate is taken at
 * the first test it passes (creep_answered): each step PP_OK, every LCP answer exact (no
 * regularised, approximate or failed solve), the ball slowed. Measured (this library, load
 * ~12): standard 15 / 16 in 3.1 / 4.3 s of CPU (rel(z) 9.6e-10, 9.4e-10), PEG 1.7 / 4.8 s
 * (6.6e-10, 4.7e-10). With the creeping round run to its 300 iterations step 16 is refused
 * on this trajectory under both models (the sticking solve's Lemke on Q then needs ~34 000
 * pivots, past ISLAND_PIVOTS: the bounded fallback, lcp_fallback 2).
 *
 * With the re-linearisation (pp_config's default iterations), step 15: its iterate's LCP at
 * the predicted pose (4 980 -> 7 218 - 7 926 unknowns, 1.45-1.6 times the first LCP's) is not
 * solved (relinearize.c, "An iterate grown past the first solve"): the step's answer is its
 * first solve's, exact, and no solve's work is thrown away (lcp_dropped 0). Without that rule
 * the iterate of step 15 ran a screening round of 2 856 unknowns (7 809 pivots on M + 1e-14
 * I), the sticking solve's refused rounds and Lemke on Q into ISLAND_PIVOTS (under the 10 s
 * clock: to the clock), and its unfinished answer was dropped (lcp_dropped 1). Step 16: its
 * first solve is the same exact one, and its iterate grows only 1.19-1.21 times (5 568 -> 6 636
 * unknowns standard, 5 556 -> 6 726 PEG), so the growth rule does not take it; it is cut by
 * its own work bound (relinearize.c, "An iterate's work bounded by the first solve's": at
 * most half the first solve's work, pivots and interior-point iterations), its answer not
 * applied: the step's answer is the first solve's, exact, its iterate cut (relinearize_cut 1)
 * with the island's pivots far below ISLAND_PIVOTS. Without that bound the iterate ran its
 * sticking solve's interior rounds and then Lemke on Q into ISLAND_PIVOTS (> 30 s; under the
 * clock, to the clock), so the step's pivots reach ISLAND_PIVOTS and the check fails.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <stdio.h>

enum { IMPACT_FIRST = 15, IMPACT_LAST = 16, ISLAND_PIVOTS = 20000 };
static const double CRASH_H = 0.05; /* s, the scene's step */

/* relinearize: 0 the first answers' trajectory; 1 the default iterations, each step's iterate
 * cut (step IMPACT_FIRST by its growth, no LCP solve of it dropped; IMPACT_LAST by its work,
 * the island's pivots short of ISLAND_PIVOTS); steps IMPACT_FIRST to IMPACT_LAST */
static void impact(pp_model model, const char *name, int relinearize)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene s;
    pp_scene_crash(&s, CRASH_H);
    pp_config c = pp_it_config_clock_free(model);
    if (!relinearize) c.relinearize_iterations = 0;
    c.lcp_budget_pivots = ISLAND_PIVOTS;
    pp_world *pw = pp_it_world_create(&s, &c);
    double before = 0.0;
    for (int step = 0; step <= IMPACT_LAST; ++step) {
        if (s.before_step) s.before_step(&s, step);
        if (step == IMPACT_FIRST) before = pp_scene_fastest_body(&s);
        ck_assert_int_eq(pp_world_step(pw, CRASH_H), PP_OK);
        if (step < IMPACT_FIRST) continue;
        const pp_step_stats *t = pp_world_get_stats(pw);
        printf("check_crash_impact: %s%s step %d: %d unknowns, %d pivots, %d solves, "
               "lcp_fallback %d, residual %.3g, dropped %d, cut %d, fastest %.3g m/s\n",
               name, relinearize ? " re-linearised" : "", step, t->lcp_largest, t->lcp_pivots,
               t->lcp_solves, t->lcp_fallback, t->lcp_residual, t->lcp_dropped,
               t->relinearize_cut, pp_scene_fastest_body(&s));
        ck_assert_msg(t->status == PP_OK && t->lcp_status == 0 && t->lcp_fallback == 0 &&
                          t->lcp_approximate == 0 && t->islands_failed == 0,
                      "%s step %d: status %d, lcp status %d, lcp_fallback %d, approximate %d",
                      name, step, t->status, t->lcp_status, t->lcp_fallback,
                      t->lcp_approximate);
        if (relinearize)
            ck_assert_msg(t->relinearize_cut == 1 && t->lcp_pivots < ISLAND_PIVOTS / 2 &&
                              (step > IMPACT_FIRST || t->lcp_dropped == 0),
                          "%s step %d: %d solves dropped, relinearize_cut %d, %d pivots", name,
                          step, t->lcp_dropped, t->relinearize_cut, t->lcp_pivots);
    }
    const double after = pp_scene_fastest_body(&s);
    ck_assert_msg(after < before, "%s: the ball not slowed (%g -> %g m/s)", name, before, after);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}

START_TEST(test_crash_impact_standard)
{
    impact(PP_MODEL_STANDARD, "standard", 0);
}
END_TEST

START_TEST(test_crash_impact_peg)
{
    impact(PP_MODEL_PEG, "PEG", 0);
}
END_TEST

START_TEST(test_crash_impact_relinearized_standard)
{
    impact(PP_MODEL_STANDARD, "standard", 1);
}
END_TEST

START_TEST(test_crash_impact_relinearized_peg)
{
    impact(PP_MODEL_PEG, "PEG", 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crash_impact");
    TCase *tc = tcase_create("impact");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_crash_impact_standard);
    tcase_add_test(tc, test_crash_impact_peg);
    tcase_add_test(tc, test_crash_impact_relinearized_standard);
    tcase_add_test(tc, test_crash_impact_relinearized_peg);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
