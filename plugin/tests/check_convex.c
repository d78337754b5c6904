/*
 * pp_convex_create on large point sets (Reliability issue): the hull of 100 000 points on a
 * sphere is built (it did not return: an O(V F) convexity check in pegplus and ODE's O(E^2)
 * edge list in dCreateConvex), it is the exact hull, and what ODE gets is bounded.
 */
#include "pegplus/pegplus.h"
#include "../src/world_internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A point is "on or inside" the hull when it is at most this far beyond every face plane. */
static const double HULL_TOL = 1e-9;
/* ODE's dConvex holds at most this many vertices (convex.c PP_ODE_CONVEX_MAX_VERTICES). */
enum { ODE_MAX_VERTICES = 1024 };

static char g_message[1024];
static int g_warnings;

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)user;
    strncpy(g_message, message, sizeof g_message - 1);
    g_warnings += level == PP_LOG_WARNING;
}

static void setup(void)
{
    dInitODE2(0);
    g_message[0] = '\0';
    g_warnings = 0;
    pp_set_log_hook(capture, NULL);
}

static void teardown(void)
{
    pp_set_log_hook(NULL, NULL);
    dCloseODE();
}

static unsigned long long g_rng = 12345;

static double uniform(double lo, double hi)
{
    g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * ((double)(g_rng >> 11) / 9007199254740992.0);
}

/* n points uniform on the unit sphere (z uniform, azimuth uniform). */
static double *sphere_points(int n)
{
    double *p = malloc(sizeof(double) * 3 * (size_t)n);
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < n; ++i) {
        double z = uniform(-1.0, 1.0), a = uniform(0.0, 6.283185307179586), r = sqrt(1.0 - z * z);
        p[3 * i] = r * cos(a);
        p[3 * i + 1] = r * sin(a);
        p[3 * i + 2] = z;
    }
    return p;
}

static int point_compare(const void *x, const void *y)
{
    const double *a = x, *b = y;
    for (int k = 0; k < 3; ++k)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* Is every one of `count` points x (3 each) one of the sorted points? */
static void assert_all_among(const double *x, int count, const double *sorted, int n, const char *what)
{
    /* ck_abort_msg only on failure: every passing ck_assert is a write to Check's pipe */
    for (int v = 0; v < count; ++v)
        if (!bsearch(x + 3 * v, sorted, (size_t)n, 3 * sizeof(double), point_compare))
            ck_abort_msg("%s %d (%g %g %g) is not an input point", what, v, x[3 * v],
                         x[3 * v + 1], x[3 * v + 2]);
}

/*
 * Every point of a cloud on the unit sphere on or below every face plane of p, within
 * HULL_TOL, without the 2e10 products of the direct test. For |x| <= s and a face at angle
 * psi from x, eta . x <= s cos psi; so face f can be exceeded (eta . x > d_f + HULL_TOL) only
 * when cos psi > (d_min + HULL_TOL) / s, i.e. when its normal is within the chord
 * r = sqrt(2 - 2 (d_min + HULL_TOL) / s) of x / |x|. Faces are bucketed by normal in a grid
 * over [-1, 1]^3; each point is tested against every face in the cells that meet the cube
 * of half-side r about its direction (r is padded by 1e-9 for rounding).
 */
static void assert_points_inside(const pp_polytope *p, const double *x, int n)
{
    double d_min = HUGE_VAL, s = 0.0;
    for (int f = 0; f < p->face_count; ++f) d_min = fmin(d_min, p->face_offsets[f]);
    for (int i = 0; i < n; ++i) s = fmax(s, sqrt(x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2] * x[3 * i + 2]));
    ck_assert(d_min > 0.0);
    double r = sqrt(fmax(0.0, 2.0 - 2.0 * (d_min + HULL_TOL) / s)) + 1e-9;
    enum { G = 64 };
    const double cell = 2.0 / G;
    int *first = calloc(G * G * G + 1, sizeof(int)), *faces = malloc(sizeof(int) * (size_t)p->face_count);
    int *fill = malloc(sizeof(int) * (G * G * G));
    ck_assert(first && faces && fill);
#define CELL_OF(c) ((int)fmin(G - 1, fmax(0, floor(((c) + 1.0) / cell))))
#define INDEX(i, j, k) (((i) * G + (j)) * G + (k))
    for (int f = 0; f < p->face_count; ++f) {
        const double *e = p->face_normals + 3 * f;
        first[INDEX(CELL_OF(e[0]), CELL_OF(e[1]), CELL_OF(e[2])) + 1]++;
    }
    for (int c = 0; c < G * G * G; ++c) first[c + 1] += first[c];
    memcpy(fill, first, sizeof(int) * (G * G * G));
    for (int f = 0; f < p->face_count; ++f) {
        const double *e = p->face_normals + 3 * f;
        faces[fill[INDEX(CELL_OF(e[0]), CELL_OF(e[1]), CELL_OF(e[2]))]++] = f;
    }
    long tested = 0;
    for (int i = 0; i < n; ++i) {
        const double *xi = x + 3 * i;
        double len = sqrt(xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]);
        int lo[3], hi[3];
        for (int k = 0; k < 3; ++k) {
            lo[k] = CELL_OF(xi[k] / len - r);
            hi[k] = CELL_OF(xi[k] / len + r);
        }
        for (int a = lo[0]; a <= hi[0]; ++a)
            for (int b = lo[1]; b <= hi[1]; ++b)
                for (int c = lo[2]; c <= hi[2]; ++c)
                    for (int t = first[INDEX(a, b, c)]; t < first[INDEX(a, b, c) + 1]; ++t) {
                        int f = faces[t];
                        const double *e = p->face_normals + 3 * f;
                        double excess = e[0] * xi[0] + e[1] * xi[1] + e[2] * xi[2] - p->face_offsets[f];
                        if (!(excess <= HULL_TOL))
                            ck_abort_msg("point %d is %g m beyond face %d", i, excess, f);
                        ++tested;
                    }
    }
