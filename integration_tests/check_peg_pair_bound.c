/*
 * A fast pair's constraints within the bound per pair across the re-linearisation's iterates
 * (pegplus/peg.h "The bound per pair"; relinearize.c pair_bound): the benchmark's hulls25 and
 * hulls50 (pp_scene_hulls seed 1, an 8 cm and a 2 cm hull of random points closing at 25 or
 * 50 m/s 0.3 m above the plane, gravity on, h = 0.01, k = 4, clock-free) under PP_MODEL_PEG,
 * stepped through their meeting step. Asserted at every step: PP_OK; no PEG fallback
 * (peg_fallback 0) and no LCP fallback (lcp_fallback 0: every answer applied is Lemke's on
 * the LCP as posed); every LCP of the step, the re-linearisation's included, within one
 * pair's bound, pp_peg_lcp_size(PP_PEG_PAIR_MAX_SETS, PP_PEG_PAIR_MAX_CONTACTS, k) = 448
 * unknowns (lcp_largest: the island is the pair alone until it falls to the plane); and the
 * pair did meet. (Their overlap and energy are check_peg_fast_hulls' and the fast-hull scan's.)
 * Before the bound held across iterates the working set carried every iterate's sets into
 * one LCP: hulls25's meeting step solved 1 700 unknowns summed (57 sets, 537 contacts of the
 * pair; one solve of 749), hulls50's 1 435 (822), and main 0191c61 fails here at both
 * meeting steps with lcp_fallback 1 (docs/performance.md "Two fast hulls under PEG"). With
 * the bound: every LCP at most 414 unknowns, both meeting steps exact (docs/performance.md
 * "A fast pair's constraints within the bound, the box pairs kept").
 */
#include "pegplus/peg.h"
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "scripted.h"
#include "it_common.h"

#include <check.h>
#include <stdio.h>

#define H 0.01
#define STEPS 12 /* they meet in the first or second step */
#define K 4

static const double k_speeds[] = {25.0, 50.0};

START_TEST(test_pair_bound)
{
    const double speed = k_speeds[_i];
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene scene;
    ck_assert_int_eq(pp_scene_hulls(&scene, speed, 1), PP_OK);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_PEG;
    c.friction_directions = K;
    c.lcp_budget_seconds = 0.0;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(scene.world, scene.space, &c, &pw), PP_OK);
    scene.pegplus = pw;
    const int bound = pp_peg_lcp_size(PP_PEG_PAIR_MAX_SETS, PP_PEG_PAIR_MAX_CONTACTS, K);
    int met = 0, largest = 0;
    for (int step = 0; step < STEPS; ++step) {
        scene.before_step(&scene, step);
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        ck_assert_msg(t->lcp_fallback == 0 && t->peg_fallback == 0 && t->islands_failed == 0,
                      "%g m/s step %d: lcp_fallback %d, peg_fallback %d, %d islands unsolved",
                      speed, step, t->lcp_fallback, t->peg_fallback, t->islands_failed);
        ck_assert_msg(t->lcp_largest <= bound, "%g m/s step %d: an LCP of %d unknowns, bound %d",
                      speed, step, t->lcp_largest, bound);
        met |= t->contacts > 0 && t->lcp_largest > 0;
        if (t->lcp_largest > largest) largest = t->lcp_largest;
    }
    ck_assert_msg(met, "%g m/s: the hulls never met", speed);
    ck_assert_int_eq(pp_scene_script_failures(&scene), 0);
    printf("check_peg_pair_bound: hulls at %g m/s: largest LCP %d unknowns (bound %d)\n", speed,
           largest, bound);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_pair_bound");
    TCase *tc = tcase_create("pair_bound");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_pair_bound, 0, 2);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
