/*
 * Static trimeshes and heightfields as terrain under the pegplus models (docs/design.md
 * "Terrain"): the same ramp or floor built from triangles and from an ODE plane must give the
 * same motion, and the closed forms must hold, whatever internal edges the bodies cross.
 *
 *  - A solid ball (I = 2/5 m r^2) released on a ramp of slope theta rolls without slipping:
 *    its centre accelerates at a = (5/7) g sin theta along the ramp, so after t its speed is
 *    a t. On a trimesh ramp of 96 triangles and a heightfield ramp of 96 cells its path
 *    crosses transverse edges and diagonals every few centimetres; a bump at any of them
 *    would slow it. Asserted: position within 1 mm of the same ball on a plane after 1 s,
 *    speed within 0.5 % of a t, no overlap beyond 1e-9 m at any step (with the trimesh as ODE
 *    holds it: its vertices in single precision). Also without ST96's re-linearisation,
 *    whose fixed point takes the gap at the step's end and so hides a bump by itself.
 *  - A box resting across internal edges of a trimesh floor and of a heightfield stays at
 *    rest without overlap; a box sliding over the floor (mu g deceleration) crosses edges
 *    without meeting a wall: it stops where it stops on a plane.
 * Stock ODE (PP_MODEL_ODE, dWorldStep with ODE's own trimesh and heightfield colliders) is
 * printed beside, not asserted.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "it_common.h"
#include "pegplus/pegplus.h"

#define H 0.01
#define G 9.81
#define THETA (15.0 * M_PI / 180.0)
#define RADIUS 0.1
#define POSITION_TOL 1e-3   /* against the same ball on a plane after 1 s, m */
#define SPEED_TOL 5e-3      /* relative, against (5/7) g sin theta t */
#define OVERLAP_TOL 1e-9    /* m */

typedef enum ground { GROUND_PLANE, GROUND_TRIMESH, GROUND_HEIGHTFIELD } ground;
static const char *GROUND_NAME[3] = {"plane", "trimesh", "heightfield"};

typedef struct scene {
    dWorldID world;
    dSpaceID space;
    dGeomID ground;
    dTriMeshDataID mesh;
    dHeightfieldDataID field;
    dBodyID body;
    pp_world *pw;
    /* the ground surface: n . x = 0 through the origin, n = (sin s, 0, cos s) */
    double slope;
    double kink_slope;  /* > 0: the trimesh steepens to this slope from x = 0.5 on (a ridge) */
    double vertices[3 * 13 * 5];
    dTriIndex indices[3 * 2 * 12 * 4];
    double heights[13 * 5];
} scene;

/* Grid of 12 x 4 cells over x in [-0.5, 2.5], y in [-0.5, 0.5] on the surface
 * z = -tan(slope) x, each cell split along a diagonal that alternates from cell to cell. */
static void make_trimesh(scene *s)
{
    const int nx = 13, ny = 5;
    for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j) {
            double *v = s->vertices + 3 * (i * ny + j);
            v[0] = -0.5 + 0.25 * i;
            v[1] = -0.5 + 0.25 * j;
            v[2] = -tan(s->slope) * v[0];
            if (s->kink_slope > 0.0 && v[0] > 0.5)
                v[2] = -tan(s->slope) * 0.5 - tan(s->kink_slope) * (v[0] - 0.5);
        }
    int n = 0;
    for (int i = 0; i + 1 < nx; ++i)
        for (int j = 0; j + 1 < ny; ++j) {
            dTriIndex a = (dTriIndex)(i * ny + j), b = (dTriIndex)((i + 1) * ny + j),
                      c = (dTriIndex)(i * ny + j + 1), d = (dTriIndex)((i + 1) * ny + j + 1);
            /* counter-clockwise seen from above (ODE's front side) */
            const dTriIndex t[2][3] = {{a, b, d}, {a, d, c}}, u[2][3] = {{a, b, c}, {b, d, c}};
            const dTriIndex(*tri)[3] = (i + j) % 2 ? t : u;
            for (int k = 0; k < 2; ++k)
                for (int m = 0; m < 3; ++m) s->indices[n++] = tri[k][m];
        }
    s->mesh = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildDouble(s->mesh, s->vertices, 3 * sizeof(double), nx * ny, s->indices,
                                n, 3 * sizeof(dTriIndex));
    s->ground = dCreateTriMesh(s->space, s->mesh, NULL, NULL, NULL);
}

