/*
 * fuzz_hull — libFuzzer harness for hull creation (issue 15, "Guards in CI").
 *
 * The bytes become a point cloud: either explicit points (each coordinate from the palette of
 * fuzz_input.h: grid values, NaN, +-Inf, denormals, 1e300, raw doubles), or a generated cloud
 * of up to 64 points (up to PP_FUZZ_MAX_POINTS = 1100, past ODE's 1024, when the bytes ask)
 * on a sphere, a cube, a plane, a line or a single point, at a scale from the palette, with
 * duplicates and one poisoned coordinate when the bytes ask.
 * The cloud goes to pp_polytope_from_points (contact/) and to pp_convex_create (plugin/).
 *
 * What must hold for every input (anything else aborts, which libFuzzer reports):
 *  - the status is one of those documented, and an error logged a message;
 *  - on PP_OK the polytope is a closed convex polyhedron made of the input: V - E + F = 2,
 *    indices in range, finite data, unit face normals, every vertex an input point, every
 *    vertex (and, for small clouds, every input point) inside every face plane; its mass
 *    properties are finite when its size is;
 *  - pp_convex_create agrees with pp_polytope_from_points, creates exactly one dConvex with a
 *    finite bounding box on PP_OK, and nothing on error; pp_convex_destroy removes it.
 */
#include <ode/ode.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define PP_FUZZ_NAME "fuzz_hull"
#include "fuzz_harness.h"
#include "fuzz_input.h"
#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"

#define PP_FUZZ_MAX_POINTS 1100

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    pp_fuzz_init();
    return 0;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static double lcg_unit(uint64_t *s) { return (double)lcg(s) * 0x1.0p-53 * 2.0 - 1.0; }

/* Decode the cloud; returns the point count to pass (may be negative). */
static int decode_points(fuzz_reader *r, double *pts)
{
    const uint8_t mode = fuzz_u8(r);
    int n;
    if ((mode & 1) == 0) { /* explicit points */
        n = (int)((r->size - r->at) / 3);
        if (n > 64) n = 64;
        for (int i = 0; i < 3 * n; ++i) pts[i] = fuzz_any_double(r);
    } else {                 /* a generated cloud */
        /* mostly small clouds; bit 4 of the mode asks for a large one (past ODE's 1024) */
        n = 1 + (int)(fuzz_u16(r) % ((mode & 16) ? PP_FUZZ_MAX_POINTS : 64));
        uint64_t s = fuzz_u32(r);
        double scale = fuzz_any_double(r);
        double centre[3];
        for (int k = 0; k < 3; ++k) centre[k] = fuzz_any_double(r); /* in order */
        const int shape = (mode >> 1) % 8 % 5; /* bits 1-3 */
        for (int i = 0; i < n; ++i) {
            double p[3] = {lcg_unit(&s), lcg_unit(&s), lcg_unit(&s)};
            if (shape == 0) { /* sphere */
                const double len = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
                for (int k = 0; k < 3; ++k) p[k] = len > 1e-3 ? p[k] / len : (k == 0);
            } else if (shape == 2) { /* plane z = 0 */
                p[2] = 0.0;
            } else if (shape == 3) { /* line */
                p[1] = 2.0 * p[0];
                p[2] = -p[0];
            } else if (shape == 4) { /* one point, repeated */
                p[0] = p[1] = p[2] = 0.5;
            }
            for (int k = 0; k < 3; ++k) pts[3 * i + k] = centre[k] + scale * p[k];
        }
        const uint8_t extra = fuzz_u8(r);
        if (extra & 1) { /* duplicate a run of points */
            const int from = (int)(lcg(&s) % (uint64_t)n), to = (int)(lcg(&s) % (uint64_t)n);
            memcpy(pts + 3 * to, pts + 3 * from, 3 * sizeof(double));
        }
        if (extra & 2) pts[lcg(&s) % (uint64_t)(3 * n)] = fuzz_any_double(r);
        if (extra & 4) n = -n;
    }
    return n;
}

static int point_compare(const void *x, const void *y)
{
    const double *a = x, *b = y;
    for (int k = 0; k < 3; ++k)
        if (a[k] != b[k]) return (a[k] > b[k]) - (a[k] < b[k]);
    return 0;
}

