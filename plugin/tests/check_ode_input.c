/*
 * Bad input reaching ODE (Reliability issue): one case per bad value, put into ODE through its
 * own API. For every model that reads the value, pp_world_step must
 *   1. return PP_ERR_INVALID_ARGUMENT,
 *   2. log one error naming the object (its dWorldID / dBodyID / dGeomID pointer, a geom's
 *      class) and the parameter in ODE's words,
 *   3. leave ODE bitwise as it was (bodies, masses, joints, world parameters, geom poses),
 *   4. step normally once the value is put back.
 * Stock ODE takes each of these values: NaN gravity and NaN mass step to NaN, a NaN inertia
 * or a denormal h abort inside dWorldStep, a NaN geom rotation aborts inside dCollide.
 */
#include "pegplus/pegplus.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_message[1024];
static int g_errors;

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != PP_LOG_ERROR) return; /* warnings (skipped geom classes) are not the point */
    strncpy(g_message, message, sizeof g_message - 1);
    g_errors++;
}

static void setup(void)
{
    dInitODE2(0);
    g_message[0] = '\0';
    g_errors = 0;
    pp_set_log_hook(capture, NULL);
}

static void teardown(void)
{
    pp_set_log_hook(NULL, NULL);
    dCloseODE();
}

/* A box resting on a plane (contacts in every step), a falling sphere, a static box in the
 * air. */
typedef struct fixture {
    dWorldID world;
    dSpaceID space;
    dGeomID plane, box_geom, ball_geom, wall;
    dBodyID box, ball;
    dGeomID extra;       /* a geom a case adds (ray, user class), destroyed by its restore */
    pp_world *pw;
    pp_model model;
} fixture;

static const double H = 0.01;

static void set_box_mass(dBodyID b)
{
    dMass m;
    dMassSetBoxTotal(&m, 2.0, 0.5, 0.5, 0.5);
    dBodySetMass(b, &m);
}

static void fixture_make(fixture *f, pp_model model, pp_ode_stepper stepper)
{
    memset(f, 0, sizeof *f);
    f->model = model;
    f->world = dWorldCreate();
    dWorldSetGravity(f->world, 0, 0, -9.81);
    f->space = dHashSpaceCreate(0);
    f->plane = dCreatePlane(f->space, 0, 0, 1, 0);
    f->box = dBodyCreate(f->world);
    set_box_mass(f->box);
    f->box_geom = dCreateBox(f->space, 0.5, 0.5, 0.5);
    dGeomSetBody(f->box_geom, f->box);
    dBodySetPosition(f->box, 0, 0, 0.25);
    f->ball = dBodyCreate(f->world);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, 0.2);
    dBodySetMass(f->ball, &m);
    f->ball_geom = dCreateSphere(f->space, 0.2);
    dGeomSetBody(f->ball_geom, f->ball);
    dBodySetPosition(f->ball, 2, 0, 2);
    dBodySetLinearVel(f->ball, 0, 0.5, 0);
    f->wall = dCreateBox(f->space, 0.2, 2, 1);
    dGeomSetPosition(f->wall, -2, 0, 1.5);
    pp_config c = pp_config_default();
    c.model = model;
    c.ode_stepper = stepper;
    ck_assert_int_eq(pp_world_create(f->world, f->space, &c, &f->pw), PP_OK);
}

static void fixture_free(fixture *f)
{
    pp_world_destroy(f->pw);
    dSpaceDestroy(f->space);
    dWorldDestroy(f->world);
}

/* What a step could change in ODE, as raw bytes. */
typedef struct body_bytes {
    dReal x[3], q[4], R[12], v[3], w[3], f[3], t[3];
    dMass mass;
    int joints, enabled;
    dReal damping[4], max_angular_speed;
} body_bytes;

typedef struct ode_bytes {
    body_bytes body[2];
    dVector3 gravity;
    dReal erp, cfm, layer, max_vel, sor;
    dReal wall_x[3], wall_R[12];
    dVector4 plane;
} ode_bytes;

