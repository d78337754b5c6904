/*
 * convex: convex polytopes (cubes, octahedra, tetrahedra, wedges as dConvex geoms) and boxes
 * dropped onto the ground and onto each other, in the spirit of ODE's demo_convex, headless:
 * dSpaceCollide with a near callback (soft ERP/CFM, Coulomb friction; `hard`: Coulomb
 * friction only, rigid contacts), dWorldStep,
 * dJointGroupEmpty. ODE only: no pegplus header. Prints every body's final state and the
 * figures of report.h. Run it as it is, or under `pegplus-run --model standard|peg`.
 *
 * usage: convex [steps [churn] [hard]]   (default 400 steps of 0.005 s)
 * churn: halfway, one dConvex and its body are destroyed and a new dConvex of another shape
 * is dropped in their place (ODE may give it the old geom's address).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ode/ode.h>

#include "report.h"

#define GRAVITY 9.81
#define MAX_BODIES 64
#define MAX_CONTACTS 16

static dWorldID world;
static dSpaceID space;
static dJointGroupID contact_group;
static dBodyID bodies[MAX_BODIES];
static int body_count;
static int hard; /* no soft ERP/CFM */

static void near_callback(void *data, dGeomID o1, dGeomID o2)
{
    (void)data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact contact[MAX_CONTACTS];
    int n = dCollide(o1, o2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface.mode = hard ? dContactApprox1
                                       : dContactApprox1 | dContactSoftERP | dContactSoftCFM;
        contact[i].surface.mu = 0.8;
        contact[i].surface.soft_erp = 0.5;
        contact[i].surface.soft_cfm = 1e-4;
        dJointID c = dJointCreateContact(world, contact_group, &contact[i]);
        dJointAttach(c, b1, b2);
    }
}

/* A convex polytope in ODE's format: planes (a, b, c, d: a x + b y + c z = d, outward),
 * points, and the polygons (vertex count, then the indices, counter-clockwise from outside).
 * Built from vertices around the origin (the centre of mass) and faces in any winding. */
typedef struct shape {
    dReal planes[4 * 8];
    dReal points[3 * 8];
    unsigned polygons[8 * 5];
    unsigned plane_count, point_count;
} shape;

static void make_shape(shape *s, const double *v, int nv, const int faces[][5], int nf)
{
    unsigned *p = s->polygons;
    s->point_count = (unsigned)nv;
    s->plane_count = (unsigned)nf;
    for (int i = 0; i < 3 * nv; ++i) s->points[i] = v[i];
    for (int f = 0; f < nf; ++f) {
        int count = faces[f][0];
        const double *a = v + 3 * faces[f][1], *b = v + 3 * faces[f][2], *c = v + 3 * faces[f][3];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                       u[0] * w[1] - u[1] * w[0]};
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        int outward = n[0] * a[0] + n[1] * a[1] + n[2] * a[2] > 0.0; /* the origin is inside */
        double sign = outward ? 1.0 / len : -1.0 / len;
        for (int k = 0; k < 3; ++k) s->planes[4 * f + k] = sign * n[k];
        s->planes[4 * f + 3] = sign * (n[0] * a[0] + n[1] * a[1] + n[2] * a[2]);
        *p++ = (unsigned)count;
        for (int k = 0; k < count; ++k)
            *p++ = (unsigned)faces[f][1 + (outward ? k : count - 1 - k)];
    }
}

static shape cube, octahedron, tetrahedron, wedge;

static void make_shapes(void)
{
    const double s = 0.15;
    const double cv[] = {-s, -s, -s, s, -s, -s, s, s, -s, -s, s, -s,
                         -s, -s, s,  s, -s, s,  s, s, s,  -s, s, s};
    const int cf[][5] = {{4, 0, 1, 2, 3}, {4, 4, 5, 6, 7}, {4, 0, 1, 5, 4},
                         {4, 1, 2, 6, 5}, {4, 2, 3, 7, 6}, {4, 3, 0, 4, 7}};
    make_shape(&cube, cv, 8, cf, 6);
    const double r = 0.2;
    const double ov[] = {r, 0, 0, -r, 0, 0, 0, r, 0, 0, -r, 0, 0, 0, r, 0, 0, -r};
    const int of[][5] = {{3, 0, 2, 4}, {3, 2, 1, 4}, {3, 1, 3, 4}, {3, 3, 0, 4},
                         {3, 0, 2, 5}, {3, 2, 1, 5}, {3, 1, 3, 5}, {3, 3, 0, 5}};
    make_shape(&octahedron, ov, 6, of, 8);
    const double a = 0.13;
    const double tv[] = {a, a, a, a, -a, -a, -a, a, -a, -a, -a, a};
    const int tf[][5] = {{3, 1, 2, 3}, {3, 0, 3, 2}, {3, 0, 1, 3}, {3, 0, 2, 1}};
    make_shape(&tetrahedron, tv, 4, tf, 4);
    const double w = 0.2, t = 0.3, d = 0.15; /* triangle (-w, -t/3) (w, -t/3) (0, 2t/3) in xz */
    const double wv[] = {-w, -d, -t / 3, w, -d, -t / 3, 0, -d, 2 * t / 3,
                         -w, d,  -t / 3, w, d,  -t / 3, 0, d,  2 * t / 3};
    const int wf[][5] = {{3, 0, 1, 2}, {3, 3, 4, 5}, {4, 0, 1, 4, 3}, {4, 1, 2, 5, 4},
                         {4, 2, 0, 3, 5}};
    make_shape(&wedge, wv, 6, wf, 5);
}

