/* Scripted scenes after ODE's demos (see scripted.h). */
#define _DEFAULT_SOURCE /* M_PI */
#include "scripted.h"

#include "pegplus/geometry.h"

#include "scene_random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the generator */


static double uniform(unsigned long long *state, double lo, double hi)
{
    return lo + (hi - lo) * pp_uniform01(state);
}

/* A point uniform on the sphere of radius r (Marsaglia's normal-free method: z uniform). */
static void random_on_sphere(unsigned long long *state, double r, double p[3])
{
    double z = uniform(state, -1.0, 1.0), phi = uniform(state, 0.0, 2.0 * M_PI);
    double s = sqrt(1.0 - z * z);
    p[0] = r * s * cos(phi);
    p[1] = r * s * sin(phi);
    p[2] = r * z;
}

/* ------------------------------------------------------------------ the script */

typedef enum drop_kind { DROP_BOX, DROP_SPHERE, DROP_CAPSULE, DROP_HULL } drop_kind;

/* One body the script creates: its shape, mass and release state, all computed up front. */
typedef struct drop {
    int step;               /* created before this step */
    drop_kind kind;
    double dims[3];         /* box: lengths; sphere: radius; capsule: radius, length */
    double *points;         /* hull: vertices, body frame, centre of mass at the origin */
    int point_count;
    dMass mass;
    double position[3], velocity[3];
    dQuaternion q;
} drop;

typedef struct drop_script {
    int count, next;        /* drops[next] is the next to create; drops sorted by step */
    drop *drops;
    int failures;
} drop_script;

static void drop_script_destroy(void *p)
{
    drop_script *s = p;
    if (!s) return;
    for (int i = 0; i < s->count; ++i) free(s->drops[i].points);
    free(s->drops);
    free(s);
}

static int create_body(pp_scene *scene, const drop *d)
{
    dGeomID g = NULL;
    switch (d->kind) {
    case DROP_BOX: g = dCreateBox(scene->space, d->dims[0], d->dims[1], d->dims[2]); break;
    case DROP_SPHERE: g = dCreateSphere(scene->space, d->dims[0]); break;
    case DROP_CAPSULE: g = dCreateCapsule(scene->space, d->dims[0], d->dims[1]); break;
    case DROP_HULL:
        if (!scene->pegplus) {
            pp_log(PP_LOG_ERROR, "%s: scene.pegplus is NULL, hull not created", scene->name);
            return -1;
        }
        if (pp_convex_create(scene->pegplus, scene->space, d->points, d->point_count, &g) != PP_OK)
            return -1;
        break;
    }
    dBodyID b = dBodyCreate(scene->world);
    dMass m = d->mass;
    dBodySetMass(b, &m);
    dGeomSetBody(g, b);
    dBodySetPosition(b, d->position[0], d->position[1], d->position[2]);
    dBodySetQuaternion(b, d->q);
    dBodySetLinearVel(b, d->velocity[0], d->velocity[1], d->velocity[2]);
    if (pp_scene_append(scene, b, g) != 0) {
        pp_log(PP_LOG_ERROR, "%s: body list full (out of memory)", scene->name);
        return -1;
    }
    return 0;
}

static void drop_before_step(pp_scene *scene, int step)
{
    drop_script *s = scene->script;
    while (s->next < s->count && s->drops[s->next].step <= step)
        if (create_body(scene, &s->drops[s->next++]) != 0) s->failures++;
}

int pp_scene_script_failures(const pp_scene *scene)
{
    return scene->before_step == drop_before_step ? ((const drop_script *)scene->script)->failures : 0;
}

/* World, space, plane, and an empty script of `count` drops (zeroed). */
static pp_status script_begin(pp_scene *scene, const char *name, int count, drop_script **out)
{
    memset(scene, 0, sizeof *scene);
    drop_script *s = calloc(1, sizeof *s);
    drop *drops = calloc((size_t)count, sizeof *drops);
    if (!s || !drops) {
        free(s);
        free(drops);
        return PP_ERR_NO_MEMORY;
    }
    s->count = count;
    s->drops = drops;
    pp_scenes_init_ode();
    scene->name = name;
    scene->world = dWorldCreate();
    scene->space = dHashSpaceCreate(0);
    dWorldSetGravity(scene->world, 0, 0, -9.81);
    scene->ground = dCreatePlane(scene->space, 0, 0, 1, 0);
    scene->script = s;
    scene->script_destroy = drop_script_destroy;
    scene->before_step = drop_before_step;
    *out = s;
    return PP_OK;
}

