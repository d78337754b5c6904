/*
 * terrain: boxes dropped onto a heightfield valley and balls onto a flat trimesh pad beside
 * it, stepped the way ODE's demos step (dSpaceCollide with a near callback that makes contact
 * joints with a bounce and Coulomb friction, dWorldQuickStep, dJointGroupEmpty). Headless,
 * ODE only: no pegplus header. Under `pegplus-run --model standard|peg` the heightfield's
 * samples reach pegplus through the watched dGeomHeightfieldDataBuildDouble (ODE has no
 * getter for them) and the trimesh's triangles through dGeomTriMeshGetTriangle. Prints what
 * report.h prints.
 *
 * usage: terrain [steps]   (default 300 steps of 0.01 s)
 */
#include <math.h>
#include <stdlib.h>
#include <ode/ode.h>

#include "report.h"

#define GRAVITY 9.81
#define MAX_BODIES 16
#define MAX_CONTACTS 8
#define NX 17            /* heightfield samples along x (width 4 m) */
#define NZ 9             /* along its local z, world -y (depth 2 m) */
#define PAD 5            /* trimesh pad: PAD x PAD vertices, 1 m square */

static dWorldID world;
static dSpaceID space;
static dJointGroupID contact_group;
static dBodyID bodies[MAX_BODIES];
static int body_count;
static double heights[NX * NZ];
static double pad_vertices[3 * PAD * PAD];
static dTriIndex pad_indices[6 * (PAD - 1) * (PAD - 1)];
static dHeightfieldDataID field;
static dTriMeshDataID pad;

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

static dBodyID drop(dGeomID geom, const dMass *m, double x, double y, double z)
{
    dBodyID b = dBodyCreate(world);
    dBodySetMass(b, m);
    dBodySetPosition(b, x, y, z);
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

    /* a valley over x in [-2, 2], y in [-1, 1]: two planes rising at 9 degrees from the line
     * x = 0, 2 cm higher from x = 1 on (a steeper cell before it); local y up is world z */
    for (int j = 0; j < NZ; ++j)
        for (int i = 0; i < NX; ++i)
            heights[j * NX + i] = 0.04 * abs(i - NX / 2) + (i >= 12 ? 0.02 : 0.0);
    field = dGeomHeightfieldDataCreate();
    dGeomHeightfieldDataBuildDouble(field, heights, 0, 4.0, 2.0, NX, NZ, 1.0, 0.0, 0.5, 0);
    dGeomID hf = dCreateHeightfield(space, field, 1);
    dMatrix3 R = {1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0};
    dGeomSetRotation(hf, R);

    /* the flat pad at z = 0 over x in [2.5, 3.5], y in [-0.5, 0.5] */
    for (int i = 0; i < PAD; ++i)
        for (int j = 0; j < PAD; ++j) {
            double *v = pad_vertices + 3 * (i * PAD + j);
            v[0] = 2.5 + 0.25 * i;
            v[1] = -0.5 + 0.25 * j;
            v[2] = 0.0;
        }
    int n = 0;
    for (int i = 0; i + 1 < PAD; ++i)
        for (int j = 0; j + 1 < PAD; ++j) {
            dTriIndex a = (dTriIndex)(i * PAD + j), b = (dTriIndex)((i + 1) * PAD + j),
                      c = (dTriIndex)(i * PAD + j + 1), d = (dTriIndex)((i + 1) * PAD + j + 1);
            dTriIndex t[6] = {a, b, d, a, d, c}; /* counter-clockwise seen from above */
            for (int k = 0; k < 6; ++k) pad_indices[n++] = t[k];
        }
    pad = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildDouble(pad, pad_vertices, 3 * sizeof(double), PAD * PAD, pad_indices, n,
                                3 * sizeof(dTriIndex));
    dCreateTriMesh(space, pad, NULL, NULL, NULL);

    for (int i = 0; i < 6; ++i) { /* boxes over the bumps */
        dMass m;
        double l = 0.3 + 0.02 * i;
        dMassSetBoxTotal(&m, 1.0, l, l, 0.2);
        drop(dCreateBox(space, l, l, 0.2), &m, -1.5 + 0.6 * i, 0.3 * (i % 2) - 0.15, 0.5);
    }
    for (int i = 0; i < 4; ++i) { /* balls onto the pad */
        dMass m;
        dMassSetSphereTotal(&m, 1.0, 0.1);
        drop(dCreateSphere(space, 0.1), &m, 2.7 + 0.2 * i, -0.3 + 0.2 * i, 0.4 + 0.1 * i);
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
    dJointGroupEmpty(contact_group);
    dJointGroupDestroy(contact_group);
    dSpaceDestroy(space);
    dGeomTriMeshDataDestroy(pad);
    dGeomHeightfieldDataDestroy(field);
    dWorldDestroy(world);
    dCloseODE();
    return 0;
}