/* ODE's height callback on the scene's samples (dGeomHeightfieldDataBuildCallback). */
static dReal height_of(void *user, int x, int z)
{
    const scene *s = user;
    return s->heights[z * 13 + x];
}

/* The same surface as a heightfield: 13 x 5 samples over width 3 (local x) and depth 1
 * (local z), local y up turned to world z (local z is world -y), centred at x = 1. Built
 * from the samples (copied), or (register_samples 2) from ODE's height callback; with
 * register_samples 1 also registered with pp_world_register_heightfield. */
static void make_heightfield(scene *s, int register_samples)
{
    const int nx = 13, nz = 5;
    for (int j = 0; j < nz; ++j)
        for (int i = 0; i < nx; ++i) s->heights[j * nx + i] = -tan(s->slope) * (-0.5 + 0.25 * i);
    s->field = dGeomHeightfieldDataCreate();
    if (register_samples == 2)
        dGeomHeightfieldDataBuildCallback(s->field, s, height_of, 3.0, 1.0, nx, nz, 1.0, 0.0,
                                          1.0, 0);
    else
        dGeomHeightfieldDataBuildDouble(s->field, s->heights, 1, 3.0, 1.0, nx, nz, 1.0, 0.0,
                                        1.0, 0);
    s->ground = dCreateHeightfield(s->space, s->field, 1);
    dMatrix3 R = {1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0};
    dGeomSetRotation(s->ground, R);
    dGeomSetPosition(s->ground, 1.0, 0, 0);
    if (register_samples == 1)
        ck_assert_int_eq(pp_world_register_heightfield(s->pw, s->field, s->heights, 1, 3.0, 1.0,
                                                       nx, nz, 1.0, 0.0, 1.0, 0), PP_OK);
}

/* -1: pegplus's default; 0: none. The rolling tests also run without ST96's
 * re-linearisation, whose fixed point alone would hide a bump (it takes the gap at the step's
 * end pose). */
static int relinearize_iterations = -1;

static void make_scene(scene *s, pp_model model, ground g, double slope, int register_samples)
{
    memset(s, 0, sizeof *s);
    s->slope = slope;
    s->world = dWorldCreate();
    s->space = dSimpleSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, -G);
    pp_config c = pp_config_default();
    c.model = model;
    c.lcp_budget_seconds = 0.0;
    if (relinearize_iterations >= 0) c.relinearize_iterations = relinearize_iterations;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &c, &s->pw), PP_OK);
    if (g == GROUND_PLANE) s->ground = dCreatePlane(s->space, sin(slope), 0, cos(slope), 0);
    else if (g == GROUND_TRIMESH) make_trimesh(s);
    else make_heightfield(s, register_samples);
}

static void destroy(scene *s)
{
    pp_world_destroy(s->pw);
    dSpaceDestroy(s->space);
    if (s->mesh) dGeomTriMeshDataDestroy(s->mesh);
    if (s->field) dGeomHeightfieldDataDestroy(s->field);
    dWorldDestroy(s->world);
}

static void surface_normal(const scene *s, double n[3])
{
    n[0] = sin(s->slope);
    n[1] = 0.0;
    n[2] = cos(s->slope);
}

/* Distance from p to triangle (a, b, c): the closest point by the triangle's Voronoi regions
 * (vertices, edges, face) in barycentric terms. */
static double point_triangle_distance(const double p[3], const dReal *a, const dReal *b,
                                      const dReal *c)
{
    double ab[3], ac[3], ap[3], q[3];
    for (int k = 0; k < 3; ++k) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
    }
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    double d1 = DOT(ab, ap), d2 = DOT(ac, ap);
    double bp[3] = {p[0] - b[0], p[1] - b[1], p[2] - b[2]};
    double cp[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    double d3 = DOT(ab, bp), d4 = DOT(ac, bp), d5 = DOT(ab, cp), d6 = DOT(ac, cp);
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
#undef DOT
    double s = 0.0, t = 0.0; /* q = a + s ab + t ac */
    if (d1 <= 0 && d2 <= 0) {
    } else if (d3 >= 0 && d4 <= d3) {
        s = 1;
    } else if (d6 >= 0 && d5 <= d6) {
        t = 1;
    } else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        s = d1 / (d1 - d3);
    } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        t = d2 / (d2 - d6);
    } else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        t = 1 - s;
    } else {
        s = vb / (va + vb + vc);
        t = vc / (va + vb + vc);
    }
    for (int k = 0; k < 3; ++k) q[k] = a[k] + s * ab[k] + t * ac[k] - p[k];
    return sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
}

