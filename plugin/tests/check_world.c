/*
 * Bad input at the API boundary (issue 2): every rejected call returns a status, logs a message
 * naming the problem, and leaves ODE exactly as it was.
 */
#include "pegplus/pegplus.h"
#include "../src/world_internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char g_message[1024];
static int g_messages;

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    strncpy(g_message, message, sizeof g_message - 1);
    g_messages++;
}

static void setup(void)
{
    dInitODE2(0);
    g_message[0] = '\0';
    g_messages = 0;
    pp_set_log_hook(capture, NULL);
}

static void teardown(void)
{
    pp_set_log_hook(NULL, NULL);
    dCloseODE();
}

typedef struct fixture {
    dWorldID world;
    dSpaceID space;
    dBodyID body;
    pp_world *pw;
} fixture;

static void fixture_make(fixture *f, pp_model model)
{
    f->world = dWorldCreate();
    dWorldSetGravity(f->world, 0, 0, -9.81);
    f->space = dHashSpaceCreate(0);
    f->body = dBodyCreate(f->world);
    dMass m;
    dMassSetBoxTotal(&m, 2.0, 0.5, 0.5, 0.5);
    dBodySetMass(f->body, &m);
    dGeomSetBody(dCreateBox(f->space, 0.5, 0.5, 0.5), f->body);
    dBodySetPosition(f->body, 0, 0, 5);
    dBodySetLinearVel(f->body, 1, 0, 0);
    dBodyAddForce(f->body, 0, 3, 0);
    pp_config c = pp_config_default();
    c.model = model;
    ck_assert_int_eq(pp_world_create(f->world, f->space, &c, &f->pw), PP_OK);
}

static void fixture_free(fixture *f)
{
    pp_world_destroy(f->pw);
    dSpaceDestroy(f->space);
    dWorldDestroy(f->world);
}

/* Everything a step could change, as raw bytes. */
typedef struct body_bytes {
    dReal x[3], q[4], v[3], w[3], f[3], t[3];
} body_bytes;

static body_bytes read_bytes(dBodyID b)
{
    body_bytes s;
    memcpy(s.x, dBodyGetPosition(b), sizeof s.x);
    memcpy(s.q, dBodyGetQuaternion(b), sizeof s.q);
    memcpy(s.v, dBodyGetLinearVel(b), sizeof s.v);
    memcpy(s.w, dBodyGetAngularVel(b), sizeof s.w);
    memcpy(s.f, dBodyGetForce(b), sizeof s.f);
    memcpy(s.t, dBodyGetTorque(b), sizeof s.t);
    return s;
}

START_TEST(test_null_handles)
{
    pp_world *pw = (pp_world *)0x1;
    ck_assert_int_eq(pp_world_create(NULL, NULL, NULL, &pw), PP_ERR_NULL_ARGUMENT);
    ck_assert_ptr_null(pw);
    ck_assert_ptr_nonnull(strstr(g_message, "ODE world is NULL"));
    ck_assert_int_eq(pp_world_step(NULL, 0.01), PP_ERR_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "world is NULL"));
    ck_assert_int_eq(pp_world_register_body(NULL, NULL), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_world_set_model(NULL, PP_MODEL_PEG), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_config_validate(NULL), PP_ERR_NULL_ARGUMENT);
    pp_world_destroy(NULL);

    fixture f;
    fixture_make(&f, PP_MODEL_STANDARD);
    ck_assert_int_eq(pp_world_register_body(f.pw, NULL), PP_ERR_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "body is NULL"));
    fixture_free(&f);
}
END_TEST

/* _i indexes the table of bad step sizes; each model rejects each one. */
static const double bad_h[] = {0.0, -0.01, NAN, INFINITY, 5.0};

START_TEST(test_bad_step_size_changes_nothing)
{
    for (int model = PP_MODEL_ODE; model <= PP_MODEL_PEG; ++model) {
        fixture f;
        fixture_make(&f, (pp_model)model);
        body_bytes before = read_bytes(f.body);
        g_messages = 0;
        ck_assert_int_eq(pp_world_step(f.pw, bad_h[_i]), PP_ERR_INVALID_ARGUMENT);
        body_bytes after = read_bytes(f.body);
        ck_assert(memcmp(&before, &after, sizeof before) == 0);
        ck_assert_int_eq(g_messages, 1);
        ck_assert_ptr_nonnull(strstr(g_message, "step size h"));
        fixture_free(&f);
    }
}
END_TEST

