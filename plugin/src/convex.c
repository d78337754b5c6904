/*
 * Convex polytopes for ODE geoms. ODE keeps the caller's dConvex arrays (planes, points, polygons)
 * by pointer and offers no getter for them (ODE 0.16's collision.h; docs/references.md), so pegplus
 * records the polytope when the geom is made (pp_convex_create) or registered
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

const pp_polytope *pp_convex_polytope(const pp_world *world, dGeomID convex)
{
    return world && convex ? pp_convex_find(world, convex) : NULL;
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

/*
 * What ODE can take. dCreateConvex builds its edge list by searching the edges found so far
 * for every side of every polygon, and reallocates the list at each new edge
 * (dxConvex::FillEdges, ODE 0.16): O(E^2) time and bytes copied. Measured: 3 ms for 3 000
 * edges, 0.87 s for 48 000; the 300 000 edges of the hull of 100 000 points on a sphere did
 * not finish. Its convex-convex collider also tries every pair of edges (E1 E2 per call).
 * So a hull of more than PP_ODE_CONVEX_MAX_VERTICES vertices is given to ODE as the hull of
 * its support vertices in that many directions spread evenly over the sphere (a Fibonacci
 * lattice): at most 1024 vertices, about 3 000 edges, a few ms in dCreateConvex. That shape's
 * vertices are vertices of the exact hull, so it lies inside it; how far the exact hull
 * reaches beyond its face planes is measured and logged. The pegplus models use the exact
 * hull; only PP_MODEL_ODE collides the reduced one.
 */
#define PP_ODE_CONVEX_MAX_VERTICES 1024

/* The vertex of p farthest in direction dir, by hill climbing over omega(v) from `start`:
 * on a convex polytope a vertex with no better neighbour maximises a linear function. */
static int support_vertex(const pp_polytope *p, const double dir[3], int start)
{
    int best = start;
    const double *x = p->vertices + 3 * best;
    double best_value = dir[0] * x[0] + dir[1] * x[1] + dir[2] * x[2];
    for (int moved = 1; moved;) {
        moved = 0;
        for (int k = p->neighbour_first[best]; k < p->neighbour_first[best + 1]; ++k) {
            const double *y = p->vertices + 3 * p->neighbours[k];
            double value = dir[0] * y[0] + dir[1] * y[1] + dir[2] * y[2];
            if (value > best_value) {
                best_value = value;
                best = p->neighbours[k];
                moved = 1;
                break; /* omega(best) changed */
            }
        }
    }
    return best;
}

/* A vertex of the exact hull, by its coordinates (the reduced hull copies them exactly). */
typedef struct taken_vertex {
    double x[3];
    int index;
} taken_vertex;

