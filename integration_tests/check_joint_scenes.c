/*
 * Joints and contacts in one LCP, on the jointed scenes of the scene library
 * (examples/scenes/jointed.h), under PP_MODEL_PEG, asserting physics:
 *  - gripper: two slider-motor fingers squeeze a 0.5 kg cube with 50 N each (mu 0.8) and their
 *    kinematic carrier lifts it 0.2 m: the cube is held (slip relative to a finger < 5 mm over
 *    the 2 s from the lift's start), rises with the carrier, never overlaps anything
 *    (< 1e-9 m), and each finger presses on it with its motor's 50 N;
 *  - car: demo_crash's car (hinge2 wheels with suspension, rear-wheel drive) drives into a row
 *    of boxes and pushes them (> 1 cm), with no overlap and the wheels kept on their axles;
 *  - arm: the benchmark's 6-joint arm picks its cube off the table and turns with it, the
 *    cube staying in the hand.
 * Every step must return PP_OK, and no island's LCP may be left to the bounded fallback or
 * PEG fall back to the standard model. Stock ODE's figures (PP_MODEL_ODE, dWorldStep, the same
 * scene and commands) are printed beside, not asserted.
 *
 * Overlap is pp_scene_max_penetration: dCollide between every pair of geoms that may touch
 * (it skips what no model lets collide: bodies joined by a joint, and a mechanism's parts kept
 * apart by category bits, jointed.h), the measure check_peg_model and check_scenes use.
 *  - a motor powered into its stop, in a world dWorldStep never stepped (it crashed: SIGSEGV
 *    in ODE's addLimot, found with the arm's fingers): the step is PP_OK and the stop holds.
 */
#include "pegplus/pegplus.h"
#include "jointed.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define H 0.01
#define OVERLAP_TOL 1e-9 /* m, after every step */
#define SLIP_TOL 5e-3    /* m, the gripper's cube relative to a finger over 2 s */

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
}

static pp_world *make_world(pp_scene *s, pp_model model)
{
    pp_config c = pp_config_default();
    c.model = model;
    if (s->configure) s->configure(s, &c);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &c, &pw), PP_OK);
    s->pegplus = pw;
    return pw;
}

/* What every step of a run is checked for (asserted only under the pegplus models). */
typedef struct step_tally {
    int steps, not_ok, approximate, peg_fallbacks, regularised;
    double max_overlap; /* m */
} step_tally;

static void tally_step(step_tally *t, const pp_scene *s, const pp_world *pw, pp_status st)
{
    const pp_step_stats *stats = pp_world_get_stats(pw);
    t->steps++;
    t->not_ok += st != PP_OK;
    t->approximate += stats->lcp_fallback >= 2;
    t->regularised += stats->lcp_fallback == 1;
    t->peg_fallbacks += stats->peg_fallback > 0;
    double overlap = pp_scene_max_penetration(s);
    if (overlap > t->max_overlap) t->max_overlap = overlap;
}

static void assert_clean(const step_tally *t, const char *scene)
{
    ck_assert_msg(t->not_ok == 0, "%s: %d of %d steps not PP_OK", scene, t->not_ok, t->steps);
    ck_assert_msg(t->approximate == 0, "%s: %d steps answered by the bounded LCP fallback", scene,
                  t->approximate);
    ck_assert_msg(t->peg_fallbacks == 0, "%s: PEG fell back to the standard model in %d steps",
                  scene, t->peg_fallbacks);
    ck_assert_msg(t->max_overlap <= OVERLAP_TOL, "%s: overlap %g m", scene, t->max_overlap);
}

static void print_tally(const char *what, const step_tally *t)
{
    printf("  %-8s %d steps, %d not PP_OK, deepest overlap %.3g m, LCP fallbacks: %d regularised, "
           "%d approximate, %d PEG -> standard\n", what, t->steps, t->not_ok, t->max_overlap,
           t->regularised, t->approximate, t->peg_fallbacks);
}

