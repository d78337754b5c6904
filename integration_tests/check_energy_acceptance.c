/*
 * The energy acceptance of every island solve (plugin/src/stage_time_step.c energy_bounded;
 * docs/design.md "A bounded failure path") lets through the work the constraints may do.
 *
 * A passive island's solve may raise the kinetic energy above nu*'s only by the work of the
 * psi/h terms of overlapping contacts (p max(0, -psi/h)) and of the joint rows' right-hand
 * sides (|p c|). Here a unit box rests on the ground plane `depth` deep, under the standard
 * model and PEG, no friction, h = 0.01: the step's solve pushes the overlap out in one step,
 * every corner's end normal velocity exactly -psi/h = depth/h, which takes kinetic energy
 * from nu*'s m (g h)^2 / 2 to m (depth/h)^2 / 2 — up to 0.5 J for 1 kg. The acceptance must
 * keep that answer: PP_OK, no LCP fallback (a rejected answer would show lcp_fallback >= 1
 * and leave the box sinking at -g h), and v_z = depth / h to 1e-9 m/s. With depth = 0 (the
 * box exactly on the plane) the same step gives v_z = 0: nothing to push out.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define H 0.01
#define G 9.81

static const double DEPTHS[] = {0.0, 1e-4, 1e-3, 5e-3};

START_TEST(test_push_out_accepted)
{
    const double depth = DEPTHS[_i % 4];
    const pp_model model = _i < 4 ? PP_MODEL_STANDARD : PP_MODEL_PEG;
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scenes_init_ode();
    dWorldID world = dWorldCreate();
    dSpaceID space = dHashSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, -G);
    dCreatePlane(space, 0, 0, 1, 0);
    pp_config config = pp_config_default();
    config.model = model;
    config.surface.mu = 0.0;
    /* the exact psi/h term: the push-out is not bounded by max_correcting_velocity here (that
     * bound, 0.1 m/s by default, is check_recovery's) */
    config.max_correcting_velocity = INFINITY;
    config.lcp_budget_seconds = 0.0;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &config, &pw), PP_OK);
    dBodyID box = dBodyCreate(world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 1.0, 1.0, 1.0);
    dBodySetMass(box, &m);
    dGeomSetBody(dCreateBox(space, 1.0, 1.0, 1.0), box);
    dBodySetPosition(box, 0.0, 0.0, 0.5 - depth);

    ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
    const pp_step_stats *s = pp_world_get_stats(pw);
    const dReal *v = dBodyGetLinearVel(box), *w = dBodyGetAngularVel(box);
    ck_assert_msg(s->lcp_fallback == 0, "%s, depth %g: LCP fallback %d (the push-out rejected?)",
                  pp_model_name(model), depth, s->lcp_fallback);
    ck_assert_msg(fabs(v[2] - depth / H) <= 1e-9, "%s, depth %g: v_z = %.12g, want %.12g",
                  pp_model_name(model), depth, v[2], depth / H);
    ck_assert_double_le(fabs(v[0]) + fabs(v[1]), 1e-9);
    ck_assert_double_le(fabs(w[0]) + fabs(w[1]) + fabs(w[2]), 1e-9);
    printf("push-out, %s, depth %g m: v_z %.12g m/s (depth/h %.12g), kinetic energy %.6g J\n",
           pp_model_name(model), depth, v[2], depth / H, 0.5 * v[2] * v[2]);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("energy_acceptance");
    TCase *tc = tcase_create("push_out");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_push_out_accepted, 0, 8);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
