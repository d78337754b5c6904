/*
 * PP_MODEL_ODE must be stock ODE exactly: a hand-written ODE loop (dSpaceCollide with a near
 * callback, dCollide with up to 8 contacts, contact joints with the same surface, dWorldStep or
 * dWorldQuickStep, joint group emptied) and pp_world_step give bit-identical trajectories on
 * the same scene (issue 2).
 */
#include "pegplus/pegplus.h"
#include "scenes.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { STEPS = 400, MAX_CONTACTS = 8 };
static const double H = 0.01;

typedef struct hand_loop {
    dWorldID world;
    dJointGroupID group;
} hand_loop;

/* The near callback of a typical ODE program (ODE's demos). */
static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    hand_loop *loop = data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact contact[MAX_CONTACTS];
    memset(contact, 0, sizeof contact);
    int n = dCollide(o1, o2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface.mode = dContactApprox1 | dContactBounce;
        contact[i].surface.mu = 0.7;
        contact[i].surface.bounce = 0.3;
        contact[i].surface.bounce_vel = 0.1;
        dJointID j = dJointCreateContact(loop->world, loop->group, &contact[i]);
        dJointAttach(j, b1, b2);
    }
}

static int bits_equal(const dReal *a, const dReal *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof(dReal)) == 0;
}

/* _i: 0 = dWorldStep, 1 = dWorldQuickStep */
START_TEST(test_ode_model_is_bit_identical)
{
    int quick = _i;
    pp_scene hand, ours;
    pp_scene_drop(&hand);
    pp_scene_drop(&ours);

    hand_loop loop = {hand.world, dJointGroupCreate(0)};
    pp_config config = pp_config_default();
    config.model = PP_MODEL_ODE;
    config.ode_stepper = quick ? PP_ODE_QUICK_STEP : PP_ODE_WORLD_STEP;
    config.ode_max_contacts = MAX_CONTACTS;
    config.surface.mu = 0.7;
    config.surface.bounce = 0.3;
    config.surface.bounce_vel = 0.1;
    pp_world *world = NULL;
    ck_assert_int_eq(pp_world_create(ours.world, ours.space, &config, &world), PP_OK);

    int contacts_seen = 0;
    for (int step = 0; step < STEPS; ++step) {
        /* dWorldQuickStep reorders constraints with ODE's global random generator: both
         * loops must draw the same numbers. */
        unsigned long seed = dRandGetSeed();
        dSpaceCollide(hand.space, &loop, near_callback);
        if (quick)
            dWorldQuickStep(hand.world, H);
        else
            dWorldStep(hand.world, H);
        dJointGroupEmpty(loop.group);
        dRandSetSeed(seed);
        ck_assert_int_eq(pp_world_step(world, H), PP_OK);
        contacts_seen += pp_world_get_stats(world)->ode_contacts;
        for (int i = 0; i < hand.body_count; ++i) {
            dBodyID a = hand.bodies[i], b = ours.bodies[i];
            ck_assert_msg(bits_equal(dBodyGetPosition(a), dBodyGetPosition(b), 3) &&
                              bits_equal(dBodyGetQuaternion(a), dBodyGetQuaternion(b), 4) &&
                              bits_equal(dBodyGetLinearVel(a), dBodyGetLinearVel(b), 3) &&
                              bits_equal(dBodyGetAngularVel(a), dBodyGetAngularVel(b), 3),
                          "body %d differs at step %d", i, step);
        }
    }
    /* the scene really exercised contact: every body landed */
    ck_assert_int_gt(contacts_seen, STEPS);
    for (int i = 0; i < ours.body_count; ++i) ck_assert(dBodyGetPosition(ours.bodies[i])[2] < 0.6);
    pp_world_destroy(world);
    dJointGroupDestroy(loop.group);
    pp_scene_destroy(&hand);
    pp_scene_destroy(&ours);
}
END_TEST

static int no_contact_with_spheres(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    (void)user;
    (void)surface;
    return dGeomGetClass(g1) != dSphereClass && dGeomGetClass(g2) != dSphereClass;
}

/* The surface callback can drop a pair: the spheres then fall through the ground. */
START_TEST(test_surface_callback_filters_pairs)
{
    pp_scene s;
    pp_scene_drop(&s);
    pp_config config = pp_config_default();
    config.model = PP_MODEL_ODE;
    config.surface_fn = no_contact_with_spheres;
    pp_world *world = NULL;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &config, &world), PP_OK);
    for (int step = 0; step < 200; ++step) ck_assert_int_eq(pp_world_step(world, H), PP_OK);
    for (int i = 0; i < s.body_count; ++i) {
        double z = dBodyGetPosition(s.bodies[i])[2];
        if (dGeomGetClass(s.geoms[i]) == dSphereClass)
            ck_assert_double_lt(z, -1.0);
        else
            ck_assert_double_gt(z, 0.0);
    }
    pp_world_destroy(world);
    pp_scene_destroy(&s);
}
END_TEST

/* Under PP_MODEL_ODE the contact list is ODE's own contacts of the step (not those of the
 * model that ran before): a box at rest on a plane, first stepped by the standard model, then
 * by ODE. At rest the normal impulses carry the weight, m g h, to ODE's tolerance; every
 * normal is the plane's, turned from g1 to g2; no friction is needed. */
START_TEST(test_ode_contact_list)
{
    dInitODE2(0);
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    dWorldSetGravity(world, 0.0, 0.0, -9.81);
    dGeomID plane = dCreatePlane(space, 0.0, 0.0, 1.0, 0.0);
    dBodyID box = dBodyCreate(world);
    dMass m;
    dMassSetBoxTotal(&m, 2.0, 0.2, 0.2, 0.2);
    dBodySetMass(box, &m);
    dBodySetPosition(box, 0.0, 0.0, 0.1);
    dGeomID g = dCreateBox(space, 0.2, 0.2, 0.2);
    dGeomSetBody(g, box);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    for (int s = 0; s < 20; ++s) ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
    const pp_contact_info *info = NULL;
    ck_assert_int_gt(pp_world_get_contacts(pw, &info), 0);
    ck_assert_int_eq(pp_world_set_model(pw, PP_MODEL_ODE), PP_OK);
    for (int s = 0; s < 200; ++s) ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
    int n = pp_world_get_contacts(pw, &info);
    ck_assert_int_eq(n, pp_world_get_stats(pw)->ode_contacts);
    ck_assert_int_eq(n, 4);
    double total = 0.0;
    for (int i = 0; i < n; ++i) {
        double up = info[i].g1 == g ? -1.0 : 1.0; /* g1 the box: the normal points down */
        ck_assert(info[i].g1 == plane || info[i].g2 == plane);
        ck_assert_double_eq_tol(info[i].normal[2], up, 1e-12);
        ck_assert(info[i].normal_impulse >= 0.0);
        ck_assert(info[i].gap <= 0.0 && info[i].gap > -1e-3);
        ck_assert_double_eq_tol(fabs(info[i].friction_impulse[0]) + fabs(info[i].friction_impulse[1]), 0.0, 1e-9);
        total += info[i].normal_impulse;
    }
    ck_assert_double_eq_tol(total, 2.0 * 9.81 * H, 1e-6 * 2.0 * 9.81 * H);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    dCloseODE();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ode_baseline");
    TCase *tc = tcase_create("bit_identical");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_ode_model_is_bit_identical, 0, 2);
    tcase_add_test(tc, test_surface_callback_filters_pairs);
    tcase_add_test(tc, test_ode_contact_list);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