static pp_status script_fail(pp_scene *scene, pp_status st)
{
    pp_scene_destroy(scene);
    return st;
}

/* The hull of `count` points as a uniform solid of `density`: its vertices recentred at the
 * centre of mass (d->points, owned by d) and the mass; *com receives the centre of mass in
 * the points' frame. */
static pp_status make_hull(drop *d, const double *points, int count, double density, double com[3])
{
    pp_polytope *p = NULL;
    pp_status st = pp_polytope_from_points(points, count, &p);
    if (st != PP_OK) return st;
    double mass = 0.0, inertia[9], minus[3];
    pp_polytope_mass_properties(p, density, &mass, com, inertia);
    for (int k = 0; k < 3; ++k) minus[k] = -com[k];
    pp_polytope_translate(p, minus);
    d->points = malloc((size_t)p->vertex_count * 3 * sizeof *d->points);
    if (!d->points) {
        pp_polytope_destroy(p);
        return PP_ERR_NO_MEMORY;
    }
    memcpy(d->points, p->vertices, (size_t)p->vertex_count * 3 * sizeof *d->points);
    d->point_count = p->vertex_count;
    d->kind = DROP_HULL;
    dMassSetZero(&d->mass);
    dMassSetParameters(&d->mass, mass, 0, 0, 0, inertia[0], inertia[4], inertia[8], inertia[1],
                       inertia[2], inertia[5]);
    pp_polytope_destroy(p);
    return PP_OK;
}

/* ---------------------------------------------------------------- boxstack */

enum { BOXSTACK_DROPS = 48, BOXSTACK_HULL_POINTS = 12 };

pp_status pp_scene_boxstack(pp_scene *scene, unsigned long long seed, double h)
{
    const double density = 5.0, interval = 0.6, height = 3.0;
    drop_script *s = NULL;
    pp_status st = script_begin(scene, "boxstack", BOXSTACK_DROPS, &s);
    if (st != PP_OK) return st;
    unsigned long long state = seed ^ 0xB0C5; /* one stream: body k depends on bodies < k */
    for (int k = 0; k < BOXSTACK_DROPS; ++k) {
        drop *d = &s->drops[k];
        d->step = (int)lround(k * interval / h);
        d->kind = (drop_kind)(pp_splitmix64(&state) % 4);
        switch (d->kind) {
        case DROP_BOX:
            for (int i = 0; i < 3; ++i) d->dims[i] = uniform(&state, 0.1, 0.6);
            dMassSetBox(&d->mass, density, d->dims[0], d->dims[1], d->dims[2]);
            break;
        case DROP_SPHERE:
            d->dims[0] = uniform(&state, 0.05, 0.3);
            dMassSetSphere(&d->mass, density, d->dims[0]);
            break;
        case DROP_CAPSULE:
            d->dims[0] = uniform(&state, 0.05, 0.2);
            d->dims[1] = uniform(&state, 0.1, 0.5);
            dMassSetCapsule(&d->mass, density, 3, d->dims[0], d->dims[1]);
            break;
        case DROP_HULL: {
            double sides[3], pts[3 * BOXSTACK_HULL_POINTS], com[3];
            for (int i = 0; i < 3; ++i) sides[i] = uniform(&state, 0.1, 0.6);
            for (int i = 0; i < BOXSTACK_HULL_POINTS; ++i)
                for (int c = 0; c < 3; ++c) pts[3 * i + c] = sides[c] * uniform(&state, -0.5, 0.5);
            st = make_hull(d, pts, BOXSTACK_HULL_POINTS, density, com);
            if (st != PP_OK) return script_fail(scene, st);
            break;
        }
        }
        d->position[0] = uniform(&state, -1.0, 1.0);
        d->position[1] = uniform(&state, -1.0, 1.0);
        d->position[2] = height;
        pp_random_quaternion(&state, d->q);
    }
    return PP_OK;
}

/* ------------------------------------------------------------- convex ball */

