/*
 * PEG on the settled heap of 100 boxes (examples/scenes/states/heap100.state: poured by ODE,
 * settled by dWorldStep, finished by 80 standard-model steps), clock-free, its first four
 * steps: one island of ~4 500 unknowns with 125-129 PEG I/X sets. Constraint screening's S_0
 * holds just under half of it (2 175-2 253 unknowns), which screening used to solve by Lemke
 * on its PEG LCP: 62 753 pivots at the first step (26.8 s clock-free; at the benchmark's 10 s
 * clock the bounded fallback every step, the heap creeping at 1e-3 m/s). Such an island now
 * goes to the reduction to its sets' primaries (peg_screen.c), whose sticking solve answers it
 * as the standard model's answers its heap: no pivot after the first step's 15
 * (docs/performance.md, "PEG on the settled heap100"). From the second step on, the island is
 * warm and screening's gate decides: its last answer holds most loaded sets by friction, so it
 * goes to the reduction again rather than to a capped screening round (without that test step
 * 1 spends 1 114 pivots; docs/performance.md, "The crash wall screened again").
 *
 * Checks, each step: PP_OK with every LCP answered exactly (no regularised, approximate,
 * failed or PEG-fallback solve); the island answered by the sticking solve (load_shared, the
 * compliance limit of a heap's redundant supports) in at most PIVOTS_MAX pivots, none left out
 * by screening; the heap stays at rest (fastest body below REST_SPEED) and no body goes deeper
 * into another than the start by more than OVERLAP_GROWTH_TOL.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <stdio.h>

enum { STEPS = 4, PIVOTS_MAX = 100 };
static const double OVERLAP_GROWTH_TOL = 1e-9; /* m */
static const double REST_SPEED = 1e-6;          /* m/s */

START_TEST(test_heap100_peg_at_rest)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/heap100.state", PP_STATES_DIR);
    pp_scene_state st;
    pp_scene scene;
    int script_steps = 0;
    pp_world *pw = pp_it_heap_from_state(&scene, &st, &script_steps, path, "heap100", 100,
                                         PP_MODEL_PEG);
    const double deep_start = pp_scene_max_penetration(&scene);
    for (int step = 0; step < STEPS; ++step) {
        if (scene.before_step) scene.before_step(&scene, script_steps + step);
        ck_assert_int_eq(pp_world_step(pw, st.h), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        const double v = pp_scene_fastest_body(&scene);
        printf("check_peg_heap100: step %d: %d unknowns, %d screened, %d pivots, load shared "
               "%d, residual %.3g, fastest %.3g m/s\n",
               step, t->lcp_largest, t->lcp_screened, t->lcp_pivots, t->load_shared,
               t->lcp_residual, v);
        ck_assert_msg(t->status == PP_OK && t->lcp_status == 0 && t->lcp_fallback == 0 &&
                          t->lcp_approximate == 0 && t->islands_failed == 0 &&
                          t->peg_fallback == 0,
                      "step %d: status %d, lcp status %d, lcp_fallback %d, peg_fallback %d", step,
                      t->status, t->lcp_status, t->lcp_fallback, t->peg_fallback);
        ck_assert_msg(t->load_shared >= 1 && t->lcp_screened == 0 &&
                          t->lcp_pivots <= PIVOTS_MAX,
                      "step %d: not the sticking solve's answer (load shared %d, %d unknowns "
                      "screened, %d pivots)", step, t->load_shared, t->lcp_screened,
                      t->lcp_pivots);
        ck_assert_msg(v <= REST_SPEED, "step %d: fastest body %g m/s", step, v);
    }
    const double deep_end = pp_scene_max_penetration(&scene);
    printf("check_peg_heap100: deepest overlap %.3g m at the start, %.3g m after %d steps\n",
           deep_start, deep_end, STEPS);
    ck_assert_msg(deep_end <= deep_start + OVERLAP_GROWTH_TOL, "overlap %g m -> %g m",
                  deep_start, deep_end);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_scene_state_free(&st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_heap100");
    TCase *tc = tcase_create("heap100");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_heap100_peg_at_rest);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
