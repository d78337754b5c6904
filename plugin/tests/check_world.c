/*
 * Bad input at the API boundary (issue 2): every rejected call returns a status, logs a message
 * naming the problem, and leaves ODE exactly as it was.
 */
#include "pegplus/pegplus.h"
#include "../src/world_internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
    case 8: c.friction_directions = 1; field = "friction_directions"; break;
    case 9: c.surface.mu = NAN; field = "mu"; break;
    case 10: c.relinearize_iterations = -1; field = "relinearize_iterations"; break;
    case 11: c.relinearize_iterations = 101; field = "relinearize_iterations"; break;
    case 12: c.compliance = 1.0; field = "compliance"; break;
    /* every other field of pp_config, and the other edges of each domain */
    case 13: c.model = (pp_model)-1; field = "model"; break;
    case 14: c.ode_max_contacts = 65; field = "ode_max_contacts"; break;
    case 15: c.surface.mu = -INFINITY; field = "mu"; break;
    case 16: c.surface.bounce = -0.1; field = "bounce"; break;
    case 17: c.surface.bounce = NAN; field = "bounce"; break;
    case 18: c.surface.bounce_vel = INFINITY; field = "bounce_vel"; break;
    case 19: c.surface.bounce_vel = -1.0; field = "bounce_vel"; break;
    case 20: c.surface.plus_v_plastic = NAN; field = "plus_v_plastic"; break;
    case 21: c.surface.plus_v_plastic = -1.0; field = "plus_v_plastic"; break;
    case 22: c.surface.plus_v_plastic = INFINITY; field = "plus_v_plastic"; break;
    case 23: c.proximity_margin = NAN; field = "proximity_margin"; break;
    case 24: c.proximity_margin = -0.01; field = "proximity_margin"; break;
    case 25: c.proximity_margin = 1e4; field = "proximity_margin"; break;
    case 26: c.friction_directions = 65; field = "friction_directions"; break;
    case 27: c.compliance = NAN; field = "compliance"; break;
    case 28: c.compliance = -1e-9; field = "compliance"; break;
    case 29: c.threads = 0; field = "threads"; break;
    case 30: c.threads = PP_MAX_THREADS + 1; field = "threads"; break;
    case 31: c.lcp_budget_seconds = NAN; field = "lcp_budget_seconds"; break;
    case 32: c.lcp_budget_seconds = -1.0; field = "lcp_budget_seconds"; break;
    case 33: c.lcp_budget_seconds = 3601.0; field = "lcp_budget_seconds"; break;
    case 34: c.lcp_budget_seconds = INFINITY; field = "lcp_budget_seconds"; break;
    case 35: c.load_sharing = 2; field = "load_sharing"; break;
    case 36: c.load_sharing = -1; field = "load_sharing"; break;
    case 37: c.lcp_budget_pivots = -1; field = "lcp_budget_pivots"; break;
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
    dBodySetPosition(disabled, 5.0, 0.0, 0.0); /* touched, it would wake (as in ODE) */
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

    /* a body joined by a ball joint is stepped by the pegplus models with the joint's rows
     * (pegplus.h "Joints"), or refused by name where libode does not export them */
    pp_world_set_model(pw, PP_MODEL_STANDARD);
    if (pp_ode_joint_rows_available()) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        ck_assert_int_eq(pp_world_get_stats(pw)->joints, 1);
        ck_assert_int_eq(pp_world_get_stats(pw)->joint_rows, 3);
        ck_assert_int_eq(pp_world_get_stats(pw)->bodies, 3);
    } else {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_ERR_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(g_message, "joint"));
    }

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

/* A box over a plane: PEG makes one U set per vertex within the margin (a half-space has no
 * edges or corners to trap anything, PEG Sec. 5), so it takes exactly the step of the
 * standard model, whose contacts are the same four vertex–plane pairs. */
