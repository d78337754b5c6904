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
#include <string.h>

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

/* ---- A failing step after stage 1c's rerun (world.c auto_disable, snapshot_bodies) --------
 * A sleeping box, a ball rolling into it, and away from them an arm whose hinge motor drives
 * it into its stop, so that stage 1b adds the motor's torque to the arm's accumulator (ODE's
 * addLimot) at every pass of stages 1-6. In the step the ball wakes the box, stages 1-6 run
 * again; the program's surface callback then gives a NaN mu to a pair of the woken box (the
 * second pass's stage 3-5), and the step fails. Every body, its accumulators and its enabled
 * flag must be as before the step, bit for bit (the rerun puts the accumulators back before
 * it saves them again: without that the failed step leaves the first pass's torque on the
 * arm), and with valid surfaces again the world steps on as a twin that never failed. */
typedef struct rerun_scene {
    scene s;
    dBodyID arm;
    dJointID hinge;
    int fail; /* the callback fails the woken box's pairs */
} rerun_scene;

static int fail_woken_box(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    rerun_scene *r = user;
    dGeomID box = dBodyGetFirstGeom(r->s.box);
    if (r->fail && (g1 == box || g2 == box) && dBodyIsEnabled(r->s.box)) surface->mu = NAN;
    return 1;
}

static void make_rerun_scene(rerun_scene *r, pp_model model)
{
    memset(r, 0, sizeof *r);
    make_box(&r->s, model, 0.0);
    pp_config c = pp_world_get_config(r->s.pw);
    c.surface_fn = fail_woken_box;
    c.surface_user = r;
    c.lcp_budget_seconds = 0.0; /* no clock: the twins' answers do not depend on speed */
    ck_assert_int_eq(pp_world_set_config(r->s.pw, &c), PP_OK);
    r->arm = dBodyCreate(r->s.world);
    dMass mass;
    dMassSetBoxTotal(&mass, 1.0, 0.4, 0.4, 0.4);
    dBodySetMass(r->arm, &mass);
    dGeomSetBody(dCreateBox(r->s.space, 0.4, 0.4, 0.4), r->arm);
    dBodySetPosition(r->arm, 20.5, 0, 3.0);
    dBodySetAutoDisableFlag(r->arm, 0);
    r->hinge = pp_it_hinge_into_stop(r->s.world, r->arm, 20.0, 0.0, 3.0);
}

static void add_rolling_ball(rerun_scene *r)
{
    r->s.ball = dBodyCreate(r->s.world);
    dMass mass;
    dMassSetSphereTotal(&mass, 2.0, 0.25);
    dBodySetMass(r->s.ball, &mass);
    dGeomSetBody(dCreateSphere(r->s.space, 0.25), r->s.ball);
    dBodySetPosition(r->s.ball, -1.5, 0, 0.25);
    dBodySetLinearVel(r->s.ball, 2.0, 0, 0);
    dBodySetAngularVel(r->s.ball, 0, 2.0 / 0.25, 0); /* rolling */
    dBodySetAutoDisableFlag(r->s.ball, 0);
}

/* _i: 0 standard model, 1 PEG */
START_TEST(failed_step_after_rerun_restores_accumulators)
{
    enum { AFTER = 20 };
    const pp_model model = MODELS[1 + _i];
    rerun_scene r[2];
    for (int k = 0; k < 2; ++k) {
        make_rerun_scene(&r[k], model);
        ck_assert_int_ge(steps_until_asleep(&r[k].s, r[k].s.box, 100), 0);
        add_rolling_ball(&r[k]);
    }
    int failed_at = -1;
    for (int step = 0; step < 80 && (failed_at < 0 || step <= failed_at + AFTER); ++step) {
        const int asleep = !dBodyIsEnabled(r[1].s.box);
        ck_assert_int_eq(pp_world_step(r[1].s.pw, H), PP_OK); /* the twin first */
        if (failed_at < 0 && asleep && dBodyIsEnabled(r[1].s.box)) { /* woken in this step */
            dBodyID bodies[3] = {r[0].s.box, r[0].s.ball, r[0].arm};
            pp_it_body_state before[3], after;
            for (int b = 0; b < 3; ++b) pp_it_read_body_state(bodies[b], &before[b]);
            r[0].fail = 1;
            ck_assert_int_eq(pp_world_step(r[0].s.pw, H), PP_ERR_INVALID_ARGUMENT);
            r[0].fail = 0;
            for (int b = 0; b < 3; ++b) {
                pp_it_read_body_state(bodies[b], &after);
                ck_assert_msg(!memcmp(&before[b], &after, sizeof after),
                              "%s: body %d (0 box, 1 ball, 2 arm) changed by the step failing "
                              "after the rerun (arm torque %g -> %g)", pp_model_name(model), b,
                              (double)before[2].t[1], (double)dBodyGetTorque(r[0].arm)[1]);
            }
            failed_at = step;
        }
        ck_assert_int_eq(pp_world_step(r[0].s.pw, H), PP_OK);
        dBodyID a[3] = {r[0].s.box, r[0].s.ball, r[0].arm};
        dBodyID b[3] = {r[1].s.box, r[1].s.ball, r[1].arm};
        for (int k = 0; k < 3; ++k) {
            pp_it_body_state x, y;
            pp_it_read_body_state(a[k], &x);
            pp_it_read_body_state(b[k], &y);
            ck_assert_msg(!memcmp(&x, &y, sizeof x), "%s: body %d differs from the twin at "
                          "step %d (the failure at %d)", pp_model_name(model), k, step,
                          failed_at);
        }
    }
    ck_assert_int_ge(failed_at, 0);
    printf("check_auto_disable: %s: a step failing after the box woke (step %d) left ODE as it "
           "was; %d steps on bit for bit as the twin\n", pp_model_name(model), failed_at, AFTER);
    for (int k = 0; k < 2; ++k) destroy(&r[k].s);
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
    tcase_add_loop_test(tc, failed_step_after_rerun_restores_accumulators, 0, 2);
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
