/*
 * boxstack: boxes, spheres and capsules dropped onto the ground, some boxes onto other boxes,
 * stepped the way ODE's demos step (dSpaceCollide with a near callback that makes contact
 * joints with a bounce and Coulomb friction, dWorldQuickStep, dJointGroupEmpty). Headless,
 * ODE only: no pegplus header. Prints every body's final state and the energy, height and
 * overlap figures of report.h. Run it as it is, or under `pegplus-run --model standard|peg`.
 *
 * usage: boxstack [steps]   (default 300 steps of 0.01 s)
 */
#include <math.h>
#include <stdlib.h>
#include <ode/ode.h>

#include "report.h"

#define GRAVITY 9.81
#define MAX_BODIES 64
#define MAX_CONTACTS 8

static dWorldID world;
static dSpaceID space;
static dJointGroupID contact_group;
static dBodyID bodies[MAX_BODIES];
static int body_count;

static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    (void)data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact contact[MAX_CONTACTS];
    int n = dCollide(o1, o2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface.mode = dContactBounce | dContactApprox1;
        contact[i].surface.mu = 0.6;
        contact[i].surface.bounce = 0.2;
        contact[i].surface.bounce_vel = 0.2;
        dJointID c = dJointCreateContact(world, contact_group, &contact[i]);
        dJointAttach(c, b1, b2);
    }
}

/* A fixed pseudo-random sequence (the same scene on every run and machine). */
static unsigned long seed = 12345;
static double uniform(double lo, double hi)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)((seed >> 11) & 0xfffff) / (double)0xfffff;
}

static dBodyID drop(dGeomID geom, const dMass *m, double x, double y, double z, double tilt)
{
    dBodyID b = dBodyCreate(world);
    dBodySetMass(b, m);
    dBodySetPosition(b, x, y, z);
    dMatrix3 R;
    dRFromAxisAndAngle(R, uniform(-1, 1), uniform(-1, 1), uniform(0.1, 1), tilt);
    dBodySetRotation(b, R);
    dGeomSetBody(geom, b);
    bodies[body_count++] = b;
    return b;
}

static void build(void)
{
    world = dWorldCreate();
    space = dHashSpaceCreate(0);
    contact_group = dJointGroupCreate(0);
    dWorldSetGravity(world, 0, 0, -GRAVITY);
    dWorldSetCFM(world, 1e-5);
    dWorldSetContactMaxCorrectingVel(world, 0.1);
    dWorldSetContactSurfaceLayer(world, 0.001);
    dCreatePlane(space, 0, 0, 1, 0);
    for (int i = 0; i < 24; ++i) {
        double x = (i % 6) * 1.0, y = (i / 6) * 1.0, z = uniform(0.5, 1.0);
        dMass m;
        if (i % 3 == 0) { /* a box, and on six of them a second one */
            double l[3] = {uniform(0.2, 0.4), uniform(0.2, 0.4), uniform(0.2, 0.4)};
            dMassSetBoxTotal(&m, uniform(0.5, 2.0), l[0], l[1], l[2]);
            drop(dCreateBox(space, l[0], l[1], l[2]), &m, x, y, z, uniform(0.0, 0.5));
            if (i / 3 < 6) {
                double k[3] = {uniform(0.15, 0.3), uniform(0.15, 0.3), uniform(0.1, 0.2)};
                dMassSetBoxTotal(&m, uniform(0.3, 1.0), k[0], k[1], k[2]);
                drop(dCreateBox(space, k[0], k[1], k[2]), &m, x + uniform(-0.05, 0.05),
                     y + uniform(-0.05, 0.05), z + 0.6, uniform(0.0, 0.2));
            }
        } else if (i % 3 == 1) {
            double r = uniform(0.1, 0.2);
            dMassSetSphereTotal(&m, uniform(0.5, 2.0), r);
            drop(dCreateSphere(space, r), &m, x, y, z, 0.0);
        } else { /* a capsule lying flat: its axis (z in its frame) along the world's x */
            double r = uniform(0.08, 0.12), l = uniform(0.2, 0.4);
            dMassSetCapsuleTotal(&m, uniform(0.5, 2.0), 3, r, l);
            dBodyID b = drop(dCreateCapsule(space, r, l), &m, x, y, z, 0.0);
            dMatrix3 R;
            dRFromAxisAndAngle(R, 0, 1, 0, M_PI / 2);
            dBodySetRotation(b, R);
        }
    }
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 300;
    const double h = 0.01;
    dInitODE2(0);
    build();
    double e0 = report_energy(bodies, body_count, GRAVITY, NULL);
    for (int i = 0; i < steps; ++i) {
        dSpaceCollide(space, 0, near_callback);
        dWorldQuickStep(world, h);
        dJointGroupEmpty(contact_group);
    }
    report_run(bodies, body_count, GRAVITY, steps, e0, space);
    dJointGroupDestroy(contact_group);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    dCloseODE();
    return 0;
}