START_TEST(test_peg_box_on_plane_matches_standard)
{
    fixture f[2];
    for (int m = 0; m < 2; ++m) {
        fixture_make(&f[m], m == 0 ? PP_MODEL_STANDARD : PP_MODEL_PEG);
        dCreatePlane(f[m].space, 0, 0, 1, 0);
        dBodySetPosition(f[m].body, 0, 0, 0.255);
        for (int i = 0; i < 20; ++i) ck_assert_int_eq(pp_world_step(f[m].pw, 0.01), PP_OK);
    }
    const pp_step_stats *st = pp_world_get_stats(f[1].pw);
    ck_assert_int_eq(st->peg_u_sets, 4);
    ck_assert_int_eq(st->peg_i_sets + st->peg_x_sets + st->peg_fallback, 0);
    ck_assert_int_eq(pp_world_get_stats(f[0].pw)->contacts, 4);
    const dReal *x0 = dBodyGetPosition(f[0].body), *x1 = dBodyGetPosition(f[1].body);
    const dReal *v0 = dBodyGetLinearVel(f[0].body), *v1 = dBodyGetLinearVel(f[1].body);
    for (int k = 0; k < 3; ++k) {
        ck_assert_double_eq_tol(x0[k], x1[k], 1e-12);
        ck_assert_double_eq_tol(v0[k], v1[k], 1e-10);
    }
    ck_assert(x1[2] > 0.25 - 1e-9); /* resting on the plane, not in it */
    for (int m = 0; m < 2; ++m) fixture_free(&f[m]);
}
END_TEST

static const double g_cube[8 * 3] = {
    -0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
    -0.5, -0.5, 0.5,  0.5, -0.5, 0.5,  -0.5, 0.5, 0.5,  0.5, 0.5, 0.5};

