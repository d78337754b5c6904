/*
 * Unit tests of load sharing over redundant supports (contact/src/lcp_load_sharing.c, called
 * by pp_peg_solve and so pp_mlcp_solve): where the time-stepping LCP has many solutions the
 * one applied is the limit of a uniform compliance going to zero, and an LCP with a unique
 * solution is left exactly as Lemke solved it.
 */
#include "pegplus/mlcp.h"

#include "../src/lcp_internal.h"
#include "../src/peg_lcp_internal.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define G 9.81
#define H 0.01
/* Relative agreement of the shared loads with their closed forms: the limit is computed by
 * LU solves of condition ~1/LS_EPS (1e6), so its rounding is ~1e-10 relative. */
#define TOL_SHARE 1e-9
/* The LCP conditions, as every solve is accepted (pegplus/lcp.h: rel(z) <= residual_tol). */
#define TOL_LCP 1e-9

static pp_mlcp_workspace *g_ws;

static void setup(void)
{
    pp_set_log_hook(pp_log_discard, NULL);
    ck_assert_int_eq(pp_mlcp_workspace_create(2, 16, 16, &g_ws), PP_OK);
}

static void teardown(void)
{
    pp_mlcp_workspace_destroy(g_ws);
    pp_set_log_hook(NULL, NULL);
}

/* A box of mass m and half extents e, centre at height e_z over the ground z = 0, free
 * velocity (v, 0) (gravity already in v: v_z = -g h). */
static pp_mlcp_body box_body(double m, const double e[3], const double v[3])
{
    pp_mlcp_body b;
    memset(&b, 0, sizeof b);
    b.inv_mass = 1.0 / m;
    b.inv_inertia[0] = 3.0 / (m * (e[1] * e[1] + e[2] * e[2]));
    b.inv_inertia[4] = 3.0 / (m * (e[0] * e[0] + e[2] * e[2]));
    b.inv_inertia[8] = 3.0 / (m * (e[0] * e[0] + e[1] * e[1]));
    b.x[2] = e[2];
    memcpy(b.v, v, sizeof b.v);
    return b;
}

/* Supports of body 0 on the ground at the points (x_i, y_i, 0), normal +z, gap 0. */
static void supports(int count, const double (*xy)[2], double mu, pp_contact *out)
{
    for (int i = 0; i < count; ++i) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].body_a = -1;
        out[i].body_b = 0;
        out[i].p_a[0] = xy[i][0];
        out[i].p_a[1] = xy[i][1];
        out[i].n[2] = 1.0;
        out[i].mu = mu;
    }
}

/* The solution of pp_mlcp_solve read back as the LCP's z, and the LCP conditions checked on
 * the assembled LCP (pp_mlcp_last_lcp): z >= 0, w >= 0, z^T w = 0 row by row to TOL_LCP of
 * the row's size, as Lemke's answers are accepted. */
static void check_lcp(int nc, int k, const double *pn, const double *beta, const double *sigma)
{
    int n;
    const double *M, *q;
    pp_mlcp_last_lcp(g_ws, &n, &M, &q);
    double z[16 * 10], zn = 0.0;
    ck_assert_int_le(n, 16 * 10);
    for (int j = 0; j < n; ++j) {
        z[j] = j < nc ? pn[j] : j < nc + nc * k ? beta[j - nc] : sigma[j - nc - nc * k];
        zn = fmax(zn, fabs(z[j]));
    }
    for (int i = 0; i < n; ++i) {
        double w = q[i], s = fabs(q[i]);
        for (int j = 0; j < n; ++j) {
            w += M[i + (size_t)j * n] * z[j];
            s += fabs(M[i + (size_t)j * n]) * zn;
        }
        ck_assert_msg(z[i] >= 0.0, "z[%d] = %g < 0", i, z[i]);
        ck_assert_msg(w >= -TOL_LCP * s, "w[%d] = %g < 0", i, w);
        ck_assert_msg(fabs(fmin(z[i], w)) <= TOL_LCP * s, "row %d: z %g, w %g", i, z[i], w);
    }
}

/* ---- The bare LCP --------------------------------------------------------------------- */

/* The bare tests' load sharing: `count` normal unknowns 0, 1, ..., frictionless, each its
 * own force. Free with pp_load_sharing_free. */
static void bare_normals(pp_load_sharing *ls, int count)
{
    memset(ls, 0, sizeof *ls);
    ck_assert_int_eq(pp_load_sharing_reserve(ls, count), PP_OK);
    for (int t = 0; t < count; ++t) {
        ls->normal[t] = t;
        ls->beta[t] = -1;
        ls->force[t] = 1;
    }
}

