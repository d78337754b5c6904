/*
 * The two sources of ODE joint rows checked against each other (docs/joints.md,
 * docs/joints-public-rows.md): rows rebuilt from ODE's public API plus a capture taken at
 * set-up (joint_rows_public.c) against the rows of libode's own getInfo1/getInfo2
 * (ode_joint_rows.c), for every rebuildable joint type, in worlds stepped by dWorldStep.
 *
 * Each scene builds a world, sets its joints up (attached to two bodies, to the world, and
 * reversed as dJointAttach(j, 0, b); stops, bounce, motors, motors powered at a stop), takes
 * every joint's capture, then compares the two builders' rows before every one of its
 * dWorldStep steps: the row count, and every entry of J, c, cfm, lo, hi to TOL relative to
 * max(1, |value|) (infinite bounds must be equal). The external force ODE adds for a motor
 * powered at a stop is compared too: getInfo2 adds it to the bodies' accumulators, so the
 * accumulators are saved and zeroed, each builder is run on zeroed accumulators and what it
 * added is read back, then the saved values are restored. getInfo1's other side effects
 * (the stored limit state, AMotor's cached Euler angles) are recomputed by the next
 * dWorldStep's getInfo1, so the comparison leaves the trajectory as it was.
 *
 * A scene declares what it must exercise (a limit row, a motor row, a motor powered at a
 * stop); the test fails if the trajectory never did, so a scene cannot silently stop testing
 * what its name says.
 *
 * Without libode's exported getInfo1/getInfo2 (PP_HAVE_ODE_JOINT_ROWS 0) there is nothing to
 * compare against: the public rows are still built for every scene, and their count checked
 * against the type's range.
 */
#include "../src/joint_rows_public.h"
#include "../src/world_internal.h" /* pp_ode_joint_rows, pp_ode_joint_rows_available */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 0.01
#define TOL 1e-12     /* per row entry, relative to max(1, |value|) */
#define MAX_BODIES 6
#define MAX_JOINTS 6

enum {
    EXPECT_LIMIT = 1,   /* a row bounded on one side by 0: a stop */
    EXPECT_MOTOR = 2,   /* a row bounded by -fmax, +fmax: a motor below its stops */
    EXPECT_PUSH = 4     /* an external motor force: a motor powered at a stop */
};

typedef struct scene {
    dWorldID world;
    dBodyID body[MAX_BODIES];
    int bodies;
    dJointID joint[MAX_JOINTS];
    int lmotor_rel[MAX_JOINTS][3];
    pp_joint_capture capture[MAX_JOINTS];
    int joints;
} scene;

typedef void scene_builder(scene *s);

/* ---- scene helpers ------------------------------------------------------------------------ */

static dBodyID box(scene *s, double x, double y, double z, double lx, double ly, double lz)
{
    dBodyID b = dBodyCreate(s->world);
    dMass m;
    dMassSetBox(&m, 600.0, lx, ly, lz);
    dBodySetMass(b, &m);
    dBodySetPosition(b, x, y, z);
    s->body[s->bodies++] = b;
    return b;
}

static void turn(dBodyID b, double ax, double ay, double az, double angle)
{
    dMatrix3 R;
    dRFromAxisAndAngle(R, ax, ay, az, angle);
    dBodySetRotation(b, R);
}

static dJointID add(scene *s, dJointID j)
{
    for (int a = 0; a < 3; ++a) s->lmotor_rel[s->joints][a] = -1;
    s->joint[s->joints++] = j;
    return j;
}

static void lmotor_axis(scene *s, dJointID j, int anum, int rel, double x, double y, double z)
{
    dJointSetLMotorAxis(j, anum, rel, x, y, z);
    for (int k = 0; k < s->joints; ++k)
        if (s->joint[k] == j) s->lmotor_rel[k][anum] = rel;
}

/* Move b rigidly along `axis` by d: a prismatic joint stays assembled, at another position. */
static void slide(dBodyID b, double x, double y, double z, double d)
{
    const dReal *p = dBodyGetPosition(b);
    const double n = sqrt(x * x + y * y + z * z);
    dBodySetPosition(b, p[0] + d * x / n, p[1] + d * y / n, p[2] + d * z / n);
}

/* Turn b rigidly by `angle` about the line through A along `axis`: a hinge stays assembled. */
static void swing(dBodyID b, const double A[3], double x, double y, double z, double angle)
{
    dMatrix3 D, R;
    dRFromAxisAndAngle(D, x, y, z, angle);
    dMultiply0_333(R, D, dBodyGetRotation(b));
    const dReal *p = dBodyGetPosition(b);
    dVector3 r = {p[0] - A[0], p[1] - A[1], p[2] - A[2], 0.0}, t;
    dMultiply0_331(t, D, r);
    dBodySetRotation(b, R);
    dBodySetPosition(b, A[0] + t[0], A[1] + t[1], A[2] + t[2]);
}

/* ---- scenes: ball ------------------------------------------------------------------------- */

/* world - a - b on balls, the second with its own ERP and CFM */
static void ball_chain(scene *s)
{
    dBodyID a = box(s, 0.3, 0.0, 1.0, 0.1, 0.1, 0.1);
    dBodyID b = box(s, 0.6, 0.1, 0.9, 0.1, 0.1, 0.2);
    turn(b, 1, 1, 0, 0.3);
    dJointID j0 = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(j0, a, 0);
    dJointSetBallAnchor(j0, 0.0, 0.0, 1.0);
    dJointID j1 = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(j1, a, b);
    dJointSetBallAnchor(j1, 0.45, 0.05, 0.95);
    dJointSetBallParam(j1, dParamERP, 0.6);
    dJointSetBallParam(j1, dParamCFM, 1e-5);
    dBodySetLinearVel(b, 0.0, 1.0, 0.0);
}

static void ball_reversed(scene *s)
{
    dBodyID a = box(s, 0.2, 0.1, 0.7, 0.1, 0.2, 0.3);
    turn(a, 0, 0, 1, 0.4);
    dJointID j = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(j, 0, a);
    dJointSetBallAnchor(j, 0.0, 0.0, 1.0);
    dJointSetBallParam(j, dParamERP, 0.3);
    dBodySetAngularVel(a, 1.0, 2.0, 0.0);
}

/* ---- hinge -------------------------------------------------------------------------------- */

static void hinge_pendulum(scene *s)
{
    double a = M_PI / 6.0, r = 0.5;
    dBodyID b = box(s, r * sin(a), 0.0, 1.0 - r * cos(a), 0.1, 0.2, 0.3);
    turn(b, 0, 1, 0, a);
    dJointID j = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetHingeAnchor(j, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j, 0.0, 1.0, 0.0);
}

/* the pendulum swung 0.4 rad about its axis after the set-up: captured assembled, off zero */
static void hinge_swung(scene *s)
{
    hinge_pendulum(s);
    const double A[3] = {0.0, 0.0, 1.0};
    swing(s->body[0], A, 0.0, 1.0, 0.0, 0.4);
}

static void hinge_reversed_stops(scene *s)
{
    double a = 0.3, r = 0.5;
    dBodyID b = box(s, r * sin(a), 0.0, 1.0 - r * cos(a), 0.1, 0.1, 0.1);
    dJointID j = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j, 0, b);
    dJointSetHingeAnchor(j, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j, 0.0, 1.0, 0.0);
    dJointSetHingeParam(j, dParamLoStop, -0.4);
    dJointSetHingeParam(j, dParamHiStop, 0.4);
    dBodySetAngularVel(b, 0.0, 3.0, 0.0);
}

/* a double pendulum, the elbow with bouncing stops and its own stop ERP / CFM; non-default
 * world ERP and CFM */
static void hinge_elbow_bounce(scene *s)
{
    dWorldSetERP(s->world, 0.4);
    dWorldSetCFM(s->world, 1e-6);
    dBodyID a = box(s, 0.25, 0.0, 1.0, 0.5, 0.05, 0.05);
    dBodyID b = box(s, 0.75, 0.0, 1.0, 0.5, 0.05, 0.05);
    dJointID j0 = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j0, a, 0);
    dJointSetHingeAnchor(j0, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j0, 0.0, 1.0, 0.0);
    dJointID j1 = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j1, a, b);
    dJointSetHingeAnchor(j1, 0.5, 0.0, 1.0);
    dJointSetHingeAxis(j1, 0.0, 1.0, 0.0);
    dJointSetHingeParam(j1, dParamLoStop, -0.3);
    dJointSetHingeParam(j1, dParamHiStop, 0.3);
    dJointSetHingeParam(j1, dParamBounce, 0.5);
    dJointSetHingeParam(j1, dParamStopERP, 0.5);
    dJointSetHingeParam(j1, dParamStopCFM, 1e-5);
    dBodySetAngularVel(b, 0.0, -4.0, 0.0);
}