/* Degenerate point sets: rejected with a message, no geom created. */
START_TEST(test_convex_degenerate_rejected)
{
    double pts[8 * 3];
    int count = 8;
    pp_status want = PP_ERR_DEGENERATE;
    const char *words = NULL;
    memcpy(pts, g_cube, sizeof pts);
    switch (_i) {
    case 0: count = 3; break;                                  /* fewer than 4 points */
    case 1: for (int v = 0; v < 8; ++v) pts[3 * v + 2] = 0.25; break; /* coplanar */
    case 2: for (int v = 4; v < 8; ++v) memcpy(&pts[3 * v], &pts[0], 3 * sizeof(double));
            for (int v = 2; v < 4; ++v) memcpy(&pts[3 * v], &pts[3], 3 * sizeof(double));
            break;                                             /* duplicates: 2 distinct */
    case 3: pts[7] = NAN; want = PP_ERR_INVALID_ARGUMENT; break;
    case 4: for (int v = 0; v < 8; ++v) { pts[3 * v + 1] = pts[3 * v]; pts[3 * v + 2] = pts[3 * v]; }
            break;                                             /* collinear */
    case 5: count = -1; want = PP_ERR_INVALID_ARGUMENT; break;
    }
    (void)words;
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    dGeomID g = (dGeomID)0x1;
    g_messages = 0;
    ck_assert_int_eq(pp_convex_create(pw, space, pts, count, &g), want);
    ck_assert_ptr_eq(g, (dGeomID)0x1);
    ck_assert_int_eq(dSpaceGetNumGeoms(space), 0);
    ck_assert_int_gt(g_messages, 0);
    ck_assert_ptr_nonnull(strstr(g_message, "pp_convex_create"));
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* pp_convex_create makes a real dConvex: ODE collides it with its own arrays (a unit cube
 * 0.01 m into the plane: 4 corners at depth 0.01), and the pegplus world owns and frees it. */
START_TEST(test_convex_create_is_an_ode_convex)
{
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    double pts[9 * 3];
    memcpy(pts, g_cube, sizeof g_cube);
    pts[24] = 0.1, pts[25] = 0.2, pts[26] = 0.0; /* an interior point is dropped */
    dGeomID g = NULL;
    ck_assert_int_eq(pp_convex_create(pw, space, pts, 9, &g), PP_OK);
    ck_assert_int_eq(dGeomGetClass(g), dConvexClass);
    ck_assert_int_eq(dSpaceGetNumGeoms(space), 1);
    dGeomSetPosition(g, 0, 0, 0.49);
    dGeomID plane = dCreatePlane(space, 0, 0, 1, 0);
    dContactGeom contacts[8];
    int n = dCollide(g, plane, 8, contacts, sizeof(dContactGeom));
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < n; ++i) ck_assert_double_eq_tol(contacts[i].depth, 0.01, 1e-12);
    dReal box[6];
    dGeomGetAABB(g, box);
    ck_assert_double_eq_tol(box[0], -0.5, 1e-12);
    ck_assert_double_eq_tol(box[5], 0.99, 1e-12);
    /* Registering the same geom again is refused; the owner destroys it. */
    ck_assert_int_eq(pp_world_register_convex(pw, g, g_cube, 8), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_convex_destroy(pw, g), PP_OK);
    ck_assert_int_eq(dSpaceGetNumGeoms(space), 1);
    ck_assert_int_eq(pp_convex_destroy(pw, g), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_convex_create(pw, space, g_cube, 8, &g), PP_OK);
    pp_world_destroy(pw); /* destroys the second convex */
    ck_assert_int_eq(dSpaceGetNumGeoms(space), 1);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* A dConvex the caller made can be registered with its points; the wrong points or a geom that
 * is not a dConvex are refused. */
START_TEST(test_register_convex)
{
    static const dReal planes[6 * 4] = {1, 0, 0, 0.5, -1, 0, 0, 0.5, 0, 1, 0, 0.5,
                                        0, -1, 0, 0.5, 0, 0, 1, 0.5, 0, 0, -1, 0.5};
    static const unsigned polygons[6 * 5] = {4, 1, 3, 7, 5, 4, 0, 4, 6, 2, 4, 2, 6, 7, 3,
                                             4, 0, 1, 5, 4, 4, 4, 5, 7, 6, 4, 0, 2, 3, 1};
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    dGeomID g = dCreateConvex(space, planes, 6, g_cube, 8, polygons);
    dGeomSetPosition(g, 1, 2, 3);
    double wrong[8 * 3];
    for (int i = 0; i < 24; ++i) wrong[i] = 2.0 * g_cube[i];
    ck_assert_int_eq(pp_world_register_convex(pw, g, wrong, 8), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "does not match"));
    ck_assert_int_eq(pp_world_register_convex(pw, g, g_cube, 8), PP_OK);
    dGeomID sphere = dCreateSphere(space, 0.5);
    ck_assert_int_eq(pp_world_register_convex(pw, sphere, g_cube, 8), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(g_message, "not a dConvex"));
    pp_world_destroy(pw); /* a registered geom stays the caller's */
    ck_assert_int_eq(dSpaceGetNumGeoms(space), 2);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* Unsupported geoms are each reported once, by dGeomID and class, and skipped. */
START_TEST(test_unsupported_geom_reported_once)
{
    fixture f;
    fixture_make(&f, PP_MODEL_STANDARD);
    dGeomID ray = dCreateRay(f.space, 1.0);
    dGeomSetPosition(ray, 0, 0, -20);
    g_messages = 0;
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    ck_assert_int_eq(g_messages, 1);
    char id[64];
    snprintf(id, sizeof id, "dGeomID %p (dRayClass", (void *)ray);
    ck_assert_ptr_nonnull(strstr(g_message, id));
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    ck_assert_int_eq(g_messages, 1);
    dGeomID second = dCreateRay(f.space, 2.0); /* another one is named too */
    dGeomSetPosition(second, 0, 5, -20);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    ck_assert_int_eq(g_messages, 2);
    snprintf(id, sizeof id, "dGeomID %p (dRayClass", (void *)second);
    ck_assert_ptr_nonnull(strstr(g_message, id));
    fixture_free(&f);
}
END_TEST

static int bad_mu(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    (void)user, (void)g1, (void)g2;
    surface->mu = NAN;
    return 1;
}

/* A surface callback's NaN friction is rejected; nothing in ODE changes. */
START_TEST(test_bad_surface_rejected)
{
    fixture f;
    fixture_make(&f, PP_MODEL_STANDARD);
    dCreatePlane(f.space, 0, 0, 1, 0);
    dBodySetPosition(f.body, 0, 0, 0.25);
    pp_config c = pp_world_get_config(f.pw);
    c.surface_fn = bad_mu;
    ck_assert_int_eq(pp_world_set_config(f.pw, &c), PP_OK);
    body_bytes before = read_bytes(f.body);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_ERR_INVALID_ARGUMENT);
    body_bytes after = read_bytes(f.body);
    ck_assert(memcmp(&before, &after, sizeof before) == 0);
    ck_assert_ptr_nonnull(strstr(g_message, "mu"));
    fixture_free(&f);
}
END_TEST

