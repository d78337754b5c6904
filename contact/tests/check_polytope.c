/*
 * Polytopes (pegplus/geometry.h): qhull hulls, boxes, the PEG edge conventions (docs/references.md)
 * by hand values, rejection of degenerate input with the right status and message, mass
 * properties against closed forms.
 */
#include "pegplus/geometry.h"
#include "../src/geometry_internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double TOL = 1e-12;      /* exact arithmetic up to round-off */
static const double MASS_TOL = 1e-12; /* relative, mass properties */

/* ------------------------------------------------------------------------ helpers */

#include "test_support.h"

/* Check records every passing assertion with a write(2) (the location of the last check
 * reached): the loops over vertices x faces below assert once a face (or an input point), on
 * the same predicate, naming the first offender. Asserted point by point they made 677 505
 * writes, 3.3 s of a 0.9 s CPU test, which passed Check's 4 s default under load 12. */
static void check_closed_convex(const pp_polytope *p)
{
    ck_assert_int_eq(p->vertex_count - p->edge_count + p->face_count, 2);
    /* every edge in exactly two faces, f1 running tail -> head, f2 head -> tail */
    for (int e = 0; e < p->edge_count; ++e) {
        const int *edge = p->edges + 4 * e;
        for (int side = 0; side < 2; ++side) {
            int f = edge[2 + side], found = 0;
            int first = p->face_first[f], n = p->face_first[f + 1] - first;
            for (int i = 0; i < n; ++i) {
                int t = p->face_vertices[first + i], h = p->face_vertices[first + (i + 1) % n];
                if (side == 0 && t == edge[0] && h == edge[1]) found = 1;
                if (side == 1 && t == edge[1] && h == edge[0]) found = 1;
            }
            ck_assert_msg(found, "edge %d not in face %d with the right direction", e, f);
        }
    }
    double scale = 0.0;
    for (int i = 0; i < 3 * p->vertex_count; ++i) scale = fmax(scale, fabs(p->vertices[i]));
    for (int f = 0; f < p->face_count; ++f) {
        const double *n = p->face_normals + 3 * f;
        ck_assert_double_eq_tol(pp_v3_norm(n), 1.0, TOL);
        ck_assert(pp_v3_dot(n, p->centroid) < p->face_offsets[f]);
        /* every vertex on or below the face's plane */
        int above = -1;
        for (int v = 0; v < p->vertex_count && above < 0; ++v)
            if (!(pp_v3_dot(n, p->vertices + 3 * v) <= p->face_offsets[f] + TOL * scale))
                above = v;
        ck_assert_msg(above < 0, "vertex %d above face %d", above, f);
        /* CCW seen from outside: Newell normal of the loop agrees with n */
        int first = p->face_first[f], count = p->face_first[f + 1] - first;
        double newell[3] = {0, 0, 0};
        for (int i = 0; i < count; ++i) {
            double x[3];
            pp_v3_cross(x, p->vertices + 3 * p->face_vertices[first + i],
                        p->vertices + 3 * p->face_vertices[first + (i + 1) % count]);
            pp_v3_add(newell, newell, x);
        }
        ck_assert(pp_v3_dot(newell, n) > 0.0);
    }
}

/* ------------------------------------------------------------------- cube hulls */

