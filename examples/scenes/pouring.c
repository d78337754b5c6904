/* The PEG pouring scene, 3D (see pouring.h). */
#define _DEFAULT_SOURCE /* M_PI */
#include "pouring.h"

#include "pegplus/overlap.h"

#include "scene_random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- the generator */


/* The stream of body k: a state mixed from the seed and k, so body k does not depend on which
 * bodies were drawn before it. */
static unsigned long long body_stream(unsigned long long seed, int k)
{
    unsigned long long s = seed;
    unsigned long long a = pp_splitmix64(&s);
    s = a ^ (0xD1B54A32D192ED03ULL * (unsigned long long)(k + 1));
    pp_splitmix64(&s);
    return s;
}

/* ------------------------------------------------------------------- the box */

typedef struct block_spec {
    double lengths[3];
    double centre[3];
} block_spec;

static const block_spec BLOCKS[PP_POUR_BLOCKS] = {
    {{10.25, 4.25, 0.25}, {0.0, 0.0, -0.125}}, /* floor */
    {{0.25, 4.25, 4.0}, {-5.0, 0.0, 1.75}},    /* end walls */
    {{0.25, 4.25, 4.0}, {5.0, 0.0, 1.75}},
    {{10.25, 0.25, 4.0}, {0.0, -2.0, 1.75}},   /* side walls */
    {{10.25, 0.25, 4.0}, {0.0, 2.0, 1.75}},
};

static const double DROP_POSITION[3] = {3.0, 0.0, 2.0};
static const double DROP_VELOCITY[3] = {-5.0, 0.0, 0.0};

