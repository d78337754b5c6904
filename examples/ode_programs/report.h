/*
 * What the headless ODE programs of examples/ode_programs print at the end, written with ODE
 * alone (no pegplus header): every body's state at full precision (so two runs can be
 * compared byte for byte), the mechanical energy at the start and the end, the final kinetic
 * energy, the lowest point of any geom (its ODE bounding box) and the deepest overlap dCollide
 * finds between any two geoms.
 */
#ifndef ODE_PROGRAMS_REPORT_H
#define ODE_PROGRAMS_REPORT_H

#include <ode/ode.h>
#include <stdio.h>

#define REPORT_MAX_GEOMS 256

/* Kinetic plus potential energy (gravity along -z, g > 0) of n bodies, J. */
static double report_energy(dBodyID *bodies, int n, double g, double *kinetic)
{
    double total = 0.0, ke = 0.0;
    for (int i = 0; i < n; ++i) {
        dMass m;
        dBodyGetMass(bodies[i], &m);
        const dReal *v = dBodyGetLinearVel(bodies[i]), *w = dBodyGetAngularVel(bodies[i]);
        const dReal *R = dBodyGetRotation(bodies[i]);
        /* angular: 1/2 w . R I R^T w, with the body-frame inertia I */
        double wb[3], e = 0.0;
        for (int k = 0; k < 3; ++k) wb[k] = R[k] * w[0] + R[4 + k] * w[1] + R[8 + k] * w[2];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) e += wb[r] * m.I[4 * r + c] * wb[c];
        double k = 0.5 * m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * e;
        ke += k;
        total += k + m.mass * g * dBodyGetPosition(bodies[i])[2];
    }
    if (kinetic) *kinetic = ke;
    return total;
}

static void report_bodies(dBodyID *bodies, int n)
{
    for (int i = 0; i < n; ++i) {
        const dReal *x = dBodyGetPosition(bodies[i]), *q = dBodyGetQuaternion(bodies[i]);
        const dReal *v = dBodyGetLinearVel(bodies[i]), *w = dBodyGetAngularVel(bodies[i]);
        printf("body %d x %.17g %.17g %.17g q %.17g %.17g %.17g %.17g v %.17g %.17g %.17g "
               "w %.17g %.17g %.17g\n", i, x[0], x[1], x[2], q[0], q[1], q[2], q[3], v[0], v[1],
               v[2], w[0], w[1], w[2]);
    }
}

/* The lowest bounding-box point of the space's geoms on bodies, and the deepest contact
 * dCollide reports between any two geoms of the space (planes included) that may collide:
 * geoms of one body, and of two bodies joined by a joint (a car's wheel on its chassis), are
 * not a contact. */
static void report_geometry(dSpaceID space)
{
    int n = dSpaceGetNumGeoms(space);
    double lowest = dInfinity, deepest = 0.0;
    for (int i = 0; i < n; ++i) {
        dGeomID a = dSpaceGetGeom(space, i);
        if (dGeomGetBody(a)) {
            dReal aabb[6];
            dGeomGetAABB(a, aabb);
            if (aabb[4] < lowest) lowest = aabb[4];
        }
        for (int j = i + 1; j < n; ++j) {
            dGeomID b = dSpaceGetGeom(space, j);
            if (!dGeomGetBody(a) && !dGeomGetBody(b)) continue;
            if (dGeomGetBody(a) == dGeomGetBody(b)) continue;
            if (dGeomGetBody(a) && dGeomGetBody(b) &&
                dAreConnectedExcluding(dGeomGetBody(a), dGeomGetBody(b), dJointTypeContact))
                continue;
            dContactGeom c[16];
            int m = dCollide(a, b, 16, c, sizeof(dContactGeom));
            for (int k = 0; k < m; ++k)
                if (c[k].depth > deepest) deepest = c[k].depth;
        }
    }
    printf("lowest_point %.17g\n", lowest);
    printf("max_depth %.17g\n", deepest);
}

/* The end of a run: every body's state, the steps, the energy at the start (e0) and the end,
 * the final kinetic energy, then report_geometry (what run_program.sh reads). */
static void report_run(dBodyID *bodies, int n, double g, int steps, double e0, dSpaceID space)
{
    double ke, e1 = report_energy(bodies, n, g, &ke);
    report_bodies(bodies, n);
    printf("steps %d\n", steps);
    printf("energy_initial %.17g\n", e0);
    printf("energy_final %.17g\n", e1);
    printf("kinetic_energy_final %.17g\n", ke);
    report_geometry(space);
}

#endif