enum { BALL_CELLS = 90, BALL_SPHERE_POINTS = 200 };

/* The part of the convex hull `poly` with n . x <= offset, as a new hull (*out), or NULL in
 * *out when nothing is cut off. Points within 1e-9 m of the plane count as on it, so no
 * near-duplicate of a vertex is made. The new vertices are the kept vertices and the points
 * where the plane crosses an edge. */
static pp_status clip_hull(const pp_polytope *poly, const double n[3], double offset,
                           pp_polytope **out)
{
    const double on_plane = 1e-9;
    int nv = poly->vertex_count, cut = 0;
    double *dist = malloc((size_t)nv * sizeof *dist);
    double *pts = malloc((size_t)(nv + poly->edge_count) * 3 * sizeof *pts);
    if (!dist || !pts) {
        free(dist);
        free(pts);
        return PP_ERR_NO_MEMORY;
    }
    int count = 0;
    for (int v = 0; v < nv; ++v) {
        const double *x = &poly->vertices[3 * v];
        dist[v] = n[0] * x[0] + n[1] * x[1] + n[2] * x[2] - offset;
        if (dist[v] > on_plane) cut = 1;
        else memcpy(&pts[3 * count++], x, 3 * sizeof *x);
    }
    pp_status st = PP_OK;
    *out = NULL;
    if (cut) {
        for (int e = 0; e < poly->edge_count; ++e) {
            int a = poly->edges[4 * e], b = poly->edges[4 * e + 1];
            if (!((dist[a] < -on_plane && dist[b] > on_plane) || (dist[b] < -on_plane && dist[a] > on_plane)))
                continue;
            double t = dist[a] / (dist[a] - dist[b]);
            for (int c = 0; c < 3; ++c)
                pts[3 * count + c] = poly->vertices[3 * a + c] +
                                     t * (poly->vertices[3 * b + c] - poly->vertices[3 * a + c]);
            count++;
        }
        st = pp_polytope_from_points(pts, count, out);
    }
    free(dist);
    free(pts);
    return st;
}

/* 90 seeds in the ball of radius 0.42 m at least 0.12 m apart (dart throwing; the spacing
 * shrinks by 5 % after every 20 000 rejected darts, which these numbers never need). */
static void ball_seeds(unsigned long long *state, double seeds[BALL_CELLS][3])
{
    const double radius = 0.42;
    double spacing = 0.12;
    int found = 0, rejected = 0;
    while (found < BALL_CELLS) {
        double p[3];
        for (int c = 0; c < 3; ++c) p[c] = uniform(state, -radius, radius);
        int ok = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= radius * radius;
        for (int i = 0; ok && i < found; ++i) {
            double d2 = 0.0;
            for (int c = 0; c < 3; ++c) d2 += (p[c] - seeds[i][c]) * (p[c] - seeds[i][c]);
            ok = d2 >= spacing * spacing;
        }
        if (ok) {
            memcpy(seeds[found++], p, sizeof p);
        } else if (++rejected == 20000) {
            spacing *= 0.95;
            rejected = 0;
        }
    }
}

/* Cell i: the sphere's hull cut by the bisector plane of every other seed, moved back by
 * `half_gap` towards seed i. Planes are tried nearest seed first, so most later ones cut
 * nothing and cost only a pass over the vertices. */
static pp_status ball_cell(const pp_polytope *sphere, double seeds[BALL_CELLS][3], int i,
                           double half_gap, pp_polytope **out)
{
    int order[BALL_CELLS];
    double d2[BALL_CELLS];
    for (int j = 0; j < BALL_CELLS; ++j) {
        order[j] = j;
        d2[j] = 0.0;
        for (int c = 0; c < 3; ++c) d2[j] += (seeds[j][c] - seeds[i][c]) * (seeds[j][c] - seeds[i][c]);
    }
    for (int a = 1; a < BALL_CELLS; ++a) /* insertion sort by distance: 90 entries */
        for (int b = a; b > 0 && d2[order[b]] < d2[order[b - 1]]; --b) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    pp_polytope *cell = NULL;
    const pp_polytope *current = sphere;
    for (int k = 1; k < BALL_CELLS; ++k) { /* order[0] is i itself */
        int j = order[k];
        double n[3], len = sqrt(d2[j]), offset = 0.0;
        for (int c = 0; c < 3; ++c) n[c] = (seeds[j][c] - seeds[i][c]) / len;
        for (int c = 0; c < 3; ++c) offset += n[c] * 0.5 * (seeds[i][c] + seeds[j][c]);
        pp_polytope *next = NULL;
        pp_status st = clip_hull(current, n, offset - half_gap, &next);
        if (st != PP_OK) {
            pp_polytope_destroy(cell);
            return st;
        }
        if (next) {
            pp_polytope_destroy(cell);
            cell = next;
            current = cell;
        }
    }
    if (!cell) return pp_polytope_from_points(sphere->vertices, sphere->vertex_count, out);
    *out = cell;
    return PP_OK;
}

