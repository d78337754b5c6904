/*
 * Cylinder shapes (pegplus/geometry.h "Cylinders"): the inscribed prism, the exact support
 * function and distance, the exact plane and sphere contacts, and the prism's bound. Every
 * expected value is a closed form worked out here, independent of the library's code.
 */
#include "pegplus/geometry.h"
#include "pegplus/narrowphase.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "test_support.h"

#define EXACT 1e-12
#define PI 3.14159265358979323846
#define R_CYL 0.1
#define L_CYL 0.3

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static pp_polytope *prism;

static void prism_setup(void)
{
    setup();
    rng_state = 12345;
    ck_assert_int_eq(pp_polytope_cylinder_prism(R_CYL, L_CYL, PP_CYLINDER_PRISM_SIDES, &prism),
                     PP_OK);
}

static void prism_teardown(void)
{
    pp_polytope_destroy(prism);
    teardown();
}

/* Rotation by angle t about the unit axis u (Rodrigues), row-major. */
static void rotation(const double u[3], double t, double R[9])
{
    double c = cos(t), s = sin(t), k = 1.0 - c;
    R[0] = c + u[0] * u[0] * k, R[1] = u[0] * u[1] * k - u[2] * s, R[2] = u[0] * u[2] * k + u[1] * s;
    R[3] = u[1] * u[0] * k + u[2] * s, R[4] = c + u[1] * u[1] * k, R[5] = u[1] * u[2] * k - u[0] * s;
    R[6] = u[2] * u[0] * k - u[1] * s, R[7] = u[2] * u[1] * k + u[0] * s, R[8] = c + u[2] * u[2] * k;
}

static void random_rotation(double R[9])
{
    double u[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int k = 0; k < 3; ++k) u[k] /= n;
    rotation(u, uniform(0, 2 * PI), R);
}

/* The prism: V = 2N, E = 3N, F = N + 2; every vertex on a rim (radius r, z = +-L/2), every
 * side face at r cos(pi/N) from the axis, so the prism lies in the cylinder and the cylinder
 * reaches r (1 - cos(pi/N)) <= PP_CYLINDER_PRISM_DEPTH r beyond it (tight). */
