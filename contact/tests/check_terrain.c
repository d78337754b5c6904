/*
 * Terrain (pegplus/terrain.h): the internal-edge rule on real narrowphase contacts, the
 * dropped corners of flat regions, and the grid queries.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pegplus/narrowphase.h"
#include "pegplus/terrain.h"
#include "test_support.h"

#define TOL 1e-12

/* The unit square [0, 1]^2 at z = 0 as two triangles sharing the diagonal (0,0)-(1,1), or,
 * with `ridge` > 0, folded along it (the corners (1,0) and (0,1) lowered by ridge). */
static pp_terrain *square(double ridge)
{
    const double t[18] = {0, 0, 0, 1, 0, -ridge, 1, 1, 0,   /* T0: below the diagonal */
                          0, 0, 0, 1, 1, 0, 0, 1, -ridge};  /* T1: above it */
    pp_terrain *terrain = NULL;
    ck_assert_int_eq(pp_terrain_create(t, 2, &terrain), PP_OK);
    return terrain;
}

/* Contacts of triangle i's prism (A) with shape b. */
static int prism_contacts(pp_terrain *t, int i, const pp_shape *b, pp_contact *out)
{
    const pp_polytope *prism = NULL;
    ck_assert_int_eq(pp_terrain_prism(t, i, &prism), PP_OK);
    pp_shape a = pp_shape_make_polytope(prism, NULL, NULL);
    int count = 0, needed = 0;
    ck_assert_int_eq(pp_narrowphase_contacts(&a, b, 0.05, PP_APPL_VF_DEFAULT, out, 32, &count,
                                             &needed), PP_OK);
    return count;
}

/* A ball 1 mm past the flat shared edge, over T1: T0's own contact is the edge's, tilted by
 * atan(1 mm / r) (the bump); the rule drops it, and T1's top-face contact (normal +z, gap
 * 1e-4) is the ball's one contact. */
START_TEST(flat_edge_gives_the_face_normal)
{
    pp_terrain *t = square(0.0);
    const double r = 0.1, d = 1e-3 / sqrt(2.0);
    const double c[3] = {0.5 - d, 0.5 + d, r + 1e-4};
    pp_shape ball = pp_shape_make_sphere(r, c);
    pp_contact k0[32], k1[32];
    ck_assert_int_eq(prism_contacts(t, 0, &ball, k0), 1);
    ck_assert_int_eq(prism_contacts(t, 1, &ball, k1), 1);
    ck_assert_double_lt(k0[0].n[2], 1.0 - 1e-6); /* the bump: a tilted normal */
    ck_assert_int_eq(pp_terrain_contact_rule(t, 0, 1, r, &k0[0]), 0);
    ck_assert_int_eq(pp_terrain_contact_rule(t, 1, 1, r, &k1[0]), 1);
    for (int k = 0; k < 3; ++k) ck_assert_double_eq_tol(k1[0].n[k], k == 2, TOL);
    ck_assert_double_eq_tol(k1[0].psi, 1e-4, TOL);
    ck_assert_int_eq(k1[0].kind, PP_CONTACT_POINT);
    /* right above the edge both give the top face's contact (the caller drops one) */
    const double above[3] = {0.5, 0.5, r + 1e-4};
    ball = pp_shape_make_sphere(r, above);
    ck_assert_int_eq(prism_contacts(t, 0, &ball, k0), 1);
    ck_assert_int_eq(pp_terrain_contact_rule(t, 0, 1, r, &k0[0]), 1);
    ck_assert_double_eq_tol(k0[0].n[2], 1.0, TOL);
    ck_assert_double_eq_tol(k0[0].psi, 1e-4, TOL);
    pp_terrain_destroy(t);
}
END_TEST

/* Folded into a ridge (the corners 0.2 lower): a ball over the ridge line, 1 mm towards T1,
 * touches T0 at the ridge with the normal (c - p)/|.|, between the two faces' normals: the
 * terrain's own normal there, kept. */
START_TEST(ridge_keeps_its_normals)
{
    pp_terrain *t = square(0.2);
    double eta0[3], eta1[3];
    pp_terrain_normal(t, 0, eta0);
    pp_terrain_normal(t, 1, eta1);
    ck_assert_double_lt(eta0[0] * eta1[0] + eta0[1] * eta1[1] + eta0[2] * eta1[2], 1.0 - 1e-3);
    const double r = 0.1, d = 1e-3 / sqrt(2.0);
    const double c[3] = {0.5 - d, 0.5 + d, r + 1e-4};
    pp_shape ball = pp_shape_make_sphere(r, c);
    pp_contact k[32];
    ck_assert_int_eq(prism_contacts(t, 0, &ball, k), 1);
    pp_contact before = k[0];
    ck_assert_int_eq(pp_terrain_contact_rule(t, 0, 1, r, &k[0]), 1);
    for (int i = 0; i < 3; ++i) ck_assert_double_eq(k[0].n[i], before.n[i]);
    ck_assert_double_eq(k[0].psi, before.psi);
    ck_assert_double_lt(k[0].n[0] * eta0[0] + k[0].n[1] * eta0[1] + k[0].n[2] * eta0[2],
                        1.0 - 1e-6); /* not T0's face normal */
    pp_terrain_destroy(t);
}
END_TEST