static body_bytes read_body(dBodyID b)
{
    body_bytes s;
    memset(&s, 0, sizeof s); /* padding too: compared with memcmp */
    memcpy(s.x, dBodyGetPosition(b), sizeof s.x);
    memcpy(s.q, dBodyGetQuaternion(b), sizeof s.q);
    memcpy(s.R, dBodyGetRotation(b), sizeof s.R);
    memcpy(s.v, dBodyGetLinearVel(b), sizeof s.v);
    memcpy(s.w, dBodyGetAngularVel(b), sizeof s.w);
    memcpy(s.f, dBodyGetForce(b), sizeof s.f);
    memcpy(s.t, dBodyGetTorque(b), sizeof s.t);
    dBodyGetMass(b, &s.mass);
    s.joints = dBodyGetNumJoints(b);
    s.enabled = dBodyIsEnabled(b);
    s.damping[0] = dBodyGetLinearDamping(b);
    s.damping[1] = dBodyGetAngularDamping(b);
    s.damping[2] = dBodyGetLinearDampingThreshold(b);
    s.damping[3] = dBodyGetAngularDampingThreshold(b);
    s.max_angular_speed = dBodyGetMaxAngularSpeed(b);
    return s;
}

static ode_bytes read_ode(const fixture *f)
{
    ode_bytes s;
    memset(&s, 0, sizeof s);
    s.body[0] = read_body(f->box);
    s.body[1] = read_body(f->ball);
    dWorldGetGravity(f->world, s.gravity);
    s.erp = dWorldGetERP(f->world);
    s.cfm = dWorldGetCFM(f->world);
    s.layer = dWorldGetContactSurfaceLayer(f->world);
    s.max_vel = dWorldGetContactMaxCorrectingVel(f->world);
    s.sor = dWorldGetQuickStepW(f->world);
    memcpy(s.wall_x, dGeomGetPosition(f->wall), sizeof s.wall_x);
    memcpy(s.wall_R, dGeomGetRotation(f->wall), sizeof s.wall_R);
    dGeomPlaneGetParams(f->plane, s.plane);
    return s;
}

/* ---- the cases ------------------------------------------------------------------------- */

static int surface_nan_mu(void *user, dGeomID g1, dGeomID g2, pp_surface *s)
{
    (void)user, (void)g1, (void)g2;
    s->mu = NAN;
    return 1;
}

static int surface_inf_soft_erp(void *user, dGeomID g1, dGeomID g2, pp_surface *s)
{
    (void)user, (void)g1, (void)g2;
    s->ode_soft_erp = INFINITY;
    return 1;
}

static int surface_fdir1(void *user, dGeomID g1, dGeomID g2, pp_surface *s)
{
    (void)user, (void)g1, (void)g2;
    s->ode_mode |= dContactFDir1;
    return 1;
}

static void set_surface_fn(fixture *f, pp_surface_fn fn)
{
    pp_config c = pp_world_get_config(f->pw);
    c.surface_fn = fn;
    ck_assert_int_eq(pp_world_set_config(f->pw, &c), PP_OK);
}

/* A user geom class whose collider reports one contact of NaN depth: data ODE cannot show
 * (a dConvex's, trimesh's or heightfield's arrays) can only be caught in its contacts. */
static void nan_aabb(dGeomID g, dReal aabb[6])
{
    (void)g;
    const dReal box[6] = {-1, 1, -1, 1, -1, 1};
    memcpy(aabb, box, sizeof box);
}

static int nan_collide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip)
{
    (void)flags, (void)skip;
    memset(contact, 0, sizeof *contact);
    contact->pos[2] = 0.0;
    contact->normal[2] = 1.0;
    contact->depth = NAN;
    contact->g1 = o1;
    contact->g2 = o2;
    return 1;
}

static dColliderFn *nan_collider(int num)
{
    return num == dPlaneClass ? nan_collide : NULL;
}

static int g_nan_class = -1;

