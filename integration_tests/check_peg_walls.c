/*
 * PEG on face-to-face contacts whose corners are apart (pegplus/peg.h "Implied sets and
 * duplicate rows", Rule 3): a small brick wall like the crash scene's (0.5 x 0.6 x 0.3 m
 * bricks, 1 mm joints between the bricks of a row, rows stacked face on face).
 *  - At rest: the vertex sets under each corner pair's X are removed, so no I set is left and
 *    the PEG LCP is of the standard model's size (measured 1.07x at the start; without Rule 3
 *    the 1 mm joints' corner pairs keep an X and two I sets each, 1.8x on the crash wall).
 *    Every step PP_OK with Lemke's answer (lcp_fallback <= 1: no approximate, failed or
 *    PEG-fallback solve), no overlap beyond 1e-9 m, the wall at rest.
 *  - Hit by a box sliding into it: every step PP_OK and Lemke's answer, no overlap beyond
 *    1e-9 m at any step. Rule 3 applies in resting islands only (stage_constraints.c): with it
 *    also between bricks at relative rest in the moving island, step 9 ended 6.3e-9 m deep
 *    (the X implies the vertex sets as sets, not row by row); as it is, 4.0e-10 m (2.1e-12
 *    without Rule 3: the trajectories differ from the first step).
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void assert_exact_step(const pp_step_stats *t, int step)
{
    ck_assert_msg(t->status == PP_OK, "step %d: status %d", step, t->status);
    pp_it_assert_lemke(t, step);
}

static double max_speed(const pp_scene *s)
{
    double m = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        const dReal *v = dBodyGetLinearVel(s->bodies[i]), *w = dBodyGetAngularVel(s->bodies[i]);
        m = fmax(m, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
                        sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
    }
    return m;
}

START_TEST(test_wall_at_rest)
{
    pp_set_log_hook(pp_log_discard, NULL);
    /* the standard model's LCP of the same wall: one step */
    pp_scene s;
    pp_scene_brick_wall(&s, 3, 4);
    pp_world *pw = pp_it_world_clock_free(&s, PP_MODEL_STANDARD);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    int standard = pp_world_get_stats(pw)->lcp_size;
    pp_world_destroy(pw);
    pp_scene_destroy(&s);

    pp_scene_brick_wall(&s, 3, 4);
    pw = pp_it_world_clock_free(&s, PP_MODEL_PEG);
    int largest = 0, first = 0;
    for (int step = 0; step < 40; ++step) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        assert_exact_step(t, step);
        /* solved once, at rest (no re-linearisation, whose iterates are built without Rule 3):
         * every corner pair's vertex sets are under its X or merged into U sets */
        if (t->relinearizations == 0)
            ck_assert_msg(t->peg_i_sets == 0, "step %d: %d I sets left", step, t->peg_i_sets);
        if (step == 0) first = t->lcp_size;
        if (t->lcp_size > largest) largest = t->lcp_size;
        ck_assert_double_le(pp_scene_max_penetration(&s), 1e-9);
    }
    printf("check_peg_walls: 3 x 4 wall at rest, 40 steps: PEG LCP %d unknowns at the start, at "
           "most %d, the standard model's %d; final speed %.3g\n",
           first, largest, standard, max_speed(&s));
    /* exactly stacked rows: the column's U sets; 1 mm joints: one X per corner pair. Without
     * Rule 3 the joints' corner pairs add two I sets each (1.8x the standard model's LCP on the
     * crash wall). Later steps: the wall settles by 1e-13 .. 1e-12 m, the stacked corners no
     * longer coincide to 1e-12 and keep their X sets (measured: 1.12x within these 40 steps,
     * up to 1.46x within 100). */
    ck_assert_int_le(first, (int)(1.1 * standard));
    ck_assert_int_le(largest, (int)(1.5 * standard));
    ck_assert_double_lt(max_speed(&s), 1e-6);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

START_TEST(test_wall_hit)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene s;
    /* a 0.3 m box sliding at 2 m/s along -x into the wall's middle brick of the lower row */
    pp_scene_wall_hit(&s, 2, 3);
    pp_world *pw = pp_it_world_clock_free(&s, PP_MODEL_PEG);
    double deepest = 0.0;
    for (int step = 0; step < 25; ++step) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        assert_exact_step(pp_world_get_stats(pw), step);
        deepest = fmax(deepest, pp_scene_max_penetration(&s));
    }
    const dReal *x = dBodyGetPosition(s.bodies[1]);
    printf("check_peg_walls: 2 x 3 wall hit at 2 m/s: deepest overlap %.3g m, the hit brick "
           "moved to x = %.4f\n",
           deepest, x[0]);
    ck_assert_double_le(deepest, 1e-9);
    ck_assert_double_lt(x[0], 0.25 - 1e-3); /* it was pushed (the impact reached the wall) */
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("peg_walls");
    TCase *tc = tcase_create("peg_walls");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_wall_at_rest);
    tcase_add_test(tc, test_wall_hit);
    suite_add_tcase(suite, tc);
    return pp_it_run(suite);
}
