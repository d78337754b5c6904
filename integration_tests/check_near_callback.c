/*
 * The program's own near callback as the source of contact settings (issue 13, part 1;
 * docs/drop-in.md), through pp_world_set_near_callback:
 *   - PP_MODEL_ODE runs the callback unchanged: bit-identical to the hand-written loop
 *     (dSpaceCollide + dWorldStep/QuickStep + dJointGroupEmpty) in a twin world;
 *   - a pair the callback rejects passes through, under every model (exact free fall);
 *   - per-pair bounce from the callback: a ball's first apex is e^2 h0 (PLUS), two balls, two e;
 *   - per-pair mu from the callback: on a slope with mu1 < tan(theta) < mu2 one box slides at
 *     a = g (sin(theta) - mu1 cos(theta)), the other sticks (this callback uses the
 *     pp_near_probe_* functions a statically linked program would call);
 *   - surface flags the models do not honour yet are reported in exactly one message.
 * The callbacks are written as ODE programs write them (dCollide, dContact, dJointCreateContact,
 * dJointAttach); this test links libpegplus before libode, so those calls reach the probe.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_messages.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
#define MAX_CONTACTS 8

typedef struct program {
    dWorldID world;
    dSpaceID space;
    dJointGroupID group;
    dGeomID ground;
    dGeomID ghost;          /* its pairs are rejected by the callback */
    dGeomID special;        /* gets `special_surface` instead of `surface` */
    dSurfaceParameters surface, special_surface;
    double fdir1[3];
    int use_probe_functions; /* call pp_near_probe_* (a static link's way) */
    int reject_all;          /* make no contact joint at all */
    int own_feedback;        /* set a dJointFeedback of its own on each joint */
    int made;                /* contact joints made since `made` was last zeroed */
    dContactGeom made_geom[64];
    dJointID made_joint[64];
    dJointFeedback made_feedback[64];
} program;

/* A near callback in the stock style. */
static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    program *p = data;
    if (g1 == p->ghost || g2 == p->ghost || p->reject_all) return;
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact contact[MAX_CONTACTS];
    memset(contact, 0, sizeof contact);
    int n = p->use_probe_functions
                ? pp_near_probe_collide(g1, g2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact))
                : dCollide(g1, g2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    int special = g1 == p->special || g2 == p->special;
    for (int i = 0; i < n; ++i) {
        contact[i].surface = special ? p->special_surface : p->surface;
        for (int k = 0; k < 3; ++k) contact[i].fdir1[k] = p->fdir1[k];
        dJointID j = p->use_probe_functions
                         ? pp_near_probe_joint_create_contact(p->world, p->group, &contact[i])
                         : dJointCreateContact(p->world, p->group, &contact[i]);
        dJointAttach(j, b1, b2);
        if (p->made < 64) {
            p->made_geom[p->made] = contact[i].geom;
            p->made_joint[p->made] = j;
            if (p->own_feedback) dJointSetFeedback(j, &p->made_feedback[p->made]);
        }
        p->made++;
    }
}

static void program_create(program *p, double gravity_x, double gravity_z)
{
    memset(p, 0, sizeof *p);
    p->world = dWorldCreate();
    p->space = dSimpleSpaceCreate(0);
    p->group = dJointGroupCreate(0);
    dWorldSetGravity(p->world, gravity_x, 0, gravity_z);
    p->ground = dCreatePlane(p->space, 0, 0, 1, 0);
    p->surface.mode = dContactApprox1;
    p->surface.mu = 0.5;
    p->special_surface = p->surface;
}

static void program_destroy(program *p)
{
    dJointGroupDestroy(p->group);
    dSpaceDestroy(p->space);
    dWorldDestroy(p->world);
}

static dBodyID add_box(program *p, const double l[3], double mass, double x, double y, double z,
                       dGeomID *geom)
{
    dBodyID b = dBodyCreate(p->world);
    dMass m;
    dMassSetBoxTotal(&m, mass, l[0], l[1], l[2]);
    dBodySetMass(b, &m);
    dBodySetPosition(b, x, y, z);
    dGeomID g = dCreateBox(p->space, l[0], l[1], l[2]);
    dGeomSetBody(g, b);
    if (geom) *geom = g;
    return b;
}