START_TEST(prism_inscribed)
{
    const int n = PP_CYLINDER_PRISM_SIDES;
    ck_assert_int_eq(prism->vertex_count, 2 * n);
    ck_assert_int_eq(prism->edge_count, 3 * n);
    ck_assert_int_eq(prism->face_count, n + 2);
    for (int f = 0; f < n; ++f) {
        ck_assert_double_eq_tol(prism->face_offsets[f], R_CYL * cos(PI / n), EXACT);
        ck_assert_double_eq_tol(prism->face_normals[3 * f + 2], 0.0, EXACT);
        ck_assert_double_eq_tol(atan2(prism->face_normals[3 * f + 1], prism->face_normals[3 * f]),
                                remainder((2 * f + 1) * PI / n, 2 * PI), 1e-12);
    }
    ck_assert_double_eq_tol(prism->face_offsets[n], 0.5 * L_CYL, EXACT);
    ck_assert_double_eq_tol(prism->face_offsets[n + 1], 0.5 * L_CYL, EXACT);
    for (int i = 0; i < 2 * n; ++i) {
        const double *v = prism->vertices + 3 * i;
        ck_assert_double_eq_tol(hypot(v[0], v[1]), R_CYL, EXACT);
        ck_assert_double_eq_tol(fabs(v[2]), 0.5 * L_CYL, EXACT);
    }
    const double depth = R_CYL * (1.0 - cos(PI / n));
    ck_assert_double_le(depth, PP_CYLINDER_PRISM_DEPTH * R_CYL);
    ck_assert_double_ge(depth, 0.999 * PP_CYLINDER_PRISM_DEPTH * R_CYL); /* the bound is tight */
    pp_polytope *bad = NULL;
    ck_assert_int_eq(pp_polytope_cylinder_prism(0.0, 1.0, 16, &bad), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_polytope_cylinder_prism(1.0, NAN, 16, &bad), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_polytope_cylinder_prism(1.0, 1.0, 2, &bad), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(bad);
    pp_shape no_prism = pp_shape_make_cylinder(R_CYL, L_CYL, NULL, NULL, NULL);
    ck_assert_int_eq(pp_shape_validate(&no_prism), PP_ERR_NULL_ARGUMENT);
    pp_shape flat = pp_shape_make_cylinder(R_CYL, 0.0, prism, NULL, NULL);
    ck_assert_int_eq(pp_shape_validate(&flat), PP_ERR_INVALID_ARGUMENT);
}
END_TEST

/* Support: s(d) . d = h(d) = (L/2)|d . a| + r |d - (d . a) a| (a the axis), at a point of the
 * cylinder (on a cap's rim), for random poses and directions. The bounding box holds the
 * prism. */
START_TEST(support_is_exact)
{
    for (int trial = 0; trial < 200; ++trial) {
        double R[9], x[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
        random_rotation(R);
        pp_shape c = pp_shape_make_cylinder(R_CYL, L_CYL, prism, x, R);
        ck_assert_int_eq(pp_shape_validate(&c), PP_OK);
        double d[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)}, s[3];
        ck_assert_int_eq(pp_shape_support(&c, d, 0.0, s), 1);
        double a[3] = {R[2], R[5], R[8]}, da = d[0] * a[0] + d[1] * a[1] + d[2] * a[2];
        double perp[3] = {d[0] - da * a[0], d[1] - da * a[1], d[2] - da * a[2]};
        double h = 0.5 * L_CYL * fabs(da) + R_CYL * sqrt(perp[0] * perp[0] + perp[1] * perp[1] + perp[2] * perp[2]);
        double rel[3] = {s[0] - x[0], s[1] - x[1], s[2] - x[2]};
        ck_assert_double_eq_tol(rel[0] * d[0] + rel[1] * d[1] + rel[2] * d[2], h, EXACT);
        double along = rel[0] * a[0] + rel[1] * a[1] + rel[2] * a[2];
        double radial2 = rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2] - along * along;
        ck_assert_double_eq_tol(fabs(along), 0.5 * L_CYL, EXACT);
        ck_assert_double_eq_tol(sqrt(radial2), R_CYL, EXACT);
        pp_aabb box;
        pp_shape_aabb(&c, 0.0, &box);
        for (int i = 0; i < prism->vertex_count; ++i) {
            double w[3];
            for (int k = 0; k < 3; ++k)
                w[k] = x[k] + R[3 * k] * prism->vertices[3 * i] +
                       R[3 * k + 1] * prism->vertices[3 * i + 1] + R[3 * k + 2] * prism->vertices[3 * i + 2];
            for (int k = 0; k < 3; ++k) {
                ck_assert_double_le(w[k], box.max[k] + EXACT);
                ck_assert_double_ge(w[k], box.min[k] - EXACT);
            }
        }
    }
}
END_TEST

/* A sphere against the cylinder (axis z, centre 0): closed forms of the signed distance, the
 * normal and the points, outside (side, cap, rim) and inside (nearer the side, nearer a cap),
 * in both argument orders. */
START_TEST(sphere_distance_closed_form)
{
    const double rs = 0.02, e = 0.5 * L_CYL;
    struct {
        double centre[3], distance, n[3];
    } cases[] = {
        {{0.15, 0.0, 0.05}, 0.15 - R_CYL - rs, {1, 0, 0}},               /* beside the side */
        {{0.0, 0.03, 0.2}, 0.2 - e - rs, {0, 0, 1}},                      /* over the top cap */
        {{0.0, 0.0, -0.17}, 0.17 - e - rs, {0, 0, -1}},                   /* under the bottom */
        {{0.13, 0.0, 0.19}, hypot(0.03, 0.04) - rs, {0.6, 0, 0.8}},       /* off the rim */
        {{0.0, 0.09, 0.0}, -(R_CYL - 0.09) - rs, {0, 1, 0}},              /* inside, by the side */
        {{0.02, 0.0, 0.14}, -(e - 0.14) - rs, {0, 0, 1}},                 /* inside, by the cap */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pp_shape c = pp_shape_make_cylinder(R_CYL, L_CYL, prism, NULL, I3);
        pp_shape s = pp_shape_make_sphere(rs, cases[i].centre);
        for (int order = 0; order < 2; ++order) {
            pp_proximity p;
            ck_assert_int_eq(order ? pp_shape_distance(&s, &c, &p) : pp_shape_distance(&c, &s, &p), PP_OK);
            ck_assert_int_eq(p.method, PP_PROXIMITY_ANALYTIC);
            ck_assert_double_eq_tol(p.distance, cases[i].distance, EXACT);
            double sign = order ? -1.0 : 1.0;
            for (int k = 0; k < 3; ++k) {
                ck_assert_double_eq_tol(p.n[k], sign * cases[i].n[k], EXACT);
                ck_assert_double_eq_tol(p.p_b[k] - p.p_a[k], p.distance * p.n[k], EXACT);
            }
        }
    }
}
END_TEST