/* a free disc driven by a motor too weak to reach its speed */
static void hinge_motor(scene *s)
{
    dWorldSetGravity(s->world, 0.0, 0.0, 0.0);
    dBodyID b = box(s, 0.0, 0.0, 1.0, 0.4, 0.05, 0.4);
    dJointID j = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetHingeAnchor(j, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j, 0.0, 1.0, 0.0);
    dJointSetHingeParam(j, dParamVel, 2.0);
    dJointSetHingeParam(j, dParamFMax, 0.01);
    dJointSetHingeParam(j, dParamCFM, 1e-6);
}

/* a pendulum falling onto its stop with a motor pushing it there */
static void hinge_pushed(scene *s)
{
    double a = 0.2, r = 0.5;
    dBodyID b = box(s, -r * sin(a), 0.0, 1.0 - r * cos(a), 0.1, 0.1, 0.1);
    dJointID j = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetHingeAnchor(j, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j, 0.0, 1.0, 0.0);
    dJointSetHingeParam(j, dParamLoStop, -0.5);
    dJointSetHingeParam(j, dParamVel, -1.0);
    dJointSetHingeParam(j, dParamFMax, 3.0);
    dJointSetHingeParam(j, dParamFudgeFactor, 0.5);
    dBodySetAngularVel(b, 0.0, -2.0, 0.0);
}

/* the pendulum resting on its stop under gravity while a weak motor pulls it away: ODE
 * applies the motor's force times FudgeFactor */
static void hinge_pulled_away(scene *s)
{
    double a = 0.2, r = 0.5;
    dBodyID b = box(s, -r * sin(a), 0.0, 1.0 - r * cos(a), 0.1, 0.1, 0.1);
    dJointID j = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetHingeAnchor(j, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j, 0.0, 1.0, 0.0);
    dJointSetHingeParam(j, dParamLoStop, -0.05);
    dJointSetHingeParam(j, dParamHiStop, 0.05);
    dJointSetHingeParam(j, dParamVel, 1.0);
    dJointSetHingeParam(j, dParamFMax, 0.05);
    dJointSetHingeParam(j, dParamFudgeFactor, 0.5);
}

/* lostop > histop: no stop at all (getInfo1 does not test them) */
static void hinge_stops_crossed(scene *s)
{
    hinge_pendulum(s);
    dJointSetHingeParam(s->joint[0], dParamLoStop, 0.3);
    dJointSetHingeParam(s->joint[0], dParamHiStop, -0.3);
}

/* lostop == histop: an equality row, the motor ignored */
static void hinge_locked(scene *s)
{
    dBodyID b = box(s, 0.5, 0.0, 1.0, 0.1, 0.1, 0.1);
    dJointID j = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetHingeAnchor(j, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(j, 0.0, 1.0, 0.0);
    dJointSetHingeParam(j, dParamLoStop, 0.1);
    dJointSetHingeParam(j, dParamHiStop, 0.1);
    dJointSetHingeParam(j, dParamVel, 1.0);
    dJointSetHingeParam(j, dParamFMax, 10.0);
}

/* ---- slider ------------------------------------------------------------------------------- */

static void slider_world_stops(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 1.0, 0.2, 0.2, 0.2);
    dJointID j = add(s, dJointCreateSlider(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetSliderAxis(j, 0.6, 0.0, 0.8);
    dJointSetSliderParam(j, dParamLoStop, -0.15);
    dJointSetSliderParam(j, dParamHiStop, 0.1);
    dJointSetSliderParam(j, dParamBounce, 0.5);
    dJointSetSliderParam(j, dParamStopERP, 0.4);
    dJointSetSliderParam(j, dParamStopCFM, 1e-6);
    dBodySetLinearVel(b, 0.3, 0.0, 0.4);
}

static void slider_reversed_pushed(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 1.0, 0.2, 0.1, 0.1);
    turn(b, 1, 0, 0, 0.3);
    dJointID j = add(s, dJointCreateSlider(s->world, 0));
    dJointAttach(j, 0, b);
    dJointSetSliderAxis(j, 0.6, 0.0, 0.8);
    dJointSetSliderParam(j, dParamLoStop, -0.1);
    dJointSetSliderParam(j, dParamHiStop, 0.1);
    dJointSetSliderParam(j, dParamVel, 0.5);
    dJointSetSliderParam(j, dParamFMax, 20.0);
    dJointSetSliderParam(j, dParamFudgeFactor, 0.3);
}

/* a box hanging from the world on a ball, a second box on a motored slider to it */
static void slider_pair_motor(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.3, 0.1, 0.1);
    dBodyID b = box(s, 0.3, 0.0, 1.05, 0.1, 0.1, 0.1);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 1.2);
    dJointID j = add(s, dJointCreateSlider(s->world, 0));
    dJointAttach(j, a, b);
    dJointSetSliderAxis(j, 1.0, 0.0, 0.2);
    dJointSetSliderParam(j, dParamVel, 0.3);
    dJointSetSliderParam(j, dParamFMax, 5.0);
    dBodySetAngularVel(a, 0.0, 0.0, 1.0);
}

/* an arm hinged to the world, a box sliding along it into its stop, pushed by a motor */
static void slider_pair_pushed(scene *s)
{
    dBodyID a = box(s, 0.3, 0.0, 1.0, 0.6, 0.05, 0.05);
    dBodyID b = box(s, 0.5, 0.0, 1.0, 0.1, 0.1, 0.1);
    dJointID h = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(h, a, 0);
    dJointSetHingeAnchor(h, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(h, 0.0, 1.0, 0.0);
    dJointID j = add(s, dJointCreateSlider(s->world, 0));
    dJointAttach(j, a, b);
    dJointSetSliderAxis(j, 1.0, 0.0, 0.0);
    dJointSetSliderParam(j, dParamLoStop, -0.05);
    dJointSetSliderParam(j, dParamHiStop, 0.05);
    dJointSetSliderParam(j, dParamVel, -1.0);
    dJointSetSliderParam(j, dParamFMax, 10.0);
    dJointSetSliderParam(j, dParamBounce, 0.2);
}

/* both sliders moved 0.07 along their axes after the set-up: captured off position zero */
static void slider_slid(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.3, 0.1, 0.1);
    dBodyID b = box(s, 0.3, 0.1, 1.0, 0.1, 0.1, 0.1);
    turn(a, 0, 0, 1, 0.2);
    dJointID w = add(s, dJointCreateSlider(s->world, 0));
    dJointAttach(w, a, 0);
    dJointSetSliderAxis(w, 0.0, 0.6, 0.8);
    dJointID j = add(s, dJointCreateSlider(s->world, 0));
    dJointAttach(j, a, b);
    dJointSetSliderAxis(j, 1.0, 0.0, 0.3);
    slide(b, 1.0, 0.0, 0.3, 0.07);
    slide(a, 0.0, 0.6, 0.8, -0.05);
    slide(b, 0.0, 0.6, 0.8, -0.05);
    dBodySetLinearVel(b, 0.1, 0.0, 0.0);
}

/* ---- universal ---------------------------------------------------------------------------- */

static void universal_pair(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 2.0, 0.1, 0.1, 0.4);
    dBodyID b = box(s, 0.0, 0.1, 1.6, 0.1, 0.1, 0.4);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 2.2);
    dJointID u = add(s, dJointCreateUniversal(s->world, 0));
    dJointAttach(u, a, b);
    dJointSetUniversalAnchor(u, 0.0, 0.05, 1.8);
    dJointSetUniversalAxis1(u, 1.0, 0.0, 0.0);
    dJointSetUniversalAxis2(u, 0.0, 1.0, 0.0);
    dJointSetUniversalParam(u, dParamLoStop, -0.3);
    dJointSetUniversalParam(u, dParamHiStop, 0.3);
    dBodySetAngularVel(b, 0.5, 1.0, 0.2);
}