static dBodyID add_sphere(program *p, double r, double mass, double x, double y, double z,
                          dGeomID *geom)
{
    dBodyID b = dBodyCreate(p->world);
    dMass m;
    dMassSetSphereTotal(&m, mass, r);
    dBodySetMass(b, &m);
    dBodySetPosition(b, x, y, z);
    dGeomID g = dCreateSphere(p->space, r);
    dGeomSetBody(g, b);
    if (geom) *geom = g;
    return b;
}

static pp_world *pegplus_for(program *p, pp_model model)
{
    pp_config c = pp_config_default();
    c.model = model;
    c.lcp_budget_seconds = 0.0; /* machine-independent */
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(p->world, p->space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_set_near_callback(pw, p, near_callback), PP_OK);
    return pw;
}

/* pp_world_step replaces dSpaceCollide + dWorldStep; the program empties its group. Under the
 * pegplus models the probe's contact joints are gone when the step returns (these scenes have
 * no other joints): ODE ends as it was, before the program empties its group. */
static void step(pp_world *pw, program *p, double h)
{
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    if (pp_world_get_model(pw) != PP_MODEL_ODE)
        for (int i = 0; i < dSpaceGetNumGeoms(p->space); ++i) {
            dBodyID b = dGeomGetBody(dSpaceGetGeom(p->space, i));
            if (b) ck_assert_int_eq(dBodyGetNumJoints(b), 0);
        }
    dJointGroupEmpty(p->group);
}


/* ---- PP_MODEL_ODE: bit for bit the program's loop ---------------------------------------- */

/* Boxes and spheres dropped on the ground and on each other, a sphere the callback rejects,
 * one box with its own surface (mu2 and fdir1, soft CFM, bounce). */
static void build_twin(program *p)
{
    program_create(p, 0.0, -G);
    p->surface.mode = dContactApprox1 | dContactSoftCFM | dContactBounce;
    p->surface.mu = 0.6;
    p->surface.soft_cfm = 1e-4;
    p->surface.bounce = 0.3;
    p->surface.bounce_vel = 0.05;
    p->special_surface.mode = dContactApprox1 | dContactMu2 | dContactFDir1 | dContactSoftERP;
    p->special_surface.mu = 0.2;
    p->special_surface.mu2 = 0.9;
    p->special_surface.soft_erp = 0.4;
    p->fdir1[0] = 1.0;
    const double l[3] = {0.4, 0.3, 0.2};
    for (int i = 0; i < 4; ++i) {
        dBodyID b = add_box(p, l, 1.0 + 0.5 * i, 0.05 * i, 0.03 * i, 0.2 + 0.35 * i,
                            i == 2 ? &p->special : NULL);
        dBodySetLinearVel(b, 0.3, 0.1 * i, 0);
        dBodySetAngularVel(b, 0.2 * i, 0.1, 0);
    }
    add_sphere(p, 0.15, 1.0, 0.6, 0.0, 0.5, NULL);
    add_sphere(p, 0.1, 0.5, 0.0, 0.0, 2.0, &p->ghost);
}

static void body_states(program *p, double *out, int *count)
{
    int n = 0;
    for (int i = 0; i < dSpaceGetNumGeoms(p->space); ++i) {
        dBodyID b = dGeomGetBody(dSpaceGetGeom(p->space, i));
        if (!b) continue;
        memcpy(&out[n], dBodyGetPosition(b), 3 * sizeof(double));
        memcpy(&out[n + 3], dBodyGetQuaternion(b), 4 * sizeof(double));
        memcpy(&out[n + 7], dBodyGetLinearVel(b), 3 * sizeof(double));
        memcpy(&out[n + 10], dBodyGetAngularVel(b), 3 * sizeof(double));
        n += 13;
    }
    *count = n;
}