/* ---- Stage 1b's accumulators saved once per body (ode_bridge.c pp_bridge_save_accumulators) --
 * A chain A-B-C of hinges (A to the static world) and a disabled body D ball-jointed to both A
 * and C: B is joined to two stepped bodies, A and C to two joints and D, which pegplus does not
 * step until stage 1c wakes it, to two stepped bodies. getInfo2 may add to each of them, so
 * each is saved, and once: read inside the surface callback (stage 2-6, after stage 1b), in the
 * first pass (D not stepped) and in the pass after D is woken. */
typedef struct saved_probe {
    pp_world *pw;
    dBodyID bodies[4];
    int calls, duplicates, missing, largest;
} saved_probe;

static int probe_saved(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    (void)g1, (void)g2, (void)surface;
    saved_probe *p = user;
    const pp_world *w = p->pw;
    p->calls++;
    if (w->saved_count > p->largest) p->largest = w->saved_count;
    for (int i = 0; i < w->saved_count; ++i)
        for (int j = i + 1; j < w->saved_count; ++j)
            p->duplicates += w->saved[i].body == w->saved[j].body;
    for (int b = 0; b < 4; ++b) {
        int found = 0;
        for (int i = 0; i < w->saved_count; ++i) found |= w->saved[i].body == p->bodies[b];
        p->missing += !found;
    }
    return 1;
}

START_TEST(test_accumulators_saved_once)
{
    fixture f;
    fixture_make(&f, PP_MODEL_STANDARD);
    dCreatePlane(f.space, 0, 0, 1, 0);
    saved_probe p = {.pw = f.pw};
    p.bodies[0] = f.body; /* A, its 0.5 m box 5 mm above the plane: a candidate pair */
    dBodySetPosition(f.body, 0, 0, 0.255);
    dBodySetLinearVel(f.body, 0, 0, 0);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 0.2, 0.2, 0.2);
    for (int b = 1; b < 4; ++b) {
        p.bodies[b] = dBodyCreate(f.world);
        dBodySetMass(p.bodies[b], &m);
        dBodySetPosition(p.bodies[b], 0.5 * b, 0, 2.0);
    }
    dJointID hinge[3];
    for (int k = 0; k < 3; ++k) {
        hinge[k] = dJointCreateHinge(f.world, 0);
        dJointAttach(hinge[k], k ? p.bodies[k - 1] : p.bodies[0], k ? p.bodies[k] : 0);
        dJointSetHingeAnchor(hinge[k], 0.5 * k - 0.25, 0, 2.0);
        dJointSetHingeAxis(hinge[k], 0, 1, 0);
    }
    dJointID ball[2] = {dJointCreateBall(f.world, 0), dJointCreateBall(f.world, 0)};
    dJointAttach(ball[0], p.bodies[0], p.bodies[3]);
    dJointAttach(ball[1], p.bodies[3], p.bodies[2]);
    dBodyDisable(p.bodies[3]);
    pp_config c = pp_world_get_config(f.pw);
    c.surface_fn = probe_saved;
    c.surface_user = &p;
    ck_assert_int_eq(pp_world_set_config(f.pw, &c), PP_OK);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    ck_assert_int_gt(p.calls, 1); /* the first pass and the one after D woke */
    ck_assert(dBodyIsEnabled(p.bodies[3]));
    ck_assert_msg(p.duplicates == 0, "%d duplicate saves over %d reads", p.duplicates, p.calls);
    ck_assert_int_eq(p.missing, 0);
    ck_assert_int_eq(p.largest, 4);
    ck_assert_int_eq(f.pw->saved_count, 0); /* forgotten when the step ends */
    fixture_free(&f);
}
END_TEST