static void universal_reversed_motors(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 0.6, 0.1, 0.2, 0.4);
    dJointID u = add(s, dJointCreateUniversal(s->world, 0));
    dJointAttach(u, 0, b);
    dJointSetUniversalAnchor(u, 0.0, 0.0, 1.0);
    /* reversed, axis 1 is set on the world side: (0, 1, 0) first keeps it off ODE's default
     * (1, 0, 0) on the body (parallel axes make dRFrom2Axes complain during the set-up) */
    dJointSetUniversalAxis1(u, 0.0, 1.0, 0.0);
    dJointSetUniversalAxis2(u, 1.0, 0.0, 0.0);
    dJointSetUniversalParam(u, dParamVel, 1.0);
    dJointSetUniversalParam(u, dParamFMax, 0.5);
    dJointSetUniversalParam(u, dParamVel2, -1.0);
    dJointSetUniversalParam(u, dParamFMax2, 0.2);
    dJointSetUniversalParam(u, dParamLoStop, -0.03);
    dJointSetUniversalParam(u, dParamHiStop, 0.03);
    dJointSetUniversalParam(u, dParamLoStop2, -0.02);
    dJointSetUniversalParam(u, dParamHiStop2, 0.02);
    dBodySetAngularVel(b, 1.5, -2.0, 0.0);
}

static void universal_world_pushed(scene *s)
{
    dBodyID b = box(s, 0.1, 0.0, 0.6, 0.1, 0.2, 0.4);
    dJointID u = add(s, dJointCreateUniversal(s->world, 0));
    dJointAttach(u, b, 0);
    dJointSetUniversalAnchor(u, 0.0, 0.0, 1.0);
    dJointSetUniversalAxis1(u, 1.0, 0.0, 0.0);
    dJointSetUniversalAxis2(u, 0.0, 1.0, 0.0);
    dJointSetUniversalParam(u, dParamLoStop, -0.1);
    dJointSetUniversalParam(u, dParamHiStop, 0.1);
    dJointSetUniversalParam(u, dParamVel, -2.0);
    dJointSetUniversalParam(u, dParamFMax, 1.0);
    dJointSetUniversalParam(u, dParamBounce, 0.3);
}

/* ---- hinge2 ------------------------------------------------------------------------------- */

/* a wheel on a chassis hanging from the world: suspension, steering locked at 0 (an
 * equality limit row), a motor on the axle */
static void hinge2_wheel(scene *s)
{
    dBodyID chassis = box(s, 0.0, 0.0, 1.0, 0.5, 0.3, 0.1);
    dBodyID wheel = box(s, 0.25, 0.2, 0.9, 0.1, 0.05, 0.1);
    dJointID hang = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(hang, chassis, 0);
    dJointSetBallAnchor(hang, 0.0, 0.0, 1.3);
    dJointID j = add(s, dJointCreateHinge2(s->world, 0));
    dJointAttach(j, chassis, wheel);
    dJointSetHinge2Anchor(j, 0.25, 0.2, 0.9);
    const dReal axis1[3] = {0.0, 0.0, 1.0}, axis2[3] = {0.0, 1.0, 0.0};
    dJointSetHinge2Axes(j, axis1, axis2);
    dJointSetHinge2Param(j, dParamSuspensionERP, 0.4);
    dJointSetHinge2Param(j, dParamSuspensionCFM, 0.8e-3);
    dJointSetHinge2Param(j, dParamLoStop, 0.0);
    dJointSetHinge2Param(j, dParamHiStop, 0.0);
    dJointSetHinge2Param(j, dParamVel2, 5.0);
    dJointSetHinge2Param(j, dParamFMax2, 0.2);
}

/* steering pushed into its stop by the steering motor, a tilted wheel axle */
static void hinge2_steer_pushed(scene *s)
{
    dBodyID chassis = box(s, 0.0, 0.0, 1.0, 0.5, 0.3, 0.1);
    dBodyID wheel = box(s, 0.25, 0.2, 0.9, 0.1, 0.05, 0.1);
    turn(wheel, 1, 0, 0, 0.2);
    dJointID hang = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(hang, chassis, 0);
    dJointSetBallAnchor(hang, 0.0, 0.0, 1.3);
    dJointID j = add(s, dJointCreateHinge2(s->world, 0));
    dJointAttach(j, chassis, wheel);
    dJointSetHinge2Anchor(j, 0.25, 0.2, 0.9);
    const dReal axis1[3] = {0.0, 0.0, 1.0}, axis2[3] = {0.0, 0.9, 0.3};
    dJointSetHinge2Axes(j, axis1, axis2);
    dJointSetHinge2Param(j, dParamLoStop, -0.2);
    dJointSetHinge2Param(j, dParamHiStop, 0.2);
    dJointSetHinge2Param(j, dParamVel, 1.0);
    dJointSetHinge2Param(j, dParamFMax, 0.5);
    dJointSetHinge2Param(j, dParamBounce, 0.3);
    dBodySetAngularVel(wheel, 0.0, 3.0, 0.0);
}

/* ---- fixed -------------------------------------------------------------------------------- */

static void fixed_pair(scene *s)
{
    dBodyID a = box(s, 0.3, 0.0, 1.0, 0.6, 0.1, 0.1);
    dBodyID b = box(s, 0.7, 0.05, 0.95, 0.2, 0.2, 0.2);
    turn(b, 1, 1, 0, 0.3);
    dJointID h = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(h, a, 0);
    dJointSetHingeAnchor(h, 0.0, 0.0, 1.0);
    dJointSetHingeAxis(h, 0.0, 1.0, 0.0);
    dJointID f = add(s, dJointCreateFixed(s->world, 0));
    dJointAttach(f, a, b);
    dJointSetFixed(f);
    dJointSetFixedParam(f, dParamERP, 0.5);
    dJointSetFixedParam(f, dParamCFM, 1e-7);
}

static void fixed_world(scene *s)
{
    dBodyID b = box(s, 0.2, 0.1, 1.0, 0.2, 0.1, 0.3);
    turn(b, 0, 1, 1, 0.5);
    dJointID f = add(s, dJointCreateFixed(s->world, 0));
    dJointAttach(f, b, 0);
    dJointSetFixed(f);
    dBodySetLinearVel(b, 0.1, 0.0, 0.0);
    dBodySetAngularVel(b, 0.0, 0.5, 0.0);
}

static void fixed_reversed(scene *s)
{
    dBodyID b = box(s, 0.2, 0.1, 1.0, 0.2, 0.1, 0.3);
    turn(b, 1, 0, 1, -0.5);
    dJointID f = add(s, dJointCreateFixed(s->world, 0));
    dJointAttach(f, 0, b);
    dJointSetFixed(f);
    dJointSetFixedParam(f, dParamERP, 0.3);
    dBodySetAngularVel(b, 0.5, 0.0, 0.5);
}

/* ---- PR ----------------------------------------------------------------------------------- */

static void pr_pair(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.1, 0.1, 0.5);
    dBodyID b = box(s, 0.2, 0.0, 1.0, 0.1, 0.3, 0.1);
    dJointID h = add(s, dJointCreateHinge(s->world, 0));
    dJointAttach(h, a, 0);
    dJointSetHingeAnchor(h, 0.0, 0.0, 1.25);
    dJointSetHingeAxis(h, 0.0, 1.0, 0.0);
    dJointID j = add(s, dJointCreatePR(s->world, 0));
    dJointAttach(j, a, b);
    dJointSetPRAnchor(j, 0.2, 0.05, 1.02);
    dJointSetPRAxis1(j, 1.0, 0.0, 0.0);
    dJointSetPRAxis2(j, 0.2, 1.0, 0.0); /* not perpendicular: the rows see the axial offset */
    dJointSetPRParam(j, dParamLoStop, -0.1);
    dJointSetPRParam(j, dParamHiStop, 0.1);
    dBodySetAngularVel(b, 0.0, 2.0, 0.0);
}

/* pr_pair moved 0.03 along the prismatic axis after the set-up */
static void pr_slid(scene *s)
{
    pr_pair(s);
    slide(s->body[1], 1.0, 0.0, 0.0, 0.03);
}

static void pr_world_motor(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 1.0, 0.1, 0.2, 0.1);
    turn(b, 0, 0, 1, 0.3);
    dJointID j = add(s, dJointCreatePR(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetPRAnchor(j, 0.1, 0.0, 1.0);
    dJointSetPRAxis1(j, 0.0, 0.0, 1.0);
    dJointSetPRAxis2(j, 1.0, 0.0, 0.0);
    dJointSetPRParam(j, dParamLoStop, -0.05);
    dJointSetPRParam(j, dParamVel2, 1.0);
    dJointSetPRParam(j, dParamFMax2, 0.1);
}

static void pr_reversed_pushed(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 1.0, 0.1, 0.2, 0.1);
    dJointID j = add(s, dJointCreatePR(s->world, 0));
    dJointAttach(j, 0, b);
    dJointSetPRAnchor(j, 0.0, 0.0, 1.1);
    dJointSetPRAxis1(j, 1.0, 0.0, 0.0);
    dJointSetPRAxis2(j, 0.0, 0.0, 1.0);
    dJointSetPRParam(j, dParamLoStop, -0.05);
    dJointSetPRParam(j, dParamHiStop, 0.05);
    dJointSetPRParam(j, dParamVel, 0.5);
    dJointSetPRParam(j, dParamFMax, 5.0);
    dJointSetPRParam(j, dParamLoStop2, -0.3);
    dJointSetPRParam(j, dParamHiStop2, 0.3);
    dBodySetAngularVel(b, 0.0, 0.0, 2.0);
}