pp_status pp_pour_scene_create(pp_pour_scene *s, pp_pour_shape shape, unsigned long long seed)
{
    if (!s) return PP_ERR_NULL_ARGUMENT;
    memset(s, 0, sizeof *s);
    if (shape != PP_POUR_RANDOM_HULLS && shape != PP_POUR_ICOSAHEDRA) {
        pp_log(PP_LOG_ERROR, "pp_pour_scene_create: unknown shape %d", (int)shape);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_scenes_init_ode();
    s->scene.name = shape == PP_POUR_RANDOM_HULLS ? "pour3d" : "pour3d_icosahedra";
    s->scene.world = dWorldCreate();
    s->scene.space = dHashSpaceCreate(0);
    dWorldSetGravity(s->scene.world, 0.0, 0.0, -9.81);
    s->shape = shape;
    s->seed = seed;
    for (int i = 0; i < PP_POUR_BLOCKS; ++i) {
        const block_spec *b = &BLOCKS[i];
        pp_status st = pp_polytope_box(b->lengths, &s->block_polytopes[i]);
        if (st != PP_OK) {
            pp_pour_scene_destroy(s);
            return st;
        }
        memcpy(s->block_lengths[i], b->lengths, sizeof b->lengths);
        s->blocks[i] = dCreateBox(s->scene.space, b->lengths[0], b->lengths[1], b->lengths[2]);
        dGeomSetPosition(s->blocks[i], b->centre[0], b->centre[1], b->centre[2]);
    }
    return PP_OK;
}

int pp_pour_drop_step(int k, double h) { return (int)lround(k * PP_POUR_DROP_INTERVAL / h); }

/* ------------------------------------------------------------------ the bodies */

/* Regular icosahedron of circumradius `radius`: the cyclic permutations of (0, ±1, ±phi). */
static void icosahedron_points(double radius, double pts[12 * 3])
{
    const double phi = 0.5 * (1.0 + sqrt(5.0)), scale = radius / sqrt(1.0 + phi * phi);
    int n = 0;
    for (int axis = 0; axis < 3; ++axis)
        for (int sa = -1; sa <= 1; sa += 2)
            for (int sb = -1; sb <= 1; sb += 2, ++n) {
                double p[3] = {0.0, 0.0, 0.0};
                p[(axis + 1) % 3] = sa * scale;
                p[(axis + 2) % 3] = sb * phi * scale;
                memcpy(pts + 3 * n, p, sizeof p);
            }
}

/* The shape of body k, recentred at its centre of mass, and its release orientation. */
static pp_status body_shape(const pp_pour_scene *s, int k, pp_polytope **out, dQuaternion q)
{
    double pts[3 * (PP_POUR_HULL_POINTS > 12 ? PP_POUR_HULL_POINTS : 12)];
    int count;
    if (s->shape == PP_POUR_RANDOM_HULLS) {
        unsigned long long state = body_stream(s->seed, k);
        count = PP_POUR_HULL_POINTS;
        for (int i = 0; i < 3 * count; ++i) pts[i] = pp_uniform01(&state);
        pp_random_quaternion(&state, q);
    } else {
        count = 12;
        icosahedron_points(0.5, pts);
        dQFromAxisAndAngle(q, 1.0, 2.0, 3.0, 0.2); /* the authors' qt([1 2 3], 0.2) */
    }
    pp_polytope *p = NULL;
    pp_status st = pp_polytope_from_points(pts, count, &p);
    if (st != PP_OK) return st;
    double com[3], minus[3];
    pp_polytope_mass_properties(p, 1.0, NULL, com, NULL);
    for (int i = 0; i < 3; ++i) minus[i] = -com[i];
    pp_polytope_translate(p, minus);
    *out = p;
    return PP_OK;
}

pp_status pp_pour_scene_drop(pp_pour_scene *s, pp_world *world, int k)
{
    if (!s || !world) {
        pp_log(PP_LOG_ERROR, "pp_pour_scene_drop: %s is NULL", !s ? "scene" : "world");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (k < 0) {
        pp_log(PP_LOG_ERROR, "pp_pour_scene_drop: body %d cannot be added", k);
        return PP_ERR_INVALID_ARGUMENT;
    }
    /* room for one more entry in scene.bodies/geoms and body_polytopes, before anything is
     * created (pp_scene_append then cannot fail) */
    if (s->scene.body_count == s->scene.body_capacity) {
        int capacity = s->scene.body_capacity ? 2 * s->scene.body_capacity : 16;
        pp_polytope **polytopes = realloc(s->body_polytopes, (size_t)capacity * sizeof *polytopes);
        if (!polytopes) return PP_ERR_NO_MEMORY;
        s->body_polytopes = polytopes;
        dBodyID *bodies = realloc(s->scene.bodies, (size_t)capacity * sizeof *bodies);
        if (!bodies) return PP_ERR_NO_MEMORY;
        s->scene.bodies = bodies;
        dGeomID *geoms = realloc(s->scene.geoms, (size_t)capacity * sizeof *geoms);
        if (!geoms) return PP_ERR_NO_MEMORY;
        s->scene.geoms = geoms;
        s->scene.body_capacity = capacity;
    }
    pp_polytope *p = NULL;
    dQuaternion q;
    pp_status st = body_shape(s, k, &p, q);
    if (st != PP_OK) return st;

    /* mass 0.5 kg: the solid's volume at density 1 gives the density for it */
    double volume = 0.0, inertia[9];
    pp_polytope_mass_properties(p, 1.0, &volume, NULL, NULL);
    pp_polytope_mass_properties(p, PP_POUR_BODY_MASS / volume, NULL, NULL, inertia);

    dGeomID geom = NULL;
    st = pp_convex_create(world, s->scene.space, p->vertices, p->vertex_count, &geom);
    if (st != PP_OK) {
        pp_polytope_destroy(p);
        return st;
    }
    dMass m;
    dMassSetZero(&m);
    dMassSetParameters(&m, PP_POUR_BODY_MASS, 0.0, 0.0, 0.0, inertia[0], inertia[4], inertia[8],
                       inertia[1], inertia[2], inertia[5]);
    dBodyID body = dBodyCreate(s->scene.world);
    dBodySetMass(body, &m);
    dGeomSetBody(geom, body);
    dBodySetPosition(body, DROP_POSITION[0], DROP_POSITION[1], DROP_POSITION[2]);
    dBodySetQuaternion(body, q);
    dBodySetLinearVel(body, DROP_VELOCITY[0], DROP_VELOCITY[1], DROP_VELOCITY[2]);

    s->body_polytopes[s->scene.body_count] = p;
    (void)pp_scene_append(&s->scene, body, geom); /* capacity reserved above */
    return PP_OK;
}

void pp_pour_scene_destroy(pp_pour_scene *s)
{
    if (!s) return;
    for (int i = 0; i < PP_POUR_BLOCKS; ++i) pp_polytope_destroy(s->block_polytopes[i]);
    for (int i = 0; i < s->scene.body_count; ++i) pp_polytope_destroy(s->body_polytopes[i]);
    free(s->body_polytopes);
    pp_scene_destroy(&s->scene);
    memset(s, 0, sizeof *s);
}

/* ---- measurement ---------------------------------------------------------------------- */

static int aabbs_overlap(dGeomID a, dGeomID b)
{
    dReal x[6], y[6];
    dGeomGetAABB(a, x);
    dGeomGetAABB(b, y);
    for (int k = 0; k < 3; ++k)
        if (x[2 * k + 1] < y[2 * k] || y[2 * k + 1] < x[2 * k]) return 0;
    return 1;
}

/* pouring.h */
pp_status pp_pour_scene_overlap(const pp_pour_scene *s, double *total)
{
    double sum = 0.0;
    int n = s->scene.body_count;
    for (int i = 0; i < n; ++i) {
        dGeomID gi = s->scene.geoms[i];
        double pi[3], Ri[9];
        pp_scene_geom_pose(gi, pi, Ri);
        for (int j = 0; j < n + PP_POUR_BLOCKS; ++j) {
            if (j < n && j <= i) continue; /* each dynamic pair once */
            dGeomID gj = j < n ? s->scene.geoms[j] : s->blocks[j - n];
            const pp_polytope *pj = j < n ? s->body_polytopes[j] : s->block_polytopes[j - n];
            if (!aabbs_overlap(gi, gj)) continue;
            double pos_j[3], Rj[9], v = 0.0;
            pp_scene_geom_pose(gj, pos_j, Rj);
            pp_status st = pp_overlap_volume(s->body_polytopes[i], pi, Ri, pj, pos_j, Rj, &v);
            if (st != PP_OK) return st;
            sum += v;
        }
    }
    *total = sum;
    return PP_OK;
}