/* b's position relative to body `frame`, in frame's axes. */
static void local_position(dBodyID frame, dBodyID b, double out[3])
{
    const dReal *R = dBodyGetRotation(frame), *xf = dBodyGetPosition(frame), *xb = dBodyGetPosition(b);
    double d[3] = {xb[0] - xf[0], xb[1] - xf[1], xb[2] - xf[2]};
    for (int c = 0; c < 3; ++c) out[c] = R[c] * d[0] + R[4 + c] * d[1] + R[8 + c] * d[2];
}

static double distance3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* ---- gripper ---------------------------------------------------------------------------- */

typedef struct gripper_result {
    step_tally tally;
    double slip;        /* m: largest shift of the cube relative to the +x finger since the lift began */
    double lift;        /* m: the cube's rise */
    double motor;       /* N: the +x slider's force along its axis (dJointFeedback), mean over the hold */
    double squeeze;     /* N: the +x finger's normal force on the cube, mean over the hold (pegplus
                           models; -1 under ODE, whose contacts pegplus does not see) */
} gripper_result;

enum { GRIPPER_STEPS = 250, GRIPPER_HOLD = 50 /* last steps: carrier at rest */ };

static gripper_result run_gripper(pp_model model)
{
    gripper_result r;
    memset(&r, 0, sizeof r);
    pp_scene s;
    pp_scene_gripper(&s, H);
    pp_world *pw = make_world(&s, model);
    dBodyID cube = s.bodies[0], finger = s.bodies[3];
    dJointID slider = dBodyGetJoint(finger, 0);
    dJointFeedback feedback;
    dJointSetFeedback(slider, &feedback);
    const int lift_first = (int)lround(PP_GRIPPER_LIFT_START / H);
    const double z0 = dBodyGetPosition(cube)[2];
    double at_grasp[3] = {0, 0, 0};
    r.squeeze = model == PP_MODEL_ODE ? -1.0 : 0.0;
    for (int step = 0; step < GRIPPER_STEPS; ++step) {
        if (step == lift_first) local_position(finger, cube, at_grasp);
        s.before_step(&s, step);
        pp_status st = pp_world_step(pw, H);
        tally_step(&r.tally, &s, pw, st);
        if (step >= lift_first) {
            double now[3];
            local_position(finger, cube, now);
            r.slip = fmax(r.slip, distance3(now, at_grasp));
        }
        if (step < GRIPPER_STEPS - GRIPPER_HOLD) continue;
        /* the force on the finger (body 1) along the slider's axis, which points at the cube:
         * the motor pushing it in, minus nothing else (the axis is free but for the motor) */
        dVector3 axis;
        dJointGetSliderAxis(slider, axis);
        r.motor += (feedback.f1[0] * axis[0] + feedback.f1[1] * axis[1] + feedback.f1[2] * axis[2]) / GRIPPER_HOLD;
        if (model != PP_MODEL_ODE) {
            const pp_contact_info *info;
            int n = pp_world_get_contacts(pw, &info);
            for (int c = 0; c < n; ++c)
                if ((info[c].g1 == s.geoms[0] && info[c].g2 == s.geoms[3]) ||
                    (info[c].g1 == s.geoms[3] && info[c].g2 == s.geoms[0]))
                    r.squeeze += info[c].normal_impulse / H / GRIPPER_HOLD;
        }
    }
    r.lift = dBodyGetPosition(cube)[2] - z0;
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
    return r;
}

static void print_gripper(const char *what, const gripper_result *r)
{
    print_tally(what, &r->tally);
    printf("           cube slip %.3g m, lift %.6f m, slider force %.4f N", r->slip, r->lift, r->motor);
    if (r->squeeze >= 0.0) printf(", normal force on the cube %.4f N", r->squeeze);
    printf("\n");
}