#undef CELL_OF
#undef INDEX
    ck_assert_int_ge(tested, n); /* each point met at least the faces around it */
    free(first);
    free(faces);
    free(fill);
}

/* 100 000 points on a sphere: pp_convex_create returns PP_OK with the exact hull (every point
 * on or inside it within 1e-9 m, every vertex an input point: so it is their convex hull),
 * and ODE's dConvex gets at most 1024 of its vertices (input points too, so ODE's shape lies
 * inside the hull), with a warning saying so. ODE collides the geom it got. */
START_TEST(test_convex_create_100k_points)
{
    enum { N = 100000 };
    double *pts = sphere_points(N);
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    dGeomID g = NULL;
    ck_assert_int_eq(pp_convex_create(pw, space, pts, N, &g), PP_OK);
    ck_assert_int_eq(g_warnings, 1);
    ck_assert_ptr_nonnull(strstr(g_message, "dCreateConvex"));

    const pp_polytope *hull = pp_convex_find(pw, g);
    ck_assert_ptr_nonnull(hull);
    ck_assert_int_gt(hull->vertex_count, N * 99 / 100); /* points on a sphere are all extreme */
    double *sorted = malloc(sizeof(double) * 3 * N);
    memcpy(sorted, pts, sizeof(double) * 3 * N);
    qsort(sorted, N, 3 * sizeof(double), point_compare);
    assert_all_among(hull->vertices, hull->vertex_count, sorted, N, "hull vertex");
    assert_points_inside(hull, pts, N);

    const pp_convex_record *record = NULL;
    for (int i = 0; i < pw->convex_count; ++i)
        if (pw->convexes[i].geom == g) record = &pw->convexes[i];
    ck_assert_ptr_nonnull(record);
    ck_assert_int_le(record->ode_vertex_count, ODE_MAX_VERTICES);
    ck_assert_int_ge(record->ode_vertex_count, ODE_MAX_VERTICES * 9 / 10);
    assert_all_among(record->points, record->ode_vertex_count, sorted, N, "ODE point");

    /* ODE collides its shape: resting 1 cm into a plane, the lowest of its points (within
     * about 1e-3 of the sphere's bottom) gives contacts at most 1 cm deep. */
    dGeomSetPosition(g, 0, 0, 0.99);
    dGeomID plane = dCreatePlane(space, 0, 0, 1, 0);
    dContactGeom contacts[8];
    int n = dCollide(g, plane, 8, contacts, sizeof(dContactGeom));
    ck_assert_int_ge(n, 1);
    for (int i = 0; i < n; ++i) {
        ck_assert_double_gt(contacts[i].depth, 0.0);
        ck_assert_double_le(contacts[i].depth, 0.01 + 1e-12);
    }
    free(sorted);
    free(pts);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* A hull at the bound goes to ODE whole; one vertex more and ODE gets the reduced shape. */
START_TEST(test_convex_ode_gets_whole_hull_up_to_bound)
{
    static const int counts[] = {ODE_MAX_VERTICES, 2 * ODE_MAX_VERTICES};
    int n = counts[_i];
    double *pts = sphere_points(n);
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, NULL, &pw), PP_OK);
    dGeomID g = NULL;
    ck_assert_int_eq(pp_convex_create(pw, space, pts, n, &g), PP_OK);
    const pp_polytope *hull = pp_convex_find(pw, g);
    const pp_convex_record *record = &pw->convexes[0];
    if (hull->vertex_count <= ODE_MAX_VERTICES) {
        ck_assert_int_eq(g_warnings, 0);
        ck_assert_int_eq(record->ode_vertex_count, hull->vertex_count);
        ck_assert(memcmp(record->points, hull->vertices,
                         sizeof(double) * 3 * (size_t)hull->vertex_count) == 0);
    } else {
        ck_assert_int_eq(g_warnings, 1);
        ck_assert_int_le(record->ode_vertex_count, ODE_MAX_VERTICES);
    }
    free(pts);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("convex");
    TCase *tc = tcase_create("large");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_convex_create_100k_points);
    tcase_add_loop_test(tc, test_convex_ode_gets_whole_hull_up_to_bound, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
