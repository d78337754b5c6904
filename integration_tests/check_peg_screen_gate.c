/*
 * Constraint screening's gate on the islands the primaries' reduction takes
 * (contact/src/peg_screen.c, "The gate"; docs/performance.md "The crash wall screened
 * again"): screening's rounds run with their pivots capped at n / 4 (n the island's
 * unknowns), an island where the cap stops them goes to the reduction and is remembered
 * there, a cold island goes to the reduction at once and the step after. Both under PEG,
 * clock-free:
 *  - the crash demo's wall at rest (75 bricks, h = 0.05 s, one island of 5 272 unknowns, S_0
 *    1 300-1 800 of them): steps 0-1 the reduction's answer (cold, then the step after),
 *    from step 2 screening's, exact and within the cap, its later steps warm (at most
 *    WARM_PIVOTS pivots: measured 0); the wall stays at rest (fastest body below REST_WALL)
 *    and no overlap grows by more than OVERLAP_GROWTH_TOL. Before the gate (main after
 *    s11-peg100) the wall went to the reduction at every step (screened 0).
 *  - the settled heap100 (check_peg_heap100 has its steps 0-1): step 2 is the capped round
 *    (Lemke on S wanders there: 62 753 pivots cold), given up within the cap and answered by
 *    the reduction; step 3 remembers it (the reduction's answer at most WARM_PIVOTS pivots,
 *    no round: measured 0), the heap at rest (fastest below REST_HEAP).
 * Every step: PP_OK with every LCP answered exactly (no regularised, approximate, failed or
 * PEG-fallback solve).
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <stdio.h>

enum { WALL_STEPS = 8, WALL_ROWS = 5, WALL_WIDE = 15, HEAP_STEPS = 4, WARM_PIVOTS = 100 };
static const double WALL_H = 0.05;              /* s, the crash scene's step */
static const double OVERLAP_GROWTH_TOL = 1e-9; /* m */
static const double REST_WALL = 1e-10;          /* m/s; g h = 0.49 m/s for an unheld brick */
static const double REST_HEAP = 1e-6;           /* m/s, as check_peg_heap100 */

static void assert_exact(const pp_step_stats *t, int step)
{
    ck_assert_msg(t->status == PP_OK && t->lcp_status == 0 && t->lcp_fallback == 0 &&
                      t->lcp_approximate == 0 && t->islands_failed == 0 && t->peg_fallback == 0,
                  "step %d: status %d, lcp status %d, lcp_fallback %d, peg_fallback %d", step,
                  t->status, t->lcp_status, t->lcp_fallback, t->peg_fallback);
}

START_TEST(test_crash_wall_screened)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene s;
    pp_scene_brick_wall(&s, WALL_ROWS, WALL_WIDE);
    pp_world *pw = pp_it_world_clock_free(&s, PP_MODEL_PEG);
    const double deep_start = pp_scene_max_penetration(&s);
    for (int step = 0; step < WALL_STEPS; ++step) {
        ck_assert_int_eq(pp_world_step(pw, WALL_H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        const double v = pp_scene_fastest_body(&s);
        const int n = t->lcp_size + t->lcp_screened; /* the island's unknowns */
        printf("check_peg_screen_gate: wall step %d: %d unknowns, %d screened, %d pivots, load "
               "shared %d, fastest %.3g m/s\n",
               step, n, t->lcp_screened, t->lcp_pivots, t->load_shared, v);
        assert_exact(t, step);
        if (step < 2) {
            ck_assert_msg(t->lcp_screened == 0 && t->load_shared >= 1,
                          "step %d: not the reduction's answer (%d screened, load shared %d)",
                          step, t->lcp_screened, t->load_shared);
        } else {
            ck_assert_msg(t->lcp_screened > 0 && 2 * t->lcp_size < n,
                          "step %d: not screened (%d of %d unknowns solved)", step,
                          t->lcp_size, n);
            ck_assert_msg(t->lcp_pivots <= (step == 2 ? n / 4 : WARM_PIVOTS),
                          "step %d: %d pivots", step, t->lcp_pivots);
        }
        ck_assert_msg(v <= REST_WALL, "step %d: fastest brick %g m/s", step, v);
    }
    const double deep_end = pp_scene_max_penetration(&s);
    printf("check_peg_screen_gate: wall's deepest overlap %.3g m at the start, %.3g m after\n",
           deep_start, deep_end);
    ck_assert_msg(deep_end <= deep_start + OVERLAP_GROWTH_TOL, "overlap %g m -> %g m",
                  deep_start, deep_end);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

START_TEST(test_heap100_capped_once)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/heap100.state", PP_STATES_DIR);
    pp_scene_state st;
    pp_scene scene;
    int script_steps = 0;
    pp_world *pw = pp_it_heap_from_state(&scene, &st, &script_steps, path, "heap100", 100,
                                         PP_MODEL_PEG);
    for (int step = 0; step < HEAP_STEPS; ++step) {
        if (scene.before_step) scene.before_step(&scene, script_steps + step);
        ck_assert_int_eq(pp_world_step(pw, st.h), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        const double v = pp_scene_fastest_body(&scene);
        const int n = t->lcp_size + t->lcp_screened;
        printf("check_peg_screen_gate: heap100 step %d: %d unknowns, %d screened, %d pivots, "
               "load shared %d, fastest %.3g m/s\n",
               step, n, t->lcp_screened, t->lcp_pivots, t->load_shared, v);
        assert_exact(t, step);
        ck_assert_msg(t->load_shared >= 1 && t->lcp_screened == 0,
                      "step %d: not the reduction's answer (load shared %d, %d screened)", step,
                      t->load_shared, t->lcp_screened);
        /* step 2: the capped round (at most n / 4) and the reduction's few; then remembered */
        ck_assert_msg(t->lcp_pivots <= (step == 2 ? n / 4 + WARM_PIVOTS : WARM_PIVOTS),
                      "step %d: %d pivots", step, t->lcp_pivots);
        if (step == 2)
            ck_assert_msg(t->lcp_pivots > WARM_PIVOTS, "step 2: no capped round (%d pivots)",
                          t->lcp_pivots);
        ck_assert_msg(v <= REST_HEAP, "step %d: fastest body %g m/s", step, v);
    }
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_scene_state_free(&st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_screen_gate");
    TCase *tc = tcase_create("gate");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_crash_wall_screened);
    tcase_add_test(tc, test_heap100_capped_once);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
