/*
 * Feature-pair contacts (pegplus/features.h) on hand-built boxes with hand-computed answers:
 * face on face, vertex down, crossed edges, box on a plane, and what must NOT be reported
 * (side faces of a stack, pairs beyond eps, parallel edges).
 */
#define _DEFAULT_SOURCE /* M_PI */
#include "pegplus/features.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double EPS = 0.01;
static const double TOL = 1e-12;

/* A box's features posed in the world. Faces CCW from outside. */
typedef struct box_view {
    double vertices[24], normals[18], offsets[6];
    int face_first[7], face_vertices[24], edges[48], neighbour_first[9], neighbours[24];
    pp_polytope_view view;
} box_view;

static const int FACES[6][4] = {
    {1, 3, 7, 5}, {0, 4, 6, 2}, /* +x, -x */
    {2, 6, 7, 3}, {0, 1, 5, 4}, /* +y, -y */
    {4, 5, 7, 6}, {0, 2, 3, 1}, /* +z, -z */
};

/* R row-major, vertex i has local coordinates (±hx, ±hy, ±hz) with bits x = 1, y = 2, z = 4. */
static void box_make(box_view *b, const double half[3], const double R[9], const double t[3])
{
    for (int i = 0; i < 8; ++i) {
        double l[3] = {(i & 1) ? half[0] : -half[0], (i & 2) ? half[1] : -half[1],
                       (i & 4) ? half[2] : -half[2]};
        for (int r = 0; r < 3; ++r)
            b->vertices[3 * i + r] = R[3 * r] * l[0] + R[3 * r + 1] * l[1] + R[3 * r + 2] * l[2] + t[r];
    }
    int ne = 0;
    for (int f = 0; f < 6; ++f) {
        b->face_first[f] = 4 * f;
        const double *p0 = b->vertices + 3 * FACES[f][0], *p1 = b->vertices + 3 * FACES[f][1],
                     *p2 = b->vertices + 3 * FACES[f][2];
        double u[3], v[3], n[3];
        for (int k = 0; k < 3; ++k) {
            u[k] = p1[k] - p0[k];
            v[k] = p2[k] - p1[k];
        }
        n[0] = u[1] * v[2] - u[2] * v[1];
        n[1] = u[2] * v[0] - u[0] * v[2];
        n[2] = u[0] * v[1] - u[1] * v[0];
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; ++k) b->normals[3 * f + k] = n[k] / len;
        b->offsets[f] = (b->normals[3 * f] * p0[0] + b->normals[3 * f + 1] * p0[1] +
                         b->normals[3 * f + 2] * p0[2]);
        for (int i = 0; i < 4; ++i) {
            b->face_vertices[4 * f + i] = FACES[f][i];
            int tail = FACES[f][i], head = FACES[f][(i + 1) % 4];
            /* f1 is the face whose CCW order runs tail -> head; record each edge once */
            int found = 0;
            for (int e = 0; e < ne; ++e)
                if (b->edges[4 * e] == head && b->edges[4 * e + 1] == tail) {
                    b->edges[4 * e + 3] = f;
                    found = 1;
                }
            if (!found) {
                b->edges[4 * ne] = tail;
                b->edges[4 * ne + 1] = head;
                b->edges[4 * ne + 2] = f;
                ne++;
            }
        }
    }
    b->face_first[6] = 24;
    for (int v = 0; v < 8; ++v) {
        b->neighbour_first[v] = 3 * v;
        for (int k = 0; k < 3; ++k) b->neighbours[3 * v + k] = v ^ (1 << k);
    }
    b->neighbour_first[8] = 24;
    b->view = (pp_polytope_view){8, b->vertices, 6, b->normals, b->offsets, b->face_first,
                                 b->face_vertices, ne, b->edges, b->neighbour_first, b->neighbours};
}