/* Two supports at the same point under a unit mass: M = [1 1; 1 1], q = -(2, 2). Every
 * p >= 0 with p_1 + p_2 = 2 solves it; Lemke returns a vertex (2, 0) or (0, 2); the
 * compliance limit, (M + eps I) p = -q for eps -> 0, is (1, 1): the minimum-norm solution. */
START_TEST(test_bare_redundant_pair)
{
    const double M[4] = {1.0, 1.0, 1.0, 1.0}, q[2] = {-2.0, -2.0};
    pp_lcp_workspace *lcp = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(2, &lcp), PP_OK);
    double z[2];
    unsigned char basis[2] = {0, 0};
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(lcp, 2, M, q, NULL, basis, z, &r), PP_OK);
    ck_assert_msg(fabs(z[0] - z[1]) > 1.0, "Lemke's answer is a vertex: (%g, %g)", z[0], z[1]);

    pp_load_sharing ls;
    bare_normals(&ls, 2);
    pp_lcp_options o = pp_lcp_options_default();
    /* only impulses moved: the velocity M z + q is the same for both */
    ck_assert_int_eq(pp_load_sharing_apply(&ls, lcp, 2, M, NULL, q, 2, 4, 6, &o, basis, z, &r),
                     PP_LOAD_SHARED_IMPULSES);
    ck_assert_double_eq_tol(z[0], 1.0, TOL_SHARE);
    ck_assert_double_eq_tol(z[1], 1.0, TOL_SHARE);
    ck_assert(r.residual <= 1e-12);
    pp_load_sharing_free(&ls);
    pp_lcp_workspace_destroy(lcp);
}
END_TEST

/* A positive definite M: one solution, returned bit for bit. */
START_TEST(test_bare_unique_untouched)
{
    const double M[4] = {2.0, 0.5, 0.5, 1.0}, q[2] = {-1.0, -0.3};
    pp_lcp_workspace *lcp = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(2, &lcp), PP_OK);
    double z[2], z0[2];
    unsigned char basis[2] = {0, 0};
    pp_lcp_result r, r0;
    ck_assert_int_eq(pp_lcp_solve(lcp, 2, M, q, NULL, basis, z, &r), PP_OK);
    memcpy(z0, z, sizeof z);
    r0 = r;
    pp_load_sharing ls;
    bare_normals(&ls, 2);
    pp_lcp_options o = pp_lcp_options_default();
    ck_assert_int_eq(pp_load_sharing_apply(&ls, lcp, 2, M, NULL, q, 2, 4, 6, &o, basis, z, &r),
                     PP_LOAD_UNIQUE);
    ck_assert(memcmp(z, z0, sizeof z) == 0);
    ck_assert(memcmp(&r, &r0, sizeof r) == 0);
    pp_load_sharing_free(&ls);
    pp_lcp_workspace_destroy(lcp);
}
END_TEST

/* Where Lemke's answer is the limit's reference (it lives on the compliant basis B), w_B of
 * it must be within the rows' closed tolerance tau_i = 1e-9 (|q_i| + sum_j |M_ij| ||z||)
 * (lcp_load_sharing.c compliant_limit; the test reads w = M z + q as load sharing formed it
 * on entry). Unknown 0 is a separate row (w_0 = 0.5, not active), unknowns 1 and 2 the
 * redundant pair of test_bare_redundant_pair, so B = {1, 2} and the rows tested are 1 and 2,
 * not 0 and 1. The answer handed in is (0, 1.5 + d, 0.5): w = (0.5, d, d). _i = 0: d = 1e-12,
 * within tau = 5e-9: the limit (0, 1, 1) replaces it (reading row 0's w, 0.5, for B's first
 * row would keep Lemke's answer). _i = 1: d = 1e-6, beyond tau on both basic rows: the
 * answer is kept bit for bit (the limit, (0, 1 + d/2, 1 + d/2), would also fail the final
 * acceptance: its rel(z) exceeds that of the answer handed in). */
