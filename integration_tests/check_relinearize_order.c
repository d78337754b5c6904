/*
 * One order a step (relinearize.c list_in_work_order): the re-linearisation iterates of an
 * island answered by the sticking solve list its sets in the working set's order, so an
 * iterate's LCP is the last iterate's in the same unknowns' order and the sticking solve's
 * starts by position (its kept answer, its interior start) are this island's own.
 *
 * The scene is the heap of 50 boxes as stock ODE settles it, its overlaps projected out
 * (integration_tests/data/heap50-projected.state: the benchmark's heap50.state before the
 * standard model's finishing steps, pegplus-benchmark --make-states --finish-steps 0),
 * under PEG, clock-free, its first twenty steps: one island of 2 124-2 442 unknowns (PEG I/X
 * sets reduced to their primaries for the sticking solve, peg_screen.c), creeping at
 * 1e-4 ... 1e-3 m/s. Before the order, the lists of two iterates held the same sets in
 * different orders (238 of 2 292 unknowns moved); steps 3 and 4 alternated between two orders
 * and two answers, step 3 converging at its 8th iterate and step 4 running its 20 iterates to
 * a residual of 6e-8 and keeping an earlier estimate (9 s), where now every step converges in
 * 3-4 iterates (docs/performance.md, "PEG's heap50 at the standard model's cost").
 * Steps 5-19 (docs/performance.md, "heap50's iterates and the sticking solve's start"): on
 * the sticking solve as it was, step 5 took 8 iterates (a contact came within
 * range at iterate 3, and the fresh solve of the grown list answered 6.8e-9 m/s away from
 * the last answer), and step 18 marked contacts to slide for more rounds than the interior
 * stage ran, after which Lemke did not answer in 75 581 pivots and the step was regularised
 * (lcp_fallback 1); steps 1-3 alternated between the interior answer and a Lemke vertex
 * where a warm start stalled.
 *
 * Checks, each step: PP_OK with every LCP answered exactly (no regularised, approximate,
 * failed or PEG-fallback solve), the re-linearisation converged (no estimate refused) within
 * RELIN_ITERATES_MAX iterates; over the STEPS steps no body goes deeper into another than the
 * start by more than OVERLAP_GROWTH_TOL, and the fastest body creeps as under the
 * standard model (the same steps run beside it) to SPEED_TOL relative.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

enum { STEPS = 20, RELIN_ITERATES_MAX = 6 };
static const double OVERLAP_GROWTH_TOL = 1e-9; /* m */
static const double SPEED_TOL = 1e-2;           /* relative */

/* The projected heap50 stepped STEPS times under `model`, clock-free: each step's fastest body
 * speed, the deepest overlap at the start and at the end; with `check`, each step's checks. */
static void run_heap50(pp_model model, int check, double speed[STEPS], double *deep_start,
                       double *deep_end)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/heap50-projected.state", PP_TEST_DATA_DIR);
    pp_scene_state st;
    pp_scene scene;
    int script_steps = 0;
    pp_world *pw = pp_it_heap_from_state(&scene, &st, &script_steps, path, "heap50", 50, model);
    *deep_start = pp_scene_max_penetration(&scene);
    for (int step = 0; step < STEPS; ++step) {
        if (scene.before_step) scene.before_step(&scene, script_steps + step);
        ck_assert_int_eq(pp_world_step(pw, st.h), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        speed[step] = pp_scene_fastest_body(&scene);
        if (!check) continue;
        printf("check_relinearize_order: step %d: %d iterates, %d pivots, residual %.3g, "
               "fastest %.6g m/s\n",
               step, t->relinearizations, t->lcp_pivots, t->lcp_residual, speed[step]);
        ck_assert_msg(t->status == PP_OK && t->lcp_fallback == 0 && t->lcp_approximate == 0 &&
                          t->islands_failed == 0 && t->peg_fallback == 0,
                      "step %d: status %d, lcp_fallback %d", step, t->status, t->lcp_fallback);
        ck_assert_msg(t->relinearize_refused == 0, "step %d: the re-linearisation kept an "
                      "earlier estimate after %d iterates", step, t->relinearizations);
        ck_assert_msg(t->relinearizations <= RELIN_ITERATES_MAX, "step %d: %d iterates", step,
                      t->relinearizations);
    }
    *deep_end = pp_scene_max_penetration(&scene);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_scene_state_free(&st);
}

START_TEST(test_heap50_iterates_converge)
{
    double peg[STEPS], standard[STEPS], start, end, start_s, end_s;
    run_heap50(PP_MODEL_PEG, 1, peg, &start, &end);
    run_heap50(PP_MODEL_STANDARD, 0, standard, &start_s, &end_s);
    printf("check_relinearize_order: deepest overlap %.3g m at the start, %.3g m after %d PEG "
           "steps\n", start, end, STEPS);
    ck_assert_msg(end <= start + OVERLAP_GROWTH_TOL, "overlap %g m -> %g m", start, end);
    for (int step = 0; step < STEPS; ++step)
        ck_assert_msg(fabs(peg[step] - standard[step]) <= SPEED_TOL * standard[step],
                      "step %d: fastest body %g m/s under PEG, %g m/s under the standard model",
                      step, peg[step], standard[step]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("relinearize_order");
    TCase *tc = tcase_create("heap50");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_heap50_iterates_converge);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