pp_status pp_scene_convex_ball(pp_scene *scene, unsigned long long seed)
{
    const double radius = 0.5, height = 4.2, density = 1000.0, half_gap = 0.002;
    drop_script *s = NULL;
    pp_status st = script_begin(scene, "convex", BALL_CELLS, &s);
    if (st != PP_OK) return st;

    /* the sphere: a Fibonacci lattice, point m at height z_m = 1 - (2m + 1) / M and longitude
     * m times the golden angle, nearly evenly spread */
    double sphere_pts[3 * BALL_SPHERE_POINTS];
    const double golden = M_PI * (3.0 - sqrt(5.0));
    for (int m = 0; m < BALL_SPHERE_POINTS; ++m) {
        double z = 1.0 - (2.0 * m + 1.0) / BALL_SPHERE_POINTS, r = sqrt(1.0 - z * z);
        sphere_pts[3 * m] = radius * r * cos(golden * m);
        sphere_pts[3 * m + 1] = radius * r * sin(golden * m);
        sphere_pts[3 * m + 2] = radius * z;
    }
    pp_polytope *sphere = NULL;
    st = pp_polytope_from_points(sphere_pts, BALL_SPHERE_POINTS, &sphere);
    if (st != PP_OK) return script_fail(scene, st);

    unsigned long long state = seed ^ 0xC0FE;
    double seeds[BALL_CELLS][3];
    ball_seeds(&state, seeds);
    for (int i = 0; i < BALL_CELLS; ++i) {
        pp_polytope *cell = NULL;
        st = ball_cell(sphere, seeds, i, half_gap, &cell);
        double com[3];
        if (st == PP_OK) st = make_hull(&s->drops[i], cell->vertices, cell->vertex_count, density, com);
        pp_polytope_destroy(cell);
        if (st != PP_OK) {
            pp_polytope_destroy(sphere);
            return script_fail(scene, st);
        }
        drop *d = &s->drops[i];
        d->step = 0;
        d->position[0] = com[0];
        d->position[1] = com[1];
        d->position[2] = height + com[2];
        dQSetIdentity(d->q);
    }
    pp_polytope_destroy(sphere);
    return PP_OK;
}

/* ------------------------------------------------------------------- hulls */

enum { HULL_POINTS = 16 };

pp_status pp_scene_hulls(pp_scene *scene, double closing_speed, unsigned long long seed)
{
    const double density = 1000.0, diameters[2] = {0.08, 0.02}, height = 0.3;
    const double x[2] = {-0.255, 0.255}, y[2] = {0.0, 0.005}, direction[2] = {1.0, -1.0};
    drop_script *s = NULL;
    pp_status st = script_begin(scene, "hulls", 2, &s);
    if (st != PP_OK) return st;
    unsigned long long state = seed ^ 0x4011;
    for (int k = 0; k < 2; ++k) {
        drop *d = &s->drops[k];
        double pts[3 * HULL_POINTS], com[3];
        for (int i = 0; i < HULL_POINTS; ++i) random_on_sphere(&state, 0.5 * diameters[k], &pts[3 * i]);
        st = make_hull(d, pts, HULL_POINTS, density, com);
        if (st != PP_OK) return script_fail(scene, st);
        d->step = 0;
        d->position[0] = x[k];
        d->position[1] = y[k];
        d->position[2] = height;
        d->velocity[0] = direction[k] * 0.5 * closing_speed;
        pp_random_quaternion(&state, d->q);
    }
    return PP_OK;
}