/* ---- PP_MODEL_ODE out of memory: refused unstepped (pegplus.h pp_world_step) ---------------
 * ODE_BOXES boxes resting on a plane, 4 contacts each, stepped by PP_MODEL_ODE beside a twin
 * world. In a child process (Check's fork is not relied on), the world's contact list (_i = 0,
 * the baseline's own callback) or its record of the program's contact joints (_i = 1, the
 * program's near callback) is given back (white box: every other array, and ODE's own step
 * memory, was sized by the steps before), and the address space is capped (RLIMIT_AS) at
 * ODE_ROOM above what the child holds, less than that array needs. The step must be refused
 * with PP_ERR_NO_MEMORY and leave every body as it was (before: the baseline stepped ODE and
 * then failed to list the contacts; the callback path stepped and returned PP_OK with a short
 * list); with the cap lifted the next step is the twin's, bit for bit. Not under
 * AddressSanitizer, whose shadow memory defeats an address-space cap. */
#if defined(__SANITIZE_ADDRESS__)
#define PP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PP_TEST_ASAN 1
#endif
#endif
enum { ODE_BOXES = 1500, ODE_STEPS = 3 };
#define ODE_ROOM ((rlim_t)256 << 10)

typedef struct program_loop {
    dWorldID world;
    dJointGroupID group;
} program_loop;

static void program_near(void *data, dGeomID o1, dGeomID o2)
{
    program_loop *loop = data;
    dContact contact[4];
    memset(contact, 0, sizeof contact);
    int n = pp_near_probe_collide(o1, o2, 4, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface.mode = dContactApprox1;
        contact[i].surface.mu = 0.5;
        dJointID j = pp_near_probe_joint_create_contact(loop->world, loop->group, &contact[i]);
        dJointAttach(j, dGeomGetBody(o1), dGeomGetBody(o2));
    }
}

typedef struct ode_boxes {
    dWorldID world;
    dSpaceID space;
    dBodyID body[ODE_BOXES];
    program_loop loop;
    pp_world *pw;
} ode_boxes;

static void ode_boxes_make(ode_boxes *o, int callback)
{
    o->world = dWorldCreate();
    dWorldSetGravity(o->world, 0, 0, -9.81);
    o->space = dHashSpaceCreate(0);
    dCreatePlane(o->space, 0, 0, 1, 0);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 0.2, 0.2, 0.2);
    for (int b = 0; b < ODE_BOXES; ++b) {
        o->body[b] = dBodyCreate(o->world);
        dBodySetMass(o->body[b], &m);
        dGeomSetBody(dCreateBox(o->space, 0.2, 0.2, 0.2), o->body[b]);
        dBodySetPosition(o->body[b], 0.5 * (b % 40), 0.5 * (b / 40), 0.0999);
    }
    pp_config c = pp_config_default();
    c.model = PP_MODEL_ODE;
    c.ode_max_contacts = 4;
    ck_assert_int_eq(pp_world_create(o->world, o->space, &c, &o->pw), PP_OK);
    o->loop.world = o->world;
    o->loop.group = dJointGroupCreate(0);
    if (callback)
        ck_assert_int_eq(pp_world_set_near_callback(o->pw, &o->loop, program_near), PP_OK);
}

static pp_status ode_boxes_step(ode_boxes *o)
{
    pp_status st = pp_world_step(o->pw, 0.01);
    dJointGroupEmpty(o->loop.group); /* the program's, after each step */
    return st;
}

static void ode_boxes_free(ode_boxes *o)
{
    pp_world_destroy(o->pw);
    dJointGroupDestroy(o->loop.group);
    dSpaceDestroy(o->space);
    dWorldDestroy(o->world);
}

#ifndef PP_TEST_ASAN
static rlim_t address_space(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %lu kB", &kb) == 1) break;
    fclose(f);
    return (rlim_t)kb * 1024;
}
#endif