static const double IDENTITY[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double UNIT_HALF[3] = {0.5, 0.5, 0.5};

static void rotation(double R[9], const double axis[3], double angle)
{
    double l = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double x = axis[0] / l, y = axis[1] / l, z = axis[2] / l, c = cos(angle), s = sin(angle), C = 1 - c;
    double M[9] = {x * x * C + c,     x * y * C - z * s, x * z * C + y * s,
                   y * x * C + z * s, y * y * C + c,     y * z * C - x * s,
                   z * x * C - y * s, z * y * C + x * s, z * z * C + c};
    memcpy(R, M, sizeof M);
}

START_TEST(test_box_edges_built_consistently)
{
    box_view b;
    box_make(&b, UNIT_HALF, IDENTITY, (const double[3]){0, 0, 0});
    ck_assert_int_eq(b.view.edge_count, 12);
    for (int e = 0; e < 12; ++e) ck_assert_int_ne(b.edges[4 * e + 2], b.edges[4 * e + 3]);
}
END_TEST

/* _i: gap between the faces, from the table */
static const double face_gaps[] = {0.0, 0.005, -0.004, 0.0099, 0.02};

START_TEST(test_face_on_face)
{
    double g = face_gaps[_i];
    box_view a, b;
    box_make(&a, UNIT_HALF, IDENTITY, (const double[3]){0, 0, 0});
    box_make(&b, UNIT_HALF, IDENTITY, (const double[3]){0.2, 0.1, 1.0 + g});
    pp_contact c[64];
    int count = 0, needed = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, EPS, PP_APPL_VF_DEFAULT, c, 64, &count, &needed), PP_OK);
    if (g >= EPS) {
        ck_assert_int_eq(count, 0);
        return;
    }
    /* The squares overlap in [-0.3, 0.5] x [-0.4, 0.5]: its corners are one corner of A (0.5,
     * 0.5), one of B (-0.3, -0.4) and two edge crossings; all with gap g, normal +z. */
    int vf = 0, fv = 0, ee = 0;
    for (int i = 0; i < count; ++i) {
        ck_assert_double_eq_tol(c[i].psi, g, TOL);
        ck_assert_double_eq_tol(c[i].n[2], 1.0, TOL);
        /* p_b = p_a + psi n lies on B's bottom face, p_a on A's top face */
        ck_assert_double_eq_tol(c[i].p_a[2], 0.5, TOL);
        vf += c[i].kind == PP_CONTACT_VERTEX_FACE;
        fv += c[i].kind == PP_CONTACT_FACE_VERTEX;
        ee += c[i].kind == PP_CONTACT_EDGE_EDGE;
    }
    ck_assert_int_eq(vf, 1);
    ck_assert_int_eq(fv, 1);
    ck_assert_int_eq(ee, 2);
    ck_assert_int_eq(needed, count);
}
END_TEST

/* An exactly aligned stack: 4 + 4 coincident corner contacts, none on the side faces. */
START_TEST(test_aligned_stack_has_no_side_contacts)
{
    box_view a, b;
    box_make(&a, UNIT_HALF, IDENTITY, (const double[3]){0, 0, 0});
    box_make(&b, UNIT_HALF, IDENTITY, (const double[3]){0, 0, 1.0});
    pp_contact c[64];
    int count = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, EPS, PP_APPL_VF_DEFAULT, c, 64, &count, NULL), PP_OK);
    ck_assert_int_eq(count, 8);
    for (int i = 0; i < count; ++i) {
        ck_assert_double_eq_tol(c[i].n[2], 1.0, TOL);
        ck_assert_double_eq_tol(c[i].psi, 0.0, TOL);
    }
}
END_TEST

/* B stands on a vertex above A's top face: one face–vertex contact, n = +z. */
START_TEST(test_vertex_down)
{
    double g = 0.003, R[9], axis[3] = {1, -1, 0};
    rotation(R, axis, acos(1.0 / sqrt(3.0))); /* takes (1,1,1)/sqrt3 ... to +z; vertex 0 points down */
    box_view a, b;
    box_make(&a, UNIT_HALF, IDENTITY, (const double[3]){0, 0, 0});
    /* lowest vertex of B at distance sqrt(3)/2 below its centre */
    box_make(&b, UNIT_HALF, R, (const double[3]){0.1, 0.05, 0.5 + sqrt(3.0) / 2 + g});
    pp_contact c[64];
    int count = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, EPS, PP_APPL_VF_DEFAULT, c, 64, &count, NULL), PP_OK);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(c[0].kind, PP_CONTACT_FACE_VERTEX);
    ck_assert_double_eq_tol(c[0].psi, g, 1e-12);
    ck_assert_double_eq_tol(c[0].n[2], 1.0, TOL);
    ck_assert_double_eq_tol(c[0].p_a[0], 0.1, 1e-12);
    ck_assert_double_eq_tol(c[0].p_a[2], 0.5, 1e-12);
}
END_TEST