START_TEST(cube_hull_with_interior_and_duplicates)
{
    double pts[3 * 64];
    int n = 0;
    for (int i = 0; i < 8; ++i, ++n)
        for (int k = 0; k < 3; ++k) pts[3 * n + k] = (i >> k) & 1 ? 1.0 : -1.0;
    for (int i = 0; i < 8; ++i, ++n) /* duplicates of the corners */
        memcpy(pts + 3 * n, pts + 3 * i, 3 * sizeof(double));
    rng_state = 7;
    for (int i = 0; i < 20; ++i, ++n) /* interior points */
        for (int k = 0; k < 3; ++k) pts[3 * n + k] = uniform(-0.9, 0.9);
    for (int k = 0; k < 3; ++k) { /* points in the middle of edges and faces */
        double mid_edge[3] = {1, 1, 1}, mid_face[3] = {-1, -1, -1};
        mid_edge[k] = 0.0;
        mid_face[k] = 0.0;
        mid_face[(k + 1) % 3] = 0.0;
        memcpy(pts + 3 * n++, mid_edge, sizeof mid_edge);
        memcpy(pts + 3 * n++, mid_face, sizeof mid_face);
    }
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, n, &p), PP_OK);
    ck_assert_int_eq(p->vertex_count, 8);
    ck_assert_int_eq(p->edge_count, 12);
    ck_assert_int_eq(p->face_count, 6);
    for (int f = 0; f < 6; ++f) {
        ck_assert_int_eq(p->face_first[f + 1] - p->face_first[f], 4);
        const double *nrm = p->face_normals + 3 * f;
        int axis = fabs(nrm[0]) > 0.5 ? 0 : fabs(nrm[1]) > 0.5 ? 1 : 2;
        ck_assert_double_eq_tol(fabs(nrm[axis]), 1.0, TOL);
        ck_assert_double_eq_tol(p->face_offsets[f], 1.0, TOL);
    }
    for (int v = 0; v < 8; ++v) {
        ck_assert_int_eq(p->neighbour_first[v + 1] - p->neighbour_first[v], 3);
        for (int k = 0; k < 3; ++k) ck_assert_double_eq(fabs(p->vertices[3 * v + k]), 1.0);
    }
    check_closed_convex(p);
    pp_polytope_destroy(p);
}
END_TEST

/* Hull of random points (loop: seed and distribution): contains every input point, every
 * vertex is an input point, closed convex with consistent orientation. */
START_TEST(random_hull_contains_inputs)
{
    enum { N = 300 };
    double pts[3 * N] = {0};
    rng_state = 1000 + (unsigned)_i;
    int count = 10 + 29 * _i;
    for (int i = 0; i < count; ++i) {
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = uniform(-1.0, 1.0) * (k == 2 ? 0.2 : 1.0);
        if (_i % 2) { /* on a sphere: every point a vertex, triangles */
            double r = pp_v3_norm(pts + 3 * i);
            for (int k = 0; k < 3; ++k) pts[3 * i + k] /= r;
        }
    }
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, count, &p), PP_OK);
    check_closed_convex(p);
    /* every input point on or below every face's plane */
    for (int i = 0; i < count; ++i) {
        int above = -1;
        for (int f = 0; f < p->face_count && above < 0; ++f)
            if (!(pp_v3_dot(p->face_normals + 3 * f, pts + 3 * i) <= p->face_offsets[f] + TOL))
                above = f;
        ck_assert_msg(above < 0, "input point %d above face %d", i, above);
    }
    for (int v = 0; v < p->vertex_count; ++v) {
        int found = 0;
        for (int i = 0; i < count && !found; ++i)
            found = memcmp(p->vertices + 3 * v, pts + 3 * i, 3 * sizeof(double)) == 0;
        ck_assert_msg(found, "vertex %d is not an input point", v);
    }
    /* support: hill climbing (large hulls) agrees with a linear scan */
    for (int trial = 0; trial < 200; ++trial) {
        double d[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)}, best = -HUGE_VAL;
        for (int v = 0; v < p->vertex_count; ++v) best = fmax(best, pp_v3_dot(d, p->vertices + 3 * v));
        int s = pp_polytope_support_index(p, d);
        ck_assert_double_eq_tol(pp_v3_dot(d, p->vertices + 3 * s), best, TOL);
    }
    pp_polytope_destroy(p);
}
END_TEST

/* The convexity check on its tree (pp_polytope_vertices_below_faces) gives the naive
 * all-vertices-against-all-faces answer: a vertex of a 400-point spherical hull is moved
 * along a face normal to just inside or just beyond tol from the face plane (or anywhere in
 * between, loop _i picks the seed), and both verdicts must agree. */