START_TEST(test_gripper_holds_cube)
{
    gripper_result peg = run_gripper(PP_MODEL_PEG), ode = run_gripper(PP_MODEL_ODE);
    printf("gripper (0.5 kg cube, mu %.1f, %.0f N a finger, lifted %.2f m; h = %g):\n", PP_GRIPPER_MU,
           PP_GRIPPER_FORCE, PP_GRIPPER_LIFT_SPEED * PP_GRIPPER_LIFT_TIME, H);
    print_gripper("peg", &peg);
    print_gripper("ode", &ode);
    assert_clean(&peg.tally, "gripper");
    ck_assert_msg(peg.slip < SLIP_TOL, "the cube slipped %g m in the fingers", peg.slip);
    const double lift = PP_GRIPPER_LIFT_SPEED * PP_GRIPPER_LIFT_TIME;
    ck_assert_msg(fabs(peg.lift - lift) < SLIP_TOL, "the cube rose %g m, the carrier %g m", peg.lift, lift);
    /* the motor saturates at its dParamFMax, and that is what the finger presses with (the
     * finger does not accelerate along the axis during the hold) */
    ck_assert_double_eq_tol(peg.motor, PP_GRIPPER_FORCE, 1e-6 * PP_GRIPPER_FORCE);
    ck_assert_double_eq_tol(peg.squeeze, PP_GRIPPER_FORCE, 1e-6 * PP_GRIPPER_FORCE);
}
END_TEST

/* ---- car -------------------------------------------------------------------------------- */

typedef struct car_result {
    step_tally tally;
    double reach;       /* s: first time the chassis' nose is within 1 cm of the wall; -1 never */
    double shift;       /* m: the largest displacement of a wall box */
    double axle;        /* m: largest anchor separation of a wheel's hinge2 across axis 1 */
    double suspension;  /* m: largest anchor separation along axis 1 (the suspension's travel) */
    double car_x;       /* m: the chassis' x at the end */
} car_result;

enum { CAR_STEPS = 300 };

static car_result run_car(pp_model model)
{
    car_result r;
    memset(&r, 0, sizeof r);
    r.reach = -1.0;
    pp_scene s;
    pp_scene_car(&s, H);
    pp_world *pw = make_world(&s, model);
    const int boxes = s.body_count - PP_CAR_BODIES;
    double start[PP_CAR_WALL_WIDE * PP_CAR_WALL_HIGH][3];
    ck_assert_int_eq(boxes, PP_CAR_WALL_WIDE * PP_CAR_WALL_HIGH);
    for (int b = 0; b < boxes; ++b) memcpy(start[b], dBodyGetPosition(s.bodies[PP_CAR_BODIES + b]), sizeof start[b]);
    for (int step = 0; step < CAR_STEPS; ++step) {
        if (s.before_step) s.before_step(&s, step);
        pp_status st = pp_world_step(pw, H);
        tally_step(&r.tally, &s, pw, st);
        const double nose = dBodyGetPosition(s.bodies[0])[0] + 1.75;
        if (r.reach < 0.0 && nose > PP_CAR_WALL_X - 0.01) r.reach = (step + 1) * H;
        for (int b = 0; b < boxes; ++b) {
            double now[3];
            memcpy(now, dBodyGetPosition(s.bodies[PP_CAR_BODIES + b]), sizeof now);
            r.shift = fmax(r.shift, distance3(now, start[b]));
        }
        for (int w = 2; w < PP_CAR_BODIES; ++w) {
            dJointID j = dBodyGetJoint(s.bodies[w], 0);
            dVector3 a1, a2, axis;
            dJointGetHinge2Anchor(j, a1);
            dJointGetHinge2Anchor2(j, a2);
            dJointGetHinge2Axis1(j, axis);
            double d[3] = {a2[0] - a1[0], a2[1] - a1[1], a2[2] - a1[2]};
            double along = d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2];
            double across = sqrt(fmax(0.0, d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along));
            r.axle = fmax(r.axle, across);
            r.suspension = fmax(r.suspension, fabs(along));
        }
    }
    r.car_x = dBodyGetPosition(s.bodies[0])[0];
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
    return r;
}