/* _i: which state to poison (0 position, 1 quaternion, 2 linear vel, 3 angular vel, 4 force). */
START_TEST(test_non_finite_state_rejected_for_every_model)
{
    static const char *expected[] = {"position", "quaternion", "linear velocity",
                                     "angular velocity", "force"};
    for (int model = PP_MODEL_ODE; model <= PP_MODEL_PEG; ++model) {
        fixture f;
        fixture_make(&f, (pp_model)model);
        switch (_i) {
        case 0: dBodySetPosition(f.body, NAN, 0, 5); break;
        case 1: {
            /* dBodySetQuaternion normalises; write through the rotation-free path instead */
            dReal *q = (dReal *)dBodyGetQuaternion(f.body);
            q[2] = INFINITY;
            break;
        }
        case 2: dBodySetLinearVel(f.body, 0, INFINITY, 0); break;
        case 3: dBodySetAngularVel(f.body, 0, 0, NAN); break;
        case 4: dBodyAddForce(f.body, NAN, 0, 0); break;
        }
        body_bytes before = read_bytes(f.body);
        ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_ERR_INVALID_ARGUMENT);
        body_bytes after = read_bytes(f.body);
        ck_assert_msg(memcmp(&before, &after, sizeof before) == 0, "state changed (model %d)", model);
        ck_assert_msg(strstr(g_message, expected[_i]) != NULL, "message '%s' lacks '%s'", g_message,
                      expected[_i]);
        fixture_free(&f);
    }
}
END_TEST

/* ODE itself aborts on dBodySetMass with mass <= 0, so bad masses can only reach pegplus through
 * its own snapshot; the snapshot check names them. */
START_TEST(test_bad_mass_and_inertia_named)
{
    pp_body b;
    memset(&b, 0, sizeof b);
    b.mass = 1.0;
    b.inertia_body[0] = b.inertia_body[4] = b.inertia_body[8] = 0.1;
    b.q[0] = 1.0;
    ck_assert_ptr_null(pp_body_problem(&b));
    b.mass = 0.0;
    ck_assert_ptr_nonnull(strstr(pp_body_problem(&b), "mass"));
    b.mass = -2.0;
    ck_assert_ptr_nonnull(strstr(pp_body_problem(&b), "mass"));
    b.mass = NAN;
    ck_assert_ptr_nonnull(strstr(pp_body_problem(&b), "mass"));
    b.mass = 1.0;
    b.inertia_body[4] = -0.1;
    ck_assert_ptr_nonnull(strstr(pp_body_problem(&b), "inertia"));
    b.inertia_body[4] = 0.1;
    b.q[0] = 0.0;
    ck_assert_ptr_nonnull(strstr(pp_body_problem(&b), "quaternion"));
}
END_TEST

/* _i indexes bad configurations; each is rejected with the field's name. */
START_TEST(test_bad_config_rejected)
{
    pp_config c = pp_config_default();
    const char *field = NULL;
    switch (_i) {
    case 0: c.model = (pp_model)7; field = "model"; break;
    case 1: c.ode_stepper = (pp_ode_stepper)3; field = "ode_stepper"; break;
    case 2: c.ode_max_contacts = 0; field = "ode_max_contacts"; break;
    case 3: c.surface.mu = -0.1; field = "mu"; break;
    case 4: c.surface.bounce = 1.5; field = "bounce"; break;
    case 5: c.surface.bounce_vel = NAN; field = "bounce_vel"; break;
    case 6: c.proximity_margin = 0.0; field = "proximity_margin"; break;
    case 7: c.proximity_margin = INFINITY; field = "proximity_margin"; break;
    case 8: c.friction_directions = 2; field = "friction_directions"; break;
    case 9: c.surface.mu = NAN; field = "mu"; break;
    }
    ck_assert_int_eq(pp_config_validate(&c), PP_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(g_message, field) != NULL, "message '%s' lacks '%s'", g_message, field);

    dWorldID world = dWorldCreate();
    pp_world *pw = (pp_world *)0x1;
    ck_assert_int_eq(pp_world_create(world, NULL, &c, &pw), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(pw);
    pp_config good = pp_config_default();
    ck_assert_int_eq(pp_world_create(world, NULL, &good, &pw), PP_OK);
    ck_assert_int_eq(pp_world_set_config(pw, &c), PP_ERR_INVALID_ARGUMENT);
    pp_config kept = pp_world_get_config(pw);
    ck_assert(memcmp(&kept, &good, sizeof kept) == 0);
    pp_world_destroy(pw);
    dWorldDestroy(world);
}
END_TEST

START_TEST(test_model_switch_between_steps)
{
    fixture f;
    fixture_make(&f, PP_MODEL_ODE);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(f.pw)->model, PP_MODEL_ODE);
    ck_assert_int_eq(pp_world_set_model(f.pw, PP_MODEL_STANDARD), PP_OK);
    ck_assert_int_eq(pp_world_get_model(f.pw), PP_MODEL_STANDARD);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(f.pw)->model, PP_MODEL_STANDARD);
    ck_assert_int_eq(pp_world_get_stats(f.pw)->bodies, 1);
    ck_assert_int_eq(pp_world_set_model(f.pw, (pp_model)9), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_world_get_model(f.pw), PP_MODEL_STANDARD);
    fixture_free(&f);
}
END_TEST