START_TEST(convexity_check_matches_naive)
{
    enum { N = 400, TRIALS = 400 };
    static const double CHECK_TOL = 1e-9;
    double pts[3 * N];
    rng_state = 77 + (unsigned)_i;
    for (int i = 0; i < N; ++i) {
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = uniform(-1.0, 1.0);
        double r = pp_v3_norm(pts + 3 * i);
        for (int k = 0; k < 3; ++k) pts[3 * i + k] *= (_i == 0 ? 1.0 : 0.5 + 0.5 * (k + 1)) / r;
    }
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, N, &p), PP_OK);
    ck_assert_int_eq(pp_polytope_vertices_below_faces(p, CHECK_TOL), PP_OK);
    int beyond = 0;
    for (int trial = 0; trial < TRIALS; ++trial) {
        int v = (int)uniform(0.0, p->vertex_count), f = (int)uniform(0.0, p->face_count);
        double *x = p->vertices + 3 * v, saved[3];
        memcpy(saved, x, sizeof saved);
        const double *eta = p->face_normals + 3 * f;
        /* excess over the plane: half the trials beyond tol (by 1.5 .. 1e6 tol), half within */
        double excess = trial % 2 ? CHECK_TOL * (1.5 + uniform(0.0, 1e6)) : CHECK_TOL * uniform(-1e3, 0.5);
        pp_v3_axpy(x, x, p->face_offsets[f] + excess - pp_v3_dot(eta, x), eta);
        int naive = 0;
        for (int g = 0; g < p->face_count && !naive; ++g)
            for (int w = 0; w < p->vertex_count && !naive; ++w)
                naive = pp_v3_dot(p->face_normals + 3 * g, p->vertices + 3 * w) >
                        p->face_offsets[g] + CHECK_TOL;
        beyond += naive;
        ck_assert_int_eq(pp_polytope_vertices_below_faces(p, CHECK_TOL),
                         naive ? PP_ERR_DEGENERATE : PP_OK);
        memcpy(x, saved, sizeof saved);
    }
    ck_assert_int_ge(beyond, TRIALS / 2); /* both verdicts were exercised */
    ck_assert_int_lt(beyond, TRIALS);
    pp_polytope_destroy(p);
}
END_TEST

/* ----------------------------------------------------------- PEG edge conventions */

/* Box 2 x 4 x 6: the edge between vertex 5 = (+1, -2, +3) and 7 = (+1, +2, +3) bounds the +z
 * face (index 4, loop 4 5 7 6 runs 5 -> 7, so f1) and the +x face (index 0, loop 1 3 7 5 runs
 * 7 -> 5, so f2). e = (0, 4, 0); t1 = z x e/|.| = (-1, 0, 0) into the top face; t2 = e x x/|.|
 * = (0, 0, -1) down the side; O_e = e x (-(z + x)) = (0,4,0) x (-1,0,-1) = (-4, 0, 4). */