/* The ball's gap: to the plane, or to the nearest triangle as ODE holds the trimesh (its
 * vertices are stored in single precision: the mesh is the ramp within ~1e-8 m). */
static double ball_gap(const scene *s, ground g, const dReal *x)
{
    double n[3];
    surface_normal(s, n);
    if (g != GROUND_TRIMESH) return n[0] * x[0] + n[1] * x[1] + n[2] * x[2] - RADIUS;
    double best = HUGE_VAL, p[3] = {x[0], x[1], x[2]};
    for (int i = 0; i < dGeomTriMeshGetTriangleCount(s->ground); ++i) {
        dVector3 a, b, c;
        dGeomTriMeshGetTriangle(s->ground, i, &a, &b, &c);
        double d = point_triangle_distance(p, a, b, c);
        if (d < best) best = d;
    }
    return best - RADIUS;
}

typedef struct roll {
    double x[3], speed, overlap;
} roll;

/* A solid ball released touching the ramp at (0, 0.1, 0) (off every grid line), 1 s. */
static roll roll_ball(pp_model model, ground g, int register_samples)
{
    scene s;
    make_scene(&s, model, g, THETA, register_samples);
    double n[3];
    surface_normal(&s, n);
    s.body = dBodyCreate(s.world);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, RADIUS); /* I = 2/5 m r^2 */
    dBodySetMass(s.body, &m);
    dGeomSetBody(dCreateSphere(s.space, RADIUS), s.body);
    dBodySetPosition(s.body, RADIUS * n[0], 0.1 + RADIUS * n[1], RADIUS * n[2]);
    roll r = {{0, 0, 0}, 0.0, 0.0};
    for (int i = 0; i < 100; ++i) {
        ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
        double gap = ball_gap(&s, g, dBodyGetPosition(s.body));
        if (-gap > r.overlap) r.overlap = -gap;
    }
    const dReal *x = dBodyGetPosition(s.body), *v = dBodyGetLinearVel(s.body);
    for (int k = 0; k < 3; ++k) r.x[k] = x[k];
    r.speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    destroy(&s);
    return r;
}

static void expect_rolling(pp_model model, ground g, int register_samples)
{
    const double expected = 5.0 / 7.0 * G * sin(THETA) * 1.0;
    roll plane = roll_ball(model, GROUND_PLANE, 0);
    roll terrain = roll_ball(model, g, register_samples);
    roll ode = roll_ball(PP_MODEL_ODE, g, 0);
    double dx = 0.0;
    for (int k = 0; k < 3; ++k) dx += (terrain.x[k] - plane.x[k]) * (terrain.x[k] - plane.x[k]);
    dx = sqrt(dx);
    printf("ball on a %s ramp%s, %s%s: |x - x_plane| = %.3g m, speed %.6f m/s (closed form "
           "%.6f, rel. error %.2g), overlap %.3g m | stock ODE: speed %.6f (%.2g), overlap %.3g m\n",
           GROUND_NAME[g],
           register_samples == 1 ? " (registered)" : register_samples == 2 ? " (callback)" : "",
           pp_model_name(model),
           relinearize_iterations == 0 ? " (no re-linearisation)" : "", dx,
           terrain.speed, expected, fabs(terrain.speed - expected) / expected, terrain.overlap,
           ode.speed, fabs(ode.speed - expected) / expected, ode.overlap);
    ck_assert_double_le(dx, POSITION_TOL);
    ck_assert_double_le(fabs(terrain.speed - expected), SPEED_TOL * expected);
    ck_assert_double_le(terrain.overlap, OVERLAP_TOL);
    ck_assert_double_le(plane.overlap, OVERLAP_TOL);
}

START_TEST(ball_rolls_down_trimesh_ramp)
{
    relinearize_iterations = _i / 2 ? 0 : -1;
    expect_rolling(_i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD, GROUND_TRIMESH, 0);
}
END_TEST

START_TEST(ball_rolls_down_heightfield_ramp)
{
    relinearize_iterations = _i / 2 ? 0 : -1;
    expect_rolling(_i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD, GROUND_HEIGHTFIELD, 0);
}
END_TEST

