/*
 * Convex polytopes for ODE geoms. ODE keeps the caller's dConvex arrays (planes, points,
 * polygons) by pointer and offers no getter for them (spec/ODE.md "Convex has no getter"), so
 * pegplus records the polytope when the geom is made (pp_convex_create) or registered
 * (pp_world_register_convex).
 */
#include "world_internal.h"

#include "pegplus/geometry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static pp_status add_record(pp_world *world, const pp_convex_record *record)
{
    pp_status st = pp_grow((void **)&world->convexes, &world->convex_capacity,
                           world->convex_count + 1, sizeof(pp_convex_record));
    if (st == PP_OK) world->convexes[world->convex_count++] = *record;
    return st;
}

static void free_record_arrays(pp_convex_record *r)
{
    free(r->planes);
    free(r->points);
    free(r->polygons);
    pp_polytope_destroy(r->polytope);
    memset(r, 0, sizeof *r);
}

const pp_polytope *pp_convex_find(const pp_world *world, dGeomID geom)
{
    for (int i = 0; i < world->convex_count; ++i)
        if (world->convexes[i].geom == geom) return world->convexes[i].polytope;
    return NULL;
}

/* ODE's dConvex layout from our polytope: planes (a, b, c, d) with a x + b y + c z = d the face
 * plane and (a, b, c) the outward normal; points xyz; polygons as [count, i0, i1, ...] in the
 * face's counter-clockwise order seen from outside (as demo_convex's data). */
static pp_status ode_arrays(const pp_polytope *p, pp_convex_record *r)
{
    int polygon_words = 0;
    for (int f = 0; f < p->face_count; ++f)
        polygon_words += 1 + p->face_first[f + 1] - p->face_first[f];
    r->planes = malloc(sizeof(double) * 4 * (size_t)p->face_count);
    r->points = malloc(sizeof(double) * 3 * (size_t)p->vertex_count);
    r->polygons = malloc(sizeof(unsigned) * (size_t)polygon_words);
    if (!r->planes || !r->points || !r->polygons) {
        pp_log(PP_LOG_ERROR, "pp_convex_create: out of memory");
        return PP_ERR_NO_MEMORY;
    }
    for (int f = 0; f < p->face_count; ++f) {
        for (int k = 0; k < 3; ++k) r->planes[4 * f + k] = p->face_normals[3 * f + k];
        r->planes[4 * f + 3] = p->face_offsets[f];
    }
    memcpy(r->points, p->vertices, sizeof(double) * 3 * (size_t)p->vertex_count);
    int w = 0;
    for (int f = 0; f < p->face_count; ++f) {
        r->polygons[w++] = (unsigned)(p->face_first[f + 1] - p->face_first[f]);
        for (int j = p->face_first[f]; j < p->face_first[f + 1]; ++j)
            r->polygons[w++] = (unsigned)p->face_vertices[j];
    }
    return PP_OK;
}

pp_status pp_convex_create(pp_world *world, dSpaceID space, const double *points, int count,
                           dGeomID *out)
{
    if (!world || !points || !out) {
        pp_log(PP_LOG_ERROR, "pp_convex_create: %s is NULL",
               !world ? "world" : !points ? "points" : "out");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_convex_record r;
    memset(&r, 0, sizeof r);
    pp_status st = pp_polytope_from_points(points, count, &r.polytope);
    if (st != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_convex_create: cannot build a convex polytope from the %d points "
                             "(%s); no geom created", count, pp_status_string(st));
        return st;
    }
    st = ode_arrays(r.polytope, &r);
    if (st == PP_OK) {
        r.owned = 1;
        r.geom = dCreateConvex(space, r.planes, (unsigned)r.polytope->face_count, r.points,
                               (unsigned)r.polytope->vertex_count, r.polygons);
        st = add_record(world, &r);
        if (st != PP_OK) dGeomDestroy(r.geom);
    }
    if (st != PP_OK) {
        free_record_arrays(&r);
        return st;
    }
    *out = r.geom;
    return PP_OK;
}

/* Does the geom's AABB (ODE's, from its own data) match the polytope posed at the geom?
 * A cheap check that the points given are the geom's shape. */