static void twin_run(int quick)
{
    const double h = 0.005;
    const int steps = 400;
    program a, b;
    double sa[13 * 8], sb[13 * 8];
    int na, nb;

    build_twin(&a);
    pp_world *pw = pegplus_for(&a, PP_MODEL_ODE);
    pp_config c = pp_world_get_config(pw);
    c.ode_stepper = quick ? PP_ODE_QUICK_STEP : PP_ODE_WORLD_STEP;
    ck_assert_int_eq(pp_world_set_config(pw, &c), PP_OK);
    dRandSetSeed(7);
    for (int i = 0; i < steps; ++i) step(pw, &a, h);
    body_states(&a, sa, &na);

    build_twin(&b);
    dRandSetSeed(7);
    for (int i = 0; i < steps; ++i) { /* the program's own loop */
        dSpaceCollide(b.space, &b, near_callback);
        if (quick) dWorldQuickStep(b.world, h);
        else dWorldStep(b.world, h);
        dJointGroupEmpty(b.group);
    }
    body_states(&b, sb, &nb);

    ck_assert_int_eq(na, nb);
    ck_assert_int_eq(na, 6 * 13);
    printf("twin (%s): first box z %.17g / %.17g, ghost z %.6f\n",
           quick ? "dWorldQuickStep" : "dWorldStep", sa[2], sb[2], sa[5 * 13 + 2]);
    ck_assert_int_eq(memcmp(sa, sb, sizeof(double) * (size_t)na), 0);
    /* the scene did something: the boxes rest on the ground, the ghost fell through it */
    ck_assert_double_lt(fabs(sa[2] - 0.1), 2e-3);
    ck_assert_double_lt(sa[5 * 13 + 2], -1.0);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&a);
    program_destroy(&b);
}

START_TEST(test_ode_bit_identical) { twin_run(0); twin_run(1); }
END_TEST

/* ---- PP_MODEL_ODE's contact list: the program's contact joints of the step --------------- */

/* A 2 kg box resting on the ground and a 1 kg ball beside it, stepped by PP_MODEL_ODE with the
 * program's callback (stock dJointCreateContact, or the pp_near_probe_* functions; with and
 * without a dJointFeedback of the program's own on each joint). After every step the list is
 * the callback's contact joints of that step, in the order it made them: same count, and each
 * one's geoms, position, normal (turned from g1 to g2) and depth exactly as the callback's
 * dContact; once at rest, the normal impulses on each body carry its weight, m g h (ODE's
 * tolerance, as check_ode_baseline); no joint keeps pegplus's feedback after the step, and the
 * program's own feedback is the one read. Then from PEG to ODE: PEG's contacts (gap >= 0,
 * none deeper than 1e-9 m) are not listed by an ODE step whose callback makes no joint, nor
 * by a refused step; the next ODE step lists the callback's again. */
static void program_contacts_match(program *p, pp_world *pw, double h, double *weight_box,
                                   double *weight_ball, dGeomID box, dGeomID ball)
{
    const pp_contact_info *info;
    int n = pp_world_get_contacts(pw, &info);
    ck_assert_int_eq(n, p->made);
    ck_assert_int_gt(n, 0);
    ck_assert_int_le(n, 64);
    *weight_box = *weight_ball = 0.0;
    for (int i = 0; i < n; ++i) {
        const dContactGeom *g = &p->made_geom[i];
        ck_assert_ptr_eq(info[i].g1, g->g1);
        ck_assert_ptr_eq(info[i].g2, g->g2);
        for (int k = 0; k < 3; ++k) {
            ck_assert(info[i].position[k] == g->pos[k]);
            ck_assert(info[i].normal[k] == -g->normal[k]);
        }
        ck_assert(info[i].gap == -g->depth);
        /* the impulse on g2 pushes it along the normal (from g1 to g2) */
        ck_assert(info[i].normal_impulse >= 0.0);
        const dJointFeedback *fb = dJointGetFeedback(p->made_joint[i]);
        if (p->own_feedback) ck_assert_ptr_eq(fb, &p->made_feedback[i]);
        else ck_assert_ptr_null(fb);
        /* the ground is static: each contact carries its body on the plane */
        dGeomID on = info[i].g1 == p->ground ? info[i].g2 : info[i].g1;
        ck_assert(info[i].g1 == p->ground || info[i].g2 == p->ground);
        if (on == box) *weight_box += info[i].normal_impulse;
        if (on == ball) *weight_ball += info[i].normal_impulse;
    }
    (void)h;
}