START_TEST(box_edge_conventions)
{
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_box((double[3]){2, 4, 6}, &p), PP_OK);
    ck_assert_int_eq(p->vertex_count, 8);
    ck_assert_int_eq(p->edge_count, 12);
    ck_assert_int_eq(p->face_count, 6);
    check_closed_convex(p);
    int e = -1;
    for (int i = 0; i < p->edge_count; ++i) {
        const int *edge = p->edges + 4 * i;
        if ((edge[0] == 5 && edge[1] == 7) || (edge[0] == 7 && edge[1] == 5)) e = i;
    }
    ck_assert_int_ge(e, 0);
    const int *edge = p->edges + 4 * e;
    ck_assert_int_eq(edge[0], 5);
    ck_assert_int_eq(edge[1], 7);
    ck_assert_int_eq(edge[2], 4);
    ck_assert_int_eq(edge[3], 0);
    const double t1[3] = {-1, 0, 0}, t2[3] = {0, 0, -1}, o[3] = {-4, 0, 4};
    for (int k = 0; k < 3; ++k) {
        ck_assert_double_eq_tol(p->edge_t1[3 * e + k], t1[k], TOL);
        ck_assert_double_eq_tol(p->edge_t2[3 * e + k], t2[k], TOL);
        ck_assert_double_eq_tol(p->edge_orientation[3 * e + k], o[k], TOL);
    }
    /* omega(7) = {3, 5, 6} */
    int seen = 0;
    for (int k = p->neighbour_first[7]; k < p->neighbour_first[8]; ++k)
        seen |= 1 << p->neighbours[k];
    ck_assert_int_eq(seen, (1 << 3) | (1 << 5) | (1 << 6));
    ck_assert_double_eq_tol(p->face_offsets[4], 3.0, TOL);
    pp_polytope_destroy(p);
}
END_TEST

/* Every edge of a random hull: t1, t2 unit, perpendicular to e, in their faces and pointing
 * into them (toward the face's other vertices); O_e perpendicular to e and the bisector. */
START_TEST(hull_edge_frames)
{
    double pts[3 * 40];
    rng_state = 99;
    for (int i = 0; i < 40; ++i)
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = uniform(-1, 1);
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, 40, &p), PP_OK);
    for (int e = 0; e < p->edge_count; ++e) {
        const int *edge = p->edges + 4 * e;
        double d[3], bis[3];
        pp_v3_sub(d, p->vertices + 3 * edge[1], p->vertices + 3 * edge[0]);
        const double *t[2] = {p->edge_t1 + 3 * e, p->edge_t2 + 3 * e};
        for (int side = 0; side < 2; ++side) {
            const double *n = p->face_normals + 3 * edge[2 + side];
            ck_assert_double_eq_tol(pp_v3_norm(t[side]), 1.0, TOL);
            ck_assert_double_eq_tol(pp_v3_dot(t[side], d), 0.0, TOL);
            ck_assert_double_eq_tol(pp_v3_dot(t[side], n), 0.0, TOL);
            int f = edge[2 + side];
            for (int j = p->face_first[f]; j < p->face_first[f + 1]; ++j) {
                double r[3];
                pp_v3_sub(r, p->vertices + 3 * p->face_vertices[j], p->vertices + 3 * edge[0]);
                ck_assert(pp_v3_dot(r, t[side]) >= -TOL);
            }
        }
        pp_v3_add(bis, p->face_normals + 3 * edge[2], p->face_normals + 3 * edge[3]);
        ck_assert_double_eq_tol(pp_v3_dot(p->edge_orientation + 3 * e, d), 0.0, TOL);
        ck_assert_double_eq_tol(pp_v3_dot(p->edge_orientation + 3 * e, bis), 0.0, TOL);
    }
    pp_polytope_destroy(p);
}
END_TEST

/* ------------------------------------------------------------------ bad input */

typedef struct bad_case {
    const char *name;
    int count;
    double pts[3 * 8];
    int null_points;
    pp_status status;
    const char *message; /* must appear in the logged message */
} bad_case;

static const bad_case BAD[] = {
    {"null", 4, {0}, 1, PP_ERR_NULL_ARGUMENT, "NULL"},
    {"negative count", -1, {0}, 0, PP_ERR_INVALID_ARGUMENT, "negative"},
    {"three points", 3, {0, 0, 0, 1, 0, 0, 0, 1, 0}, 0, PP_ERR_DEGENERATE, "too few points"},
    {"nan", 4, {0, 0, 0, 1, 0, 0, 0, NAN, 0, 0, 0, 1}, 0, PP_ERR_INVALID_ARGUMENT, "NaN"},
    {"inf", 4, {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, INFINITY}, 0, PP_ERR_INVALID_ARGUMENT, "infinite"},
    {"duplicates", 6, {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0}, 0, PP_ERR_DEGENERATE,
     "duplicate points"},
    {"coplanar", 5, {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.3, 0.6, 1e-13}, 0, PP_ERR_DEGENERATE,
     "coplanar"},
    {"collinear", 4, {0, 0, 0, 1, 1, 1, 2, 2, 2, -5, -5, -5}, 0, PP_ERR_DEGENERATE, "collinear"},
};

