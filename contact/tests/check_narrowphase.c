/*
 * Narrowphase contacts (pegplus/narrowphase.h): exact gaps and normals by hand, argument order,
 * the eps threshold, and the Jacobian columns of pegplus/mlcp.h against finite differences of
 * the gap of the same feature pair under small body motions (issue 3: 1e-7 relative).
 */
#include "pegplus/mlcp.h"
#include "pegplus/narrowphase.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 0.01
#define EXACT 1e-12

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static int contacts(const pp_shape *a, const pp_shape *b, double eps, pp_contact *out, int cap)
{
    int count = 0, needed = 0;
    ck_assert_int_eq(pp_narrowphase_contacts(a, b, eps, PP_APPL_VF_DEFAULT, out, cap, &count,
                                             &needed), PP_OK);
    ck_assert_int_eq(needed, count);
    return count;
}

/* A unit box 3 mm above the plane z = 0: its 4 bottom corners, psi = 0.003, n from the box
 * down (A = box), or up with the points on the plane when the plane is first. */
START_TEST(test_box_on_plane_both_orders)
{
    const double unit[3] = {1, 1, 1}, up[3] = {0, 0, 1}, pos[3] = {0.2, -0.1, 0.503};
    pp_shape box = pp_shape_make_box(unit, pos, I3), plane = pp_shape_make_plane(up, 0.0);
    pp_contact c[16];
    int n = contacts(&box, &plane, EPS, c, 16);
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(c[i].psi, 0.003, EXACT);
        ck_assert_double_eq_tol(c[i].n[2], -1.0, EXACT);
        ck_assert_double_eq_tol(c[i].p_a[2], 0.003, EXACT);
        ck_assert_double_eq_tol(fabs(c[i].p_a[0] - 0.2), 0.5, EXACT);
    }
    n = contacts(&plane, &box, EPS, c, 16);
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(c[i].psi, 0.003, EXACT);
        ck_assert_double_eq_tol(c[i].n[2], 1.0, EXACT);
        ck_assert_double_eq_tol(c[i].p_a[2], 0.0, EXACT); /* on the plane */
    }
    /* contacts appear exactly when psi < eps */
    double gaps[4] = {2 * EPS, 1.0001 * EPS, 0.9999 * EPS, -0.5 * EPS};
    int want[4] = {0, 0, 4, 4};
    for (int g = 0; g < 4; ++g) {
        double p2[3] = {0, 0, 0.5 + gaps[g]};
        box = pp_shape_make_box(unit, p2, I3);
        ck_assert_int_eq(contacts(&box, &plane, EPS, c, 16), want[g]);
    }
}
END_TEST

/* A capsule lying on the plane gets its two end contacts, at the ends of the segment. */
START_TEST(test_capsule_flat_on_plane)
{
    const double up[3] = {0, 0, 1}, pos[3] = {1, 0, 0.05 + 0.002};
    const double lying[9] = {0, 0, 1, 0, 1, 0, -1, 0, 0}; /* local z -> world x */
    pp_shape cap = pp_shape_make_capsule(0.05, 0.5, pos, lying), plane = pp_shape_make_plane(up, 0);
    pp_contact c[8];
    int n = contacts(&cap, &plane, EPS, c, 8);
    ck_assert_int_eq(n, 2);
    double xs = 0.0;
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(c[i].psi, 0.002, EXACT);
        ck_assert_double_eq_tol(c[i].n[2], -1.0, EXACT);
        ck_assert_double_eq_tol(fabs(c[i].p_a[0] - 1.0), 0.25, EXACT);
        xs += c[i].p_a[0];
    }
    ck_assert_double_eq_tol(xs, 2.0, EXACT);
}
END_TEST

/* A sphere 4 mm from a box face, edge and corner: one contact, exact gap, normal from the
 * sphere to the box; swapping the arguments flips the normal and keeps the gap. */
START_TEST(test_sphere_box)
{
    const double unit[3] = {1, 1, 1}, r = 0.1, d = 0.004;
    pp_shape box = pp_shape_make_box(unit, NULL, I3);
    const double dirs[3][3] = {{1, 0, 0}, {0.70710678118654752440, 0.70710678118654752440, 0},
                               {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)}};
    const double feature[3][3] = {{0.5, 0.2, -0.1}, {0.5, 0.5, 0.1}, {0.5, 0.5, 0.5}};
    for (int k = 0; k < 3; ++k) {
        double c[3];
        for (int j = 0; j < 3; ++j) c[j] = feature[k][j] + (r + d) * dirs[k][j];
        pp_shape ball = pp_shape_make_sphere(r, c);
        pp_contact out[4];
        ck_assert_int_eq(contacts(&ball, &box, EPS, out, 4), 1);
        ck_assert_double_eq_tol(out[0].psi, d, 1e-12);
        for (int j = 0; j < 3; ++j) ck_assert_double_eq_tol(out[0].n[j], -dirs[k][j], 1e-9);
        ck_assert_int_eq(contacts(&box, &ball, EPS, out, 4), 1);
        ck_assert_double_eq_tol(out[0].psi, d, 1e-12);
        for (int j = 0; j < 3; ++j) {
            ck_assert_double_eq_tol(out[0].n[j], dirs[k][j], 1e-9);
            ck_assert_double_eq_tol(out[0].p_a[j], feature[k][j], 1e-9); /* on the box */
        }
    }
}
END_TEST