START_TEST(ball_rolls_down_registered_heightfield_ramp)
{
    relinearize_iterations = _i / 2 ? 0 : -1;
    expect_rolling(_i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD, GROUND_HEIGHTFIELD, 1);
}
END_TEST

START_TEST(ball_rolls_down_callback_heightfield_ramp)
{
    expect_rolling(_i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD, GROUND_HEIGHTFIELD, 2);
}
END_TEST

typedef struct slide {
    double x[3], moved, speed, overlap;
} slide;

/* A 0.4 x 0.3 x 0.2 box (1 kg) on the flat floor z = 0 at (0.05, 0.07), its bottom face
 * across internal edges, given speed v0 along x; `steps` steps. Overlap: its lowest
 * corner below z = 0. */
static slide slide_box(pp_model model, ground g, double v0, int steps)
{
    scene s;
    make_scene(&s, model, g, 0.0, 0);
    s.body = dBodyCreate(s.world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 0.4, 0.3, 0.2);
    dBodySetMass(s.body, &m);
    dGeomSetBody(dCreateBox(s.space, 0.4, 0.3, 0.2), s.body);
    dBodySetPosition(s.body, 0.05, 0.07, 0.1);
    dBodySetLinearVel(s.body, v0, 0, 0);
    slide r = {{0, 0, 0}, 0.0, 0.0, 0.0};
    for (int i = 0; i < steps; ++i) {
        ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
        dVector3 corner;
        for (int c = 0; c < 8; ++c) {
            dBodyGetRelPointPos(s.body, c & 1 ? 0.2 : -0.2, c & 2 ? 0.15 : -0.15,
                                c & 4 ? 0.1 : -0.1, corner);
            if (-corner[2] > r.overlap) r.overlap = -corner[2];
        }
    }
    const dReal *x = dBodyGetPosition(s.body), *v = dBodyGetLinearVel(s.body);
    for (int k = 0; k < 3; ++k) r.x[k] = x[k];
    r.moved = sqrt((x[0] - 0.05) * (x[0] - 0.05) + (x[1] - 0.07) * (x[1] - 0.07) +
                   (x[2] - 0.1) * (x[2] - 0.1));
    r.speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    destroy(&s);
    return r;
}

/* At rest across internal edges: it stays (1e-6 m over 1 s), without overlap. */
START_TEST(box_rests_on_terrain)
{
    const pp_model model = _i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    const ground g = _i / 2 ? GROUND_HEIGHTFIELD : GROUND_TRIMESH;
    slide r = slide_box(model, g, 0.0, 100);
    slide ode = slide_box(PP_MODEL_ODE, g, 0.0, 100);
    printf("box resting on a %s floor, %s: moved %.3g m, speed %.3g m/s, overlap %.3g m | "
           "stock ODE: moved %.3g m, overlap %.3g m\n", GROUND_NAME[g], pp_model_name(model),
           r.moved, r.speed, r.overlap, ode.moved, ode.overlap);
    ck_assert_double_le(r.moved, 1e-6);
    ck_assert_double_le(r.speed, 1e-6);
    ck_assert_double_le(r.overlap, OVERLAP_TOL);
}
END_TEST

/* Sliding at v0 = 1 m/s with mu = 0.5 (the default surface), its leading face starting on the
 * edge line x = 0.25 and crossing diagonals: no wall at an internal edge, it stops where it
 * stops on a plane (1 mm). On the plane, the implicit step's closed form: v_n = v0 - mu g h n
 * while positive, x = h sum v_n (v0^2 / (2 mu g) - v0 h / 2 + O(h^2)). */
