/*
 * A program linked with -lode BEFORE -lpegplus (this test's link line; what a static link
 * amounts to): its dCollide and dJointCreateContact are libode's, so the near-callback probe
 * cannot see a stock callback (docs/drop-in.md "linking"). That is refused loudly, never
 * silently: pp_world_set_near_callback warns, and the first step whose callback makes a joint
 * behind pegplus's back returns PP_ERR_UNSUPPORTED with the body untouched. The same callback
 * written with pp_near_probe_collide / pp_near_probe_joint_create_contact works: the box rests
 * on the ground.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static dWorldID world;
static dJointGroupID group;
static int use_probe_functions;

static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    (void)data;
    dContact c[4];
    memset(c, 0, sizeof c);
    int n = use_probe_functions ? pp_near_probe_collide(g1, g2, 4, &c[0].geom, sizeof(dContact))
                                : dCollide(g1, g2, 4, &c[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        c[i].surface.mode = dContactApprox1;
        c[i].surface.mu = 0.5;
        dJointID j = use_probe_functions ? pp_near_probe_joint_create_contact(world, group, &c[i])
                                         : dJointCreateContact(world, group, &c[i]);
        dJointAttach(j, dGeomGetBody(g1), dGeomGetBody(g2));
    }
}

static int warnings, errors;
static char last[2048];
static void count(pp_log_level level, const char *message, void *user)
{
    (void)user;
    fprintf(stderr, "pegplus: %s\n", message);
    warnings += level == PP_LOG_WARNING;
    errors += level == PP_LOG_ERROR;
    snprintf(last, sizeof last, "%s", message);
}

static void run(int probe_functions)
{
    dInitODE2(0);
    pp_set_log_hook(count, NULL);
    warnings = errors = 0;
    use_probe_functions = probe_functions;
    world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    group = dJointGroupCreate(0);
    dWorldSetGravity(world, 0, 0, -9.81);
    dCreatePlane(space, 0, 0, 1, 0);
    dBodyID b = dBodyCreate(world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 0.2, 0.2, 0.2);
    dBodySetMass(b, &m);
    dBodySetPosition(b, 0, 0, 0.1);
    dGeomSetBody(dCreateBox(space, 0.2, 0.2, 0.2), b);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_PEG;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_set_near_callback(pw, NULL, near_callback), PP_OK);
    ck_assert_int_eq(warnings, 1); /* dCollide is libode's in this process */
    ck_assert_ptr_nonnull(strstr(last, "pp_near_probe_collide"));
    pp_status st = pp_world_step(pw, 0.01);
    dJointGroupEmpty(group);
    if (probe_functions) {
        for (int i = 0; i < 100 && st == PP_OK; ++i) {
            st = pp_world_step(pw, 0.01);
            dJointGroupEmpty(group);
        }
        ck_assert_int_eq(st, PP_OK);
        ck_assert_int_eq(errors, 0);
        ck_assert_double_eq_tol(dBodyGetPosition(b)[2], 0.1, 1e-9);
    } else {
        ck_assert_int_eq(st, PP_ERR_UNSUPPORTED);
        ck_assert_int_eq(errors, 1);
        ck_assert_ptr_nonnull(strstr(last, "dBoxClass"));
        ck_assert_ptr_nonnull(strstr(last, "dPlaneClass"));
        ck_assert_double_eq(dBodyGetPosition(b)[2], 0.1); /* not stepped */
        ck_assert_double_eq(dBodyGetLinearVel(b)[2], 0.0);
        ck_assert_int_eq(dBodyGetNumJoints(b), 0);
    }
    pp_world_destroy(pw);
    dJointGroupDestroy(group);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}

START_TEST(test_stock_callback_refused) { run(0); }
END_TEST

START_TEST(test_probe_functions_work) { run(1); }
END_TEST

int main(void)
{
    Suite *s = suite_create("near_callback_link_order");
    TCase *tc = tcase_create("link_order");
    tcase_add_test(tc, test_stock_callback_refused);
    tcase_add_test(tc, test_probe_functions_work);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