START_TEST(test_bare_reference_rows_closed)
{
    const double M[9] = {1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0}, q[3] = {0.5, -2.0, -2.0};
    const double d = _i ? 1e-6 : 1e-12;
    pp_lcp_workspace *lcp = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(3, &lcp), PP_OK);
    double z[3] = {0.0, 1.5 + d, 0.5}, z0[3];
    memcpy(z0, z, sizeof z);
    unsigned char basis[3] = {0, 1, 1};
    pp_lcp_result r;
    memset(&r, 0, sizeof r);
    pp_lcp_evaluate(3, M, q, z, NULL, &r);
    ck_assert_double_eq_tol(r.residual, d, 1e-15);
    pp_load_sharing ls;
    bare_normals(&ls, 3);
    pp_lcp_options o = pp_lcp_options_default();
    const pp_load_sharing_outcome out =
        pp_load_sharing_apply(&ls, lcp, 3, M, NULL, q, 3, 4, 6, &o, basis, z, &r);
    if (_i == 0) {
        ck_assert_int_eq(out, PP_LOAD_SHARED_IMPULSES);
        ck_assert(z[0] == 0.0);
        ck_assert_double_eq_tol(z[1], 1.0, TOL_SHARE);
        ck_assert_double_eq_tol(z[2], 1.0, TOL_SHARE);
    } else {
        ck_assert_int_eq(out, PP_LOAD_KEPT);
        ck_assert(memcmp(z, z0, sizeof z) == 0);
    }
    pp_load_sharing_free(&ls);
    pp_lcp_workspace_destroy(lcp);
}
END_TEST

/* A kept compliant basis (ls->start) that is not the compliant LCP's basis as it stands is
 * dropped, and the call goes on from Lemke's derived basis exactly as without it: the same
 * outcome, the same z and compliant basis to the bit. The LCP of test_bare_reference_rows_closed
 * (Lemke's answer a vertex, the limit (0, 1, 1)). _i = 0: kept basis {0, 1, 2}, refused by
 * its basic z_0 = -0.5 / (1 + eps) (tested before w_N is formed); _i = 1: kept basis {1},
 * refused by its non-basic w_2 = z_1 - 2 < 0. Taken as it stands, either ends in another
 * answer (a negative load: Lemke's kept; or the limit on the wrong block). */
START_TEST(test_bare_kept_basis_refused)
{
    const double M[9] = {1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0}, q[3] = {0.5, -2.0, -2.0};
    const unsigned char kept[2][3] = {{1, 1, 1}, {0, 1, 0}};
    pp_lcp_workspace *lcp = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(3, &lcp), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    double z[2][3];
    unsigned char found[2][3];
    pp_load_sharing_outcome out[2];
    for (int with_start = 0; with_start < 2; ++with_start) {
        unsigned char basis[3] = {0, 0, 0};
        pp_lcp_result r;
        ck_assert_int_eq(pp_lcp_solve(lcp, 3, M, q, NULL, basis, z[with_start], &r), PP_OK);
        pp_load_sharing ls;
        bare_normals(&ls, 3);
        if (with_start) {
            memcpy(ls.basis, kept[_i], 3);
            ls.start = 1;
        }
        out[with_start] = pp_load_sharing_apply(&ls, lcp, 3, M, NULL, q, 3, 4, 6, &o, basis,
                                                z[with_start], &r);
        ck_assert(ls.found);
        memcpy(found[with_start], ls.basis, 3);
        pp_load_sharing_free(&ls);
    }
    ck_assert_int_eq(out[0], PP_LOAD_SHARED_IMPULSES);
    ck_assert_int_eq(out[1], out[0]);
    ck_assert(memcmp(z[1], z[0], sizeof z[0]) == 0);
    ck_assert(memcmp(found[1], found[0], 3) == 0);
    ck_assert_double_eq_tol(z[0][1], 1.0, TOL_SHARE);
    ck_assert_double_eq_tol(z[0][2], 1.0, TOL_SHARE);
    pp_lcp_workspace_destroy(lcp);
}
END_TEST

/* ---- A block on four symmetric supports (pp_mlcp_solve) ------------------------------- */

/* Block m = 2 kg, half extents (0.4, 0.25, 0.1), resting on supports at its four bottom
 * corners (x = +-a, y = +-b, a = 0.4, b = 0.25), free velocity v* = (delta, 0, -g h).
 * The end velocity is 0 (sticking: m delta < mu m g h), so the impulses balance the free
 * momentum: sum p = m g h, sum f = -m delta x. Moments about the centre (the contacts are
 * c = 0.1 below it): with r_i = (x_i, y_i, -c) and impulse (f_i, 0, p_i),
 *     y:  sum (-c f_i - x_i p_i) = 0   =>   sum x_i p_i = c m delta,
 *     x:  sum y_i p_i = 0,   z:  sum y_i f_i = 0.
 * Four loads, three equations: one load pattern (+, -, +, -) over the diagonals and the
 * friction's split are free. The compliance limit is the minimum-norm solution here (every
 * contact sticks: the problem is locally monotone): no diagonal pattern,
 *     p_front = m g h / 4 + c m delta / (4 a),   p_back = m g h / 4 - c m delta / (4 a),
 * and equal friction -m delta / 4 at every corner. Lemke puts everything on three. */