START_TEST(test_ode_model_out_of_memory_unstepped)
{
#ifdef PP_TEST_ASAN
    return;
#else
    const int callback = _i;
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        pp_set_log_hook(pp_log_discard, NULL);
        static ode_boxes o[2];
        for (int k = 0; k < 2; ++k) ode_boxes_make(&o[k], callback);
        for (int step = 0; step < ODE_STEPS; ++step)
            for (int k = 0; k < 2; ++k)
                if (ode_boxes_step(&o[k]) != PP_OK) _exit(10);
        const pp_contact_info *info;
        if (pp_world_get_contacts(o[0].pw, &info) != 4 * ODE_BOXES) _exit(11);
        pp_world *w = o[0].pw;
        if (callback) { /* the record of the program's joints, given back */
            free(w->ode_contacts);
            free(w->ode_contact_bodies);
            free(w->ode_feedback);
            free(w->ode_program_joints);
            w->ode_contacts = NULL;
            w->ode_contact_bodies = NULL;
            w->ode_feedback = NULL;
            w->ode_program_joints = NULL;
            w->ode_contact_capacity = 0;
        } else { /* the contact list, given back */
            free(w->scratch.info);
            w->scratch.info = NULL;
            w->scratch.info_capacity = 0;
        }
        body_bytes before[ODE_BOXES];
        for (int b = 0; b < ODE_BOXES; ++b) before[b] = read_bytes(o[0].body[b]);
        const rlim_t now = address_space();
        if (now == 0) _exit(12);
        struct rlimit was;
        if (getrlimit(RLIMIT_AS, &was) != 0) _exit(13);
        struct rlimit cap = {now + ODE_ROOM, was.rlim_max};
        if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(13);
        pp_status st = ode_boxes_step(&o[0]);
        if (setrlimit(RLIMIT_AS, &was) != 0) _exit(13);
        if (st != PP_ERR_NO_MEMORY) _exit(20 + (int)st);
        if (pp_world_get_contacts(o[0].pw, &info) != 0) _exit(14);
        for (int b = 0; b < ODE_BOXES; ++b) {
            body_bytes after = read_bytes(o[0].body[b]);
            if (memcmp(&before[b], &after, sizeof after)) _exit(15);
        }
        for (int k = 0; k < 2; ++k)
            if (ode_boxes_step(&o[k]) != PP_OK) _exit(16);
        if (pp_world_get_contacts(o[0].pw, &info) != 4 * ODE_BOXES) _exit(17);
        for (int b = 0; b < ODE_BOXES; ++b) {
            body_bytes x = read_bytes(o[0].body[b]), y = read_bytes(o[1].body[b]);
            if (memcmp(&x, &y, sizeof x)) _exit(18);
        }
        for (int k = 0; k < 2; ++k) ode_boxes_free(&o[k]);
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: the capped PP_MODEL_ODE step: exit %d (signal %d; 14: contacts listed, "
                  "15: a body stepped, 16-18: the next step not the twin's, 20 + status: not "
                  "PP_ERR_NO_MEMORY)", callback ? "program's near callback" : "baseline",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
#endif
}
END_TEST

/* The contacts of a step: a box resting on the plane has its 4 bottom corners in contact, and
 * the normal impulses carry its weight over the step (sum p_n = m g h, ST96 Eq 25 at rest). */
START_TEST(test_contacts_reported)
{
    fixture f;
    fixture_make(&f, PP_MODEL_STANDARD);
    dGeomID plane = dCreatePlane(f.space, 0, 0, 1, 0);
    dBodySetPosition(f.body, 0, 0, 0.25);
    dBodySetLinearVel(f.body, 0, 0, 0);
    dBodySetForce(f.body, 0, 0, 0);
    ck_assert_int_eq(pp_world_step(f.pw, 0.01), PP_OK);
    const pp_contact_info *info = NULL;
    int n = pp_world_get_contacts(f.pw, &info);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(pp_world_get_stats(f.pw)->contacts, 4);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        ck_assert(info[i].g1 == plane || info[i].g2 == plane);
        ck_assert_double_eq_tol(fabs(info[i].gap), 0.0, 1e-12);
        ck_assert_double_eq_tol(fabs(info[i].normal[2]), 1.0, 1e-12);
        ck_assert_double_ge(info[i].normal_impulse, 0.0);
        sum += info[i].normal_impulse;
    }
    ck_assert_double_eq_tol(sum, 2.0 * 9.81 * 0.01, 1e-9);
    ck_assert_double_eq_tol(dBodyGetLinearVel(f.body)[2], 0.0, 1e-9);
    ck_assert_int_eq(pp_world_get_contacts(NULL, &info), 0);
    fixture_free(&f);
}
END_TEST

