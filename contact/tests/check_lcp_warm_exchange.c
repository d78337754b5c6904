/*
 * The warm repair's exchange (lcp_warm_exchange.c) on a box flat on four coplanar corners: a
 * redundant support, 4 normal rows for its 3 out-of-plane freedoms (z, tilt about x and y).
 *
 * The LCP of one step, frictionless (each contact's block is its p alone): the box of mass m
 * and half extents a, b, c, corners r_i = (x_i, y_i, -c), normal e_z, Jacobian rows
 * J_i = [e_z, r_i x e_z] = [0 0 1, y_i -x_i 0], M = J W^-1 J^T + r I (W = diag(m, I_x, I_y) on
 * the freedoms the rows see, I_x = m (b^2 + c^2) / 3, I_y = m (a^2 + c^2) / 3, r a compliance
 * of 1e-12 times M's diagonal), q = -g h (1, 1, 1, 1): the box falling flat at g h. M is
 * positive definite, so the LCP has one answer: by symmetry z_i = g h / (4 / m + r) (the rows
 * sum x_i and y_i to zero), every w_i = 0.
 *
 * The warm basis holds three corners (the last step's: the box rocked on its diagonal). Its
 * basis solution loads the two diagonal corners with half the weight each and the third with
 * nothing (z = 0 up to rounding), and leaves the fourth corner approaching at w = -r g h, a
 * few times the warm repair's floor (1e-12 ||q||_inf): below W_LOAD_FLOOR, so the repair
 * leaves it to the clamp (lcp_warm_repair.c: closing it alone is a pivot on the compliance),
 * and without the exchange that clamped answer, z = (0, g h m / 2, 0, g h m / 2) with an
 * approach, is accepted from the warm basis. The exchange drives the approaching corner's p
 * by a ratio test and must return the LCP's answer from the warm basis: z within 1e-9 of the
 * closed form, every w >= -1e-12 ||q||_inf, no Lemke pivot.
 */
#include "pegplus/lcp.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { N = 4 };

START_TEST(test_flat_box_warm_three_corners)
{
    const double m = 1.0, a = 0.5, b = 0.3, c = 0.2, gh = 9.81 * 0.01;
    const double Ix = m * (b * b + c * c) / 3.0, Iy = m * (a * a + c * c) / 3.0;
    const double x[N] = {a, -a, -a, a}, y[N] = {b, b, -b, -b};
    double M[N * N], q[N], z[N];
    double diag = 0.0;
    for (int i = 0; i < N; ++i)
        diag = fmax(diag, 1.0 / m + y[i] * y[i] / Ix + x[i] * x[i] / Iy);
    const double r = 1e-12 * diag;
    for (int i = 0; i < N; ++i) {
        q[i] = -gh;
        for (int j = 0; j < N; ++j) /* column-major; M is symmetric */
            M[i + j * N] = 1.0 / m + y[i] * y[j] / Ix + x[i] * x[j] / Iy + (i == j ? r : 0.0);
    }
    const int blocks[N] = {0, 1, 2, 3};
    unsigned char basis[N] = {1, 1, 1, 1};
    basis[_i] = 0; /* the open corner */
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.contact_block = blocks;
    pp_lcp_result res;
    ck_assert_int_eq(pp_lcp_solve(ws, N, M, q, &o, basis, z, &res), PP_OK);
    pp_lcp_workspace_destroy(ws);
    ck_assert_int_eq(res.warm_started, 1);
    ck_assert_int_eq(res.pivots, 0);
    const double load = gh / (4.0 / m + r);
    for (int i = 0; i < N; ++i) {
        double w = q[i];
        for (int j = 0; j < N; ++j) w += M[i + j * N] * z[j];
        ck_assert_msg(fabs(z[i] - load) <= 1e-9 * load, "open corner %d: z_%d = %.9e, the "
                      "LCP's answer %.9e", _i, i, z[i], load);
        ck_assert_msg(w >= -1e-12 * gh, "open corner %d: w_%d = %.3e approaches", _i, i, w);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lcp_warm_exchange");
    TCase *tc = tcase_create("flat_box");
    tcase_add_loop_test(tc, test_flat_box_warm_three_corners, 0, N);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
