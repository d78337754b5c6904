/*
 * ODE's auto-disable under the pegplus models (plugin/src/stage_auto_disable.c): the same
 * scene run under PP_MODEL_ODE (ODE's own counters, dWorldStep) and under the standard model
 * and PEG (pegplus's re-implementation) must put bodies to sleep at the same step where the
 * motions agree, wake a sleeping body in the step something reaches it, and skip sleeping
 * islands entirely.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>

#include "it_common.h"
#include "pegplus/pegplus.h"

#define H 0.01
/* A sleeping body hit by an awake one must not be treated as immovable: the deepest overlap
 * during the hit stays at the models' own level (standard: its contact tolerance; PEG: 0). */
#define HIT_OVERLAP_MAX 1e-6

typedef struct scene {
    dWorldID world;
    dSpaceID space;
    dBodyID box, ball;
    pp_world *pw;
} scene;

static const pp_model MODELS[3] = {PP_MODEL_ODE, PP_MODEL_STANDARD, PP_MODEL_PEG};

/* A unit box (1 kg) with its bottom face `drop` above the plane z = 0, ODE's default
 * auto-disable parameters (thresholds 0.01, 10 idle steps, 1 sample) switched on. */
static void make_box(scene *s, pp_model model, double drop)
{
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, -9.81);
    dCreatePlane(s->space, 0, 0, 1, 0);
    dWorldSetAutoDisableFlag(s->world, 1);
    s->box = dBodyCreate(s->world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 1, 1, 1);
    dBodySetMass(s->box, &m);
    dGeomSetBody(dCreateBox(s->space, 1, 1, 1), s->box);
    dBodySetPosition(s->box, 0, 0, 0.5 + drop);
    s->ball = NULL;
    pp_config c = pp_config_default();
    c.model = model;
    c.ode_max_contacts = 4;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &c, &s->pw), PP_OK);
}

static void destroy(scene *s)
{
    pp_world_destroy(s->pw);
    dSpaceDestroy(s->space);
    dWorldDestroy(s->world);
}

/* The first step after which `body` is disabled, or -1 within `steps`. */
static int steps_until_asleep(scene *s, dBodyID body, int steps)
{
    for (int i = 0; i < steps; ++i) {
        ck_assert_int_eq(pp_world_step(s->pw, H), PP_OK);
        if (!dBodyIsEnabled(body)) return i;
    }
    return -1;
}

/* A box released at rest on the plane: no model moves it (ODE: depth-0 contact, and ERP has
 * nothing to correct), so all three see the same ten idle samples and sleep at the same step;
 * then its velocity is zero and it is no longer stepped: no island, no LCP. */
START_TEST(resting_box_sleeps_at_odes_step)
{
    int asleep[3];
    for (int m = 0; m < 3; ++m) {
        scene s;
        make_box(&s, MODELS[m], 0.0);
        asleep[m] = steps_until_asleep(&s, s.box, 100);
        const dReal *v = dBodyGetLinearVel(s.box);
        ck_assert(v[0] == 0.0 && v[1] == 0.0 && v[2] == 0.0);
        if (MODELS[m] != PP_MODEL_ODE) {
            ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
            const pp_step_stats *st = pp_world_get_stats(s.pw);
            ck_assert_int_eq(st->bodies, 0);
            ck_assert_int_eq(st->lcp_solves, 0);
            ck_assert_int_eq(dBodyIsEnabled(s.box), 0);
        }
        destroy(&s);
    }
    ck_assert_int_eq(asleep[0], 9); /* ODE default: 10 idle steps, samples at steps 0..9 */
    ck_assert_int_eq(asleep[1], asleep[0]);
    ck_assert_int_eq(asleep[2], asleep[0]);
}
END_TEST

/* A damped pendulum on a hinge to the static world (no contact at all; a joint keeps a body
 * from counting as "mid-air"): joint-only worlds step as dWorldStep does (check_joints), so
 * the velocity history and with it the sleeping step must be ODE's. Averaging over 5 samples
 * and a time as well as a step count exercise the rest of the rule. */
START_TEST(damped_pendulum_sleeps_at_odes_step)
{
    int asleep[3];
    for (int m = 0; m < 3; ++m) {
        dWorldID w = dWorldCreate();
        dWorldSetGravity(w, 0, 0, -9.81);
        dWorldSetAutoDisableFlag(w, 1);
        dWorldSetAutoDisableAverageSamplesCount(w, 5);
        dWorldSetAutoDisableLinearThreshold(w, 0.02);
        dWorldSetAutoDisableAngularThreshold(w, 0.05);
        dWorldSetAutoDisableSteps(w, 20);
        dWorldSetAutoDisableTime(w, 0.15);
        dBodyID b = dBodyCreate(w);
        dMass mass;
        dMassSetSphereTotal(&mass, 1.0, 0.1);
        dBodySetMass(b, &mass);
        dBodySetPosition(b, 0.5, 0, 0);
        dBodySetAngularDamping(b, 0.2);
        dJointID j = dJointCreateHinge(w, 0);
        dJointAttach(j, b, 0);
        dJointSetHingeAnchor(j, 0, 0, 0);
        dJointSetHingeAxis(j, 0, 1, 0);
        pp_config c = pp_config_default();
        c.model = MODELS[m];
        pp_world *pw;
        ck_assert_int_eq(pp_world_create(w, NULL, &c, &pw), PP_OK);
        ck_assert_int_eq(pp_world_register_body(pw, b), PP_OK);
        scene s = {w, NULL, b, NULL, pw};
        asleep[m] = steps_until_asleep(&s, b, 3000);
        pp_world_destroy(pw);
        dWorldDestroy(w);
    }
    ck_assert_int_gt(asleep[0], 50); /* it swings first */
    ck_assert_int_eq(asleep[1], asleep[0]);
    ck_assert_int_eq(asleep[2], asleep[0]);
}
END_TEST