/* The speculative margin of a sphere (stage_broadphase.c): a sphere spinning about its own
 * centre occupies the same space, so its spin does not widen its margin, while the same spin
 * about a centre 0.3 m away from the sphere's, or a speed that closes the gap within the step,
 * does (h = 0.01, gap 0.05 m to a static box, proximity margin 0.01 m; spin 40 rad/s would
 * add h w r = 0.2 m for r = 0.5 m). A pair left out is one whose gap cannot close: the
 * spinning ball keeps its spin and position. */
START_TEST(test_sphere_margin_ignores_spin)
{
    /* _i = 0: spin about the sphere's centre, 1: about a point 0.3 m off, 2: moving at
     * 10 m/s towards the box */
    const double h = 0.01, r = 0.5, gap = 0.05, spin = 40.0;
    dWorldID world = dWorldCreate();
    dSpaceID space = dHashSpaceCreate(0);
    dBodyID ball = dBodyCreate(world);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, r);
    dBodySetMass(ball, &m);
    dGeomID sphere = dCreateSphere(space, r);
    dGeomSetBody(sphere, ball);
    const double off = _i == 1 ? 0.3 : 0.0;
    if (off > 0.0) dGeomSetOffsetPosition(sphere, 0, off, 0);
    dBodySetPosition(ball, 0, -off, 0); /* the sphere's centre at the origin */
    dBodySetAngularVel(ball, 0, 0, _i == 2 ? 0.0 : spin);
    dBodySetLinearVel(ball, _i == 2 ? 10.0 : 0.0, 0, 0);
    dGeomID box = dCreateBox(space, 1, 4, 4); /* static, its face at x = r + gap */
    dGeomSetPosition(box, r + gap + 0.5, 0, 0);
    pp_config c = pp_config_default();
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    const pp_step_stats *st = pp_world_get_stats(pw);
    if (_i == 0) {
        ck_assert_int_eq(st->near_pairs, 0);
        ck_assert_int_eq(st->contacts, 0);
        ck_assert_double_eq_tol(dBodyGetAngularVel(ball)[2], spin, 1e-12);
        ck_assert_double_eq_tol(dBodyGetLinearVel(ball)[0], 0.0, 1e-12);
    } else {
        ck_assert_int_eq(st->near_pairs, 1);
        ck_assert_int_ge(st->contacts, 1);
    }
    if (_i == 2) /* the gap closes to zero within the step, not beyond (ST96 Eq 25) */
        ck_assert_double_le(dGeomGetPosition(sphere)[0], gap + 1e-9);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
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
    tcase_add_loop_test(tc, test_bad_config_rejected, 0, 38);
    tcase_add_test(tc, test_model_switch_between_steps);
    tcase_add_test(tc, test_body_discovery);
    tcase_add_test(tc, test_peg_box_on_plane_matches_standard);
    tcase_add_loop_test(tc, test_convex_degenerate_rejected, 0, 6);
    tcase_add_test(tc, test_convex_create_is_an_ode_convex);
    tcase_add_test(tc, test_register_convex);
    tcase_add_test(tc, test_unsupported_geom_reported_once);
    tcase_add_test(tc, test_bad_surface_rejected);
    tcase_add_test(tc, test_accumulators_saved_once);
    tcase_add_loop_test(tc, test_ode_model_out_of_memory_unstepped, 0, 2);
    tcase_add_test(tc, test_contacts_reported);
    tcase_add_loop_test(tc, test_sphere_margin_ignores_spin, 0, 3);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