START_TEST(box_slides_across_terrain)
{
    const pp_model model = _i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    const ground g = _i / 2 ? GROUND_HEIGHTFIELD : GROUND_TRIMESH;
    slide plane = slide_box(model, GROUND_PLANE, 1.0, 40);
    slide r = slide_box(model, g, 1.0, 40);
    slide ode = slide_box(PP_MODEL_ODE, g, 1.0, 40);
    double dx = 0.0;
    for (int k = 0; k < 3; ++k) dx += (r.x[k] - plane.x[k]) * (r.x[k] - plane.x[k]);
    dx = sqrt(dx);
    double stop = 0.0;
    for (int n = 1; n <= 40; ++n) stop += H * fmax(0.0, 1.0 - 0.5 * G * H * n);
    printf("box sliding on a %s floor, %s: travelled %.6f m (plane %.6f, closed form %.6f), "
           "|x - x_plane| = %.3g m, overlap %.3g m | stock ODE: travelled %.6f m, overlap %.3g "
           "m\n", GROUND_NAME[g], pp_model_name(model), r.moved, plane.moved, stop, dx,
           r.overlap, ode.moved, ode.overlap);
    ck_assert_double_le(dx, POSITION_TOL);
    ck_assert_double_le(fabs(plane.moved - stop), 1e-9);
    ck_assert_double_le(r.overlap, OVERLAP_TOL);
}
END_TEST

/* Over a ridge: a trimesh ramp of 5 degrees that steepens to 15 degrees at x = 0.5 (a convex
 * kink across the path, 4 ridge edges). A ball rolling over it pivots about the ridge, its
 * contact normal turning from one face's to the other's (the ridge keeps those normals; the
 * ball, released 0.3 m before it, stays on: v^2 / r = 3.7 m/s^2 < g cos theta there), so no
 * energy is lost: rolling without slip, (7/10) m v^2 = m g (z0 - z) of its centre. Asserted
 * after 1.6 s to 0.5 %, the centre past the ridge, no overlap with the triangles beyond
 * 1e-9 m. What is lost is the time stepper's O(h) while the normal turns (measured 0.36 % at
 * h = 0.01, 0.18 % at 0.005, 0.093 % at 0.0025); replacing the crest's contact by the steeper
 * face's plane launched the ball (speed 0.49 -> 1.26 m/s in a step). */
START_TEST(ball_rolls_over_a_ridge)
{
    const pp_model model = _i % 2 ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    scene s;
    memset(&s, 0, sizeof s);
    s.kink_slope = 15.0 * M_PI / 180.0;
    s.slope = 5.0 * M_PI / 180.0;
    s.world = dWorldCreate();
    s.space = dSimpleSpaceCreate(0);
    dWorldSetGravity(s.world, 0, 0, -G);
    pp_config c = pp_config_default();
    c.model = model;
    c.lcp_budget_seconds = 0.0;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &c, &s.pw), PP_OK);
    make_trimesh(&s);
    double n[3];
    surface_normal(&s, n);
    s.body = dBodyCreate(s.world);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, RADIUS);
    dBodySetMass(s.body, &m);
    dGeomSetBody(dCreateSphere(s.space, RADIUS), s.body);
    const double x0 = 0.2, z0 = -tan(s.slope) * x0 + RADIUS * n[2];
    dBodySetPosition(s.body, x0 + RADIUS * n[0], 0.1, z0);
    double overlap = 0.0;
    for (int i = 0; i < 160; ++i) {
        ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
        double gap = ball_gap(&s, GROUND_TRIMESH, dBodyGetPosition(s.body));
        if (-gap > overlap) overlap = -gap;
    }
    const dReal *x = dBodyGetPosition(s.body), *v = dBodyGetLinearVel(s.body);
    const double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double expected = sqrt(10.0 / 7.0 * G * (z0 - x[2]));
    printf("ball over a ridge, %s: x %.4f m, speed %.6f m/s, from energy %.6f (rel. error "
           "%.2g), overlap %.3g m\n", pp_model_name(model), x[0], speed, expected,
           fabs(speed - expected) / expected, overlap);
    fflush(stdout);
    ck_assert_double_gt(x[0], 0.5 + RADIUS);
    ck_assert_double_le(fabs(speed - expected), 5e-3 * expected);
    ck_assert_double_le(overlap, OVERLAP_TOL);
    destroy(&s);
}
END_TEST

/* A big flat heightfield (400 x 400 samples, 5 cm apart: 318 402 triangles): a ball rolling
 * across it at 2 m/s, over a new edge every 2.5 ms, keeps its speed and height exactly (no
 * bump, one contact after duplicates are dropped), and each step pairs it with the few
 * triangles under its box only (stage 2 queries a grid, never the whole terrain). */