static void print_car(const char *what, const car_result *r)
{
    print_tally(what, &r->tally);
    printf("           reaches the wall at %.2f s, boxes moved up to %.3f m, chassis at x = %.3f m; "
           "wheel anchors apart %.3g m across the axle, %.3g m along the suspension\n",
           r->reach, r->shift, r->car_x, r->axle, r->suspension);
}

START_TEST(test_car_pushes_wall)
{
    car_result peg = run_car(PP_MODEL_PEG), ode = run_car(PP_MODEL_ODE);
    printf("car (demo_crash's, rear-wheel drive at %.0f m/s) into %d x %d boxes (h = %g):\n",
           PP_CAR_SPEED, PP_CAR_WALL_WIDE, PP_CAR_WALL_HIGH, H);
    print_car("peg", &peg);
    print_car("ode", &ode);
    assert_clean(&peg.tally, "car");
    ck_assert_msg(peg.reach > 0.0, "the car never reached the wall");
    ck_assert_msg(peg.shift > 0.01, "no box moved more than 1 cm (%g m)", peg.shift);
    /* hinge2 holds the anchors together across axis 1. The demo's world CFM of 1e-5 makes
     * every joint row soft, so they part by about CFM x force (stock ODE: 3e-5 m); a drifting
     * joint would grow without bound */
    ck_assert_msg(peg.axle < 1e-4, "a wheel left its axle by %g m", peg.axle);
}
END_TEST

/* ---- arm -------------------------------------------------------------------------------- */

typedef struct arm_result {
    step_tally tally;
    double lift;        /* m: the cube's rise */
    double slip;        /* m: largest shift of the cube relative to the hand since the grasp */
    double turn;        /* rad: the turret's final angle */
} arm_result;

enum { ARM_STEPS = 500, ARM_GRASPED = 210 /* fingers closed: 2.1 s */ };

static arm_result run_arm(pp_model model, int friction_directions)
{
    arm_result r;
    memset(&r, 0, sizeof r);
    pp_scene s;
    pp_scene_arm(&s, H);
    pp_config c = pp_config_default();
    c.model = model;
    c.friction_directions = friction_directions;
    s.configure(&s, &c);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &c, &pw), PP_OK);
    s.pegplus = pw;
    dBodyID cube = s.bodies[0], hand = s.bodies[6];
    const double z0 = dBodyGetPosition(cube)[2];
    double at_grasp[3] = {0, 0, 0};
    for (int step = 0; step < ARM_STEPS; ++step) {
        if (step == ARM_GRASPED) local_position(hand, cube, at_grasp);
        s.before_step(&s, step);
        pp_status st = pp_world_step(pw, H);
        tally_step(&r.tally, &s, pw, st);
        if (step >= ARM_GRASPED) {
            double now[3];
            local_position(hand, cube, now);
            r.slip = fmax(r.slip, distance3(now, at_grasp));
        }
    }
    r.lift = dBodyGetPosition(cube)[2] - z0;
    for (int k = 0; k < dBodyGetNumJoints(s.bodies[1]); ++k) { /* the turret's hinge to the world */
        dJointID j = dBodyGetJoint(s.bodies[1], k);
        if (!dJointGetBody(j, 1)) r.turn = dJointGetHingeAngle(j);
    }
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
    return r;
}