START_TEST(degenerate_inputs_rejected)
{
    const bad_case *c = &BAD[_i];
    pp_polytope *p = (pp_polytope *)&rng_state; /* must stay untouched */
    pp_status s = pp_polytope_from_points(c->null_points ? NULL : c->pts, c->count, &p);
    ck_assert_msg(s == c->status, "%s: status %d, expected %d", c->name, s, c->status);
    ck_assert_msg(strstr(last_message, c->message), "%s: message '%s' lacks '%s'", c->name,
                  last_message, c->message);
    ck_assert_ptr_eq(p, (pp_polytope *)&rng_state);
}
END_TEST

START_TEST(bad_box_rejected)
{
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_box((double[3]){1, 0, 1}, &p), PP_ERR_INVALID_ARGUMENT);
    ck_assert(strstr(last_message, "side length"));
    ck_assert_int_eq(pp_polytope_box((double[3]){1, NAN, 1}, &p), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_polytope_box(NULL, &p), PP_ERR_NULL_ARGUMENT);
    ck_assert_ptr_null(p);
}
END_TEST

/* ------------------------------------------------------------- mass properties */

static void assert_rel(double got, double want, double scale)
{
    ck_assert_msg(fabs(got - want) <= MASS_TOL * scale, "got %.17g want %.17g", got, want);
}

/* Box a x b x c, density rho: m = rho a b c, I = m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2);
 * the same box as a hull of its corners shifted by t has its centre of mass at t. */
START_TEST(box_mass_properties)
{
    const double len[3] = {1.0, 2.0, 3.0}, rho = 2.5, t[3] = {0.3, -7.0, 2.0};
    double m = rho * 6.0, want[9] = {m / 12 * 13, 0, 0, 0, m / 12 * 10, 0, 0, 0, m / 12 * 5};
    pp_polytope *box = NULL, *hull = NULL;
    ck_assert_int_eq(pp_polytope_box(len, &box), PP_OK);
    double pts[24];
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = t[k] + ((i >> k) & 1 ? 0.5 : -0.5) * len[k];
    ck_assert_int_eq(pp_polytope_from_points(pts, 8, &hull), PP_OK);
    const pp_polytope *ps[2] = {box, hull};
    for (int which = 0; which < 2; ++which) {
        double mass, com[3], inertia[9];
        ck_assert_int_eq(pp_polytope_mass_properties(ps[which], rho, &mass, com, inertia), PP_OK);
        assert_rel(mass, m, m);
        for (int k = 0; k < 3; ++k) assert_rel(com[k], which ? t[k] : 0.0, 10.0);
        for (int k = 0; k < 9; ++k) assert_rel(inertia[k], want[k], m * 10);
    }
    /* recentre the hull at its centre of mass */
    double com[3];
    ck_assert_int_eq(pp_polytope_mass_properties(hull, rho, NULL, com, NULL), PP_OK);
    double shift[3] = {-com[0], -com[1], -com[2]};
    ck_assert_int_eq(pp_polytope_translate(hull, shift), PP_OK);
    ck_assert_int_eq(pp_polytope_mass_properties(hull, rho, NULL, com, NULL), PP_OK);
    for (int k = 0; k < 3; ++k) ck_assert_double_eq_tol(com[k], 0.0, 1e-12);
    check_closed_convex(hull);
    for (int f = 0; f < hull->face_count; ++f) /* axis-aligned faces at half a side length */
        ck_assert_double_eq_tol(hull->face_offsets[f],
                                0.5 * fabs(pp_v3_dot(hull->face_normals + 3 * f, len)), TOL * 10);
    pp_polytope_destroy(box);
    pp_polytope_destroy(hull);
}
END_TEST