START_TEST(ball_rolls_across_big_heightfield)
{
    const pp_model model = _i ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    enum { N = 400 };
    static double flat[N * N]; /* zeros */
    scene s;
    make_scene(&s, model, GROUND_PLANE, 0.0, 0);
    dGeomDestroy(s.ground);
    s.field = dGeomHeightfieldDataCreate();
    dGeomHeightfieldDataBuildDouble(s.field, flat, 0, 0.05 * (N - 1), 0.05 * (N - 1), N, N, 1.0,
                                    0.0, 1.0, 0);
    s.ground = dCreateHeightfield(s.space, s.field, 1);
    dMatrix3 R = {1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0};
    dGeomSetRotation(s.ground, R);
    s.body = dBodyCreate(s.world);
    dMass m;
    dMassSetSphereTotal(&m, 1.0, RADIUS);
    dBodySetMass(s.body, &m);
    dGeomSetBody(dCreateSphere(s.space, RADIUS), s.body);
    dBodySetPosition(s.body, -3.0, 0.013, RADIUS);
    dBodySetLinearVel(s.body, 2.0, 0.0, 0.0);
    dBodySetAngularVel(s.body, 0.0, 2.0 / RADIUS, 0.0); /* rolling */
    int most_pairs = 0, most_contacts = 0;
    for (int i = 0; i < 200; ++i) {
        ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
        const pp_step_stats *st = pp_world_get_stats(s.pw);
        if (st->candidate_pairs > most_pairs) most_pairs = st->candidate_pairs;
        if (st->contacts > most_contacts) most_contacts = st->contacts;
    }
    const dReal *x = dBodyGetPosition(s.body), *v = dBodyGetLinearVel(s.body);
    printf("ball across a 318 402-triangle heightfield, %s: x %.12f (v t: %.12f), z - r %.3g, "
           "speed %.12f, at most %d candidate pairs and %d contacts a step\n",
           pp_model_name(model), x[0], -3.0 + 2.0 * 200 * H, x[2] - RADIUS, v[0], most_pairs,
           most_contacts);
    ck_assert_double_eq_tol(x[0], -3.0 + 2.0 * 200 * H, 1e-9);
    ck_assert_double_eq_tol(x[2], RADIUS, 1e-9);
    ck_assert_double_eq_tol(v[0], 2.0, 1e-9);
    ck_assert_int_eq(most_contacts, 1);
    /* its box, 0.2 m + margins (< 0.3 m), covers at most 7 x 7 cells of 2 triangles */
    ck_assert_int_le(most_pairs, 2 * 7 * 7);
    destroy(&s);
}
END_TEST

/* A non-placeable heightfield (its frame is the world's: y up; pegplus reads its pose with
 * dGeomGetRelPointPos, dGeomGetPosition being an error on it) under gravity along -y: a box
 * dropped 5 cm lands on it and rests on its samples' plane y = 0.3 without overlap. */
START_TEST(box_rests_on_non_placeable_heightfield)
{
    const pp_model model = _i ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    static double level[13 * 5];
    for (int i = 0; i < 13 * 5; ++i) level[i] = 0.3;
    scene s;
    make_scene(&s, model, GROUND_PLANE, 0.0, 0);
    dGeomDestroy(s.ground);
    dWorldSetGravity(s.world, 0, -G, 0);
    s.field = dGeomHeightfieldDataCreate();
    dGeomHeightfieldDataBuildDouble(s.field, level, 0, 3.0, 1.0, 13, 5, 1.0, 0.0, 1.0, 0);
    s.ground = dCreateHeightfield(s.space, s.field, 0);
    s.body = dBodyCreate(s.world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, 0.4, 0.2, 0.3);
    dBodySetMass(s.body, &m);
    dGeomSetBody(dCreateBox(s.space, 0.4, 0.2, 0.3), s.body);
    dBodySetPosition(s.body, 0.07, 0.3 + 0.1 + 0.05, 0.03);
    double lowest = HUGE_VAL;
    for (int i = 0; i < 100; ++i) {
        ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
        const double y = dBodyGetPosition(s.body)[1] - 0.1;
        if (y < lowest) lowest = y;
    }
    const double y = dBodyGetPosition(s.body)[1] - 0.1;
    printf("box on a non-placeable heightfield, %s: bottom at y = %.12f (samples at 0.3), "
           "lowest %.12f, speed %.3g m/s\n", pp_model_name(model), y, lowest,
           fabs(dBodyGetLinearVel(s.body)[1]));
    ck_assert_double_eq_tol(y, 0.3, 1e-9);
    ck_assert_double_ge(lowest, 0.3 - OVERLAP_TOL);
    ck_assert_double_le(fabs(dBodyGetLinearVel(s.body)[1]), 1e-9);
    destroy(&s);
}
END_TEST