/* ---- PU ----------------------------------------------------------------------------------- */

static void pu_world_pushed(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 1.0, 0.2, 0.1, 0.3);
    dJointID j = add(s, dJointCreatePU(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetPUAnchor(j, 0.0, 0.0, 1.2);
    dJointSetPUAxis1(j, 1.0, 0.0, 0.0);
    dJointSetPUAxis2(j, 0.0, 1.0, 0.0);
    dJointSetPUAxisP(j, 0.0, 0.3, 1.0);
    dJointSetPUParam(j, dParamVel3, 0.1);
    dJointSetPUParam(j, dParamFMax3, 100.0);
    dJointSetPUParam(j, dParamHiStop3, 0.03);
    dBodySetAngularVel(b, 0.3, -0.4, 0.0);
}

static void pu_pair_stops(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.1, 0.1, 0.3);
    dBodyID b = box(s, 0.0, 0.0, 0.6, 0.1, 0.1, 0.3);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 1.2);
    dJointID j = add(s, dJointCreatePU(s->world, 0));
    dJointAttach(j, a, b);
    dJointSetPUAnchor(j, 0.0, 0.0, 0.8);
    dJointSetPUAxis1(j, 1.0, 0.0, 0.0);
    dJointSetPUAxis2(j, 0.0, 1.0, 0.0);
    dJointSetPUAxisP(j, 0.0, 0.0, 1.0);
    dJointSetPUParam(j, dParamLoStop1, -0.1);
    dJointSetPUParam(j, dParamHiStop1, 0.1);
    dJointSetPUParam(j, dParamLoStop2, -0.1);
    dJointSetPUParam(j, dParamHiStop2, 0.1);
    dJointSetPUParam(j, dParamLoStop3, -0.05);
    dJointSetPUParam(j, dParamHiStop3, 0.05);
    dJointSetPUParam(j, dParamBounce3, 0.4);
    dBodySetAngularVel(b, 1.0, -1.5, 0.5);
    dBodySetLinearVel(a, 0.3, 0.0, 0.0);
}

/* pu_pair_stops moved 0.02 along the prismatic axis after the set-up */
static void pu_slid(scene *s)
{
    pu_pair_stops(s);
    slide(s->body[1], 0.0, 0.0, 1.0, -0.02);
}

static void pu_reversed_motors(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 0.8, 0.2, 0.1, 0.3);
    dJointID j = add(s, dJointCreatePU(s->world, 0));
    dJointAttach(j, 0, b);
    dJointSetPUAnchor(j, 0.0, 0.0, 1.0);
    dJointSetPUAxis1(j, 1.0, 0.0, 0.0);
    dJointSetPUAxis2(j, 0.0, 1.0, 0.0);
    dJointSetPUAxisP(j, 0.0, 0.0, 1.0);
    dJointSetPUParam(j, dParamVel1, 0.5);
    dJointSetPUParam(j, dParamFMax1, 0.2);
    dJointSetPUParam(j, dParamLoStop1, -0.02);
    dJointSetPUParam(j, dParamHiStop1, 0.03);
    dJointSetPUParam(j, dParamLoStop2, -0.04);
    dJointSetPUParam(j, dParamHiStop2, 0.01);
    dJointSetPUParam(j, dParamVel3, -0.1);
    dJointSetPUParam(j, dParamFMax3, 50.0);
    dBodySetAngularVel(b, 0.0, 0.4, 0.0);
}

/* ---- piston ------------------------------------------------------------------------------- */

static void piston_pair(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.1, 0.1, 0.4);
    dBodyID b = box(s, 0.0, 0.0, 0.6, 0.05, 0.05, 0.4);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 1.2);
    dJointID j = add(s, dJointCreatePiston(s->world, 0));
    dJointAttach(j, a, b);
    dJointSetPistonAnchor(j, 0.0, 0.0, 0.8);
    dJointSetPistonAxis(j, 0.0, 0.0, 1.0);
    dJointSetPistonParam(j, dParamLoStop, -0.2);
    dJointSetPistonParam(j, dParamHiStop, 0.05);
    dBodySetLinearVel(a, 0.3, 0.0, 0.0);
    dBodySetAngularVel(b, 0.0, 0.0, 1.5);
}

/* piston_pair moved 0.04 along the axis and turned 0.3 rad about it after the set-up */
static void piston_slid(scene *s)
{
    piston_pair(s);
    slide(s->body[1], 0.0, 0.0, 1.0, 0.04);
    const double A[3] = {0.0, 0.0, 0.8};
    swing(s->body[1], A, 0.0, 0.0, 1.0, 0.3);
}

static void piston_world_motors(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 0.8, 0.1, 0.2, 0.3);
    dJointID j = add(s, dJointCreatePiston(s->world, 0));
    dJointAttach(j, b, 0);
    dJointSetPistonAnchor(j, 0.0, 0.0, 1.0);
    dJointSetPistonAxis(j, 0.0, 0.6, 0.8);
    dJointSetPistonParam(j, dParamLoStop, -0.05);
    dJointSetPistonParam(j, dParamHiStop, 0.05);
    dJointSetPistonParam(j, dParamVel2, 2.0);
    dJointSetPistonParam(j, dParamFMax2, 0.05);
    dJointSetPistonParam(j, dParamLoStop2, -0.5);
    dJointSetPistonParam(j, dParamHiStop2, 0.5);
}

static void piston_reversed_pushed(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 0.8, 0.1, 0.2, 0.3);
    dJointID j = add(s, dJointCreatePiston(s->world, 0));
    dJointAttach(j, 0, b);
    dJointSetPistonAnchor(j, 0.0, 0.0, 1.0);
    dJointSetPistonAxis(j, 0.0, 0.0, 1.0);
    dJointSetPistonParam(j, dParamLoStop, -0.05);
    dJointSetPistonParam(j, dParamHiStop, 0.05);
    dJointSetPistonParam(j, dParamVel, -0.3);
    dJointSetPistonParam(j, dParamFMax, 40.0);
    dBodySetAngularVel(b, 0.0, 0.0, 1.0);
}

/* ---- AMotor ------------------------------------------------------------------------------- */

/* Euler mode on a box hanging from the world on a ball: a motor on the first Euler axis, stops
 * on the third */
static void amotor_euler_world(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 0.7, 0.2, 0.3, 0.4);
    dJointID ball = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(ball, b, 0);
    dJointSetBallAnchor(ball, 0.0, 0.0, 1.0);
    dJointID am = add(s, dJointCreateAMotor(s->world, 0));
    dJointAttach(am, b, 0);
    dJointSetAMotorMode(am, dAMotorEuler);
    dJointSetAMotorAxis(am, 0, 1, 0.0, 0.0, 1.0);
    dJointSetAMotorAxis(am, 2, 2, 1.0, 0.0, 0.0);
    dJointSetAMotorParam(am, dParamVel, 1.0);
    dJointSetAMotorParam(am, dParamFMax, 5.0);
    dJointSetAMotorParam(am, dParamLoStop3, -0.05);
    dJointSetAMotorParam(am, dParamHiStop3, 0.05);
    dBodySetAngularVel(b, 2.0, 0.0, 0.0);
}

/* Euler mode between two bodies: bouncing stops on all three angles, a motor on the second */
static void amotor_euler_pair(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.2, 0.2, 0.2);
    dBodyID b = box(s, 0.0, 0.0, 0.6, 0.1, 0.2, 0.3);
    turn(b, 0, 0, 1, 0.2);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 1.2);
    dJointID ball = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(ball, a, b);
    dJointSetBallAnchor(ball, 0.0, 0.0, 0.85);
    dJointID am = add(s, dJointCreateAMotor(s->world, 0));
    dJointAttach(am, a, b);
    dJointSetAMotorMode(am, dAMotorEuler);
    dJointSetAMotorAxis(am, 0, 1, 0.0, 0.0, 1.0);
    dJointSetAMotorAxis(am, 2, 2, 1.0, 0.0, 0.0);
    for (int i = 0; i < 3; ++i) {
        dJointSetAMotorParam(am, dParamLoStop + i * dParamGroup, -0.2);
        dJointSetAMotorParam(am, dParamHiStop + i * dParamGroup, 0.2);
        dJointSetAMotorParam(am, dParamBounce + i * dParamGroup, 0.3);
    }
    dJointSetAMotorParam(am, dParamVel2, 1.0);
    dJointSetAMotorParam(am, dParamFMax2, 0.3);
    dBodySetAngularVel(b, 2.0, -1.0, 3.0);
}

