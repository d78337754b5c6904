/*
 * Lifetimes of the ODE objects pegplus keeps (Reliability issue): a registered body and a
 * registered dConvex are the only ODE pointers a pegplus world holds from one step to the
 * next, and a program must unregister them before destroying them (pegplus.h "Lifetime").
 * These tests do exactly that and then step: under AddressSanitizer (CI's PP_SANITIZE build)
 * a pointer kept past dBodyDestroy / dGeomDestroy would be a reported use after free.
 */
#include "pegplus/pegplus.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char g_message[1024];

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    strncpy(g_message, message, sizeof g_message - 1);
}

static void setup(void)
{
    dInitODE2(0);
    g_message[0] = '\0';
    pp_set_log_hook(capture, NULL);
}

static void teardown(void)
{
    pp_set_log_hook(NULL, NULL);
    dCloseODE();
}

static dBodyID lonely_body(dWorldID world, double z)
{
    dBodyID b = dBodyCreate(world);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, 0.1);
    dBodySetMass(b, &m);
    dBodySetPosition(b, 0, 0, z);
    return b;
}

/* _i: the model. A body with no geom and no joint is stepped only while registered; after
 * pp_world_unregister_body it is not touched, and it can be destroyed and the world stepped. */
START_TEST(test_unregister_then_destroy_body)
{
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0, 0, -9.81);
    dSpaceID space = dSimpleSpaceCreate(0);
    dBodyID kept = lonely_body(world, 1.0), gone = lonely_body(world, 2.0);
    pp_config c = pp_config_default();
    c.model = (pp_model)_i;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_register_body(pw, kept), PP_OK);
    ck_assert_int_eq(pp_world_register_body(pw, gone), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 2);
    ck_assert_double_lt(dBodyGetLinearVel(gone)[2], 0.0); /* stepped */

    ck_assert_int_eq(pp_world_unregister_body(pw, gone), PP_OK);
    const dReal vz = dBodyGetLinearVel(gone)[2], kept_vz = dBodyGetLinearVel(kept)[2];
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 1);
    ck_assert(dBodyGetLinearVel(gone)[2] == vz || c.model == PP_MODEL_ODE); /* dWorldStep steps
                                                         every body of the ODE world itself */
    ck_assert_double_lt(dBodyGetLinearVel(kept)[2], kept_vz);

    dBodyDestroy(gone);
    for (int step = 0; step < 3; ++step) ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 1);

    /* unregistering compares pointers only: twice, or a body never registered, is refused */
    ck_assert_int_eq(pp_world_unregister_body(pw, gone), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "not registered"));
    ck_assert_int_eq(pp_world_unregister_body(pw, NULL), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_world_unregister_body(NULL, kept), PP_ERR_NULL_ARGUMENT);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* A registered body that also has a geom in the space stays managed after unregistering (it
 * is found through the space); the others keep their order. */
START_TEST(test_unregister_keeps_space_bodies)
{
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    dBodyID a = lonely_body(world, 1.0), b = lonely_body(world, 2.0), d = lonely_body(world, 3.0);
    dGeomSetBody(dCreateSphere(space, 0.1), b);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_register_body(pw, a), PP_OK);
    ck_assert_int_eq(pp_world_register_body(pw, b), PP_OK);
    ck_assert_int_eq(pp_world_register_body(pw, d), PP_OK);
    ck_assert_int_eq(pp_world_unregister_body(pw, b), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 3);
    ck_assert_int_eq(pp_world_unregister_body(pw, a), PP_OK);
    ck_assert_int_eq(pp_world_unregister_body(pw, d), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 1);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

static const double g_cube[8 * 3] = {
    -0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
    -0.5, -0.5, 0.5,  0.5, -0.5, 0.5,  -0.5, 0.5, 0.5,  0.5, 0.5, 0.5};
static const dReal g_planes[6 * 4] = {1, 0, 0, 0.5, -1, 0, 0, 0.5, 0, 1, 0, 0.5,
                                      0, -1, 0, 0.5, 0, 0, 1, 0.5, 0, 0, -1, 0.5};
static const unsigned g_polygons[6 * 5] = {4, 1, 3, 7, 5, 4, 0, 4, 6, 2, 4, 2, 6, 7, 3,
                                           4, 0, 1, 5, 4, 4, 4, 5, 7, 6, 4, 0, 2, 3, 1};

static int g_warnings;

static void count_warnings(pp_log_level level, const char *message, void *user)
{
    (void)user;
    strncpy(g_message, message, sizeof g_message - 1);
    g_warnings += level == PP_LOG_WARNING;
}

/* A registered dConvex on a body resting on a plane is a polytope to the pegplus models;
 * unregistered, it is an unknown dConvex (skipped, one warning) and can be destroyed, and the
 * world stepped. A geom pegplus made cannot be unregistered (pp_convex_destroy is for it). */
START_TEST(test_unregister_then_destroy_convex)
{
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0, 0, -9.81);
    dSpaceID space = dSimpleSpaceCreate(0);
    dCreatePlane(space, 0, 0, 1, 0);
    dBodyID body = lonely_body(world, 0.5);
    dGeomID convex = dCreateConvex(space, g_planes, 6, g_cube, 8, g_polygons);
    dGeomSetBody(convex, body);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_PEG;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_register_convex(pw, convex, g_cube, 8), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->contacts, 4); /* the cube's bottom corners */

    pp_set_log_hook(count_warnings, NULL);
    g_warnings = 0;
    ck_assert_int_eq(pp_world_unregister_convex(pw, convex), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->contacts, 0);
    ck_assert_int_eq(g_warnings, 1);
    ck_assert_ptr_nonnull(strstr(g_message, "dConvex"));
    dGeomDestroy(convex);
    for (int step = 0; step < 3; ++step) ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_unregister_convex(pw, convex), PP_ERR_INVALID_ARGUMENT);

    dGeomID made = NULL;
    ck_assert_int_eq(pp_convex_create(pw, space, g_cube, 8, &made), PP_OK);
    ck_assert_int_eq(pp_world_unregister_convex(pw, made), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "pp_convex_destroy"));
    ck_assert_int_eq(pp_convex_destroy(pw, made), PP_OK);
    ck_assert_int_eq(pp_world_unregister_convex(pw, NULL), PP_ERR_NULL_ARGUMENT);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* A body found through the space needs no unregistering: after dBodyDestroy its geom is a
 * static geom of the space (ODE's behaviour) and the world steps on. */
START_TEST(test_destroy_space_body_needs_nothing)
{
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0, 0, -9.81);
    dSpaceID space = dSimpleSpaceCreate(0);
    dBodyID body = lonely_body(world, 2.0);
    dGeomID sphere = dCreateSphere(space, 0.1);
    dGeomSetBody(sphere, body);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 1);
    dBodyDestroy(body);
    ck_assert_ptr_null(dGeomGetBody(sphere));
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 0);
    ck_assert_int_eq(pp_world_get_stats(pw)->shapes, 1);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lifetime");
    TCase *tc = tcase_create("unregister");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_unregister_then_destroy_body, PP_MODEL_ODE, PP_MODEL_PEG + 1);
    tcase_add_test(tc, test_unregister_keeps_space_bodies);
    tcase_add_test(tc, test_unregister_then_destroy_convex);
    tcase_add_test(tc, test_destroy_space_body_needs_nothing);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