/* A ball beside the boundary edge y = 0 of T0 (outside the terrain, centre at the surface's
 * height): the side face's normal -y, a real wall of the terrain, kept. */
START_TEST(boundary_edge_keeps_its_normals)
{
    pp_terrain *t = square(0.0);
    const double r = 0.1, c[3] = {0.6, -r - 1e-3, 0.0};
    pp_shape ball = pp_shape_make_sphere(r, c);
    pp_contact k[32];
    ck_assert_int_eq(prism_contacts(t, 0, &ball, k), 1);
    ck_assert_int_eq(pp_terrain_contact_rule(t, 0, 1, r, &k[0]), 1);
    ck_assert_double_eq_tol(k[0].n[1], -1.0, TOL);
    ck_assert_double_eq_tol(k[0].psi, 1e-3, TOL);
    pp_terrain_destroy(t);
}
END_TEST

/* The rule with the terrain as B (normals from A, the ball, to the terrain): past the flat
 * edge T0's contact is dropped, T1's kept with n = -z and p_a the ball's lowest point. */
START_TEST(rule_with_terrain_as_b)
{
    pp_terrain *t = square(0.0);
    const double r = 0.1, d = 1e-3 / sqrt(2.0);
    const double c[3] = {0.5 - d, 0.5 + d, r + 1e-4};
    pp_shape ball = pp_shape_make_sphere(r, c);
    for (int i = 0; i < 2; ++i) {
        const pp_polytope *prism = NULL;
        ck_assert_int_eq(pp_terrain_prism(t, i, &prism), PP_OK);
        pp_shape tri = pp_shape_make_polytope(prism, NULL, NULL);
        pp_contact k[32];
        int count = 0, needed = 0;
        ck_assert_int_eq(pp_narrowphase_contacts(&ball, &tri, 0.05, PP_APPL_VF_DEFAULT, k, 32,
                                                 &count, &needed), PP_OK);
        ck_assert_int_eq(count, 1);
        ck_assert_int_eq(pp_terrain_contact_rule(t, i, 0, r, &k[0]), i);
        if (i == 0) continue;
        ck_assert_double_eq_tol(k[0].n[2], -1.0, TOL);
        ck_assert_double_eq_tol(k[0].psi, 1e-4, TOL);
        for (int j = 0; j < 3; ++j) /* p_a: the ball's lowest point */
            ck_assert_double_eq_tol(k[0].p_a[j], c[j] - (j == 2) * r, TOL);
    }
    pp_terrain_destroy(t);
}
END_TEST

/* Folded into a ridge, a ball on T0 1 cm before the crest: T1's contact (the crest, its
 * normal beyond the ridge's arc, towards T0) is dropped (replaced by T1's top face it would
 * have a negative gap, the ball being below T1's plane, and launch the ball); T0's top-face
 * contact holds it. */
START_TEST(ridge_beyond_its_arc_is_dropped)
{
    pp_terrain *t = square(0.2);
    double eta0[3];
    pp_terrain_normal(t, 0, eta0);
    const double r = 0.1, d = 1e-2 / sqrt(2.0);
    /* the point of T0 1 cm from the diagonal, then r along T0's normal */
    double p[3] = {0.5 + d, 0.5 - d, 0.0};
    p[2] = (0.0 - eta0[0] * p[0] - eta0[1] * p[1]) / eta0[2] + 1e-4 / eta0[2];
    const double c[3] = {p[0] + r * eta0[0], p[1] + r * eta0[1], p[2] + r * eta0[2]};
    pp_shape ball = pp_shape_make_sphere(r, c);
    pp_contact k0[32], k1[32];
    ck_assert_int_eq(prism_contacts(t, 0, &ball, k0), 1);
    ck_assert_int_eq(prism_contacts(t, 1, &ball, k1), 1);
    ck_assert_int_eq(pp_terrain_contact_rule(t, 1, 1, r, &k1[0]), 0);
    ck_assert_int_eq(pp_terrain_contact_rule(t, 0, 1, r, &k0[0]), 1);
    for (int k = 0; k < 3; ++k) ck_assert_double_eq_tol(k0[0].n[k], eta0[k], 1e-9);
    ck_assert_double_eq_tol(k0[0].psi, 1e-4, 1e-9);
    pp_terrain_destroy(t);
}
END_TEST

/* A box resting flat across the diagonal: its vertex-face contacts are kept (normal +z, gap
 * 0), and the contacts of the diagonal (edge–edge with the box's bottom edges, the
 * diagonal's end vertices under its face) are dropped as corners of the flat region. */