static void amotor_euler_reversed(scene *s)
{
    dBodyID b = box(s, 0.0, 0.0, 0.7, 0.2, 0.3, 0.4);
    turn(b, 1, 0, 0, 0.1);
    dJointID ball = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(ball, 0, b);
    dJointSetBallAnchor(ball, 0.0, 0.0, 1.0);
    dJointID am = add(s, dJointCreateAMotor(s->world, 0));
    dJointAttach(am, 0, b);
    dJointSetAMotorMode(am, dAMotorEuler);
    dJointSetAMotorAxis(am, 0, 1, 0.0, 0.0, 1.0);
    dJointSetAMotorAxis(am, 2, 2, 1.0, 0.0, 0.0);
    dJointSetAMotorParam(am, dParamLoStop, -0.2);
    dJointSetAMotorParam(am, dParamHiStop, 0.2);
    dJointSetAMotorParam(am, dParamVel3, -1.0);
    dJointSetAMotorParam(am, dParamFMax3, 2.0);
    dJointSetAMotorParam(am, dParamLoStop2, -0.1);
    dJointSetAMotorParam(am, dParamHiStop2, 0.1);
    dBodySetAngularVel(b, 1.0, 2.0, -2.0);
}

/* user mode between two bodies: axes in the world's, b1's and b2's frames; two motors, and
 * the third angle set beyond its stop with a motor pushing on */
static void amotor_user(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.2, 0.2, 0.2);
    dBodyID b = box(s, 0.0, 0.0, 0.6, 0.1, 0.2, 0.3);
    turn(a, 1, 1, 0, 0.2);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 1.2);
    dJointID ball = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(ball, a, b);
    dJointSetBallAnchor(ball, 0.0, 0.0, 0.85);
    dJointID am = add(s, dJointCreateAMotor(s->world, 0));
    dJointAttach(am, a, b);
    dJointSetAMotorMode(am, dAMotorUser);
    dJointSetAMotorNumAxes(am, 3);
    dJointSetAMotorAxis(am, 0, 0, 0.0, 0.0, 1.0);
    dJointSetAMotorAxis(am, 1, 1, 1.0, 0.0, 0.0);
    dJointSetAMotorAxis(am, 2, 2, 0.0, 1.0, 0.0);
    dJointSetAMotorParam(am, dParamVel, 1.0);
    dJointSetAMotorParam(am, dParamFMax, 0.2);
    dJointSetAMotorParam(am, dParamVel2, -1.0);
    dJointSetAMotorParam(am, dParamFMax2, 0.1);
    dJointSetAMotorAngle(am, 2, 0.5);
    dJointSetAMotorParam(am, dParamHiStop3, 0.3);
    dJointSetAMotorParam(am, dParamVel3, 1.0);
    dJointSetAMotorParam(am, dParamFMax3, 0.05);
    dBodySetAngularVel(b, 1.0, 0.5, 0.0);
}

/* ---- LMotor ------------------------------------------------------------------------------- */

static void lmotor_world(scene *s)
{
    dWorldSetGravity(s->world, 0.0, 0.0, 0.0);
    dBodyID c = box(s, 1.0, 0.0, 1.0, 0.1, 0.2, 0.3);
    dJointID lm = add(s, dJointCreateLMotor(s->world, 0));
    dJointAttach(lm, c, 0);
    dJointSetLMotorNumAxes(lm, 2);
    lmotor_axis(s, lm, 0, 0, 1.0, 0.0, 0.0);
    lmotor_axis(s, lm, 1, 1, 0.0, 1.0, 0.0);
    dJointSetLMotorParam(lm, dParamVel, 2.0);
    dJointSetLMotorParam(lm, dParamFMax, 0.5);
    dJointSetLMotorParam(lm, dParamVel2, -1.0);
    dJointSetLMotorParam(lm, dParamFMax2, 100.0);
    dBodySetAngularVel(c, 0.0, 0.0, 1.0);
}

static void lmotor_pair(scene *s)
{
    dWorldSetGravity(s->world, 0.0, 0.0, 0.0);
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.1, 0.2, 0.3);
    dBodyID b = box(s, 0.5, 0.2, 1.0, 0.3, 0.2, 0.1);
    dJointID lm = add(s, dJointCreateLMotor(s->world, 0));
    dJointAttach(lm, a, b);
    dJointSetLMotorNumAxes(lm, 3);
    lmotor_axis(s, lm, 0, 0, 1.0, 0.0, 0.0);
    lmotor_axis(s, lm, 1, 1, 0.0, 1.0, 0.0);
    lmotor_axis(s, lm, 2, 2, 0.0, 0.0, 1.0);
    dJointSetLMotorParam(lm, dParamVel, 0.5);
    dJointSetLMotorParam(lm, dParamFMax, 1.0);
    dJointSetLMotorParam(lm, dParamVel2, -0.5);
    dJointSetLMotorParam(lm, dParamFMax2, 0.1);
    dJointSetLMotorParam(lm, dParamVel3, 0.2);
    dJointSetLMotorParam(lm, dParamFMax3, 10.0);
    dBodySetAngularVel(a, 0.0, 1.0, 1.0);
    dBodySetAngularVel(b, 1.0, 0.0, -1.0);
}

static void lmotor_reversed(scene *s)
{
    dWorldSetGravity(s->world, 0.0, 0.0, 0.0);
    dBodyID c = box(s, 1.0, 0.0, 1.0, 0.1, 0.2, 0.3);
    dJointID lm = add(s, dJointCreateLMotor(s->world, 0));
    dJointAttach(lm, 0, c);
    dJointSetLMotorNumAxes(lm, 1);
    lmotor_axis(s, lm, 0, 1, 0.0, 0.6, 0.8);
    dJointSetLMotorParam(lm, dParamVel, 1.0);
    dJointSetLMotorParam(lm, dParamFMax, 0.3);
    dBodySetAngularVel(c, 1.0, 0.0, 0.0);
}

/* ---- DBall and DHinge --------------------------------------------------------------------- */

static void dball_world(scene *s)
{
    dBodyID a = box(s, 0.4, 0.0, 1.0, 0.1, 0.1, 0.1);
    dJointID d = add(s, dJointCreateDBall(s->world, 0));
    dJointAttach(d, a, 0);
    dJointSetDBallAnchor1(d, 0.4, 0.0, 1.0);
    dJointSetDBallAnchor2(d, 0.0, 0.0, 1.3);
    dBodySetLinearVel(a, 0.0, 0.4, 0.0);
}

static void dball_pair(scene *s)
{
    dBodyID a = box(s, 0.0, 0.0, 1.0, 0.1, 0.1, 0.1);
    dBodyID b = box(s, 0.4, 0.1, 0.8, 0.1, 0.2, 0.1);
    dJointID top = add(s, dJointCreateBall(s->world, 0));
    dJointAttach(top, a, 0);
    dJointSetBallAnchor(top, 0.0, 0.0, 1.1);
    dJointID d = add(s, dJointCreateDBall(s->world, 0));
    dJointAttach(d, a, b);
    dJointSetDBallAnchor1(d, 0.05, 0.0, 1.0);
    dJointSetDBallAnchor2(d, 0.4, 0.05, 0.8);
    dJointSetDBallParam(d, dParamERP, 0.4);
    dJointSetDBallParam(d, dParamCFM, 1e-6);
    dBodySetAngularVel(b, 1.0, 0.0, 2.0);
}

static void dball_reversed(scene *s)
{
    dBodyID a = box(s, 0.4, 0.0, 1.0, 0.1, 0.1, 0.1);
    dJointID d = add(s, dJointCreateDBall(s->world, 0));
    dJointAttach(d, 0, a);
    dJointSetDBallAnchor1(d, 0.0, 0.0, 1.3);
    dJointSetDBallAnchor2(d, 0.45, 0.0, 1.0);
    dBodySetLinearVel(a, 0.0, 0.4, 0.0);
}

static void dhinge_pair(scene *s)
{
    dBodyID a = box(s, 0.4, 0.0, 1.0, 0.1, 0.1, 0.1);
    dJointID d = add(s, dJointCreateDBall(s->world, 0));
    dJointAttach(d, a, 0);
    dJointSetDBallAnchor1(d, 0.4, 0.0, 1.0);
    dJointSetDBallAnchor2(d, 0.0, 0.0, 1.3);
    dBodyID b = box(s, 0.8, 0.0, 1.0, 0.1, 0.2, 0.1);
    dJointID h = add(s, dJointCreateDHinge(s->world, 0));
    dJointAttach(h, b, a);
    dJointSetDHingeAxis(h, 0.0, 1.0, 0.0);
    dJointSetDHingeAnchor1(h, 0.8, 0.0, 1.0);
    dJointSetDHingeAnchor2(h, 0.4, 0.0, 1.0);
    dBodySetLinearVel(a, 0.0, 0.4, 0.0);
}