/* The exact cylinder against a plane and a box (libccd/GJK on the support function): a
 * cylinder tilted by t about x over the plane z = 0 or a large box's top face has its lowest
 * point (L/2) sin t + r cos t below its centre (separated and overlapping). */
START_TEST(box_and_plane_distance_exact)
{
    const double up[3] = {0, 0, 1}, big[3] = {4, 4, 1}, box_at[3] = {0, 0, -0.5};
    const double xaxis[3] = {1, 0, 0};
    pp_shape plane = pp_shape_make_plane(up, 0.0), box = pp_shape_make_box(big, box_at, I3);
    for (int i = 0; i < 12; ++i) {
        double t = 0.1 + 1.3 * i / 11.0, R[9];
        rotation(xaxis, t, R);
        double drop = 0.5 * L_CYL * cos(t) + R_CYL * sin(t);
        for (int j = 0; j < 2; ++j) {
            double gap = j ? 0.004 : -0.003, x[3] = {0.1, 0.2, drop + gap};
            pp_shape c = pp_shape_make_cylinder(R_CYL, L_CYL, prism, x, R);
            pp_proximity p;
            ck_assert_int_eq(pp_shape_distance(&c, &plane, &p), PP_OK);
            ck_assert_double_eq_tol(p.distance, gap, EXACT);
            ck_assert_int_eq(pp_shape_distance(&c, &box, &p), PP_OK);
            ck_assert_double_eq_tol(p.distance, gap, 1e-10);
            ck_assert_double_eq_tol(p.n[2], -1.0, 1e-8);
        }
    }
}
END_TEST

/* Random poses against a random box: the unturned prism's distance lies between the exact
 * one and it plus PP_CYLINDER_PRISM_DEPTH r (the prism lies in the cylinder, within that of
 * its surface); the turned prism of pp_shape_pair_form has the exact distance when they are
 * apart and at most the exact depth when they overlap. */
START_TEST(prism_brackets_exact_distance)
{
    int apart = 0;
    for (int trial = 0; trial < 300; ++trial) {
        double Rc[9], Rb[9], xc[3] = {0, 0, 0};
        double xb[3] = {uniform(-0.3, 0.3), uniform(-0.3, 0.3), uniform(-0.3, 0.3)};
        double lengths[3] = {uniform(0.05, 0.4), uniform(0.05, 0.4), uniform(0.05, 0.4)};
        random_rotation(Rc);
        random_rotation(Rb);
        pp_shape c = pp_shape_make_cylinder(R_CYL, L_CYL, prism, xc, Rc);
        pp_shape p = pp_shape_make_polytope(prism, xc, Rc);
        pp_shape b = pp_shape_make_box(lengths, xb, Rb);
        pp_shape turned = pp_shape_pair_form(&c, &b);
        ck_assert_int_eq(turned.kind, PP_SHAPE_POLYTOPE);
        ck_assert_int_eq(pp_shape_validate(&turned), PP_OK);
        pp_proximity exact, approx, form;
        ck_assert_int_eq(pp_shape_distance(&c, &b, &exact), PP_OK);
        ck_assert_int_eq(pp_shape_distance(&p, &b, &approx), PP_OK);
        ck_assert_int_eq(pp_shape_distance(&turned, &b, &form), PP_OK);
        ck_assert_double_ge(approx.distance, exact.distance - 1e-9);
        ck_assert_double_le(approx.distance, exact.distance + PP_CYLINDER_PRISM_DEPTH * R_CYL + 1e-9);
        if (exact.distance > 0.0) {
            ck_assert_double_eq_tol(form.distance, exact.distance, 1e-9);
            apart++;
        } else {
            ck_assert_double_ge(form.distance, exact.distance - 1e-9);
        }
    }
    ck_assert_int_gt(apart, 50);
}
END_TEST

/* Contacts against a plane: lying (axis along y, 2 mm up) the two ends of the line contact;
 * standing 1 mm up, the octagon of rim points; tilted by t (2 mm up at the lowest point), the
 * exact lowest point of the lower cap among them. Gaps exact; the normal from the cylinder
 * into the plane. The same lying cylinder meets a box as its turned prism: the ends of its
 * lowest edge 2 mm up, where the line contact's ends are, and the next vertices within eps,
 * each with its exact gap; the proximity filter is exact too. */
