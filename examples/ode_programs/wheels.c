/*
 * wheels: a small robot on four cylinder wheels (a box chassis, each wheel a dCylinder on a
 * hinge with a motor) dropped 1 cm onto the ground, driven forward at 5 rad/s of wheel speed
 * for 1.5 s, then braked by its motors (target speed 0) until it rests; stepped the way ODE's
 * demos step (dSpaceCollide with a near callback that makes Coulomb-friction contact joints,
 * dWorldStep, dJointGroupEmpty). Headless, ODE only: no pegplus header. Prints every body's
 * final state, how far the chassis travelled, and the energy, height and overlap figures of
 * report.h. Run it as it is, or under `pegplus-run --model standard|peg`.
 *
 * usage: wheels [steps] [heightfield]   (default 300 steps of 0.01 s on a plane; with
 *        `heightfield` the ground is a flat dHeightfield at the plane's height instead,
 *        samples every 0.25 m: the wheels roll across its cells' internal edges, and the
 *        robot should travel as on the plane)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ode/ode.h>

#include "report.h"

#define GRAVITY 9.81
#define MAX_CONTACTS 8
#define WHEEL_RADIUS 0.1
#define WHEEL_WIDTH 0.05
#define DRIVE_SPEED 5.0   /* rad/s of the wheels: 0.5 m/s on the ground */
#define DRIVE_TIME 1.5    /* s, then the motors brake */
#define MOTOR_TORQUE 2.0  /* N m, dParamFMax of each wheel's motor */

static dWorldID world;
static dSpaceID space;
static dJointGroupID contact_group;
static dBodyID bodies[5]; /* chassis, then the wheels */
static dHeightfieldDataID field;
#define HF_NX 25 /* samples along x: x = -3 .. 3 m */
#define HF_NZ 9  /* along y: -1 .. 1 m */
static double heights[HF_NX * HF_NZ];
static dJointID hinges[4];

static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    (void)data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact contact[MAX_CONTACTS];
    int n = dCollide(o1, o2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface.mode = dContactApprox1;
        contact[i].surface.mu = 1.0;
        dJointID c = dJointCreateContact(world, contact_group, &contact[i]);
        dJointAttach(c, b1, b2);
    }
}

/* The ground as a heightfield (ODE's local y up turned to the world's z). */
static void build_heightfield(void)
{
    for (int j = 0; j < HF_NZ; ++j)
        for (int i = 0; i < HF_NX; ++i) {
            heights[j * HF_NX + i] = 0.0;
        }
    field = dGeomHeightfieldDataCreate();
    dGeomHeightfieldDataBuildDouble(field, heights, 0, 6.0, 2.0, HF_NX, HF_NZ, 1.0, 0.0, 0.5, 0);
    dGeomID hf = dCreateHeightfield(space, field, 1);
    dMatrix3 R = {1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0};
    dGeomSetRotation(hf, R);
}

static void build(int heightfield)
{
    world = dWorldCreate();
    space = dHashSpaceCreate(0);
    contact_group = dJointGroupCreate(0);
    dWorldSetGravity(world, 0, 0, -GRAVITY);
    if (heightfield)
        build_heightfield();
    else
        dCreatePlane(space, 0, 0, 1, 0);
    const double drop = 0.01, z = WHEEL_RADIUS + drop;
    dMass m;
    bodies[0] = dBodyCreate(world);
    dMassSetBoxTotal(&m, 2.0, 0.6, 0.4, 0.1);
    dBodySetMass(bodies[0], &m);
    dBodySetPosition(bodies[0], 0, 0, z);
    dGeomSetBody(dCreateBox(space, 0.6, 0.4, 0.1), bodies[0]);
    /* the wheels' axes (local z of a dCylinder) along the world's y */
    dMatrix3 R;
    dRFromAxisAndAngle(R, 1, 0, 0, M_PI / 2);
    for (int i = 0; i < 4; ++i) {
        double x = i < 2 ? 0.2 : -0.2, y = i % 2 ? 0.25 : -0.25;
        dBodyID w = bodies[1 + i] = dBodyCreate(world);
        dMassSetCylinderTotal(&m, 0.3, 3, WHEEL_RADIUS, WHEEL_WIDTH);
        dBodySetMass(w, &m);
        dBodySetPosition(w, x, y, z);
        dBodySetRotation(w, R);
        dGeomSetBody(dCreateCylinder(space, WHEEL_RADIUS, WHEEL_WIDTH), w);
        dJointID j = hinges[i] = dJointCreateHinge(world, 0);
        dJointAttach(j, bodies[0], w);
        dJointSetHingeAnchor(j, x, y, z);
        dJointSetHingeAxis(j, 0, -1, 0);
        dJointSetHingeParam(j, dParamFMax, MOTOR_TORQUE);
    }
}

/* Forward along +x: the motor turns the wheel relative to the chassis about the hinge axis
 * -y (ODE: the rate of body 1 relative to body 2), i.e. the wheel about +y, rolling to +x. */
static void drive(double t)
{
    double speed = t < DRIVE_TIME ? DRIVE_SPEED : 0.0;
    for (int i = 0; i < 4; ++i) dJointSetHingeParam(hinges[i], dParamVel, speed);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 300;
    int heightfield = argc > 2 && strcmp(argv[2], "heightfield") == 0;
    const double h = 0.01;
    dInitODE2(0);
    build(heightfield);
    double e0 = report_energy(bodies, 5, GRAVITY, NULL);
    for (int i = 0; i < steps; ++i) {
        drive(i * h);
        dSpaceCollide(space, 0, near_callback);
        dWorldStep(world, h);
        dJointGroupEmpty(contact_group);
    }
    printf("chassis_travel %.17g\n", dBodyGetPosition(bodies[0])[0]);
    report_run(bodies, 5, GRAVITY, steps, e0, space);
    dJointGroupDestroy(contact_group);
    dSpaceDestroy(space);
    if (heightfield) dGeomHeightfieldDataDestroy(field);
    dWorldDestroy(world);
    dCloseODE();
    return 0;
}