static void dhinge_world(scene *s)
{
    dBodyID b = box(s, 0.5, 0.0, 1.0, 0.1, 0.2, 0.1);
    turn(b, 0, 0, 1, 0.3);
    dJointID h = add(s, dJointCreateDHinge(s->world, 0));
    dJointAttach(h, b, 0);
    dJointSetDHingeAxis(h, 0.0, 1.0, 0.0);
    dJointSetDHingeAnchor1(h, 0.5, 0.0, 1.0);
    dJointSetDHingeAnchor2(h, 0.1, 0.0, 1.1);
    dBodySetAngularVel(b, 0.5, 1.0, 0.0);
}

static void dhinge_reversed(scene *s)
{
    dBodyID b = box(s, 0.5, 0.0, 1.0, 0.1, 0.2, 0.1);
    dJointID h = add(s, dJointCreateDHinge(s->world, 0));
    dJointAttach(h, 0, b);
    dJointSetDHingeAxis(h, 1.0, 0.0, 0.0);
    dJointSetDHingeAnchor1(h, 0.1, 0.0, 1.1);
    dJointSetDHingeAnchor2(h, 0.5, 0.0, 1.0);
    dBodySetLinearVel(b, 0.0, 0.5, 0.0);
}

/* ---- the table ---------------------------------------------------------------------------- */

typedef struct scene_case {
    const char *name;
    scene_builder *build;
    int steps;
    unsigned expect;
    int perturb;             /* move the bodies off the assembled pose after the capture */
} scene_case;

static const scene_case g_scenes[] = {
    {"ball chain (world, pair, own ERP/CFM)", ball_chain, 150, 0, 0},
    {"ball reversed", ball_reversed, 150, 0, 0},
    {"hinge pendulum", hinge_pendulum, 150, 0, 0},
    {"hinge captured swung 0.4 rad", hinge_swung, 100, 0, 0},
    {"hinge reversed, stops", hinge_reversed_stops, 150, EXPECT_LIMIT, 0},
    {"hinge pair, bouncing stops, world ERP/CFM", hinge_elbow_bounce, 200, EXPECT_LIMIT, 0},
    {"hinge motor, saturating", hinge_motor, 100, EXPECT_MOTOR, 0},
    {"hinge motor powered at a stop", hinge_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"hinge motor pulling away from a stop (fudge)", hinge_pulled_away, 150,
     EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"hinge lostop == histop", hinge_locked, 100, 0, 0},
    {"hinge lostop > histop", hinge_stops_crossed, 100, 0, 0},
    {"slider world, bouncing stops", slider_world_stops, 150, EXPECT_LIMIT, 0},
    {"slider reversed, powered at a stop", slider_reversed_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"slider pair, motor", slider_pair_motor, 150, EXPECT_MOTOR, 0},
    {"slider pair, powered at a stop", slider_pair_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"slider captured slid", slider_slid, 100, 0, 0},
    {"universal pair, stops", universal_pair, 200, EXPECT_LIMIT, 0},
    {"universal reversed, motors, stops", universal_reversed_motors, 150,
     EXPECT_LIMIT | EXPECT_MOTOR, 0},
    {"universal world, powered at a stop", universal_world_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"hinge2 wheel, steering locked, motor", hinge2_wheel, 150, EXPECT_MOTOR, 0},
    {"hinge2 steering powered at a stop", hinge2_steer_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"fixed pair, own ERP/CFM", fixed_pair, 150, 0, 0},
    {"fixed world", fixed_world, 100, 0, 0},
    {"fixed reversed", fixed_reversed, 100, 0, 0},
    {"PR pair, stops", pr_pair, 150, EXPECT_LIMIT, 0},
    {"PR captured slid", pr_slid, 100, 0, 0},
    {"PR world, rotoide motor, stop", pr_world_motor, 150, EXPECT_LIMIT | EXPECT_MOTOR, 0},
    {"PR reversed, powered at a stop", pr_reversed_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"PU world, powered at a stop", pu_world_pushed, 200, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"PU pair, stops", pu_pair_stops, 150, EXPECT_LIMIT, 0},
    {"PU captured slid", pu_slid, 100, 0, 0},
    {"PU reversed, motors, stops", pu_reversed_motors, 150, EXPECT_LIMIT | EXPECT_MOTOR, 0},
    {"piston pair, stops", piston_pair, 150, EXPECT_LIMIT, 0},
    {"piston captured slid and turned", piston_slid, 100, 0, 0},
    {"piston world, motor, stops", piston_world_motors, 150, EXPECT_LIMIT | EXPECT_MOTOR, 0},
    {"piston reversed, powered at a stop", piston_reversed_pushed, 150, EXPECT_LIMIT | EXPECT_PUSH, 0},
    {"AMotor Euler world, motor, stops", amotor_euler_world, 200, EXPECT_LIMIT | EXPECT_MOTOR, 0},
    {"AMotor Euler pair, bouncing stops", amotor_euler_pair, 200, EXPECT_LIMIT, 0},
    {"AMotor Euler reversed", amotor_euler_reversed, 200, EXPECT_LIMIT, 0},
    {"AMotor user, powered at a stop", amotor_user, 150, EXPECT_MOTOR | EXPECT_PUSH, 0},
    {"LMotor world", lmotor_world, 100, EXPECT_MOTOR, 0},
    {"LMotor pair, three relativities", lmotor_pair, 100, EXPECT_MOTOR, 0},
    {"LMotor reversed", lmotor_reversed, 100, EXPECT_MOTOR, 0},
    {"DBall world", dball_world, 150, 0, 0},
    {"DBall pair, own ERP/CFM", dball_pair, 150, 0, 0},
    {"DBall reversed", dball_reversed, 150, 0, 0},
    {"DHinge pair", dhinge_pair, 150, 0, 0},
    {"DHinge world", dhinge_world, 150, 0, 0},
    {"DHinge reversed", dhinge_reversed, 150, 0, 0},
    /* every body moved and turned off its assembled pose after the capture: large errors in
     * every row's c, axis 2 off axis 1, both builders from the same (set-up) state */
    {"ball chain, perturbed", ball_chain, 100, 0, 1},
    {"hinge pair, perturbed", hinge_elbow_bounce, 100, EXPECT_LIMIT, 1},
    {"slider world, perturbed", slider_world_stops, 100, EXPECT_LIMIT, 1},
    {"slider pair, perturbed", slider_pair_motor, 100, EXPECT_MOTOR, 1},
    {"universal pair, perturbed", universal_pair, 100, 0, 1},
    {"hinge2 wheel, perturbed", hinge2_wheel, 100, EXPECT_MOTOR, 1},
    {"fixed pair, perturbed", fixed_pair, 100, 0, 1},
    {"fixed reversed, perturbed", fixed_reversed, 100, 0, 1},
    {"PR pair, perturbed", pr_pair, 100, 0, 1},
    {"PR reversed, perturbed", pr_reversed_pushed, 100, EXPECT_LIMIT, 1},
    {"PU pair, perturbed", pu_pair_stops, 100, EXPECT_LIMIT, 1},
    {"PU world, perturbed", pu_world_pushed, 100, EXPECT_LIMIT, 1},
    {"piston pair, perturbed", piston_pair, 100, 0, 1},
    {"piston world, perturbed", piston_world_motors, 100, EXPECT_LIMIT, 1},
    {"AMotor Euler pair, perturbed", amotor_euler_pair, 100, EXPECT_LIMIT, 1},
    {"DBall pair, perturbed", dball_pair, 100, 0, 1},
    {"DHinge pair, perturbed", dhinge_pair, 100, 0, 1},
    {"DHinge world, perturbed", dhinge_world, 100, 0, 1},
};
#define SCENE_COUNT ((int)(sizeof g_scenes / sizeof g_scenes[0]))

/* ---- comparing the two builders ----------------------------------------------------------- */

typedef struct tally {
    long rows;               /* rows compared */
    double max_diff;         /* largest entry difference, relative to max(1, |value|) */
    double max_force_diff;   /* largest difference of the external motor forces (N, N m) */
    unsigned seen;           /* EXPECT_* met */
} tally;