/* A box dropped 5 cm: the pegplus models stop it without overlap, ODE lets it sink and pushes
 * it back out with ERP over several steps, so ODE's box is idle later. The rule is checked on
 * pegplus's own motion: asleep exactly idle_steps after the step from which its speed stays
 * below the threshold, and never while it moves. */
START_TEST(dropped_box_sleeps_after_idle_steps)
{
    for (int m = 1; m < 3; ++m) {
        scene s;
        make_box(&s, MODELS[m], 0.05);
        int last_moving = -1, asleep = -1;
        for (int i = 0; i < 200 && asleep < 0; ++i) {
            const dReal *v = dBodyGetLinearVel(s.box), *w = dBodyGetAngularVel(s.box);
            double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            double w2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
            if (v2 > 0.01 * 0.01 || w2 > 0.01 * 0.01) last_moving = i; /* sampled at step i */
            ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
            if (!dBodyIsEnabled(s.box)) asleep = i;
        }
        ck_assert_int_gt(last_moving, 5);
        ck_assert_int_eq(asleep, last_moving + 10);
        ck_assert_double_eq_tol(dBodyGetPosition(s.box)[2], 0.5, 1e-9);
        destroy(&s);
    }
}
END_TEST

/* A sleeping box hit by a ball rolling at 2 m/s: every model wakes it by the step the ball
 * reaches it (the pegplus models a little earlier: they wake on the candidate pair) and
 * the box takes up momentum; the ball does not pass into a box treated as immovable. */
START_TEST(sleeping_box_wakes_when_hit)
{
    int woke[3];
    double box_vx[3];
    for (int m = 0; m < 3; ++m) {
        scene s;
        make_box(&s, MODELS[m], 0.0);
        ck_assert_int_ge(steps_until_asleep(&s, s.box, 100), 0);
        s.ball = dBodyCreate(s.world);
        dMass mass;
        dMassSetSphereTotal(&mass, 2.0, 0.25);
        dBodySetMass(s.ball, &mass);
        dGeomSetBody(dCreateSphere(s.space, 0.25), s.ball);
        dBodySetPosition(s.ball, -1.5, 0, 0.25);
        dBodySetLinearVel(s.ball, 2.0, 0, 0);
        dBodySetAngularVel(s.ball, 0, 2.0 / 0.25, 0); /* rolling */
        dBodySetAutoDisableFlag(s.ball, 0);
        woke[m] = -1;
        double worst = 0.0;
        for (int i = 0; i < 80; ++i) {
            ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
            if (woke[m] < 0 && dBodyIsEnabled(s.box)) woke[m] = i;
            if (MODELS[m] != PP_MODEL_ODE) {
                dContactGeom c[8];
                int n = dCollide(dBodyGetFirstGeom(s.ball), dBodyGetFirstGeom(s.box), 8, c,
                                 sizeof c[0]);
                for (int k = 0; k < n; ++k)
                    if (c[k].depth > worst) worst = c[k].depth;
            }
        }
        box_vx[m] = dBodyGetLinearVel(s.box)[0];
        if (MODELS[m] != PP_MODEL_ODE) ck_assert_double_le(worst, HIT_OVERLAP_MAX);
        destroy(&s);
    }
    /* the ball's front reaches x = -0.5 after (1.5 - 0.25 - 0.5) / 2 = 0.375 s: step 37 */
    ck_assert_int_ge(woke[0], 35);
    ck_assert_int_le(woke[0], 38);
    for (int m = 1; m < 3; ++m) {
        /* the candidate pair reaches eps + h (|v| + |w| r) = 0.01 + 0.04 m ahead: 2.5 steps */
        ck_assert_int_ge(woke[m], woke[0] - 3);
        ck_assert_int_le(woke[m], woke[0]);
        ck_assert_double_gt(box_vx[m], 0.05); /* pushed (or still sliding) after the hit */
    }
}
END_TEST

/* A body the program disables (dBodyDisable) and then enables (dBodyEnable) restarts ODE's
 * countdown: it sleeps again idle_steps steps later, not at once. */
START_TEST(program_enable_restarts_the_countdown)
{
    for (int m = 1; m < 3; ++m) {
        scene s;
        make_box(&s, MODELS[m], 0.0);
        int first = steps_until_asleep(&s, s.box, 100);
        ck_assert_int_ge(first, 0);
        dBodyEnable(s.box);
        int again = steps_until_asleep(&s, s.box, 100);
        ck_assert_int_eq(again, 9);
        destroy(&s);
    }
}
END_TEST

static Suite *auto_disable_suite(void)
{
    Suite *s = suite_create("auto_disable");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, resting_box_sleeps_at_odes_step);
    tcase_add_test(tc, damped_pendulum_sleeps_at_odes_step);
    tcase_add_test(tc, dropped_box_sleeps_after_idle_steps);
    tcase_add_test(tc, sleeping_box_wakes_when_hit);
    tcase_add_test(tc, program_enable_restarts_the_countdown);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    dInitODE2(0);
    int rc = pp_it_run(auto_disable_suite());
    dCloseODE();
    return rc;
}
