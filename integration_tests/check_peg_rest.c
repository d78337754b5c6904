/*
 * Resting scenes under PEG stay at rest: the warm basis's repair on islands with I/X sets
 * (lcp_warm_repair.c "Islands with PEG's I/X sets"; docs/performance.md "The warm basis
 * repaired on islands with I/X sets"). A clamped warm basis accepted step after step on a degenerate resting vertex gains
 * energy (docs/performance.md "heap20's recurring creep is numerical"); the repair by contact
 * blocks cured it on islands of U sets, and PEG's islands, which hold I/X sets, crept on.
 *
 *  - heap20 from its state file under PEG (its warm start restored, clock-free, the standard
 *    model's twin is check_heap_creep's test_heap20_standard_rests): from step SETTLED_FROM on
 *    no body moves faster than REST_SPEED (m/s, and rad/s times 1 m). Without the repair on
 *    I/X islands the box flat on the floor creeps to 1.48e-7 m/s at step 49 (a Lemke event
 *    at steps 49-50 levels it, and it creeps again); with it 1.24e-10 m/s (step 72).
 *  - islands10 (10 separate stacks of 3 boxes, built exactly touching and at rest,
 *    pp_scene_islands seed 1; PEG's sets there include I and X sets), clock-free: from step
 *    SETTLED_FROM on no body faster than REST_SPEED, and no step's LCP answered by the
 *    bounded fallback. Without the repair 2.82e-8 m/s (step 140), and 3 steps in the
 *    fallback; with it 2.95e-11 m/s, none.
 * Both also require the scenes to hold I/X sets (else the test would not test them).
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define REST_SPEED 1e-9
enum { STEPS = 300, SETTLED_FROM = 20, HEAP_BODIES = 20, STACKS = 10 };

static void setup(void)
{
    pp_scenes_init_ode();
}

/* Steps pw STEPS times at h (scene's before_step from script_steps); returns the fastest body
 * from SETTLED_FROM on, its step in *at, the steps with I/X sets in *ix_steps and the steps
 * answered by the bounded fallback (lcp_fallback >= 2) in *fallbacks. */
static double run(pp_scene *scene, pp_world *pw, double h, int script_steps, int *at,
                  int *ix_steps, int *fallbacks)
{
    double fastest = 0.0;
    *at = -1;
    *ix_steps = *fallbacks = 0;
    for (int s = 0; s < STEPS; ++s) {
        if (scene->before_step) scene->before_step(scene, script_steps + s);
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        *ix_steps += t->peg_i_sets + t->peg_x_sets > 0;
        *fallbacks += t->lcp_fallback >= 2;
        if (s < SETTLED_FROM) continue;
        for (int i = 0; i < scene->body_count; ++i) {
            const double speed = pp_it_body_speed(scene->bodies[i]);
            if (speed > fastest) {
                fastest = speed;
                *at = s;
            }
        }
    }
    return fastest;
}

START_TEST(test_heap20_peg_rests)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/heap20.state", PP_STATES_DIR);
    pp_scene scene;
    pp_scene_state st;
    int script_steps = 0, at, ix_steps, fallbacks;
    pp_world *pw = pp_it_heap_warm_from_state(&scene, &st, &script_steps, path, "heap20",
                                              HEAP_BODIES, PP_MODEL_PEG);
    const double fastest = run(&scene, pw, st.h, script_steps, &at, &ix_steps, &fallbacks);
    printf("check_peg_rest: heap20, PEG, steps %d-%d: fastest body %.3g (step %d), I/X sets in "
           "%d steps, %d fallback steps\n", SETTLED_FROM, STEPS - 1, fastest, at, ix_steps,
           fallbacks);
    ck_assert_int_eq(ix_steps, STEPS);
    ck_assert_msg(fastest <= REST_SPEED, "heap20 creeps under PEG: %.3g at step %d", fastest, at);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_scene_state_free(&st);
}
END_TEST

START_TEST(test_islands10_peg_rests)
{
    pp_scene scene;
    pp_scene_islands(&scene, STACKS, 0.0, 1);
    ck_assert_int_eq(scene.body_count, 3 * STACKS);
    pp_world *pw = pp_it_world_clock_free(&scene, PP_MODEL_PEG);
    int at, ix_steps, fallbacks;
    const double fastest = run(&scene, pw, 0.01, 0, &at, &ix_steps, &fallbacks);
    printf("check_peg_rest: islands10, PEG, steps %d-%d: fastest body %.3g (step %d), I/X sets "
           "in %d steps, %d fallback steps\n", SETTLED_FROM, STEPS - 1, fastest, at, ix_steps,
           fallbacks);
    ck_assert_int_gt(ix_steps, STEPS / 2);
    ck_assert_int_eq(fallbacks, 0);
    ck_assert_msg(fastest <= REST_SPEED, "islands10 creep under PEG: %.3g at step %d", fastest,
                  at);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_rest");
    TCase *tc = tcase_create("stepping");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_heap20_peg_rests);
    tcase_add_test(tc, test_islands10_peg_rests);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