/* Tetrahedron (0, a e1, b e2, c e3) + t: V = abc/6, com = t + (a, b, c)/4, about the com
 * I_xx = 3m (b^2 + c^2)/80 (cyclic) and I_xy = +m a b / 80 (tensor entry, = -int x'y' dm). */
START_TEST(tetrahedron_mass_properties)
{
    const double a = 1.5, b = 0.7, c = 2.0, rho = 3.0, t[3] = {1.0, 2.0, -3.0};
    double pts[12] = {0, 0, 0, a, 0, 0, 0, b, 0, 0, 0, c};
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 3; ++k) pts[3 * i + k] += t[k];
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, 4, &p), PP_OK);
    ck_assert_int_eq(p->face_count, 4);
    double mass, com[3], I[9];
    ck_assert_int_eq(pp_polytope_mass_properties(p, rho, &mass, com, I), PP_OK);
    double m = rho * a * b * c / 6.0;
    assert_rel(mass, m, m);
    assert_rel(com[0], t[0] + a / 4, 10);
    assert_rel(com[1], t[1] + b / 4, 10);
    assert_rel(com[2], t[2] + c / 4, 10);
    double want[9] = {3 * m * (b * b + c * c) / 80, m * a * b / 80, m * a * c / 80,
                      m * a * b / 80, 3 * m * (a * a + c * c) / 80, m * b * c / 80,
                      m * a * c / 80, m * b * c / 80, 3 * m * (a * a + b * b) / 80};
    for (int k = 0; k < 9; ++k) assert_rel(I[k], want[k], 10 * m);
    ck_assert_int_eq(pp_polytope_mass_properties(p, -1.0, &mass, com, I), PP_ERR_INVALID_ARGUMENT);
    pp_polytope_destroy(p);
}
END_TEST

/* The posed view has world vertices R v + x and planes (R eta) . y = d + (R eta) . x. */
START_TEST(pose_view)
{
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_box((double[3]){1, 2, 3}, &p), PP_OK);
    const double c = cos(0.4), s = sin(0.4), R[9] = {c, -s, 0, s, c, 0, 0, 0, 1}, x[3] = {1, 2, 3};
    double verts[24], normals[18], offsets[6];
    pp_polytope_view view;
    pp_polytope_pose_view(p, x, R, verts, normals, offsets, &view);
    ck_assert_int_eq(view.vertex_count, 8);
    ck_assert_int_eq(view.edge_count, 12);
    for (int f = 0; f < 6; ++f)
        for (int j = view.face_first[f]; j < view.face_first[f + 1]; ++j)
            ck_assert_double_eq_tol(pp_v3_dot(view.face_normals + 3 * f,
                                              view.vertices + 3 * view.face_vertices[j]),
                                    view.face_offsets[f], TOL * 10);
    pp_polytope_destroy(p);
}
END_TEST

static Suite *polytope_suite(void)
{
    Suite *s = suite_create("polytope");
    TCase *tc = tcase_create("hull");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, cube_hull_with_interior_and_duplicates);
    tcase_add_loop_test(tc, random_hull_contains_inputs, 0, 10);
    tcase_add_loop_test(tc, convexity_check_matches_naive, 0, 2);
    tcase_add_test(tc, box_edge_conventions);
    tcase_add_test(tc, hull_edge_frames);
    tcase_add_test(tc, pose_view);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad_input");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_loop_test(bad, degenerate_inputs_rejected, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(bad, bad_box_rejected);
    suite_add_tcase(s, bad);
    TCase *mass = tcase_create("mass");
    tcase_add_checked_fixture(mass, setup, teardown);
    tcase_add_test(mass, box_mass_properties);
    tcase_add_test(mass, tetrahedron_mass_properties);
    suite_add_tcase(s, mass);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(polytope_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