/* A has an edge on top along x, B an edge at the bottom along y: one edge–edge contact. */
START_TEST(test_crossed_edges)
{
    double g = 0.004, Ra[9], Rb[9], h = sqrt(0.5);
    rotation(Ra, (const double[3]){1, 0, 0}, M_PI / 4);
    rotation(Rb, (const double[3]){0, 1, 0}, M_PI / 4);
    box_view a, b;
    box_make(&a, UNIT_HALF, Ra, (const double[3]){0, 0, 0});
    box_make(&b, UNIT_HALF, Rb, (const double[3]){0.1, -0.2, 2 * h + g});
    pp_contact c[64];
    int count = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, EPS, PP_APPL_VF_DEFAULT, c, 64, &count, NULL), PP_OK);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(c[0].kind, PP_CONTACT_EDGE_EDGE);
    ck_assert_double_eq_tol(c[0].psi, g, 1e-12);
    ck_assert_double_eq_tol(c[0].n[2], 1.0, 1e-12);
    ck_assert_double_eq_tol(c[0].p_a[0], 0.1, 1e-12);
    ck_assert_double_eq_tol(c[0].p_a[1], 0.0, 1e-12);
    ck_assert_double_eq_tol(c[0].p_a[2], h, 1e-12);
}
END_TEST

/* Crossed edges of unequal lengths at an angle, off their middles: A's top ridge along x
 * (half length 0.9), B's bottom ridge (half length 0.3) along (-sin th, cos th, 0), crossing
 * g above it at x = 0.3 (s = 2/3 along A's) and t = 1/3 along B's. The edge vectors and
 * their squared lengths are kept per edge (features.c edge_segment): taken from the wrong
 * edge, or one edge's |d|^2 for the other's (d_a . d_b != 0 here), the closest points move
 * or leave the edges and the contact is wrong or missing. _i = 1: B's 12 edges listed 6
 * times (72, more than features.c holds as segments: d and |d|^2 formed per pair), 6 times
 * the same contact. */
START_TEST(test_crossed_edges_of_unequal_lengths)
{
    const double g = 0.003, h = sqrt(0.5), th = 0.5;
    double Ra[9], Ry[9], Rz[9], Rb[9];
    rotation(Ra, (const double[3]){1, 0, 0}, M_PI / 4);
    rotation(Ry, (const double[3]){0, 1, 0}, M_PI / 4);
    rotation(Rz, (const double[3]){0, 0, 1}, th);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            Rb[3 * i + j] = Rz[3 * i] * Ry[j] + Rz[3 * i + 1] * Ry[3 + j] + Rz[3 * i + 2] * Ry[6 + j];
    box_view a, b;
    box_make(&a, (const double[3]){0.9, 0.5, 0.5}, Ra, (const double[3]){0, 0, 0});
    box_make(&b, (const double[3]){0.5, 0.3, 0.5}, Rb,
             (const double[3]){0.3 - 0.1 * sin(th), 0.1 * cos(th), 2 * h + g});
    int repeated[4 * 72];
    const int copies = _i ? 6 : 1;
    for (int r = 0; r < copies; ++r) memcpy(repeated + 48 * r, b.edges, sizeof b.edges);
    pp_polytope_view bv = b.view;
    bv.edge_count = 12 * copies;
    bv.edges = repeated;
    pp_contact c[64];
    int count = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &bv, EPS, PP_APPL_VF_DEFAULT, c, 64, &count, NULL), PP_OK);
    ck_assert_int_eq(count, copies);
    for (int i = 0; i < count; ++i) {
        ck_assert_int_eq(c[i].kind, PP_CONTACT_EDGE_EDGE);
        ck_assert_int_eq(c[i].feature_b % 12, c[0].feature_b);
        ck_assert_double_eq_tol(c[i].psi, g, 1e-12);
        ck_assert_double_eq_tol(c[i].n[2], 1.0, 1e-12);
        ck_assert_double_eq_tol(c[i].p_a[0], 0.3, 1e-12);
        ck_assert_double_eq_tol(c[i].p_a[1], 0.0, 1e-12);
        ck_assert_double_eq_tol(c[i].p_a[2], h, 1e-12);
    }
}
END_TEST