/* Capacity: PP_ERR_NO_MEMORY with the count needed; bad arguments named. */
START_TEST(test_capacity_and_arguments)
{
    const double unit[3] = {1, 1, 1}, up[3] = {0, 0, 1}, pos[3] = {0, 0, 0.5};
    pp_shape box = pp_shape_make_box(unit, pos, I3), plane = pp_shape_make_plane(up, 0.0);
    pp_contact c[2];
    int count = 0, needed = 0;
    ck_assert_int_eq(pp_narrowphase_contacts(&box, &plane, EPS, PP_APPL_VF_DEFAULT, c, 2, &count,
                                             &needed), PP_ERR_NO_MEMORY);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(needed, 4);
    ck_assert_int_eq(pp_narrowphase_contacts(&box, &plane, -1.0, PP_APPL_VF_DEFAULT, c, 2, &count,
                                             &needed), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_narrowphase_contacts(&plane, &plane, EPS, PP_APPL_VF_DEFAULT, c, 2,
                                             &count, &needed), PP_ERR_UNSUPPORTED);
    ck_assert_int_eq(pp_narrowphase_contacts(NULL, &plane, EPS, PP_APPL_VF_DEFAULT, c, 2, &count,
                                             &needed), PP_ERR_NULL_ARGUMENT);
}
END_TEST

/* ---- Jacobians against finite differences ---------------------------------------------- */