START_TEST(flat_region_corners_are_dropped)
{
    pp_terrain *t = square(0.0);
    const double l[3] = {0.4, 0.4, 0.2}, x[3] = {0.45, 0.55, 0.1};
    pp_polytope *box = NULL;
    ck_assert_int_eq(pp_polytope_box(l, &box), PP_OK);
    pp_shape b = pp_shape_make_polytope(box, x, NULL);
    int kept_vf = 0, dropped = 0;
    for (int i = 0; i < 2; ++i) {
        pp_contact k[32];
        int n = prism_contacts(t, i, &b, k);
        for (int j = 0; j < n; ++j) {
            pp_contact_kind kind = k[j].kind;
            if (!pp_terrain_contact_rule(t, i, 1, 0.0, &k[j])) {
                ck_assert_int_ne(kind, PP_CONTACT_FACE_VERTEX); /* never a box vertex */
                ++dropped;
                continue;
            }
            ck_assert_double_eq_tol(k[j].n[2], 1.0, TOL);
            ck_assert_double_eq_tol(k[j].psi, 0.0, TOL);
            kept_vf += kind == PP_CONTACT_FACE_VERTEX;
        }
    }
    ck_assert_int_eq(kept_vf, 4); /* the box's four bottom vertices: one over T0, three over T1 */
    ck_assert_int_eq(dropped, 4); /* the diagonal crosses two bottom edges, seen from each */
    pp_polytope_destroy(box);
    pp_terrain_destroy(t);
}
END_TEST

/* A 100 x 100 grid (20 000 triangles): a query returns the triangles whose prisms' boxes meet
 * the box, each once per round, and only those. */
START_TEST(query_finds_only_near_triangles)
{
    const int n = 100;
    double *tri = malloc(sizeof(double) * 18 * n * n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double a[3] = {i, j, 0}, b[3] = {i + 1, j, 0}, c[3] = {i, j + 1, 0},
                   d[3] = {i + 1, j + 1, 0};
            const double *v[6] = {a, b, d, a, d, c};
            for (int k = 0; k < 6; ++k)
                for (int m = 0; m < 3; ++m) tri[18 * (i * n + j) + 3 * k + m] = v[k][m];
        }
    pp_terrain *t = NULL;
    ck_assert_int_eq(pp_terrain_create(tri, 2 * n * n, &t), PP_OK);
    free(tri);
    ck_assert_int_eq(pp_terrain_triangle_count(t), 2 * n * n);
    int *hits = NULL, count = 0, capacity = 0;
    pp_aabb box = {{10.2, 20.2, -0.1}, {10.8, 20.8, 0.1}}; /* inside cell (10, 20) */
    pp_terrain_round(t);
    ck_assert_int_eq(pp_terrain_query(t, &box, &hits, &count, &capacity), PP_OK);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(pp_terrain_query(t, &box, &hits, &count, &capacity), PP_OK);
    ck_assert_int_eq(count, 2); /* once per round */
    pp_terrain_round(t);
    count = 0;
    pp_aabb wide = {{10.2, 20.2, -0.1}, {12.8, 20.8, 0.1}}; /* cells (10..12, 20) */
    ck_assert_int_eq(pp_terrain_query(t, &wide, &hits, &count, &capacity), PP_OK);
    ck_assert_int_eq(count, 6);
    for (int h = 0; h < count; ++h) ck_assert_int_eq(hits[h] / 2 % n, 20);
    pp_terrain_round(t);
    count = 0;
    pp_aabb above = {{10.2, 20.2, 0.1}, {10.8, 20.8, 0.3}}; /* above the top faces */
    ck_assert_int_eq(pp_terrain_query(t, &above, &hits, &count, &capacity), PP_OK);
    ck_assert_int_eq(count, 0);
    free(hits);
    pp_terrain_destroy(t);
}
END_TEST

START_TEST(bad_triangles_are_refused)
{
    double tri[9] = {0, 0, 0, 1, 0, 0, 0, NAN, 0};
    pp_terrain *t = NULL;
    ck_assert_int_eq(pp_terrain_create(tri, 1, &t), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "NaN"));
    ck_assert_int_eq(pp_terrain_create(tri, 0, &t), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_terrain_create(NULL, 1, &t), PP_ERR_NULL_ARGUMENT);
    ck_assert_ptr_null(t);
    /* a degenerate triangle is kept out: no prism */
    double flat[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
    ck_assert_int_eq(pp_terrain_create(flat, 1, &t), PP_OK);
    const pp_polytope *prism = NULL;
    ck_assert_int_eq(pp_terrain_prism(t, 0, &prism), PP_ERR_DEGENERATE);
    pp_terrain_destroy(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("terrain");
    TCase *tc = tcase_create("terrain");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, flat_edge_gives_the_face_normal);
    tcase_add_test(tc, ridge_keeps_its_normals);
    tcase_add_test(tc, boundary_edge_keeps_its_normals);
    tcase_add_test(tc, rule_with_terrain_as_b);
    tcase_add_test(tc, ridge_beyond_its_arc_is_dropped);
    tcase_add_test(tc, flat_region_corners_are_dropped);
    tcase_add_test(tc, query_finds_only_near_triangles);
    tcase_add_test(tc, bad_triangles_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