static unsigned long seed = 4242;
static double uniform(double lo, double hi)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)((seed >> 11) & 0xfffff) / (double)0xfffff;
}

/* A dynamic body for `geom`, with the mass of a solid box of the geom's extent. */
static void drop(dGeomID geom, double x, double y, double z, double tilt)
{
    dReal aabb[6];
    dGeomGetAABB(geom, aabb);
    dMass m;
    dMassSetBoxTotal(&m, uniform(0.5, 2.0), aabb[1] - aabb[0], aabb[3] - aabb[2],
                     aabb[5] - aabb[4]);
    dBodyID b = dBodyCreate(world);
    dBodySetMass(b, &m);
    dBodySetPosition(b, x, y, z);
    dMatrix3 R;
    dRFromAxisAndAngle(R, uniform(-1, 1), uniform(-1, 1), uniform(0.1, 1), tilt);
    dBodySetRotation(b, R);
    dGeomSetBody(geom, b);
    bodies[body_count++] = b;
}

static dGeomID make_convex(const shape *s)
{
    return dCreateConvex(space, s->planes, s->plane_count, s->points, s->point_count,
                         s->polygons);
}

static void build(void)
{
    world = dWorldCreate();
    space = dSimpleSpaceCreate(0);
    contact_group = dJointGroupCreate(0);
    dWorldSetGravity(world, 0, 0, -GRAVITY);
    dWorldSetCFM(world, 1e-5);
    dCreatePlane(space, 0, 0, 1, 0);
    make_shapes();
    const shape *kinds[4] = {&cube, &octahedron, &tetrahedron, &wedge};
    for (int i = 0; i < 16; ++i) {
        double x = (i % 4) * 0.9, y = (i / 4) * 0.9, z = uniform(0.4, 0.8);
        if (i % 5 == 4) drop(dCreateBox(space, 0.3, 0.25, 0.2), x, y, z, uniform(0.0, 0.6));
        else drop(make_convex(kinds[i % 4]), x, y, z, uniform(0.0, 0.6));
        if (i % 4 == 0) /* a cube, then a second one dropped onto it */
            drop(make_convex(&cube), x + uniform(-0.05, 0.05), y + uniform(-0.05, 0.05),
                 z + 0.5, uniform(0.0, 0.2));
    }
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 400;
    const double h = 0.005;
    dInitODE2(0);
    build();
    double e0 = report_energy(bodies, body_count, GRAVITY, NULL);
    int churn = 0;
    for (int a = 2; a < argc; ++a) {
        churn |= !strcmp(argv[a], "churn");
        hard |= !strcmp(argv[a], "hard");
    }
    for (int i = 0; i < steps; ++i) {
        if (churn && i == steps / 2) { /* replace body 1, an octahedron; the energy budget
                                          loses its energy and gains the new body's */
            e0 -= report_energy(&bodies[1], 1, GRAVITY, NULL);
            dGeomDestroy(dBodyGetFirstGeom(bodies[1]));
            dBodyDestroy(bodies[1]);
            for (int k = 1; k < body_count - 1; ++k) bodies[k] = bodies[k + 1];
            body_count--;
            drop(make_convex(&tetrahedron), 0.9, 0.0, 0.5, 0.3);
            e0 += report_energy(&bodies[body_count - 1], 1, GRAVITY, NULL);
        }
        dSpaceCollide(space, 0, near_callback);
        dWorldStep(world, h);
        dJointGroupEmpty(contact_group);
    }
    report_run(bodies, body_count, GRAVITY, steps, e0, space);
    if (churn) { /* the new tetrahedron, alone in its cell: resting on the ground */
        dReal aabb[6];
        dGeomGetAABB(dBodyGetFirstGeom(bodies[body_count - 1]), aabb);
        printf("churn_lowest %.17g\n", aabb[4]);
    }
    dJointGroupDestroy(contact_group);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    dCloseODE();
    return 0;
}