static void block_on_four(double mu, int k, double delta)
{
    const double m = 2.0, e[3] = {0.4, 0.25, 0.1};
    const double xy[4][2] = {{0.4, 0.25}, {-0.4, 0.25}, {-0.4, -0.25}, {0.4, -0.25}};
    const double v[3] = {delta, 0.0, -G * H};
    pp_mlcp_body body = box_body(m, e, v);
    pp_contact c[4];
    supports(4, xy, mu, c);
    pp_mlcp_problem p = {H, 1, &body, 4, c, k, 0.0, 0, 0.0};
    double pn[4], beta[4 * 8], sigma[4], f[12], nu[6];
    pp_mlcp_solution s = {pn, beta, sigma, f, nu, NULL};
    pp_mlcp_stats st;
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_OK);
    ck_assert_int_eq(st.load_shared, 1);
    const double share = m * G * H / 4.0, tilt = e[2] * m * delta / (4.0 * e[0]);
    for (int i = 0; i < 4; ++i) {
        double expect = xy[i][0] > 0.0 ? share + tilt : share - tilt;
        ck_assert_msg(fabs(pn[i] - expect) <= TOL_SHARE * share, "support %d: p = %.17g, "
                      "closed form %.17g (mu %g, k %d)", i, pn[i], expect, mu, k);
        ck_assert_msg(fabs(f[3 * i] + m * delta / 4.0) <= TOL_SHARE * share &&
                          fabs(f[3 * i + 1]) <= TOL_SHARE * share,
                      "support %d: friction (%g, %g), closed form (%g, 0)", i, f[3 * i],
                      f[3 * i + 1], -m * delta / 4.0);
    }
    for (int r = 0; r < 6; ++r) ck_assert(fabs(nu[r]) <= 1e-12);
    check_lcp(4, mu > 0.0 ? k : 0, pn, beta, sigma);
}

START_TEST(test_block_frictionless)
{
    block_on_four(0.0, 4, 0.0);
}
END_TEST

static const int g_directions[] = {4, 8};

START_TEST(test_block_friction_at_rest)
{
    block_on_four(0.5, g_directions[_i], 0.0);
}
END_TEST

START_TEST(test_block_friction_pushed)
{
    /* m delta = 0.02 N s < mu m g h = 0.098 N s: sticking */
    block_on_four(0.5, g_directions[_i], 0.01);
}
END_TEST

/* Three frictionless supports (a triangle) carry a block uniquely (three independent
 * normals): the answer is Lemke's, bit for bit (the same LCP solved by pp_lcp_solve
 * directly), and nothing is counted. (With friction two sticking supports of one body are
 * already statically indeterminate: a pair of opposite tangential impulses along the line
 * through them changes no velocity, and the compliance limit chooses their split.) */
START_TEST(test_three_supports_untouched)
{
    const double m = 2.0, e[3] = {0.4, 0.25, 0.1};
    const double xy[3][2] = {{0.4, 0.25}, {-0.4, 0.1}, {0.1, -0.25}};
    const double v[3] = {0.01, 0.0, -G * H};
    pp_mlcp_body body = box_body(m, e, v);
    pp_contact c[3];
    supports(3, xy, 0.0, c);
    pp_mlcp_problem p = {H, 1, &body, 3, c, 4, 0.0, 0, 0.0};
    double pn[3], f[9], nu[6];
    pp_mlcp_solution s = {pn, NULL, NULL, f, nu, NULL};
    pp_mlcp_stats st;
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_OK);
    ck_assert_int_eq(st.load_shared, 0);
    int n;
    const double *M, *q;
    pp_mlcp_last_lcp(g_ws, &n, &M, &q);
    ck_assert_int_eq(n, 3);
    pp_lcp_workspace *lcp = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &lcp), PP_OK);
    double z[3];
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(lcp, n, M, q, NULL, NULL, z, &r), PP_OK);
    ck_assert(memcmp(pn, z, sizeof pn) == 0);
    ck_assert(pn[0] > 0.0 && pn[1] > 0.0 && pn[2] > 0.0);
    pp_lcp_workspace_destroy(lcp);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load_sharing");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bare_redundant_pair);
    tcase_add_test(tc, test_bare_unique_untouched);
    tcase_add_loop_test(tc, test_bare_reference_rows_closed, 0, 2);
    tcase_add_loop_test(tc, test_bare_kept_basis_refused, 0, 2);
    tcase_add_test(tc, test_block_frictionless);
    tcase_add_loop_test(tc, test_block_friction_at_rest, 0, 2);
    tcase_add_loop_test(tc, test_block_friction_pushed, 0, 2);
    tcase_add_test(tc, test_three_supports_untouched);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