enum { EXPECT_WORLD, EXPECT_BOX, EXPECT_WALL, EXPECT_BOX_GEOM, EXPECT_PLANE, EXPECT_EXTRA, EXPECT_BALL, EXPECT_BALL_GEOM, EXPECT_NONE };

typedef struct bad_case {
    const char *name;
    unsigned models;         /* bit per pp_model that reads the value */
    int stepper;             /* PP_ODE_QUICK_STEP for the QuickStep parameters */
    double h;                /* 0: the fixture's H */
    void (*apply)(fixture *f);
    void (*restore)(fixture *f);
    const char *words[3];    /* the message names these (ODE's words) */
    int object;              /* whose pointer the message gives */
} bad_case;

#define ALL_MODELS 7u
#define ODE_ONLY 1u

static void gravity_nan(fixture *f) { dWorldSetGravity(f->world, 0, NAN, -9.81); }
static void gravity_inf(fixture *f) { dWorldSetGravity(f->world, 0, 0, -INFINITY); }
static void gravity_back(fixture *f) { dWorldSetGravity(f->world, 0, 0, -9.81); }
static void erp_nan(fixture *f) { dWorldSetERP(f->world, NAN); }
static void erp_back(fixture *f) { dWorldSetERP(f->world, 0.2); }
static void cfm_negative(fixture *f) { dWorldSetCFM(f->world, -1e-5); }
static void cfm_back(fixture *f) { dWorldSetCFM(f->world, 1e-5); }
static void layer_nan(fixture *f) { dWorldSetContactSurfaceLayer(f->world, NAN); }
static void layer_back(fixture *f) { dWorldSetContactSurfaceLayer(f->world, 0.0); }
static void max_vel_nan(fixture *f) { dWorldSetContactMaxCorrectingVel(f->world, NAN); }
static void max_vel_back(fixture *f) { dWorldSetContactMaxCorrectingVel(f->world, dInfinity); }
static void sor_nan(fixture *f) { dWorldSetQuickStepW(f->world, NAN); }
static void sor_back(fixture *f) { dWorldSetQuickStepW(f->world, 1.3); }
static void erp_high(fixture *f) { dWorldSetERP(f->world, 1.5); }
static void cfm_nan(fixture *f) { dWorldSetCFM(f->world, NAN); }
static void cfm_inf(fixture *f) { dWorldSetCFM(f->world, INFINITY); }
static void layer_inf(fixture *f) { dWorldSetContactSurfaceLayer(f->world, INFINITY); }
static void layer_negative(fixture *f) { dWorldSetContactSurfaceLayer(f->world, -0.01); }
static void max_vel_negative(fixture *f) { dWorldSetContactMaxCorrectingVel(f->world, -1.0); }
static void iterations_zero(fixture *f) { dWorldSetQuickStepNumIterations(f->world, 0); }
static void iterations_back(fixture *f) { dWorldSetQuickStepNumIterations(f->world, 20); }