/* What the log hook was given (the refusals below). */
static char logged[4096];

static void keep_log(pp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

/* What the pegplus models cannot model is named (dGeomID, class, why) and collides with
 * nothing: a trimesh on a body, a heightfield whose samples pegplus never saw (data created
 * and not built), a wrapped heightfield. A ball dropped onto each falls through freely. */
START_TEST(unmodelled_terrain_is_named)
{
    const pp_model model = _i ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    for (int c = 0; c < 3; ++c) {
        scene s;
        make_scene(&s, model, GROUND_PLANE, 0.0, 0);
        dGeomDestroy(s.ground);
        const char *why = NULL;
        if (c == 0) { /* the flat trimesh floor, on a body of its own */
            make_trimesh(&s);
            dBodyID carrier = dBodyCreate(s.world);
            dMass m;
            dMassSetBoxTotal(&m, 1.0, 3, 1, 0.1);
            dBodySetMass(carrier, &m);
            dBodySetKinematic(carrier);
            dGeomSetBody(s.ground, carrier);
            why = "on a body is not modelled";
        } else {
            s.field = dGeomHeightfieldDataCreate();
            if (c == 2)
                dGeomHeightfieldDataBuildDouble(s.field, s.heights, 1, 3.0, 1.0, 13, 5, 1.0, 0.0,
                                                1.0, 1);
            s.ground = dCreateHeightfield(s.space, s.field, 1);
            why = c == 1 ? "its samples are unknown" : "wrapped";
        }
        s.body = dBodyCreate(s.world);
        dMass m;
        dMassSetSphereTotal(&m, 1.0, RADIUS);
        dBodySetMass(s.body, &m);
        dGeomSetBody(dCreateSphere(s.space, RADIUS), s.body);
        dBodySetPosition(s.body, 0.1, 0.1, RADIUS);
        logged[0] = 0;
        pp_set_log_hook(keep_log, NULL);
        for (int i = 0; i < 10; ++i) ck_assert_int_eq(pp_world_step(s.pw, H), PP_OK);
        pp_set_log_hook(NULL, NULL);
        char geom[64];
        snprintf(geom, sizeof geom, "dGeomID %p", (void *)s.ground);
        printf("%s, %s: %s", c == 0 ? "trimesh on a body" : c == 1 ? "heightfield never built"
                                                                   : "wrapped heightfield",
               pp_model_name(model), logged);
        ck_assert_ptr_nonnull(strstr(logged, geom));
        ck_assert_ptr_nonnull(strstr(logged, why));
        ck_assert_ptr_null(strstr(strstr(logged, geom) + 1, geom)); /* once */
        /* free fall: z = r - g t (t + h) / 2 after 10 implicit steps (t = 10 h) */
        const double t = 10 * H;
        ck_assert_double_le(fabs(dBodyGetPosition(s.body)[2] - (RADIUS - 0.5 * G * t * (t + H))),
                            1e-12);
        destroy(&s);
    }
}
END_TEST

static Suite *terrain_suite(void)
{
    Suite *s = suite_create("terrain");
    TCase *tc = tcase_create("terrain");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, ball_rolls_down_trimesh_ramp, 0, 4);
    tcase_add_loop_test(tc, ball_rolls_down_heightfield_ramp, 0, 4);
    tcase_add_loop_test(tc, ball_rolls_down_registered_heightfield_ramp, 0, 4);
    tcase_add_loop_test(tc, ball_rolls_down_callback_heightfield_ramp, 0, 2);
    tcase_add_loop_test(tc, box_rests_on_terrain, 0, 4);
    tcase_add_loop_test(tc, box_slides_across_terrain, 0, 4);
    tcase_add_loop_test(tc, unmodelled_terrain_is_named, 0, 2);
    tcase_add_loop_test(tc, ball_rolls_across_big_heightfield, 0, 2);
    tcase_add_loop_test(tc, ball_rolls_over_a_ridge, 0, 2);
    tcase_add_loop_test(tc, box_rests_on_non_placeable_heightfield, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    dInitODE();
    int rc = pp_it_run(terrain_suite());
    dCloseODE();
    return rc;
}