static double entry_diff(double a, double b)
{
    if (isinf(a) || isinf(b)) return a == b ? 0.0 : INFINITY;
    return fabs(a - b) / fmax(1.0, fabs(a));
}

typedef struct accumulators {
    double force[3], torque[3];
} accumulators;

static void read_and_zero(dBodyID b, accumulators *acc)
{
    if (!b) return;
    memcpy(acc->force, dBodyGetForce(b), sizeof acc->force);
    memcpy(acc->torque, dBodyGetTorque(b), sizeof acc->torque);
    dBodySetForce(b, 0.0, 0.0, 0.0);
    dBodySetTorque(b, 0.0, 0.0, 0.0);
}

static void restore(dBodyID b, const accumulators *acc)
{
    if (!b) return;
    dBodySetForce(b, acc->force[0], acc->force[1], acc->force[2]);
    dBodySetTorque(b, acc->torque[0], acc->torque[1], acc->torque[2]);
}

static double force_diff(const accumulators a[2], const accumulators b[2])
{
    double d = 0.0;
    for (int e = 0; e < 2; ++e)
        for (int i = 0; i < 3; ++i) {
            d = fmax(d, fabs(a[e].force[i] - b[e].force[i]));
            d = fmax(d, fabs(a[e].torque[i] - b[e].torque[i]));
        }
    return d;
}

/* Both builders on one joint at the current state; differences into t, failures reported
 * with the scene, step, joint and row. */
static void compare_joint(const char *name, int step, scene *s, int k, tally *t)
{
    dJointID j = s->joint[k];
    dBodyID d0 = dJointGetBody(j, 0), d1 = dJointGetBody(j, 1);
    dBodyID b[2] = {d0 ? d0 : d1, d0 ? d1 : NULL}; /* ODE's internal order */
    const double fps = 1.0 / H, erp = dWorldGetERP(s->world), cfm = dWorldGetCFM(s->world);
    accumulators saved[2], ode_push[2], pub_push[2];
    memset(saved, 0, sizeof saved);
    memset(ode_push, 0, sizeof ode_push);
    memset(pub_push, 0, sizeof pub_push);
    pp_joint_row ode[6], pub[6], pure[6];
    for (int e = 0; e < 2; ++e) read_and_zero(b[e], &saved[e]);
    const int m_ode = pp_ode_joint_rows(j, fps, erp, cfm, ode);
    for (int e = 0; e < 2; ++e) read_and_zero(b[e], &ode_push[e]);
    const int m_pub = pp_public_joint_rows(&s->capture[k], j, fps, erp, cfm, pub);
    for (int e = 0; e < 2; ++e) read_and_zero(b[e], &pub_push[e]);
    pp_joint_wrench w;
    const int m_pure = pp_public_joint_rebuild(&s->capture[k], j, fps, erp, cfm, pure, &w);
    for (int e = 0; e < 2; ++e) restore(b[e], &saved[e]);

    /* the side-effect-free rebuild returns exactly what pp_public_joint_rows applied */
    ck_assert_int_eq(m_pure, m_pub);
    accumulators from_wrench[2];
    for (int e = 0; e < 2; ++e) {
        memcpy(from_wrench[e].force, w.force[e], sizeof from_wrench[e].force);
        memcpy(from_wrench[e].torque, w.torque[e], sizeof from_wrench[e].torque);
    }
    ck_assert_msg(force_diff(from_wrench, pub_push) == 0.0, "%s: wrench != applied force", name);
    for (int r = 0; r < m_pub; ++r)
        ck_assert_msg(memcmp(pure[r].J, pub[r].J, sizeof pub[r].J) == 0 && pure[r].c == pub[r].c,
                      "%s: rebuild and rows differ", name);

    if (!pp_ode_joint_rows_available()) {
        ck_assert_msg(m_pub >= 0 && m_pub <= 6, "%s: public rows m = %d", name, m_pub);
        return;
    }
    ck_assert_msg(m_ode == m_pub, "%s step %d joint %d (type %d): getInfo1 m = %d, public m = %d",
                  name, step, k, dJointGetType(j), m_ode, m_pub);
    for (int r = 0; r < m_ode; ++r) {
        const double *a[5] = {&ode[r].c, &ode[r].cfm, &ode[r].lo, &ode[r].hi, NULL};
        const double *p[5] = {&pub[r].c, &pub[r].cfm, &pub[r].lo, &pub[r].hi, NULL};
        for (int e = 0; e < 12; ++e) {
            const double d = entry_diff(ode[r].J[e], pub[r].J[e]);
            t->max_diff = fmax(t->max_diff, d);
            ck_assert_msg(d <= TOL, "%s step %d joint %d row %d: J[%d] ODE %.17g public %.17g",
                          name, step, k, r, e, ode[r].J[e], pub[r].J[e]);
        }
        static const char *field[4] = {"c", "cfm", "lo", "hi"};
        for (int e = 0; e < 4; ++e) {
            const double d = entry_diff(*a[e], *p[e]);
            t->max_diff = fmax(t->max_diff, d);
            ck_assert_msg(d <= TOL, "%s step %d joint %d row %d: %s ODE %.17g public %.17g", name,
                          step, k, r, field[e], *a[e], *p[e]);
        }
        if ((ode[r].lo == 0.0 && isinf(ode[r].hi)) || (ode[r].hi == 0.0 && isinf(ode[r].lo)))
            t->seen |= EXPECT_LIMIT;
        if (isfinite(ode[r].lo) && isfinite(ode[r].hi) && ode[r].lo < 0.0 && ode[r].hi > 0.0)
            t->seen |= EXPECT_MOTOR;
    }
    t->rows += m_ode;
    const double fd = force_diff(ode_push, pub_push);
    t->max_force_diff = fmax(t->max_force_diff, fd);
    ck_assert_msg(fd <= TOL, "%s step %d joint %d: powered-at-stop force differs by %g", name,
                  step, k, fd);
    accumulators zero[2];
    memset(zero, 0, sizeof zero);
    if (force_diff(ode_push, zero) > 0.0) t->seen |= EXPECT_PUSH;
}

/* ODE creates its step context in the first dWorldStep, and getInfo2 of a motor powered at a
 * stop dereferences it: a world whose joints are called before any step needs one (an empty
 * step, before the bodies exist, moves nothing). */
static dWorldID world_with_step_context(void)
{
    dWorldID w = dWorldCreate();
    dWorldStep(w, H);
    dWorldSetGravity(w, 0.0, 0.0, -9.81);
    return w;
}

static void capture_all(scene *s)
{
    for (int k = 0; k < s->joints; ++k) {
        pp_joint_capture_take(&s->capture[k], s->joint[k]);
        for (int a = 0; a < 3; ++a)
            if (s->lmotor_rel[k][a] >= 0)
                pp_joint_capture_lmotor_rel(&s->capture[k], a, s->lmotor_rel[k][a]);
    }
}

/* Every body shifted by ~1 cm and turned by 0.05 rad about a skew axis, each differently;
 * the first body's quaternion negated (the same rotation: qerr.w < 0 in ORIENT). */
static void perturb(scene *s)
{
    for (int i = 0; i < s->bodies; ++i) {
        const dReal *p = dBodyGetPosition(s->body[i]);
        const double A[3] = {p[0], p[1], p[2]};
        swing(s->body[i], A, 1.0, i + 1.0, 2.0, 0.05);
        dBodySetPosition(s->body[i], A[0] + 0.01 * sin(i + 1.0), A[1] + 0.01 * cos(2.0 * i + 1.0),
                         A[2] + 0.01 * sin(3.0 * i + 2.0));
    }
    const dReal *q = dBodyGetQuaternion(s->body[0]);
    const dQuaternion minus = {-q[0], -q[1], -q[2], -q[3]};
    dBodySetQuaternion(s->body[0], minus);
}

static tally run_scene(const scene_case *sc)
{
    scene s;
    memset(&s, 0, sizeof s);
    s.world = world_with_step_context();
    sc->build(&s);
    capture_all(&s);
    if (sc->perturb) perturb(&s);
    tally t = {0, 0.0, 0.0, 0};
    for (int step = 0; step <= sc->steps; ++step) {
        for (int k = 0; k < s.joints; ++k) compare_joint(sc->name, step, &s, k, &t);
        dWorldStep(s.world, H);
    }
    dWorldDestroy(s.world);
    return t;
}

static void setup(void)
{
    dInitODE2(0);
}

static void teardown(void)
{
    dCloseODE();
}