/* Bodies found through the joint graph and by registration, not only through the space. */
START_TEST(test_body_discovery)
{
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    dSpaceID sub = dSimpleSpaceCreate(space);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, 0.1);
    dBodyID with_geom = dBodyCreate(world), jointed = dBodyCreate(world), lonely = dBodyCreate(world);
    dBodyID disabled = dBodyCreate(world);
    dBodySetMass(with_geom, &m);
    dBodySetMass(jointed, &m);
    dBodySetMass(lonely, &m);
    dBodySetMass(disabled, &m);
    dGeomSetBody(dCreateSphere(sub, 0.1), with_geom);
    dGeomSetBody(dCreateSphere(space, 0.1), disabled);
    dBodyDisable(disabled);
    dJointAttach(dJointCreateBall(world, 0), with_geom, jointed);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    ck_assert_int_eq(pp_bridge_collect(pw), PP_OK);
    ck_assert_int_eq(pw->body_count, 2); /* with_geom (in a sub-space) and jointed */
    ck_assert_int_eq(pw->geom_count, 2);
    ck_assert_int_eq(pp_world_register_body(pw, lonely), PP_OK);
    ck_assert_int_eq(pp_world_register_body(pw, lonely), PP_OK);
    ck_assert_int_eq(pp_bridge_collect(pw), PP_OK);
    ck_assert_int_eq(pw->body_count, 3);

    /* a body joined by a ball joint is not something the pegplus models step yet */
    pp_world_set_model(pw, PP_MODEL_STANDARD);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(g_message, "joint"));

    dWorldID other = dWorldCreate();
    dBodyID foreign = dBodyCreate(other);
    ck_assert_int_eq(pp_world_register_body(pw, foreign), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "another ODE world"));
    pp_world_destroy(pw);
    dWorldDestroy(other);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* Until the contact stages exist, a near pair is refused honestly and nothing moves. */
START_TEST(test_contact_refused_until_built)
{
    fixture f;
    fixture_make(&f, PP_MODEL_STANDARD);
    dCreatePlane(f.space, 0, 0, 1, 0);
    dBodySetPosition(f.body, 0, 0, 0.255);
    body_bytes before = read_bytes(f.body);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_ERR_UNSUPPORTED);
    body_bytes after = read_bytes(f.body);
    ck_assert(memcmp(&before, &after, sizeof before) == 0);
    ck_assert_ptr_nonnull(strstr(g_message, "not built yet"));
    dBodySetPosition(f.body, 0, 0, 3.0); /* far from the plane: free flight is fine */
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    fixture_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("world");
    TCase *tc = tcase_create("boundary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_null_handles);
    tcase_add_loop_test(tc, test_bad_step_size_changes_nothing, 0, 5);
    tcase_add_loop_test(tc, test_non_finite_state_rejected_for_every_model, 0, 5);
    tcase_add_test(tc, test_bad_mass_and_inertia_named);
    tcase_add_loop_test(tc, test_bad_config_rejected, 0, 10);
    tcase_add_test(tc, test_model_switch_between_steps);
    tcase_add_test(tc, test_body_discovery);
    tcase_add_test(tc, test_contact_refused_until_built);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
