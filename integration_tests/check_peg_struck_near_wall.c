/*
 * A body at rest near a static wall, struck within the step (the pouring scene, frictionless
 * seed 103, step 180: hull 0 resting 1.5 cm from the -x end wall, hull 1 arriving at 5 m/s;
 * hull 0 left at 1.3 m/s and ended the step 1 cm inside the wall, 5.9e-5 m^3, no constraint
 * between them).
 *
 * Stage 2 bounds how far a shape can move in a step by its velocity at the start,
 * m_i = h (|v| + |a| h + |w| r_i) (stage_broadphase.c), so the struck body's pair with the wall
 * was no candidate: its boxes, grown by eps/2 + m_i, were 5 mm apart. The re-linearisation now
 * adds the pairs with static shapes near its predicted poses (relinearize.c,
 * pairs_near_prediction), and the wall's sets join the working set.
 *
 * Here, without gravity and frictionless: box A (0.3 m, 1 kg) at rest with its -x face
 * 15 mm from a static wall's face (eps = 1 cm, the default), box B (0.3 m, 1 kg) 5 mm from A's
 * +x face sliding at 5 m/s into it. In the first step B meets A and, with A's pair with the wall
 * missed, A went 7.5e-3 m into the wall (measured before the change, after step 0). The wall must hold A at every step (no overlap beyond 1e-9 m), every
 * step PP_OK with Lemke's answer, and the boxes end moving back out (+x) or at rest against
 * it, never through.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

START_TEST(test_struck_near_wall)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scenes_init_ode();
    pp_scene s;
    memset(&s, 0, sizeof s);
    s.name = "struck_near_wall";
    s.world = dWorldCreate();
    s.space = dHashSpaceCreate(0);
    dWorldSetGravity(s.world, 0.0, 0.0, 0.0);
    /* the wall: a static box, its +x face at x = 0 */
    dGeomID wall = dCreateBox(s.space, 0.25, 2.0, 2.0);
    dGeomSetPosition(wall, -0.125, 0.0, 0.0);
    const double l[3] = {0.3, 0.3, 0.3};
    dBodyID a = pp_scene_add_box(&s, l, 1.0, (const double[3]){0.015 + 0.15, 0.0, 0.0});
    dBodyID b = pp_scene_add_box(&s, l, 1.0, (const double[3]){0.015 + 0.3 + 0.005 + 0.15,
                                                                0.0, 0.0});
    dBodySetLinearVel(b, -5.0, 0.0, 0.0);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_PEG;
    c.surface.mu = 0.0;
    c.lcp_budget_seconds = 0.0; /* no clock: the answers do not depend on the machine */
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &c, &pw), PP_OK);
    double deepest = 0.0;
    int deepest_step = -1;
    for (int step = 0; step < 10; ++step) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        pp_it_assert_lemke(pp_world_get_stats(pw), step);
        double d = pp_scene_max_penetration(&s);
        if (d > deepest) deepest = d, deepest_step = step;
    }
    const dReal *xa = dBodyGetPosition(a), *va = dBodyGetLinearVel(a);
    printf("check_peg_struck_near_wall: deepest overlap %.3g m (step %d); box A at x = %.5f, "
           "v_x = %.4f m/s\n", deepest, deepest_step, xa[0], va[0]);
    ck_assert_msg(deepest <= 1e-9, "overlap %.3g m after step %d", deepest, deepest_step);
    ck_assert_double_ge(xa[0] - 0.15, -1e-9); /* A's -x face not inside the wall */
    ck_assert_double_ge(va[0], -1e-9);        /* nor moving into it */
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("peg_struck_near_wall");
    TCase *tc = tcase_create("peg_struck_near_wall");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_struck_near_wall);
    suite_add_tcase(suite, tc);
    return pp_it_run(suite);
}
