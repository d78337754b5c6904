/*
 * crash: a car driven into a wall of boxes, in the spirit of ODE 0.16's demo_crash, headless
 * and with no user at the keyboard: the stock loop (dSpaceCollide with a near callback that
 * makes soft contact joints, dWorldQuickStep with 20 iterations, dJointGroupEmpty), the
 * demo's own per-step joint commands and its own rule that puts resting wall boxes to sleep
 * (dBodyDisable). ODE only: no pegplus header. Run it as it is, or under
 * `pegplus-run --model standard|peg`.
 *
 * The scene, with the demo's numbers (gravity 1.5 m/s^2 and h = 0.05 s, world ERP 0.8 and
 * CFM 1e-5):
 *  - the car: a box chassis 3.5 x 2.5 x 1 m of 0.5 kg with its centre 1 m up, a second 0.5 kg
 *    body with no geom 5 m below it on a fixed joint (the demo's centre-of-mass offset, which
 *    keeps the car from rolling over), and four sphere wheels of radius 0.5 m and 1 kg at the
 *    chassis' lower side edges, each on a hinge2 joint (axis 1 vertical: steering, held
 *    straight by a motor of unlimited force towards the demo's `turn` = 0; axis 2 the axle,
 *    along y), suspension ERP 0.8 and CFM 1e-5. The rear wheels are driven: axis 2's motor
 *    runs at SPEED rad/s with at most FMAX N m (the demo's keys set that speed on every wheel;
 *    here only the rear ones drive, the front ones roll freely), so the car drives along -x.
 *  - the wall: the demo's brick pyramid, rows of 1 m boxes of 1 kg exactly touching, the
 *    lowest row `wide` boxes long and each row above one box shorter and offset by half a
 *    box, `high` rows (the demo: 12 and 10, 75 boxes); its near face at x = WALL_FACE.
 *  - contacts (the demo's callback): Coulomb friction mu = 20 for a pair with a sphere,
 *    0.5 otherwise, soft ERP 0.8 and CFM 0.01, slip 0 (`hard`: no soft ERP/CFM: rigid
 *    contacts, for the pegplus models' no-overlap promise).
 *
 * Prints every body's final state and the figures of report.h, and what the checks of a driven
 * scene need (integration_tests/dropin/run_program.sh --driven): the work of the car's joints
 * over the run (its motors are the scene's only source of energy: contacts must not add any,
 * so energy_final - energy_initial <= joint_work), how close the car's front came to the
 * wall's initial face (negative: it pushed into the wall), how many wall boxes it moved (by
 * more than MOVED m from where they were built) and the most wall boxes asleep at once (the
 * demo's own dBodyDisable rule; the car's push wakes them).
 *
 * The wall is small by default (one row of three boxes): the pegplus models assemble an
 * island's LCP dense, and the island of a car pushing a brick pyramid grows past what they
 * solve in seconds (README "Known problems", large islands). `crash 200 12 10` is the demo's
 * wall.
 *
 * usage: crash [steps [wide [high]]] [hard]   (default 200 steps of 0.05 s, wall 3 x 1)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ode/ode.h>

#include "report.h"

#define GRAVITY 1.5
#define LENGTH 3.5       /* chassis, m */
#define WIDTH 2.5
#define HEIGHT 1.0
#define RADIUS 0.5       /* wheels */
#define START_Z 1.0      /* chassis centre */
#define CHASSIS_MASS 0.5 /* and the same again in the offset body */
#define WHEEL_MASS 1.0
#define COM_OFFSET -5.0
#define FMAX 25.0        /* N m */
#define SPEED 3.0        /* rad/s: the demo's `speed` after ten presses of 'a' */
#define BOX 1.0          /* wall box side, m, and mass, kg */
#define WALL_FACE -7.5   /* m */
#define MOVED 0.05       /* m */
#define DISABLE_THRESHOLD 0.008 /* the demo's: squared speed below which a wall box may sleep */
#define DISABLE_STEPS 10
#define MAX_BODIES 256
#define MAX_CONTACTS 4

static dWorldID world;
static dSpaceID space;
static dJointGroupID contact_group;
static dBodyID bodies[MAX_BODIES];
static int body_count;
#define CAR_BODIES 6 /* bodies[0..5]: chassis, offset body, four wheels */
#define CAR_JOINTS 5 /* car_joint[0..3]: the wheels' hinge2s, [4] the fixed joint */
static dJointID car_joint[CAR_JOINTS], *wheel_joint = car_joint;
static dJointFeedback car_feedback[CAR_JOINTS];
static dGeomID car_geom[5];
static int wall_first, wall_count; /* the wall's bodies in bodies[] */
static double wall_start[MAX_BODIES][3];
static int wall_still_steps[MAX_BODIES];
static int hard;