START_TEST(test_ode_contact_list_is_the_programs)
{
    const double h = 0.01, l[3] = {0.3, 0.3, 0.3};
    program p;
    program_create(&p, 0.0, -G);
    p.use_probe_functions = _i & 1;
    p.own_feedback = (_i >> 1) & 1;
    p.surface.mode = dContactApprox1;
    p.surface.mu = 0.5;
    dGeomID box, ball;
    add_box(&p, l, 2.0, 0.0, 0.0, 0.15, &box);
    add_sphere(&p, 0.1, 1.0, 1.0, 0.0, 0.1, &ball);
    pp_world *pw = pegplus_for(&p, PP_MODEL_ODE);
    double w_box = 0.0, w_ball = 0.0;
    for (int i = 0; i < 50; ++i) {
        p.made = 0;
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        program_contacts_match(&p, pw, h, &w_box, &w_ball, box, ball);
        dJointGroupEmpty(p.group);
    }
    printf("ODE, %s, %s feedback: %d contacts of the callback listed; normal impulses "
           "box %.12f (m g h %.12f), ball %.12f (%.12f) N s\n",
           p.use_probe_functions ? "pp_near_probe_*" : "dJointCreateContact",
           p.own_feedback ? "the program's" : "no", p.made, w_box, 2.0 * G * h, w_ball, G * h);
    ck_assert_double_eq_tol(w_box, 2.0 * G * h, 1e-6 * 2.0 * G * h);
    ck_assert_double_eq_tol(w_ball, G * h, 1e-6 * G * h);

    /* PEG, then back to ODE */
    ck_assert_int_eq(pp_world_set_model(pw, PP_MODEL_PEG), PP_OK);
    step(pw, &p, h);
    const pp_contact_info *info;
    int peg = pp_world_get_contacts(pw, &info);
    ck_assert_int_gt(peg, 0);
    for (int i = 0; i < peg; ++i) ck_assert_double_gt(info[i].gap, -1e-9);
    ck_assert_int_eq(pp_world_set_model(pw, PP_MODEL_ODE), PP_OK);
    p.reject_all = 1;
    p.made = 0;
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    ck_assert_int_eq(p.made, 0);
    ck_assert_int_eq(pp_world_get_contacts(pw, &info), 0);
    dJointGroupEmpty(p.group);
    p.reject_all = 0;
    ck_assert_int_eq(pp_world_set_model(pw, PP_MODEL_PEG), PP_OK);
    step(pw, &p, h);
    ck_assert_int_gt(pp_world_get_contacts(pw, &info), 0);
    ck_assert_int_eq(pp_world_step(pw, 0.0), PP_ERR_INVALID_ARGUMENT); /* refused: no step */
    ck_assert_int_eq(pp_world_get_contacts(pw, &info), 0);
    messages = 0; /* the refusal's message */
    ck_assert_int_eq(pp_world_set_model(pw, PP_MODEL_ODE), PP_OK);
    p.made = 0;
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    program_contacts_match(&p, pw, h, &w_box, &w_ball, box, ball);
    printf("PEG %d contacts, then ODE: %d (the callback's %d)\n", peg,
           pp_world_get_contacts(pw, &info), p.made);
    dJointGroupEmpty(p.group);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- a rejected pair passes through ------------------------------------------------------ */

static const pp_model models[3] = {PP_MODEL_ODE, PP_MODEL_STANDARD, PP_MODEL_PEG};

/* A box released 0.05 m above the ground, whose pairs the callback rejects, next to one it
 * accepts: the first falls freely through the plane (semi-implicit Euler's exact sequence
 * z_n = z_0 - g h^2 n(n+1)/2), the second comes to rest on it. */
START_TEST(test_rejected_pair_passes_through)
{
    pp_model model = models[_i];
    const double h = 0.01, z0 = 0.15, l[3] = {0.2, 0.2, 0.2};
    const int steps = 60;
    program p;
    program_create(&p, 0.0, -G);
    dBodyID ghost = add_box(&p, l, 1.0, 0.0, 0.0, z0, &p.ghost);
    dBodyID kept = add_box(&p, l, 1.0, 1.0, 0.0, z0, NULL);
    pp_world *pw = pegplus_for(&p, model);
    for (int i = 0; i < steps; ++i) step(pw, &p, h);
    double z = dBodyGetPosition(ghost)[2];
    double want = z0 - G * h * h * steps * (steps + 1) / 2.0;
    printf("%s: rejected box z %.12f (free fall %.12f), kept box z %.6f\n",
           pp_model_name(model), z, want, dBodyGetPosition(kept)[2]);
    ck_assert_double_eq_tol(z, want, 1e-12);
    ck_assert_double_lt(z, -0.5); /* through the ground */
    ck_assert_double_eq_tol(dBodyGetPosition(kept)[2], 0.1, model == PP_MODEL_ODE ? 2e-3 : 1e-9);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- per-pair bounce ---------------------------------------------------------------------- */

/* Two frictionless balls (r = 0.1 m) dropped from h0 = 1 m (bottom above the plane); the
 * callback gives one e = 0.5 and the other e = 0.8 (dContactBounce, bounce_vel 0.01 m/s).
 * The first apex is e^2 h0 within 1 %, the tolerance of check_impact_scenes' bouncing ball
 * (h = 5e-5: ODE's semi-implicit Euler loses about v h / 2 of height per flight). */
START_TEST(test_per_pair_bounce)
{
    pp_model model = models[1 + _i];
    const double h = 5e-5, h0 = 1.0, r = 0.1, e[2] = {0.5, 0.8};
    program p;
    program_create(&p, 0.0, -G);
    p.surface.mode = dContactApprox1 | dContactBounce;
    p.surface.mu = 0.0;
    p.surface.bounce = e[0];
    p.surface.bounce_vel = 0.01;
    p.special_surface = p.surface;
    p.special_surface.bounce = e[1];
    dBodyID ball[2];
    ball[0] = add_sphere(&p, r, 1.0, 0.0, 0.0, h0 + r, NULL);
    ball[1] = add_sphere(&p, r, 1.0, 1.0, 0.0, h0 + r, &p.special);
    pp_world *pw = pegplus_for(&p, model);
    double apex[2] = {0, 0};
    int bounced[2] = {0, 0};
    for (int i = 0; i < 20000; ++i) { /* 1 s: past both first apexes (0.45 s + e 0.45 s) */
        step(pw, &p, h);
        for (int k = 0; k < 2; ++k) {
            double z = dBodyGetPosition(ball[k])[2] - r, vz = dBodyGetLinearVel(ball[k])[2];
            if (vz > 0.0) bounced[k] = 1;
            if (bounced[k] == 1 && vz > 0.0 && z > apex[k]) apex[k] = z;
            if (bounced[k] == 1 && vz < 0.0 && apex[k] > 0.0) bounced[k] = 2; /* falling again */
        }
    }
    for (int k = 0; k < 2; ++k) {
        double want = e[k] * e[k] * h0;
        printf("%s: ball with e = %.1f: first apex %.6f m, e^2 h0 = %.6f m (%.3f %%)\n",
               pp_model_name(model), e[k], apex[k], want, 100.0 * (apex[k] - want) / want);
        ck_assert_double_eq_tol(apex[k], want, 0.01 * want);
    }
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- per-pair mu -------------------------------------------------------------------------- */

/* A slope of theta = 20 deg as a level plane under gravity tilted by theta,
 * g = 9.81 (sin theta, 0, -cos theta). Two 0.2 m boxes on it; the callback gives one mu1 = 0.2
 * and the other mu2 = 0.6 (tan theta = 0.364 between them; dContactApprox1: Coulomb). The
 * first slides at a = g (sin theta - mu1 cos theta) = 1.511541 m/s^2, the second sticks. */
START_TEST(test_per_pair_mu)
{
    pp_model model = models[1 + _i];
    const double h = 0.01, theta = 20.0 * M_PI / 180.0, l[3] = {0.2, 0.2, 0.2};
    const double mu[2] = {0.2, 0.6};
    const int steps = 100;
    program p;
    program_create(&p, G * sin(theta), -G * cos(theta));
    p.use_probe_functions = 1;
    p.surface.mu = mu[0];
    p.special_surface.mu = mu[1];
    dBodyID slides = add_box(&p, l, 1.0, 0.0, 0.0, 0.1, NULL);
    dBodyID sticks = add_box(&p, l, 1.0, 0.0, 1.0, 0.1, &p.special);
    pp_world *pw = pegplus_for(&p, model);
    for (int i = 0; i < steps; ++i) step(pw, &p, h);
    double a = G * (sin(theta) - mu[0] * cos(theta));
    double v = dBodyGetLinearVel(slides)[0], t = h * steps;
    printf("%s: mu %.1f: v %.9f m/s after %.1f s, a t = %.9f; mu %.1f: x %.3g m, v %.3g m/s\n",
           pp_model_name(model), mu[0], v, t, a * t, mu[1], dBodyGetPosition(sticks)[0],
           dBodyGetLinearVel(sticks)[0]);
    ck_assert_double_eq_tol(v, a * t, 1e-9 * a * t);
    ck_assert_double_lt(fabs(dBodyGetPosition(sticks)[0]), 1e-9);
    ck_assert_double_lt(fabs(dBodyGetLinearVel(sticks)[0]), 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- what is not honoured yet is said, once ---------------------------------------------- */

/* Three boxes on the ground for 50 steps, every contact asking for spinning friction rhoN
 * without dContactApprox1_N (ODE's torque limit in N m, which pegplus reads as the
 * coefficient of rho p_n), and rolling friction, mu2 and a soft CFM, which are honoured: one
 * message, naming what is not honoured and the geoms' class; nothing else is logged. */
START_TEST(test_unsupported_flags_reported_once)
{
    pp_model model = models[1 + _i];
    program p;
    program_create(&p, 0.0, -G);
    p.surface.mode = dContactApprox1_1 | dContactApprox1_2 | dContactMu2 | dContactSoftCFM |
                     dContactRolling;
    p.surface.mu2 = 0.3;
    p.surface.soft_cfm = 1e-5;
    p.surface.rho = 0.01;
    p.surface.rho2 = 0.01;
    p.surface.rhoN = 0.01;
    p.special_surface = p.surface;
    const double l[3] = {0.2, 0.2, 0.2};
    for (int i = 0; i < 3; ++i) add_box(&p, l, 1.0, 0.5 * i, 0.0, 0.1, NULL);
    pp_world *pw = pegplus_for(&p, model);
    for (int i = 0; i < 50; ++i) step(pw, &p, 0.01);
    ck_assert_int_eq(messages, 1);
    ck_assert_ptr_null(strstr(last_message, "dContactMu2"));
    ck_assert_ptr_nonnull(strstr(last_message, "dContactRolling without the axis's "
                                               "dContactApprox1_1/_2/_N"));
    ck_assert_ptr_null(strstr(last_message, "dContactSoftCFM"));
    ck_assert_ptr_null(strstr(last_message, "dContactBounce"));
    ck_assert_ptr_nonnull(strstr(last_message, "dBoxClass"));
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

static Suite *near_callback_suite(void)
{
    Suite *s = suite_create("near_callback");
    TCase *tc = tcase_create("near_callback");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_ode_bit_identical);
    tcase_add_loop_test(tc, test_ode_contact_list_is_the_programs, 0, 4);
    tcase_add_loop_test(tc, test_rejected_pair_passes_through, 0, 3);
    tcase_add_loop_test(tc, test_per_pair_bounce, 0, 2);
    tcase_add_loop_test(tc, test_per_pair_mu, 0, 2);
    tcase_add_loop_test(tc, test_unsupported_flags_reported_once, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return pp_it_run(near_callback_suite()); }