START_TEST(test_public_rows_match_ode)
{
    const scene_case *sc = &g_scenes[_i];
    tally t = run_scene(sc);
    printf("%-48s %4d steps %6ld rows  max diff %.2e  motor force diff %.2e%s%s%s\n", sc->name,
           sc->steps, t.rows, t.max_diff, t.max_force_diff, t.seen & EXPECT_LIMIT ? "  limit" : "",
           t.seen & EXPECT_MOTOR ? "  motor" : "", t.seen & EXPECT_PUSH ? "  pushed" : "");
    if (pp_ode_joint_rows_available())
        ck_assert_msg((t.seen & sc->expect) == sc->expect,
                      "%s: the trajectory never showed what the scene is for (%u of %u)", sc->name,
                      t.seen & sc->expect, sc->expect);
}
END_TEST

/* Plane2D and Transmission cannot be rebuilt from the public API: -1, bodies untouched. */
START_TEST(test_unsupported_types)
{
    dWorldID w = world_with_step_context();
    dBodyID a = dBodyCreate(w), b = dBodyCreate(w);
    dBodySetPosition(b, 0.3, 0.0, 0.0);
    dJointID plane = dJointCreatePlane2D(w, 0);
    dJointAttach(plane, a, 0);
    dJointID gear = dJointCreateTransmission(w, 0);
    dJointAttach(gear, a, b);
    dJointSetTransmissionMode(gear, dTransmissionParallelAxes);
    dJointSetTransmissionAxis(gear, 0.0, 1.0, 0.0);
    dJointSetTransmissionAnchor1(gear, 0.0, 0.0, 0.0);
    dJointSetTransmissionAnchor2(gear, 0.3, 0.0, 0.0);
    const dJointID joints[2] = {plane, gear};
    for (int k = 0; k < 2; ++k) {
        pp_joint_capture cap;
        memset(&cap, 0, sizeof cap);
        pp_joint_row rows[6];
        ck_assert_int_eq(pp_public_joint_rows(&cap, joints[k], 1.0 / H, 0.2, 1e-10, rows), -1);
        pp_joint_wrench wrench;
        ck_assert_int_eq(pp_public_joint_rebuild(&cap, joints[k], 1.0 / H, 0.2, 1e-10, rows,
                                                 &wrench), -1);
        ck_assert_int_eq(wrench.active, 0);
    }
    for (int i = 0; i < 3; ++i) ck_assert(dBodyGetForce(a)[i] == 0.0 && dBodyGetTorque(a)[i] == 0.0);
    dWorldDestroy(w);
}
END_TEST

/* An LMotor with a motor on an axis whose relativity was not declared: -1 (ODE 0.16 has no
 * getter for it); once declared, the rows. A capture of another joint is refused. */
START_TEST(test_lmotor_needs_declared_relativity)
{
    dWorldID w = world_with_step_context();
    dBodyID a = dBodyCreate(w);
    dJointID lm = dJointCreateLMotor(w, 0);
    dJointAttach(lm, a, 0);
    dJointSetLMotorNumAxes(lm, 1);
    dJointSetLMotorAxis(lm, 0, 1, 1.0, 0.0, 0.0);
    dJointSetLMotorParam(lm, dParamFMax, 1.0);
    pp_joint_capture cap;
    memset(&cap, 0, sizeof cap);
    pp_joint_row rows[6];
    ck_assert_int_eq(pp_public_joint_rows(&cap, lm, 1.0 / H, 0.2, 1e-10, rows), -1);
    pp_joint_capture_lmotor_rel(&cap, 0, 1);
    ck_assert_int_eq(pp_public_joint_rows(&cap, lm, 1.0 / H, 0.2, 1e-10, rows), 1);
    dJointID other = dJointCreateBall(w, 0);
    dJointAttach(other, a, 0);
    pp_joint_wrench wrench;
    ck_assert_int_eq(pp_public_joint_rebuild(&cap, other, 1.0 / H, 0.2, 1e-10, rows, &wrench), -1);
    dWorldDestroy(w);
}
END_TEST

/* A joint attached again (ODE recomputes its hidden state at that pose): pp_public_joint_rows
 * sees the new attachment and takes the capture again, so its rows stay ODE's. A hinge on a
 * world pendulum, re-attached reversed after 30 steps, then between two bodies after 60. */
START_TEST(test_reattach_recaptures)
{
    if (!pp_ode_joint_rows_available()) return;
    scene s;
    memset(&s, 0, sizeof s);
    s.world = world_with_step_context();
    hinge_pendulum(&s);
    dJointID j = s.joint[0];
    dJointSetHingeParam(j, dParamLoStop, -0.3);
    dJointSetHingeParam(j, dParamHiStop, 0.3);
    dBodyID other = box(&s, 0.0, 0.3, 1.0, 0.1, 0.1, 0.1);
    capture_all(&s);
    tally t = {0, 0.0, 0.0, 0};
    for (int step = 0; step < 100; ++step) {
        if (step == 30) dJointAttach(j, 0, s.body[0]);
        if (step == 60) dJointAttach(j, s.body[0], other);
        compare_joint("re-attached hinge", step, &s, 0, &t);
        dWorldStep(s.world, H);
    }
    ck_assert_ptr_eq(s.capture[0].body2, other);
    dWorldDestroy(s.world);
}
END_TEST

/* The largest difference between the two builders' rows of one joint at the current state
 * (the capture taken now). */
static double rows_difference(dWorldID w, dJointID j)
{
    pp_joint_capture cap;
    memset(&cap, 0, sizeof cap);
    pp_joint_capture_take(&cap, j);
    pp_joint_row ode[6], pub[6];
    const int m = pp_ode_joint_rows(j, 1.0 / H, dWorldGetERP(w), dWorldGetCFM(w), ode);
    ck_assert_int_eq(pp_public_joint_rows(&cap, j, 1.0 / H, dWorldGetERP(w), dWorldGetCFM(w), pub),
                     m);
    double d = 0.0;
    for (int r = 0; r < m; ++r) {
        for (int e = 0; e < 12; ++e) d = fmax(d, entry_diff(ode[r].J[e], pub[r].J[e]));
        d = fmax(d, entry_diff(ode[r].c, pub[r].c));
    }
    return d;
}

/* The capture's limit (docs/joints-public-rows.md "When the rows are exact"): a joint that is not
 * assembled when captured carries its error into the rows. A fixed joint whose body was displaced
 * by (0.01, 0.01, -0.01) m after dJointSetFixed: the rows' c differ by k = fps erp times the
 * displacement. A slider whose body spun for 200 dWorldStep steps: captured then, the rows differ
 * by what ERP had not yet corrected. Measured and printed; asserted for the displaced joint, whose
 * error is known. */
START_TEST(test_capture_of_a_drifted_joint)
{
    if (!pp_ode_joint_rows_available()) return;
    dWorldID w = world_with_step_context();
    dBodyID a = dBodyCreate(w), b = dBodyCreate(w), c = dBodyCreate(w);
    dMass m;
    dMassSetBox(&m, 600.0, 0.2, 0.2, 0.2);
    dBodySetMass(a, &m);
    dBodySetMass(b, &m);
    dBodySetMass(c, &m);
    dBodySetPosition(a, 0.0, 0.0, 1.0);
    dBodySetPosition(b, 0.4, 0.0, 1.0);
    dBodySetPosition(c, 1.0, 0.0, 1.0);
    dJointID f = dJointCreateFixed(w, 0);
    dJointAttach(f, a, b);
    dJointSetFixed(f);
    dBodySetPosition(b, 0.41, 0.01, 0.99);
    const double fixed_diff = rows_difference(w, f);
    dJointID sl = dJointCreateSlider(w, 0);
    dJointAttach(sl, c, 0);
    dJointSetSliderAxis(sl, 0.0, 0.6, 0.8);
    dBodySetAngularVel(c, 2.0, 0.0, 1.0);
    for (int i = 0; i < 200; ++i) dWorldStep(w, H);
    const double slider_diff = rows_difference(w, sl);
    printf("capture of a drifted joint: fixed displaced by 0.017 m: rows differ by up to %.2e\n"
           "capture of a drifted joint: slider after 200 ODE steps: rows differ by up to %.2e\n",
           fixed_diff, slider_diff);
    /* c of a linear row: k * 0.01 = 100 * 0.2 * 0.01 = 0.2, relative to max(1, |c|) */
    ck_assert_double_eq_tol(fixed_diff, 0.2, 1e-9);
    dWorldDestroy(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("joint_rows_public");
    TCase *tc = tcase_create("public vs getInfo2");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_public_rows_match_ode, 0, SCENE_COUNT);
    tcase_add_test(tc, test_unsupported_types);
    tcase_add_test(tc, test_lmotor_needs_declared_relativity);
    tcase_add_test(tc, test_reattach_recaptures);
    tcase_add_test(tc, test_capture_of_a_drifted_joint);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