static int aabb_matches(dGeomID geom, const pp_polytope *p)
{
    dReal box[6];
    dGeomGetAABB(geom, box);
    const dReal *x = dGeomGetPosition(geom), *R = dGeomGetRotation(geom);
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (int v = 0; v < p->vertex_count; ++v) {
        const double *pv = &p->vertices[3 * v];
        for (int k = 0; k < 3; ++k) {
            double c = x[k] + R[4 * k] * pv[0] + R[4 * k + 1] * pv[1] + R[4 * k + 2] * pv[2];
            if (c < lo[k]) lo[k] = c;
            if (c > hi[k]) hi[k] = c;
        }
    }
    double tol = 1e-6 * (1.0 + p->radius);
    for (int k = 0; k < 3; ++k)
        if (fabs(box[2 * k] - lo[k]) > tol || fabs(box[2 * k + 1] - hi[k]) > tol) return 0;
    return 1;
}

pp_status pp_world_register_convex(pp_world *world, dGeomID convex, const double *points,
                                   int count)
{
    if (!world || !convex || !points) {
        pp_log(PP_LOG_ERROR, "pp_world_register_convex: %s is NULL",
               !world ? "world" : !convex ? "convex" : "points");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (dGeomGetClass(convex) != dConvexClass) {
        pp_log(PP_LOG_ERROR, "pp_world_register_convex: geom %p is of class %d, not a dConvex",
               (void *)convex, dGeomGetClass(convex));
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (pp_convex_find(world, convex)) {
        pp_log(PP_LOG_ERROR, "pp_world_register_convex: geom %p is already registered",
               (void *)convex);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_convex_record r;
    memset(&r, 0, sizeof r);
    pp_status st = pp_polytope_from_points(points, count, &r.polytope);
    if (st != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_world_register_convex: cannot build a convex polytope from the "
                             "%d points (%s)", count, pp_status_string(st));
        return st;
    }
    if (!aabb_matches(convex, r.polytope)) {
        pp_log(PP_LOG_ERROR, "pp_world_register_convex: the hull of the points does not match "
                             "the geom's bounding box; pass the points the dConvex was made of");
        free_record_arrays(&r);
        return PP_ERR_INVALID_ARGUMENT;
    }
    r.geom = convex;
    st = add_record(world, &r);
    if (st != PP_OK) free_record_arrays(&r);
    return st;
}

pp_status pp_convex_destroy(pp_world *world, dGeomID convex)
{
    if (!world || !convex) {
        pp_log(PP_LOG_ERROR, "pp_convex_destroy: %s is NULL", !world ? "world" : "convex");
        return PP_ERR_NULL_ARGUMENT;
    }
    for (int i = 0; i < world->convex_count; ++i) {
        pp_convex_record *r = &world->convexes[i];
        if (r->geom != convex) continue;
        if (r->owned) dGeomDestroy(r->geom);
        free_record_arrays(r);
        world->convexes[i] = world->convexes[--world->convex_count];
        return PP_OK;
    }
    pp_log(PP_LOG_ERROR, "pp_convex_destroy: geom %p is not a convex known to this world",
           (void *)convex);
    return PP_ERR_INVALID_ARGUMENT;
}

/* Boxes are stepped as their 8-vertex polytopes (PEG needs the features), one per size. */
typedef struct pp_box_record {
    double lengths[3];
    pp_polytope *polytope;
} pp_box_record;

const pp_polytope *pp_box_polytope(pp_world *world, const double lengths[3])
{
    for (int i = 0; i < world->box_count; ++i) {
        const double *l = world->boxes[i].lengths;
        if (l[0] == lengths[0] && l[1] == lengths[1] && l[2] == lengths[2])
            return world->boxes[i].polytope;
    }
    pp_box_record entry;
    memcpy(entry.lengths, lengths, sizeof entry.lengths);
    if (pp_polytope_box(lengths, &entry.polytope) != PP_OK) return NULL;
    if (pp_grow((void **)&world->boxes, &world->box_capacity, world->box_count + 1,
                sizeof entry) != PP_OK) {
        pp_polytope_destroy(entry.polytope);
        return NULL;
    }
    world->boxes[world->box_count++] = entry;
    return entry.polytope;
}

void pp_convex_records_free(pp_world *world)
{
    for (int i = 0; i < world->box_count; ++i) pp_polytope_destroy(world->boxes[i].polytope);
    free(world->boxes);
    world->boxes = NULL;
    world->box_count = world->box_capacity = 0;
    for (int i = 0; i < world->convex_count; ++i) {
        if (world->convexes[i].owned) dGeomDestroy(world->convexes[i].geom);
        free_record_arrays(&world->convexes[i]);
    }
    free(world->convexes);
    world->convexes = NULL;
    world->convex_count = world->convex_capacity = 0;
}