static int taken_compare(const void *a, const void *b)
{
    const double *x = ((const taken_vertex *)a)->x, *y = ((const taken_vertex *)b)->x;
    for (int k = 0; k < 3; ++k)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* The polytope ODE gets in place of a hull with more than PP_ODE_CONVEX_MAX_VERTICES
 * vertices (see above); *excess: max over its faces f of (support of the exact hull along
 * eta_f) - d_f, m. Hill climbs start near their answer: direction i of the lattice from the
 * answer of direction i - 34 (Fibonacci-lattice neighbours are a Fibonacci number of indices
 * apart; 34 ~ sqrt(1024)), a face of the reduced hull from one of its own vertices. */
static pp_status ode_reduced_hull(const pp_polytope *exact, pp_polytope **out, double *excess)
{
    enum { directions = PP_ODE_CONVEX_MAX_VERTICES, seed_offset = 34 };
    unsigned char *taken = calloc((size_t)exact->vertex_count, 1);
    taken_vertex *kept = malloc(sizeof *kept * directions);
    double *points = malloc(sizeof(double) * 3 * directions);
    int *found = malloc(sizeof(int) * directions);
    pp_status st = taken && kept && points && found ? PP_OK : PP_ERR_NO_MEMORY;
    const double golden = 3.14159265358979323846 * (3.0 - sqrt(5.0));
    int count = 0;
    for (int i = 0; i < directions && st == PP_OK; ++i) {
        double z = 1.0 - (2.0 * i + 1.0) / directions, r = sqrt(1.0 - z * z);
        double dir[3] = {r * cos(golden * i), r * sin(golden * i), z};
        int v = support_vertex(exact, dir, i >= seed_offset ? found[i - seed_offset] : i ? found[i - 1] : 0);
        found[i] = v;
        if (taken[v]) continue;
        taken[v] = 1;
        memcpy(points + 3 * count, exact->vertices + 3 * v, sizeof(double) * 3);
        memcpy(kept[count].x, exact->vertices + 3 * v, sizeof(double) * 3);
        kept[count++].index = v;
    }
    if (st == PP_OK) st = pp_polytope_from_points(points, count, out);
    if (st == PP_OK) {
        qsort(kept, (size_t)count, sizeof *kept, taken_compare);
        const pp_polytope *p = *out;
        *excess = 0.0;
        for (int f = 0; f < p->face_count; ++f) {
            const double *eta = p->face_normals + 3 * f;
            taken_vertex key;
            memcpy(key.x, p->vertices + 3 * p->face_vertices[p->face_first[f]], sizeof key.x);
            const taken_vertex *corner = bsearch(&key, kept, (size_t)count, sizeof *kept, taken_compare);
            int v = support_vertex(exact, eta, corner ? corner->index : 0);
            const double *x = exact->vertices + 3 * v;
            *excess = fmax(*excess, eta[0] * x[0] + eta[1] * x[1] + eta[2] * x[2] - p->face_offsets[f]);
        }
    } else if (st == PP_ERR_NO_MEMORY) {
        pp_log(PP_LOG_ERROR, "pp_convex_create: out of memory");
    }
    free(taken);
    free(kept);
    free(points);
    free(found);
    return st;
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
    const pp_polytope *for_ode = r.polytope;
    pp_polytope *reduced = NULL;
    if (r.polytope->vertex_count > PP_ODE_CONVEX_MAX_VERTICES) {
        double excess = 0.0;
        st = ode_reduced_hull(r.polytope, &reduced, &excess);
        if (st != PP_OK) {
            free_record_arrays(&r);
            return st;
        }
        for_ode = reduced;
        pp_log(PP_LOG_WARNING,
               "pp_convex_create: the hull has %d vertices; ODE's dCreateConvex is quadratic in "
               "its edges, so the dConvex is the hull of %d of them (PP_MODEL_ODE collides that "
               "shape, which the exact hull exceeds by up to %g m beyond its faces; the pegplus "
               "models use the exact hull)",
               r.polytope->vertex_count, reduced->vertex_count, excess);
    }
    st = ode_arrays(for_ode, &r);
    if (st == PP_OK) {
        r.owned = 1;
        r.ode_vertex_count = for_ode->vertex_count;
        r.geom = dCreateConvex(space, r.planes, (unsigned)for_ode->face_count, r.points,
                               (unsigned)for_ode->vertex_count, r.polygons);
        st = add_record(world, &r);
        if (st != PP_OK) dGeomDestroy(r.geom);
    }
    pp_polytope_destroy(reduced);
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

pp_status pp_world_unregister_convex(pp_world *world, dGeomID convex)
{
    if (!world || !convex) {
        pp_log(PP_LOG_ERROR, "pp_world_unregister_convex: %s is NULL", !world ? "world" : "convex");
        return PP_ERR_NULL_ARGUMENT;
    }
    for (int i = 0; i < world->convex_count; ++i) {
        pp_convex_record *r = &world->convexes[i];
        if (r->geom != convex) continue; /* pointers only: the geom may be gone already */
        if (r->owned) {
            pp_log(PP_LOG_ERROR, "pp_world_unregister_convex: dGeomID %p was made by "
                                 "pp_convex_create; destroy it with pp_convex_destroy",
                   (void *)convex);
            return PP_ERR_INVALID_ARGUMENT;
        }
        free_record_arrays(r);
        world->convexes[i] = world->convexes[--world->convex_count];
        return PP_OK;
    }
    pp_log(PP_LOG_ERROR, "pp_world_unregister_convex: dGeomID %p is not a convex registered with "
                         "this world", (void *)convex);
    return PP_ERR_INVALID_ARGUMENT;
}

/* Boxes are stepped as their 8-vertex polytopes (PEG needs the features), one per size;
 * cylinders keep their inscribed prism here too (lengths = radius, length, 0). */
typedef struct pp_box_record {
    double lengths[3];
    int cylinder;
    pp_polytope *polytope;
} pp_box_record;

static const pp_polytope *cached_polytope(pp_world *world, const double lengths[3], int cylinder)
{
    /* The scan starts after the last record found: every step asks for the geoms' sizes in the
     * same order, so each is found at once (from the first record, a world of n different
     * boxes cost n^2 / 2 comparisons a step). Records are unique, so the answer is the same. */
    for (int t = 0, n = world->box_count; t < n; ++t) {
        int i = world->box_next + t < n ? world->box_next + t : world->box_next + t - n;
        const double *l = world->boxes[i].lengths;
        if (world->boxes[i].cylinder == cylinder && l[0] == lengths[0] && l[1] == lengths[1] &&
            l[2] == lengths[2]) {
            world->box_next = i + 1 < n ? i + 1 : 0;
            return world->boxes[i].polytope;
        }
    }
    pp_box_record entry;
    memcpy(entry.lengths, lengths, sizeof entry.lengths);
    entry.cylinder = cylinder;
    pp_status st = cylinder ? pp_polytope_cylinder_prism(lengths[0], lengths[1],
                                                         PP_CYLINDER_PRISM_SIDES, &entry.polytope)
                            : pp_polytope_box(lengths, &entry.polytope);
    if (st != PP_OK) return NULL;
    if (pp_grow((void **)&world->boxes, &world->box_capacity, world->box_count + 1,
                sizeof entry) != PP_OK) {
        pp_polytope_destroy(entry.polytope);
        return NULL;
    }
    world->boxes[world->box_count++] = entry;
    return entry.polytope;
}

const pp_polytope *pp_box_polytope(pp_world *world, const double lengths[3])
{
    return cached_polytope(world, lengths, 0);
}

const pp_polytope *pp_cylinder_prism(pp_world *world, double radius, double length)
{
    const double key[3] = {radius, length, 0.0};
    return cached_polytope(world, key, 1);
}

void pp_convex_records_free(pp_world *world)
{
    for (int i = 0; i < world->box_count; ++i) pp_polytope_destroy(world->boxes[i].polytope);
    free(world->boxes);
    world->boxes = NULL;
    world->box_count = world->box_capacity = world->box_next = 0;
    for (int i = 0; i < world->convex_count; ++i) {
        if (world->convexes[i].owned) dGeomDestroy(world->convexes[i].geom);
        free_record_arrays(&world->convexes[i]);
    }
    free(world->convexes);
    world->convexes = NULL;
    world->convex_count = world->convex_capacity = 0;
}