START_TEST(plane_contacts_exact)
{
    const double up[3] = {0, 0, 1}, xaxis[3] = {1, 0, 0};
    pp_shape plane = pp_shape_make_plane(up, 0.0);
    pp_contact c[32];
    double R[9];
    rotation(xaxis, PI / 2, R);
    double lying_at[3] = {0.1, 0.2, R_CYL + 0.002};
    pp_shape lying = pp_shape_make_cylinder(R_CYL, L_CYL, prism, lying_at, R);
    int n = 0, needed = 0;
    ck_assert_int_eq(pp_narrowphase_contacts(&plane, &lying, 0.01, PP_APPL_VF_DEFAULT, c, 32, &n,
                                             &needed), PP_OK);
    ck_assert_int_eq(n, 2);
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(c[i].psi, 0.002, EXACT);
        ck_assert_double_eq_tol(c[i].n[2], 1.0, EXACT); /* plane first: n into the cylinder */
        ck_assert_double_eq_tol(c[i].p_a[2], 0.0, EXACT);
        ck_assert_double_eq_tol(c[i].p_a[0], 0.1, EXACT);
        ck_assert_double_eq_tol(fabs(c[i].p_a[1] - 0.2), 0.5 * L_CYL, EXACT);
    }
    double standing_at[3] = {0, 0, 0.5 * L_CYL + 0.001};
    pp_shape standing = pp_shape_make_cylinder(R_CYL, L_CYL, prism, standing_at, I3);
    n = 0;
    ck_assert_int_eq(pp_narrowphase_contacts(&standing, &plane, 0.01, PP_APPL_VF_DEFAULT, c, 32,
                                             &n, &needed), PP_OK);
    ck_assert_int_eq(n, 8);
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(c[i].psi, 0.001, EXACT);
        ck_assert_double_eq_tol(c[i].n[2], -1.0, EXACT);
        ck_assert_double_eq_tol(hypot(c[i].p_a[0], c[i].p_a[1]), R_CYL, EXACT);
    }
    for (int i = 0; i < 10; ++i) {
        double t = 0.05 + 0.1 * i;
        rotation(xaxis, t, R);
        double x[3] = {0, 0, 0.5 * L_CYL * cos(t) + R_CYL * sin(t) + 0.002};
        pp_shape tilted = pp_shape_make_cylinder(R_CYL, L_CYL, prism, x, R);
        n = 0;
        ck_assert_int_eq(pp_narrowphase_contacts(&tilted, &plane, 0.01, PP_APPL_VF_DEFAULT, c, 32,
                                                 &n, &needed), PP_OK);
        double lowest = HUGE_VAL;
        for (int k = 0; k < n; ++k) lowest = fmin(lowest, c[k].psi);
        ck_assert_int_ge(n, 1);
        ck_assert_double_eq_tol(lowest, 0.002, EXACT);
    }
    /* against a box: the prism's side face on the box's top, the four corners of the face */
    const double slab[3] = {1, 1, 0.2}, slab_at[3] = {0, 0, -0.1};
    pp_shape box = pp_shape_make_box(slab, slab_at, I3);
    n = 0;
    ck_assert_int_eq(pp_narrowphase_contacts(&lying, &box, 0.01, PP_APPL_VF_DEFAULT, c, 32, &n,
                                             &needed), PP_OK);
    int lowest = 0;
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(c[i].kind, PP_CONTACT_VERTEX_FACE); /* the prism's vertices */
        ck_assert_double_eq_tol(c[i].psi, c[i].p_a[2], EXACT);
        ck_assert_double_lt(c[i].psi, 0.01);
        ck_assert_double_ge(c[i].psi, 0.002 - EXACT);
        if (fabs(c[i].psi - 0.002) < EXACT) {
            lowest++; /* the ends of the line contact, exactly */
            ck_assert_double_eq_tol(c[i].p_a[0], 0.1, EXACT);
            ck_assert_double_eq_tol(fabs(c[i].p_a[1] - 0.2), 0.5 * L_CYL, EXACT);
        }
    }
    ck_assert_int_eq(lowest, 2);
    ck_assert_int_eq(pp_shapes_within(&lying, &box, 0.0021), 1);
    ck_assert_int_eq(pp_shapes_within(&lying, &box, 0.0019), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cylinder_shape");
    TCase *tc = tcase_create("cylinder");
    tcase_add_checked_fixture(tc, prism_setup, prism_teardown);
    tcase_add_test(tc, prism_inscribed);
    tcase_add_test(tc, support_is_exact);
    tcase_add_test(tc, sphere_distance_closed_form);
    tcase_add_test(tc, box_and_plane_distance_exact);
    tcase_add_test(tc, prism_brackets_exact_distance);
    tcase_add_test(tc, plane_contacts_exact);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