static void check_polytope(const pp_polytope *p, const double *pts, int n)
{
    const int V = p->vertex_count, F = p->face_count, E = p->edge_count;
    REQUIRE(V >= 4 && F >= 4 && E >= 6);
    REQUIRE(V - E + F == 2); /* Euler: a closed polyhedron of genus 0 */
    REQUIRE(isfinite(p->radius) && p->radius > 0.0);
    for (int k = 0; k < 3; ++k) REQUIRE(isfinite(p->centroid[k]));
    double scale = p->radius;
    for (int k = 0; k < 3; ++k) scale += fabs(p->centroid[k]);
    const double tol = 1e-9 * scale;

    double *sorted = malloc(sizeof(double) * 3 * (size_t)n);
    REQUIRE(sorted);
    memcpy(sorted, pts, sizeof(double) * 3 * (size_t)n);
    qsort(sorted, (size_t)n, 3 * sizeof(double), point_compare);
    for (int v = 0; v < V; ++v) {
        for (int k = 0; k < 3; ++k) REQUIRE(isfinite(p->vertices[3 * v + k]));
        REQUIRE(bsearch(p->vertices + 3 * v, sorted, (size_t)n, 3 * sizeof(double), point_compare));
    }
    free(sorted);

    REQUIRE(p->face_first[0] == 0);
    for (int f = 0; f < F; ++f) {
        const double *eta = p->face_normals + 3 * f;
        const double len = sqrt(eta[0] * eta[0] + eta[1] * eta[1] + eta[2] * eta[2]);
        REQUIRE(fabs(len - 1.0) < 1e-9);
        REQUIRE(isfinite(p->face_offsets[f]));
        REQUIRE(p->face_first[f + 1] - p->face_first[f] >= 3);
        for (int j = p->face_first[f]; j < p->face_first[f + 1]; ++j)
            REQUIRE(p->face_vertices[j] >= 0 && p->face_vertices[j] < V);
        for (int v = 0; v < V; ++v) {
            const double *x = p->vertices + 3 * v;
            REQUIRE(eta[0] * x[0] + eta[1] * x[1] + eta[2] * x[2] <= p->face_offsets[f] + tol);
        }
        if ((long)n * F <= 200000)
            for (int i = 0; i < n; ++i) {
                const double *x = pts + 3 * i;
                REQUIRE(eta[0] * x[0] + eta[1] * x[1] + eta[2] * x[2] <= p->face_offsets[f] + tol);
            }
    }
    for (int e = 0; e < E; ++e) {
        const int *ed = p->edges + 4 * e;
        REQUIRE(ed[0] >= 0 && ed[0] < V && ed[1] >= 0 && ed[1] < V && ed[0] != ed[1]);
        REQUIRE(ed[2] >= 0 && ed[2] < F && ed[3] >= 0 && ed[3] < F && ed[2] != ed[3]);
    }

    double mass = 0.0, com[3], inertia[9];
    REQUIRE(pp_polytope_mass_properties(p, 1.0, &mass, com, inertia) == PP_OK);
    if (p->radius < 1e50 && scale < 1e50) {
        REQUIRE(isfinite(mass) && mass >= 0.0);
        for (int k = 0; k < 3; ++k) REQUIRE(isfinite(com[k]));
        for (int k = 0; k < 9; ++k) REQUIRE(isfinite(inertia[k]));
    }
}

static int documented(pp_status s)
{
    return s == PP_OK || s == PP_ERR_INVALID_ARGUMENT || s == PP_ERR_DEGENERATE ||
           s == PP_ERR_NULL_ARGUMENT || s == PP_ERR_NO_MEMORY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static double pts[3 * PP_FUZZ_MAX_POINTS];
    fuzz_reader r = fuzz_reader_make(data, size);
    const int count = decode_points(&r, pts);
    const int n = count < 0 ? -count : count;

    /* contact/: the polytope */
    pp_polytope *poly = NULL;
    g_errors = 0;
    const pp_status s1 = pp_polytope_from_points(pts, count, &poly);
    REQUIRE(documented(s1));
    REQUIRE((s1 == PP_OK) == (poly != NULL));
    REQUIRE(s1 == PP_OK || g_errors > 0 || s1 == PP_ERR_NO_MEMORY);
    if (poly) check_polytope(poly, pts, n);
    pp_polytope_destroy(poly);

    /* plugin/: the dConvex made from the same points */
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    pp_world *pw = NULL;
    REQUIRE(pp_world_create(world, space, NULL, &pw) == PP_OK);
    dGeomID geom = (dGeomID)&geom; /* a sentinel: must stay as it is on error */
    const dGeomID sentinel = geom;
    g_errors = 0;
    const pp_status s2 = pp_convex_create(pw, space, pts, count, &geom);
    REQUIRE(documented(s2));
    REQUIRE(s2 == s1 || s1 == PP_ERR_NO_MEMORY || s2 == PP_ERR_NO_MEMORY);
    if (s2 == PP_OK) {
        REQUIRE(geom && geom != sentinel && dGeomGetClass(geom) == dConvexClass);
        REQUIRE(dSpaceGetNumGeoms(space) == 1);
        dReal aabb[6];
        dGeomGetAABB(geom, aabb);
        for (int k = 0; k < 6; ++k) REQUIRE(isfinite(aabb[k]));
        REQUIRE(pp_convex_destroy(pw, geom) == PP_OK);
    } else {
        REQUIRE(geom == sentinel && g_errors > 0);
    }
    REQUIRE(dSpaceGetNumGeoms(space) == 0);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    return 0;
}