START_TEST(test_box_on_plane)
{
    box_view a;
    double g = 0.002, R[9];
    rotation(R, (const double[3]){0, 0, 1}, 0.7);
    box_make(&a, UNIT_HALF, R, (const double[3]){3, 1, 0.5 + g});
    pp_contact c[16];
    int count = 0;
    const double up[3] = {0, 0, 1};
    ck_assert_int_eq(pp_features_polytope_plane(&a.view, up, 0.0, EPS, c, 16, &count, NULL), PP_OK);
    ck_assert_int_eq(count, 4);
    for (int i = 0; i < 4; ++i) {
        ck_assert_double_eq_tol(c[i].psi, g, TOL);
        ck_assert_double_eq_tol(c[i].n[2], -1.0, TOL); /* from the box (A) to the plane (B) */
    }
    /* too little room: the call says so and reports how many it needs */
    int small = 0, needed = 0;
    ck_assert_int_eq(pp_features_polytope_plane(&a.view, up, 0.0, EPS, c, 2, &small, &needed), PP_ERR_NO_MEMORY);
    ck_assert_int_eq(small, 2);
    ck_assert_int_eq(needed, 4);
}
END_TEST

/* Disjoint polytopes within a large eps (a fast body's speculative margin) report no negative
 * gap: psi < 0 says the pair overlaps. Each case had a pair with a large negative gap before
 * the rule of features.h (the point must lie inside the other polytope), from soak seed 319
 * (standard model, h = 0.02, 25 m/s): its infeasible LCP gave impulses of 5.7e11 N s.
 * _i = 0: B's top vertex under a plate A, 0.1 m below its bottom face, projects inside A's
 *         top face 0.2 m below it (the old report: face-vertex, psi = -0.2, n = +z, pushing
 *         B up through the plate).
 * _i = 1: A's top edge along x and B's bottom edge along y, B wholly below A (0.1 m under
 *         A's bottom edge): the lines' gap is -4 sqrt(1/2) - 0.1 at interior closest points. */
START_TEST(test_disjoint_no_negative_gap)
{
    const double far_eps = 4.0, h = sqrt(0.5);
    box_view a, b;
    double nearest_n = 0.0;
    if (_i == 0) {
        double R[9];
        rotation(R, (const double[3]){1, -1, 0}, acos(1.0 / sqrt(3.0))); /* vertex 7 up */
        box_make(&a, (const double[3]){0.5, 0.5, 0.05}, IDENTITY, (const double[3]){0, 0, 0});
        box_make(&b, UNIT_HALF, R, (const double[3]){0.1, 0.05, -0.15 - sqrt(3.0) / 2});
        nearest_n = -1.0;
    } else {
        double Ra[9], Rb[9];
        rotation(Ra, (const double[3]){1, 0, 0}, M_PI / 4);
        rotation(Rb, (const double[3]){0, 1, 0}, M_PI / 4);
        box_make(&a, UNIT_HALF, Ra, (const double[3]){0, 0, 0});
        box_make(&b, UNIT_HALF, Rb, (const double[3]){0.1, -0.2, -2 * h - 0.1});
        nearest_n = -1.0;
    }
    pp_contact c[256];
    int count = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, far_eps, PP_APPL_VF_DEFAULT, c, 256, &count, NULL), PP_OK);
    int nearest = 0;
    for (int i = 0; i < count; ++i) {
        ck_assert_msg(c[i].psi >= 0.0, "contact %d (kind %d, features %d %d): psi = %g < 0 "
                      "between disjoint boxes", i, (int)c[i].kind, c[i].feature_a,
                      c[i].feature_b, c[i].psi);
        /* the true nearest pair: 0.1 m apart along -z */
        if (fabs(c[i].psi - 0.1) < 1e-12 && fabs(c[i].n[2] - nearest_n) < 1e-12) nearest++;
    }
    ck_assert_int_ge(nearest, 1);
}
END_TEST