static double uniform(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

static void rotation(const double axis_angle[3], double R[9])
{
    double t = sqrt(axis_angle[0] * axis_angle[0] + axis_angle[1] * axis_angle[1] +
                    axis_angle[2] * axis_angle[2]);
    double k[3] = {1, 0, 0};
    if (t > 0) for (int i = 0; i < 3; ++i) k[i] = axis_angle[i] / t;
    double c = cos(t), s = sin(t), v = 1 - c;
    R[0] = c + k[0] * k[0] * v;        R[1] = k[0] * k[1] * v - k[2] * s; R[2] = k[0] * k[2] * v + k[1] * s;
    R[3] = k[1] * k[0] * v + k[2] * s; R[4] = c + k[1] * k[1] * v;        R[5] = k[1] * k[2] * v - k[0] * s;
    R[6] = k[2] * k[0] * v - k[1] * s; R[7] = k[2] * k[1] * v + k[0] * s; R[8] = c + k[2] * k[2] * v;
}

static void moved(const pp_shape *s, const double v[3], const double w[3], double dt, pp_shape *out)
{
    *out = *s;
    double aa[3] = {w[0] * dt, w[1] * dt, w[2] * dt}, Rw[9];
    rotation(aa, Rw);
    for (int r = 0; r < 3; ++r) {
        out->position[r] = s->position[r] + v[r] * dt;
        for (int c = 0; c < 3; ++c)
            out->R[3 * r + c] = Rw[3 * r] * s->R[c] + Rw[3 * r + 1] * s->R[3 + c] +
                                Rw[3 * r + 2] * s->R[6 + c];
    }
}

/* psi of the contact with the same kind and features, or NAN. */
static double same_pair_psi(const pp_shape *a, const pp_shape *b, const pp_contact *ref)
{
    pp_contact c[64];
    int count = 0, needed = 0;
    pp_narrowphase_contacts(a, b, 0.5, PP_APPL_VF_DEFAULT, c, 64, &count, &needed);
    for (int i = 0; i < count; ++i)
        if (c[i].kind == ref->kind && c[i].feature_a == ref->feature_a &&
            c[i].feature_b == ref->feature_b) {
            if (ref->kind != PP_CONTACT_POINT) return c[i].psi;
            double d = 0;
            for (int k = 0; k < 3; ++k) d += (c[i].p_a[k] - ref->p_a[k]) * (c[i].p_a[k] - ref->p_a[k]);
            if (d < 1e-4) return c[i].psi;
        }
    return NAN;
}

/* For every contact of random near pairs (box-box, box-plane, sphere-box, capsule-box,
 * capsule-plane) the rate g_a . nu_a + g_b . nu_b equals the central difference of psi. */
START_TEST(test_jacobian_matches_finite_differences)
{
    unsigned seed = 12345u + 977u * (unsigned)_i;
    const double unit[3] = {1, 1, 1}, up[3] = {0, 0, 1};
    int checked[5] = {0, 0, 0, 0, 0};
    double worst = 0.0;
    for (int trial = 0; trial < 200; ++trial) {
        double aa[3], Ra[9], Rb[9], pa[3], pb[3];
        for (int k = 0; k < 3; ++k) aa[k] = 2.0 * uniform(&seed) - 1.0;
        rotation(aa, Ra);
        for (int k = 0; k < 3; ++k) aa[k] = 0.3 * (2.0 * uniform(&seed) - 1.0);
        rotation(aa, Rb);
        for (int k = 0; k < 3; ++k) pa[k] = 0.2 * (uniform(&seed) - 0.5);
        pa[2] += 1.2 + 0.05 * uniform(&seed);
        for (int k = 0; k < 3; ++k) pb[k] = 0.0;
        pp_shape A, B;
        int kind = trial % 5;
        switch (kind) {
        case 0: A = pp_shape_make_box(unit, pa, Ra); B = pp_shape_make_box(unit, pb, Rb); break;
        case 1: pa[2] -= 0.3; A = pp_shape_make_box(unit, pa, Ra); B = pp_shape_make_plane(up, 0); break;
        case 2: A = pp_shape_make_sphere(0.3, pa); B = pp_shape_make_box(unit, pb, Rb); break;
        case 3: A = pp_shape_make_capsule(0.2, 0.6, pa, Ra); B = pp_shape_make_box(unit, pb, Rb); break;
        default: pa[2] -= 0.6; A = pp_shape_make_capsule(0.2, 0.6, pa, Ra); B = pp_shape_make_plane(up, 0); break;
        }
        pp_contact c[64];
        int count = 0, needed = 0;
        pp_narrowphase_contacts(&A, &B, 0.5, PP_APPL_VF_DEFAULT, c, 64, &count, &needed);
        double va[3], wa[3], vb[3], wb[3];
        for (int k = 0; k < 3; ++k) {
            va[k] = 2 * uniform(&seed) - 1; wa[k] = 2 * uniform(&seed) - 1;
            vb[k] = B.kind == PP_SHAPE_PLANE ? 0 : 2 * uniform(&seed) - 1;
            wb[k] = B.kind == PP_SHAPE_PLANE ? 0 : 2 * uniform(&seed) - 1;
        }
        for (int i = 0; i < count; ++i) {
            double ga[6], gb[6];
            const double *xb = B.kind == PP_SHAPE_PLANE ? NULL : B.position;
            pp_mlcp_contact_jacobian(&c[i], A.position, xb, c[i].n, ga, gb);
            double rate = ga[0] * va[0] + ga[1] * va[1] + ga[2] * va[2] + ga[3] * wa[0] +
                          ga[4] * wa[1] + ga[5] * wa[2];
            if (xb) rate += gb[0] * vb[0] + gb[1] * vb[1] + gb[2] * vb[2] + gb[3] * wb[0] +
                            gb[4] * wb[1] + gb[5] * wb[2];
            const double dt = 1e-6;
            pp_shape Ap, Am, Bp, Bm;
            moved(&A, va, wa, dt, &Ap);
            moved(&A, va, wa, -dt, &Am);
            moved(&B, vb, wb, dt, &Bp);
            moved(&B, vb, wb, -dt, &Bm);
            double psi_p = same_pair_psi(&Ap, &Bp, &c[i]), psi_m = same_pair_psi(&Am, &Bm, &c[i]);
            if (isnan(psi_p) || isnan(psi_m)) continue; /* the pair changed features */
            double fd = (psi_p - psi_m) / (2 * dt);
            double scale = 1.0 + 2.0 * 3.0; /* |v| + |w| size, size ~ 1 m */
            double err = fabs(fd - rate) / scale;
            if (err > worst) worst = err;
            ck_assert_msg(err < 1e-7, "kind %d contact %d (type %d): rate %.12g, fd %.12g", kind,
                          i, c[i].kind, rate, fd);
            checked[kind]++;
        }
    }
    for (int k = 0; k < 5; ++k) ck_assert_int_gt(checked[k], 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("narrowphase");
    TCase *tc = tcase_create("contacts");
    tcase_add_test(tc, test_box_on_plane_both_orders);
    tcase_add_test(tc, test_capsule_flat_on_plane);
    tcase_add_test(tc, test_sphere_box);
    tcase_add_test(tc, test_capacity_and_arguments);
    tcase_add_loop_test(tc, test_jacobian_matches_finite_differences, 0, 3);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