START_TEST(test_arm_picks_cube)
{
    arm_result peg = run_arm(PP_MODEL_PEG, 4), ode = run_arm(PP_MODEL_ODE, 4);
    printf("arm (6 hinges + 2 finger sliders) picking a %.0f cm cube, k = 4 (h = %g):\n",
           100 * PP_ARM_CUBE, H);
    print_tally("peg", &peg.tally);
    printf("           cube lifted %.4f m, slip in the hand %.3g m, turret at %.4f rad\n", peg.lift,
           peg.slip, peg.turn);
    print_tally("ode", &ode.tally);
    printf("           cube lifted %.4f m, slip in the hand %.3g m, turret at %.4f rad\n", ode.lift,
           ode.slip, ode.turn);
    assert_clean(&peg.tally, "arm");
    ck_assert_msg(peg.lift > 0.14, "the cube rose only %g m (the hand 0.15 m)", peg.lift);
    ck_assert_msg(peg.slip < SLIP_TOL, "the cube moved %g m in the hand", peg.slip);
    ck_assert_msg(fabs(peg.turn - 0.6) < 0.01, "the turret turned %g rad (0.6 asked)", peg.turn);
}
END_TEST

/* ---- a motor powered into its stop -------------------------------------------------------
 *
 * getInfo2 of a motor powered into its stop (ODE 0.16's dxJointLimitMotor::addLimot) adds the
 * motor's force to the bodies under a lock of ODE's step context, which only dWorldStep /
 * dWorldQuickStep create: in a world stepped by pegplus alone it dereferenced NULL (SIGSEGV in
 * dxWorld::unsafeGetWorldProcessingContext). Found with pegplus-benchmark's arm under the
 * standard model, a finger sliding to its stop while its motor closed it; pegplus now builds
 * such rows itself (docs/joints-public-rows.md). The smallest case: a 1 kg box on a slider to
 * the world along z, stops lo = -0.1 m and hi = 0 (it starts at hi), motor dParamVel =
 * 0.1 m/s into the stop with dParamFMax = 10 N against its 9.81 N weight: it must stay at the
 * stop. _i: bit 0 the model (standard, PEG), bit 1 whether one PP_MODEL_ODE step came first
 * (which creates ODE's step context). */
START_TEST(test_powered_joint_at_stop)
{
    const pp_model model = _i & 1 ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    pp_scene s;
    pp_scenes_init_ode();
    memset(&s, 0, sizeof s);
    s.world = dWorldCreate();
    s.space = dHashSpaceCreate(0);
    dWorldSetGravity(s.world, 0, 0, -9.81);
    dBodyID b = pp_scene_add_box(&s, (const double[3]){0.2, 0.2, 0.2}, 1.0, (const double[3]){0, 0, 1});
    dJointID j = dJointCreateSlider(s.world, 0);
    dJointAttach(j, b, 0);
    dJointSetSliderAxis(j, 0, 0, 1);
    dJointSetSliderParam(j, dParamLoStop, -0.1);
    dJointSetSliderParam(j, dParamHiStop, 0.0);
    dJointSetSliderParam(j, dParamVel, 0.1);
    dJointSetSliderParam(j, dParamFMax, 10.0);
    pp_world *pw = make_world(&s, _i & 2 ? PP_MODEL_ODE : model);
    if (_i & 2) {
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        ck_assert_int_eq(pp_world_set_model(pw, model), PP_OK);
    }
    for (int i = 0; i < 100; ++i) ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
    ck_assert_double_lt(fabs(dJointGetSliderPosition(j)), 1e-3);
    ck_assert_double_lt(fabs(dBodyGetLinearVel(b)[2]), 1e-3);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0); /* the figures of a failing test are printed too */
    Suite *s = suite_create("joint_scenes");
    TCase *tc = tcase_create("scenes");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_gripper_holds_cube);
    tcase_add_test(tc, test_car_pushes_wall);
    tcase_add_test(tc, test_arm_picks_cube);
    suite_add_tcase(s, tc);
    TCase *stop = tcase_create("powered_stop");
    tcase_add_checked_fixture(stop, setup, NULL);
    tcase_add_loop_test(stop, test_powered_joint_at_stop, 0, 4);
    suite_add_tcase(s, stop);
    return pp_it_run(s);
}