static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    (void)data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (b1 && b2 && dAreConnected(b1, b2)) return;
    dContact contact[MAX_CONTACTS];
    int n = dCollide(o1, o2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface.mode = dContactSlip1 | dContactSlip2 | dContactApprox1;
        if (!hard) contact[i].surface.mode |= dContactSoftERP | dContactSoftCFM;
        if (dGeomGetClass(o1) == dSphereClass || dGeomGetClass(o2) == dSphereClass)
            contact[i].surface.mu = 20;
        else
            contact[i].surface.mu = 0.5;
        contact[i].surface.slip1 = 0.0;
        contact[i].surface.slip2 = 0.0;
        contact[i].surface.soft_erp = 0.8;
        contact[i].surface.soft_cfm = 0.01;
        dJointID c = dJointCreateContact(world, contact_group, &contact[i]);
        dJointAttach(c, b1, b2);
    }
}

static int car_body_index(dBodyID b)
{
    for (int i = 0; i < CAR_BODIES; ++i)
        if (bodies[i] == b) return i;
    abort();
}

static dBodyID add_body(const dMass *m, double x, double y, double z)
{
    dBodyID b = dBodyCreate(world);
    dBodySetMass(b, m);
    dBodySetPosition(b, x, y, z);
    bodies[body_count++] = b;
    return b;
}

static void make_car(void)
{
    dMass m;
    dMassSetBox(&m, 1, LENGTH, WIDTH, HEIGHT);
    dMassAdjust(&m, CHASSIS_MASS);
    dBodyID chassis = add_body(&m, 0, 0, START_Z);
    car_geom[0] = dCreateBox(space, LENGTH, WIDTH, HEIGHT);
    dGeomSetBody(car_geom[0], chassis);
    /* the centre-of-mass offset: the chassis' twin, no geom, on a fixed joint */
    dBodyID offset = add_body(&m, 0, 0, START_Z + COM_OFFSET);
    dJointID fixed = dJointCreateFixed(world, 0);
    dJointAttach(fixed, chassis, offset);
    dJointSetFixed(fixed);
    car_joint[4] = fixed;
    dJointSetFeedback(fixed, &car_feedback[4]);
    /* front left, front right (x > 0), rear left, rear right; the car drives along -x */
    const double wx = 0.4 * LENGTH - 0.5 * RADIUS, wy = 0.5 * WIDTH;
    const double at[4][2] = {{wx, wy}, {wx, -wy}, {-wx, wy}, {-wx, -wy}};
    for (int i = 0; i < 4; ++i) {
        dMassSetSphere(&m, 1, RADIUS);
        dMassAdjust(&m, WHEEL_MASS);
        dBodyID wheel = add_body(&m, at[i][0], at[i][1], START_Z - 0.5 * HEIGHT);
        dQuaternion q;
        dQFromAxisAndAngle(q, 1, 0, 0, M_PI * 0.5);
        dBodySetQuaternion(wheel, q);
        car_geom[1 + i] = dCreateSphere(space, RADIUS);
        dGeomSetBody(car_geom[1 + i], wheel);
        dJointID j = wheel_joint[i] = dJointCreateHinge2(world, 0);
        dJointAttach(j, chassis, wheel);
        dJointSetFeedback(j, &car_feedback[i]);
        const dReal *a = dBodyGetPosition(wheel);
        dJointSetHinge2Anchor(j, a[0], a[1], a[2]);
        const dReal up[3] = {0, 0, 1}, down[3] = {0, 0, -1}, axle[3] = {0, 1, 0};
        dJointSetHinge2Axes(j, i < 2 ? up : down, axle);
        dJointSetHinge2Param(j, dParamSuspensionERP, 0.8);
        dJointSetHinge2Param(j, dParamSuspensionCFM, 1e-5);
        dJointSetHinge2Param(j, dParamVel2, 0);
        dJointSetHinge2Param(j, dParamFMax2, i >= 2 ? FMAX : 0.0);
    }
}

/* The demo's pyramid: row k (from 0 at the floor) centred on y = 0 with wide - k boxes. */
static void make_wall(int wide, int high)
{
    wall_first = body_count;
    for (int row = 0; row < high && row < wide; ++row) {
        const double z = (row + 0.5) * BOX;
        const int n = wide - row;
        for (int i = 0; i < n && body_count < MAX_BODIES; ++i) {
            const double y = (i - 0.5 * (n - 1)) * BOX;
            dMass m;
            dMassSetBox(&m, 1, BOX, BOX, BOX);
            dMassAdjust(&m, BOX);
            dBodyID b = add_body(&m, WALL_FACE - 0.5 * BOX, y, z);
            dGeomSetBody(dCreateBox(space, BOX, BOX, BOX), b);
            memcpy(wall_start[body_count - 1 - wall_first], dBodyGetPosition(b), sizeof(double) * 3);
        }
    }
    wall_count = body_count - wall_first;
}

/* The demo's commands before every step: steering held at `turn` = 0 by a motor of unlimited
 * force, the rear wheels' motors at SPEED, and the car's bodies awake. */
static void drive(void)
{
    for (int i = 0; i < 4; ++i) {
        dJointID j = wheel_joint[i];
        const double turn = 0.0, current = dJointGetHinge2Angle1(j);
        dJointSetHinge2Param(j, dParamVel, (turn - current) * 1.0);
        dJointSetHinge2Param(j, dParamFMax, dInfinity);
        dJointSetHinge2Param(j, dParamVel2, SPEED);
        dJointSetHinge2Param(j, dParamFMax2, i >= 2 ? FMAX : 0.0);
        dBodyEnable(dJointGetBody(j, 0));
        dBodyEnable(dJointGetBody(j, 1));
    }
}