/* Edge pairs are told apart by their midpoints before their closest points (features.c,
 * far_apart): skipped only where |m_b - m_a| exceeds h_a + h_b + eps (with a margin). Two
 * long boxes (half length 5 m) whose ridges are nearly antiparallel (1e-3 rad) and whose
 * lines pass 0.9 eps apart (eps 0.2 m, a fast pair's margin) at parameters 1e-8 from both
 * ends: the midpoints are then sqrt((h_a + h_b)^2 + gap^2) - 1.4e-6 m apart, 1.6e-3 m beyond
 * h_a + h_b but within h_a + h_b + eps, and the edge-edge contact must be reported (a test
 * without eps would skip it). _i = 1: the same 100 m from the origin. */
START_TEST(test_long_edges_crossing_at_their_ends)
{
    const double eps = 0.2, half[3] = {5.0, 0.1, 0.1}, r = 0.1 * sqrt(2.0), alpha = 1e-3;
    const double g = 0.9 * eps;
    const double off[3] = {_i ? 100.0 : 0.0, _i ? -60.0 : 0.0, _i ? 30.0 : 0.0};
    const double s_end = half[0] * (1.0 - 1e-8); /* the crossing, from each edge's middle */
    double Ra[9], Rx[9], Rz[9], Rb[9];
    rotation(Ra, (const double[3]){1, 0, 0}, M_PI / 4); /* a ridge along x on top */
    rotation(Rx, (const double[3]){1, 0, 0}, M_PI / 4); /* ... and one at the bottom of B */
    rotation(Rz, (const double[3]){0, 0, 1}, M_PI - alpha);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            Rb[3 * i + j] = Rz[3 * i] * Rx[j] + Rz[3 * i + 1] * Rx[3 + j] + Rz[3 * i + 2] * Rx[6 + j];
    const double u[3] = {cos(M_PI - alpha), sin(M_PI - alpha), 0.0}; /* B's ridge */
    const double X[2] = {s_end, 0.0}; /* where the ridges cross, seen from above */
    const double ta[3] = {off[0], off[1], off[2]};
    const double tb[3] = {off[0] + X[0] - s_end * u[0], off[1] + X[1] - s_end * u[1],
                          off[2] + r + g + r};
    box_view a, b;
    box_make(&a, half, Ra, ta);
    box_make(&b, half, Rb, tb);
    /* the midpoints of the two ridges: beyond h_a + h_b, within h_a + h_b + eps */
    const double dx = tb[0] - ta[0], dy = tb[1] - ta[1], dz = g;
    const double mid = sqrt(dx * dx + dy * dy + dz * dz);
    ck_assert_double_gt(mid, 2.0 * half[0] + 1e-3);
    ck_assert_double_lt(mid, 2.0 * half[0] + eps);
    pp_contact c[256];
    int count = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, eps, PP_APPL_VF_DEFAULT, c, 256, &count, NULL), PP_OK);
    int found = 0;
    for (int i = 0; i < count; ++i)
        if (c[i].kind == PP_CONTACT_EDGE_EDGE && fabs(c[i].psi - g) < 1e-9 &&
            fabs(c[i].n[2] - 1.0) < 1e-9)
            ++found;
    ck_assert_int_eq(found, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("features");
    TCase *tc = tcase_create("boxes");
    tcase_add_test(tc, test_box_edges_built_consistently);
    tcase_add_loop_test(tc, test_face_on_face, 0, 5);
    tcase_add_test(tc, test_aligned_stack_has_no_side_contacts);
    tcase_add_test(tc, test_vertex_down);
    tcase_add_test(tc, test_crossed_edges);
    tcase_add_loop_test(tc, test_crossed_edges_of_unequal_lengths, 0, 2);
    tcase_add_test(tc, test_box_on_plane);
    tcase_add_loop_test(tc, test_disjoint_no_negative_gap, 0, 2);
    tcase_add_loop_test(tc, test_long_edges_crossing_at_their_ends, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