static void mass_with(fixture *f, int field, double value)
{
    dMass m;
    dMassSetBoxTotal(&m, 2.0, 0.5, 0.5, 0.5);
    if (field < 0) m.mass = value;
    else m.I[field] = value;
    dBodySetMass(f->box, &m); /* ODE's dMassCheck lets NaN and Inf through */
}
static void mass_nan(fixture *f) { mass_with(f, -1, NAN); }
static void mass_inf(fixture *f) { mass_with(f, -1, INFINITY); }
static void inertia_nan(fixture *f) { mass_with(f, 0, NAN); }
static void inertia_inf(fixture *f) { mass_with(f, 5, INFINITY); }
/* passes dMassCheck, but 1/m is infinite: dWorldStep wrote NaN (fuzz_step) */
static void mass_denormal(fixture *f) { mass_with(f, -1, 1e-310); }
static void mass_back(fixture *f) { set_box_mass(f->box); }
static void force_inf(fixture *f) { dBodyAddForce(f->box, 0, -INFINITY, 0); }
static void force_back(fixture *f) { dBodySetForce(f->box, 0, 0, 0); }
static void velocity_nan(fixture *f) { dBodySetLinearVel(f->ball, 0, NAN, 0); }
static void velocity_back(fixture *f) { dBodySetLinearVel(f->ball, 0, 0.5, 0); }
static void linear_threshold_nan(fixture *f) { dBodySetLinearDampingThreshold(f->box, NAN); }
static void angular_threshold_nan(fixture *f) { dBodySetAngularDampingThreshold(f->box, NAN); }
static void threshold_back(fixture *f)
{
    dBodySetLinearDampingThreshold(f->box, 0.01);
    dBodySetAngularDampingThreshold(f->box, 0.01);
}
static void torque_nan(fixture *f) { dBodyAddTorque(f->box, NAN, 0, 0); }
static void torque_back(fixture *f) { dBodySetTorque(f->box, 0, 0, 0); }
static void linear_damping_nan(fixture *f) { dBodySetLinearDamping(f->box, NAN); }
static void angular_damping_two(fixture *f) { dBodySetAngularDamping(f->box, 2.0); }
static void damping_back(fixture *f)
{
    dBodySetLinearDamping(f->box, 0.0);
    dBodySetAngularDamping(f->box, 0.0);
}
static void max_angular_speed_nan(fixture *f) { dBodySetMaxAngularSpeed(f->box, NAN); }
static void max_angular_speed_back(fixture *f) { dBodySetMaxAngularSpeed(f->box, dInfinity); }
static void nothing(fixture *f) { (void)f; }
static void wall_position_nan(fixture *f) { dGeomSetPosition(f->wall, -2, NAN, 1.5); }
static void wall_position_back(fixture *f) { dGeomSetPosition(f->wall, -2, 0, 1.5); }
static void wall_rotation_nan(fixture *f)
{
    dMatrix3 R = {NAN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    dGeomSetRotation(f->wall, R);
}
static void wall_rotation_back(fixture *f)
{
    dMatrix3 R;
    dRSetIdentity(R);
    dGeomSetRotation(f->wall, R);
}
static void offset_nan(fixture *f) { dGeomSetOffsetPosition(f->box_geom, NAN, 0, 0); }
static void offset_back(fixture *f) { dGeomClearOffset(f->box_geom); }
/* A disabled ball with a NaN damping, put on the box: dWorldStep's island walk enables it
 * through the contact and stepped it to NaN (fuzz_step); the pegplus models wake it too. */
static void disabled_ball_on_box(fixture *f)
{
    dBodySetLinearDamping(f->ball, NAN);
    dBodySetPosition(f->ball, 0, 0, 0.69);
    dBodySetLinearVel(f->ball, 0, 0, 0);
    dBodyDisable(f->ball);
}
static void disabled_ball_back(fixture *f)
{
    dBodySetLinearDamping(f->ball, 0.0);
    dBodySetPosition(f->ball, 2, 0, 2);
    dBodySetLinearVel(f->ball, 0, 0.5, 0);
    dBodyEnable(f->ball);
}
static void radius_inf(fixture *f) { dGeomSphereSetRadius(f->ball_geom, INFINITY); }
static void radius_back(fixture *f) { dGeomSphereSetRadius(f->ball_geom, 0.2); }
static void wall_side_inf(fixture *f) { dGeomBoxSetLengths(f->wall, 0.2, INFINITY, 1); }
static void wall_side_back(fixture *f) { dGeomBoxSetLengths(f->wall, 0.2, 2, 1); }
/* finite, but past the int cells of the fixture's dHashSpace (the 0.2 x 2 x 1 m wall has
 * cells of 4 m: 2^33 m is 2^31 cells); stock dSpaceCollide aborts on it (fuzz_step's first
 * finding). 2^32 m (2^30 cells) is a valid position: test_far_geom_in_hash_space_steps. */
static void wall_far(fixture *f) { dGeomSetPosition(f->wall, 0x1p33, 0, 1.5); }
static void plane_inf(fixture *f) { dGeomPlaneSetParams(f->plane, 0, 0, 1, INFINITY); }
static void plane_back(fixture *f) { dGeomPlaneSetParams(f->plane, 0, 0, 1, 0); }
static void ray_nan(fixture *f)
{
    f->extra = dCreateRay(f->space, 1.0);
    dGeomRaySet(f->extra, 5, 5, 3, 0, 0, -1);
    dGeomRaySetLength(f->extra, NAN);
}
static void extra_back(fixture *f)
{
    dGeomDestroy(f->extra);
    f->extra = NULL;
}
static void mu_nan(fixture *f) { set_surface_fn(f, surface_nan_mu); }
static void soft_erp_inf(fixture *f) { set_surface_fn(f, surface_inf_soft_erp); }
static void fdir1(fixture *f) { set_surface_fn(f, surface_fdir1); }
static void surface_back(fixture *f) { set_surface_fn(f, NULL); }
static void nan_contact(fixture *f)
{
    if (g_nan_class < 0) {
        dGeomClass cls = {0, nan_collider, nan_aabb, NULL, NULL};
        g_nan_class = dCreateGeomClass(&cls);
    }
    f->extra = dCreateGeom(g_nan_class);
    dSpaceAdd(f->space, f->extra);
}

static const bad_case CASES[] = {
    {"gravity NaN", ALL_MODELS, 0, 0, gravity_nan, gravity_back, {"gravity", "dWorldSetGravity"}, EXPECT_WORLD},
    {"gravity -Inf", ALL_MODELS, 0, 0, gravity_inf, gravity_back, {"gravity", "dWorldSetGravity"}, EXPECT_WORLD},
    {"ERP NaN", ALL_MODELS, 0, 0, erp_nan, erp_back, {"ERP", "dWorldSetERP"}, EXPECT_WORLD},
    {"CFM negative", ALL_MODELS, 0, 0, cfm_negative, cfm_back, {"CFM", "dWorldSetCFM"}, EXPECT_WORLD},
    {"surface layer NaN", ODE_ONLY, 0, 0, layer_nan, layer_back, {"dWorldSetContactSurfaceLayer"}, EXPECT_WORLD},
    {"max correcting vel NaN", ODE_ONLY, 0, 0, max_vel_nan, max_vel_back, {"dWorldSetContactMaxCorrectingVel"}, EXPECT_WORLD},
    {"QuickStep W NaN", ODE_ONLY, PP_ODE_QUICK_STEP, 0, sor_nan, sor_back, {"dWorldSetQuickStepW"}, EXPECT_WORLD},
    {"mass NaN", ALL_MODELS, 0, 0, mass_nan, mass_back, {"mass", "dBodySetMass"}, EXPECT_BOX},
    {"mass Inf", ALL_MODELS, 0, 0, mass_inf, mass_back, {"mass", "dBodySetMass"}, EXPECT_BOX},
    {"inertia NaN", ALL_MODELS, 0, 0, inertia_nan, mass_back, {"inertia", "dMass.I"}, EXPECT_BOX},
    {"torque NaN", ALL_MODELS, 0, 0, torque_nan, torque_back, {"torque", "dBodyAddTorque"}, EXPECT_BOX},
    {"linear damping NaN", ALL_MODELS, 0, 0, linear_damping_nan, damping_back, {"dBodySetLinearDamping"}, EXPECT_BOX},
    {"angular damping 2", ALL_MODELS, 0, 0, angular_damping_two, damping_back, {"dBodySetAngularDamping"}, EXPECT_BOX},
    {"max angular speed NaN", ALL_MODELS, 0, 0, max_angular_speed_nan, max_angular_speed_back, {"dBodySetMaxAngularSpeed"}, EXPECT_BOX},
    {"h denormal", ALL_MODELS, 0, 1e-310, nothing, nothing, {"step size h"}, EXPECT_NONE},
    {"h below PP_MIN_STEP", ALL_MODELS, 0, 1e-10, nothing, nothing, {"step size h"}, EXPECT_NONE},
    {"static geom position NaN", ALL_MODELS, 0, 0, wall_position_nan, wall_position_back, {"dBoxClass", "position", "dGeomSetPosition"}, EXPECT_WALL},
    {"static geom rotation NaN", ALL_MODELS, 0, 0, wall_rotation_nan, wall_rotation_back, {"dBoxClass", "rotation", "dGeomSetRotation"}, EXPECT_WALL},
    {"geom offset NaN", ALL_MODELS, 0, 0, offset_nan, offset_back, {"dBoxClass", "position", "dGeomSetOffsetPosition"}, EXPECT_BOX_GEOM},
    {"plane offset Inf", ALL_MODELS, 0, 0, plane_inf, plane_back, {"dPlaneClass", "dGeomPlaneSetParams"}, EXPECT_PLANE},
    {"ray length NaN", ALL_MODELS, 0, 0, ray_nan, extra_back, {"dRayClass", "dGeomRaySetLength"}, EXPECT_EXTRA},
    {"surface mu NaN", ALL_MODELS, 0, 0, mu_nan, surface_back, {"mu"}, EXPECT_NONE},
    {"surface soft_erp Inf", ODE_ONLY, 0, 0, soft_erp_inf, surface_back, {"ode_soft_erp", "dPlaneClass"}, EXPECT_PLANE},
    {"surface mode FDir1", ODE_ONLY, 0, 0, fdir1, surface_back, {"ode_mode", "FDir1"}, EXPECT_NONE},
    {"dCollide contact NaN", ODE_ONLY, 0, 0, nan_contact, extra_back, {"dCollide", "NaN", "user geom class"}, EXPECT_EXTRA},
    /* the rest of pegplus.h's list of what pp_world_step rejects */
    {"ERP 1.5", ALL_MODELS, 0, 0, erp_high, erp_back, {"ERP", "dWorldSetERP"}, EXPECT_WORLD},
    {"CFM NaN", ALL_MODELS, 0, 0, cfm_nan, cfm_back, {"CFM", "dWorldSetCFM"}, EXPECT_WORLD},
    {"CFM Inf", ALL_MODELS, 0, 0, cfm_inf, cfm_back, {"CFM", "dWorldSetCFM"}, EXPECT_WORLD},
    {"surface layer Inf", ODE_ONLY, 0, 0, layer_inf, layer_back, {"dWorldSetContactSurfaceLayer"}, EXPECT_WORLD},
    {"surface layer negative", ODE_ONLY, 0, 0, layer_negative, layer_back, {"dWorldSetContactSurfaceLayer"}, EXPECT_WORLD},
    {"max correcting vel negative", ODE_ONLY, 0, 0, max_vel_negative, max_vel_back, {"dWorldSetContactMaxCorrectingVel"}, EXPECT_WORLD},
    {"QuickStep iterations 0", ODE_ONLY, PP_ODE_QUICK_STEP, 0, iterations_zero, iterations_back, {"dWorldSetQuickStepNumIterations"}, EXPECT_WORLD},
    {"mass denormal", ALL_MODELS, 0, 0, mass_denormal, mass_back, {"mass", "dBodySetMass"}, EXPECT_BOX},
    {"disabled body woken with NaN damping", ALL_MODELS, 0, 0, disabled_ball_on_box, disabled_ball_back, {"dBodySetLinearDamping"}, EXPECT_BALL},
    {"inertia Inf", ALL_MODELS, 0, 0, inertia_inf, mass_back, {"inertia", "dMass.I"}, EXPECT_BOX},
    {"force -Inf", ALL_MODELS, 0, 0, force_inf, force_back, {"force", "dBodyAddForce"}, EXPECT_BOX},
    {"linear velocity NaN", ALL_MODELS, 0, 0, velocity_nan, velocity_back, {"linear velocity", "dBodySetLinearVel"}, EXPECT_BALL},
    {"linear damping threshold NaN", ALL_MODELS, 0, 0, linear_threshold_nan, threshold_back, {"dBodySetLinearDampingThreshold"}, EXPECT_BOX},
    {"angular damping threshold NaN", ALL_MODELS, 0, 0, angular_threshold_nan, threshold_back, {"dBodySetAngularDampingThreshold"}, EXPECT_BOX},
    {"sphere radius Inf", ALL_MODELS, 0, 0, radius_inf, radius_back, {"dSphereClass", "dGeomSphereSetRadius"}, EXPECT_BALL_GEOM},
    {"box side Inf", ALL_MODELS, 0, 0, wall_side_inf, wall_side_back, {"dBoxClass", "dGeomBoxSetLengths"}, EXPECT_WALL},
    {"geom beyond dHashSpace cells", ALL_MODELS, 0, 0, wall_far, wall_position_back, {"dBoxClass", "dHashSpace", "dGeomSetPosition"}, EXPECT_WALL},
};

/* _i indexes CASES; every model that reads the value is run. */
START_TEST(test_bad_input_rejected_and_ode_untouched)
{
    const bad_case *c = &CASES[_i];
    for (int model = PP_MODEL_ODE; model <= PP_MODEL_PEG; ++model) {
        if (!(c->models & (1u << model))) continue;
        fixture f;
        fixture_make(&f, (pp_model)model, (pp_ode_stepper)c->stepper);
        ck_assert_int_eq(pp_world_step(f.pw, H), PP_OK); /* contacts exist, state is warm */
        c->apply(&f);
        ode_bytes before = read_ode(&f);
        g_errors = 0;
        ck_assert_msg(pp_world_step(f.pw, c->h > 0 ? c->h : H) == PP_ERR_INVALID_ARGUMENT,
                      "%s: not rejected under %s", c->name, pp_model_name((pp_model)model));
        ode_bytes after = read_ode(&f);
        ck_assert_msg(memcmp(&before, &after, sizeof before) == 0, "%s: ODE changed under %s",
                      c->name, pp_model_name((pp_model)model));
        ck_assert_int_eq(g_errors, 1);
        for (int w = 0; w < 3 && c->words[w]; ++w)
            ck_assert_msg(strstr(g_message, c->words[w]), "%s (%s): '%s' lacks '%s'", c->name,
                          pp_model_name((pp_model)model), g_message, c->words[w]);
        const void *object[] = {f.world, f.box, f.wall, f.box_geom, f.plane, f.extra, f.ball,
                                f.ball_geom, NULL};
        if (object[c->object]) {
            char pointer[32];
            snprintf(pointer, sizeof pointer, "%p", object[c->object]);
            ck_assert_msg(strstr(g_message, pointer), "%s: '%s' lacks the pointer %s", c->name,
                          g_message, pointer);
        }

        c->restore(&f);
        const dReal z = dBodyGetPosition(f.ball)[2];
        ck_assert_int_eq(pp_world_step(f.pw, H), PP_OK);
        ck_assert_double_lt(dBodyGetPosition(f.ball)[2], z); /* it fell */
        ck_assert_double_gt(dBodyGetPosition(f.box)[2], 0.24); /* it rests on the plane */
        if (model == PP_MODEL_ODE) ck_assert_int_gt(pp_world_get_stats(f.pw)->ode_contacts, 0);
        fixture_free(&f);
    }
}
END_TEST

/* The smallest step pp_world_step accepts runs under every model. */
START_TEST(test_min_step_runs)
{
    for (int model = PP_MODEL_ODE; model <= PP_MODEL_PEG; ++model) {
        fixture f;
        fixture_make(&f, (pp_model)model, PP_ODE_WORLD_STEP);
        ck_assert_int_eq(pp_world_step(f.pw, PP_MIN_STEP), PP_OK);
        ck_assert_int_eq(pp_world_step(f.pw, PP_MAX_STEP), PP_OK);
        ck_assert(isfinite(dBodyGetPosition(f.ball)[2]));
        fixture_free(&f);
    }
}
END_TEST

/* The dHashSpace rule rejects only what would abort ODE: the wall at 2^32 m (2^30 of its 4 m
 * cells) steps under every model. */
START_TEST(test_far_geom_in_hash_space_steps)
{
    for (int model = PP_MODEL_ODE; model <= PP_MODEL_PEG; ++model) {
        fixture f;
        fixture_make(&f, (pp_model)model, PP_ODE_WORLD_STEP);
        dGeomSetPosition(f.wall, 0x1p32, 0, 1.5);
        ck_assert_int_eq(pp_world_step(f.pw, H), PP_OK);
        fixture_free(&f);
    }
}
END_TEST

/* A finite input whose step overflows (fuzz_step): a torque of -1e300 N m spins the ball so
 * fast in a step of 0.25 s that its quaternion's squared norm overflows in the normalisation
 * and comes out zero; writing it, dBodySetQuaternion aborted in dxNormalize4. The pegplus
 * models must fail the step as PP_ERR_NUMERICAL and write nothing. */
START_TEST(test_overflowing_step_writes_nothing)
{
    for (int model = PP_MODEL_STANDARD; model <= PP_MODEL_PEG; ++model) {
        fixture f;
        fixture_make(&f, (pp_model)model, PP_ODE_WORLD_STEP);
        dBodyAddTorque(f.ball, 0, 0, -1e300);
        ode_bytes before = read_ode(&f);
        const pp_status st = pp_world_step(f.pw, 0.25);
        ode_bytes after = read_ode(&f);
        ck_assert_msg(st == PP_ERR_NUMERICAL, "%s: %s", pp_model_name((pp_model)model),
                      pp_status_string(st));
        ck_assert_msg(memcmp(&before, &after, sizeof before) == 0, "ODE changed under %s",
                      pp_model_name((pp_model)model));
        fixture_free(&f);
    }
}
END_TEST

/* _i: a pp_config surface field out of ODE's domain; pp_config_validate names it. */
START_TEST(test_bad_ode_surface_config_rejected)
{
    pp_config c = pp_config_default();
    const char *field = NULL;
    switch (_i) {
    case 0: c.surface.ode_soft_erp = INFINITY; field = "ode_soft_erp"; break;
    case 1: c.surface.ode_soft_cfm = INFINITY; field = "ode_soft_cfm"; break;
    case 2: c.surface.ode_soft_cfm = -INFINITY; field = "ode_soft_cfm"; break;
    case 3: c.surface.ode_soft_erp = 1.5; field = "ode_soft_erp"; break;
    case 4: c.surface.ode_soft_erp = NAN; field = "ode_soft_erp"; break;
    case 5: c.surface.ode_mode = dContactApprox1 | dContactFDir1; field = "ode_mode"; break;
    case 6: c.surface.ode_mode = dContactMu2; field = "ode_mode"; break;
    }
    ck_assert_int_eq(pp_config_validate(&c), PP_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(g_message, field) != NULL, "message '%s' lacks '%s'", g_message, field);
    /* what ODE's soft ERP/CFM accept is still accepted */
    pp_config good = pp_config_default();
    good.surface.ode_soft_erp = 1.0;
    good.surface.ode_soft_cfm = 1e-5;
    good.surface.ode_mode = dContactApprox1 | dContactBounce | dContactSoftERP | dContactSoftCFM;
    ck_assert_int_eq(pp_config_validate(&good), PP_OK);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ode_input");
    TCase *tc = tcase_create("rejected");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_bad_input_rejected_and_ode_untouched, 0,
                        (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_test(tc, test_min_step_runs);
    tcase_add_test(tc, test_far_geom_in_hash_space_steps);
    tcase_add_test(tc, test_overflowing_step_writes_nothing);
    tcase_add_loop_test(tc, test_bad_ode_surface_config_rejected, 0, 7);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