/* The work of the car's joints over a step (the motors', the suspension's and the
 * constraints'; ideal constraint rows do none): the force and torque each joint applied to its
 * two bodies during the step (dJointFeedback) times their mean velocity over the step. A body
 * whose velocity a step changes by h M^-1 sum F gains (v0 + v1)/2 . h sum F of kinetic
 * energy: each force's share is h F . (v0 + v1)/2. */
static double joint_work(const double *before, double h)
{
    double work = 0.0;
    for (int i = 0; i < CAR_JOINTS; ++i) {
        const dJointFeedback *f = &car_feedback[i];
        for (int side = 0; side < 2; ++side) {
            dBodyID b = dJointGetBody(car_joint[i], side);
            if (!b) continue;
            const double *v0 = &before[6 * car_body_index(b)];
            const dReal *force = side ? f->f2 : f->f1, *torque = side ? f->t2 : f->t1;
            const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
            for (int k = 0; k < 3; ++k)
                work += 0.5 * h * (force[k] * (v0[k] + v[k]) + torque[k] * (v0[3 + k] + w[k]));
        }
    }
    return work;
}

/* The demo's sleep rule for wall boxes: still (squared linear and angular speed at most
 * DISABLE_THRESHOLD) for more than DISABLE_STEPS steps in a row. */
static void sleep_wall(void)
{
    for (int i = 0; i < wall_count; ++i) {
        dBodyID b = bodies[wall_first + i];
        if (!dBodyIsEnabled(b)) continue;
        const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
        int still = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] <= DISABLE_THRESHOLD &&
                    w[0] * w[0] + w[1] * w[1] + w[2] * w[2] <= DISABLE_THRESHOLD;
        wall_still_steps[i] = still ? wall_still_steps[i] + 1 : 0;
        if (wall_still_steps[i] > DISABLE_STEPS) dBodyDisable(b);
    }
}

/* The car's foremost point (least x of its geoms' bounding boxes). */
static double car_front(void)
{
    double x = dInfinity;
    for (int i = 0; i < 5; ++i) {
        dReal aabb[6];
        dGeomGetAABB(car_geom[i], aabb);
        if (aabb[0] < x) x = aabb[0];
    }
    return x;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 200;
    int wide = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 3;
    int high = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 1;
    for (int a = 1; a < argc; ++a) hard |= !strcmp(argv[a], "hard");
    const double h = 0.05;
    dInitODE2(0);
    world = dWorldCreate();
    space = dSweepAndPruneSpaceCreate(0, dSAP_AXES_XYZ);
    contact_group = dJointGroupCreate(0);
    dWorldSetGravity(world, 0, 0, -GRAVITY);
    dWorldSetCFM(world, 1e-5);
    dWorldSetERP(world, 0.8);
    dWorldSetQuickStepNumIterations(world, 20);
    dCreatePlane(space, 0, 0, 1, 0);
    make_car();
    make_wall(wide, high);

    double e0 = report_energy(bodies, body_count, GRAVITY, NULL), work = 0.0;
    double before[6 * CAR_BODIES];
    double closest = car_front() - WALL_FACE;
    int asleep_max = 0;
    for (int i = 0; i < steps; ++i) {
        drive();
        for (int b = 0; b < CAR_BODIES; ++b) {
            memcpy(&before[6 * b], dBodyGetLinearVel(bodies[b]), 3 * sizeof(double));
            memcpy(&before[6 * b + 3], dBodyGetAngularVel(bodies[b]), 3 * sizeof(double));
        }
        dSpaceCollide(space, 0, near_callback);
        dWorldQuickStep(world, h);
        dJointGroupEmpty(contact_group);
        work += joint_work(before, h);
        sleep_wall();
        double gap = car_front() - WALL_FACE;
        if (gap < closest) closest = gap;
        int asleep = 0;
        for (int k = 0; k < wall_count; ++k) asleep += !dBodyIsEnabled(bodies[wall_first + k]);
        if (asleep > asleep_max) asleep_max = asleep;
    }
    int moved = 0;
    for (int i = 0; i < wall_count; ++i) {
        const dReal *x = dBodyGetPosition(bodies[wall_first + i]);
        double d = 0.0;
        for (int k = 0; k < 3; ++k) d += (x[k] - wall_start[i][k]) * (x[k] - wall_start[i][k]);
        moved += sqrt(d) > MOVED;
    }
    printf("joint_work %.17g\n", work);
    printf("car_wall_gap_min %.17g\n", closest);
    printf("wall_boxes %d\n", wall_count);
    printf("wall_boxes_moved %d\n", moved);
    printf("wall_boxes_asleep_max %d\n", asleep_max);
    report_run(bodies, body_count, GRAVITY, steps, e0, space);
    dJointGroupDestroy(contact_group);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    dCloseODE();
    return 0;
}
