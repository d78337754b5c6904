/*
 * pp_lcp_options.set_slack (pegplus/lcp.h): PEG's I/X sets' slacks for the warm basis's
 * repair (lcp_warm_repair.c), checked as the other options are (pp_lcp_check_options):
 * an entry outside -1..i-1, one naming an unknown that is not a p of contact_block, a slack
 * that is itself in a contact block, a set's slacks not consecutive, the sets' runs not in the
 * order of their p's, or set_slack without contact_block is refused with
 * PP_ERR_INVALID_ARGUMENT before any solve.
 *
 * The LCP (unknowns [p0, c1, p2]: set 0 with one slack, a U set 2): M = [[2, 1, 0.5],
 * [1, 2, 0], [0.5, 0, 2]] (symmetric positive definite: a P-matrix, one answer), q = (-1.3,
 * -1.1, -0.25 + d), d = 1e-7. Its answer is z = (0.5, 0.3, 0), w_2 = d. From the warm basis
 * {0, 1, 2} the basis solution has z_2 = -d / (M_22 - M_2B M_BB^-1 M_B2) < 0 (a pull, near the
 * answer): the repair opens contact 2 and answers from the warm start, no Lemke pivot. The
 * answer is checked as an LCP answer.
 *
 * The slacks are left as the warm basis has them (lcp_warm_repair.c). The same M, q =
 * (-1 + d, -0.5 + 2d, 1), d = 1e-10, from the warm basis {0, 1}: its basis solution is z_B =
 * (0.5, -d), the slack c1 below zero beyond the repair's floor (1e-12 ||z||_inf) and the
 * clamped z = (0.5, 0, 0) within the acceptance (w = (d, 2d, 1.25)). With set_slack the
 * repair leaves c1 basic and the clamped answer is accepted (rel(z) <= residual_tol); with
 * contact_block alone c1, an unknown outside the blocks, leaves the basis and the answer is
 * exact (z = ((1 - d) / 2, 0, 0), w_1 = 1.5 d).
 */
#include "pegplus/lcp.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { N = 3 };

static const int BLOCKS[N] = {0, -1, 2};

static pp_status solve_with(const int *blocks, const int *slack, double *z, pp_lcp_result *r)
{
    const double M[N * N] = {2.0, 1.0, 0.5, 1.0, 2.0, 0.0, 0.5, 0.0, 2.0}; /* symmetric */
    const double q[N] = {-1.3, -1.1, -0.25 + 1e-7};
    unsigned char basis[N] = {1, 1, 1};
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.contact_block = blocks;
    o.set_slack = slack;
    pp_status st = pp_lcp_solve(ws, N, M, q, &o, basis, z, r);
    if (st == PP_OK) { /* an LCP answer: z >= 0, w = M z + q >= 0, z . w = 0 */
        for (int i = 0; i < N; ++i) {
            double w = q[i];
            for (int j = 0; j < N; ++j) w += M[N * i + j] * z[j];
            ck_assert(z[i] >= 0.0 && w >= -1e-14 && fabs(z[i] * w) <= 1e-14);
        }
    }
    pp_lcp_workspace_destroy(ws);
    return st;
}

START_TEST(test_valid_slack_solves_from_the_warm_basis)
{
    const int slack[N] = {-1, 0, -1};
    double z[N];
    pp_lcp_result r;
    ck_assert_int_eq(solve_with(BLOCKS, slack, z, &r), PP_OK);
    ck_assert_int_eq(r.warm_started, 1);
    ck_assert_int_eq(r.pivots, 0);
    ck_assert(fabs(z[0] - 0.5) <= 1e-14 && fabs(z[1] - 0.3) <= 1e-14 && z[2] == 0.0);
}
END_TEST

START_TEST(test_slack_left_as_the_warm_basis_has_it)
{
    const double M[N * N] = {2.0, 1.0, 0.5, 1.0, 2.0, 0.0, 0.5, 0.0, 2.0};
    const double d = 1e-10, q[N] = {-1.0 + d, -0.5 + 2.0 * d, 1.0};
    const int slack[N] = {-1, 0, -1};
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    for (int given = 0; given < 2; ++given) {
        unsigned char basis[N] = {1, 1, 0};
        double z[N];
        pp_lcp_result r;
        pp_lcp_options o = pp_lcp_options_default();
        o.contact_block = BLOCKS;
        o.set_slack = given ? slack : NULL;
        ck_assert_int_eq(pp_lcp_solve(ws, N, M, q, &o, basis, z, &r), PP_OK);
        ck_assert_int_eq(r.warm_started, 1);
        ck_assert_int_eq(r.pivots, 0);
        ck_assert(r.relative_residual <= o.residual_tol);
        ck_assert(basis[0] == 1 && basis[2] == 0 && z[1] == 0.0 && z[2] == 0.0);
        ck_assert_int_eq(basis[1], given); /* the slack: left basic only with set_slack */
        ck_assert(fabs(z[0] - (given ? 0.5 : 0.5 * (1.0 - d))) <= 1e-15);
    }
    pp_lcp_workspace_destroy(ws);
}
END_TEST

START_TEST(test_invalid_slack_refused)
{
    static const int slacks[][N] = {
        {-1, -2, -1}, /* outside -1..i-1 */
        {-1, 1, -1},  /* its own index */
        {-1, 2, -1},  /* after it */
        {-1, 0, 0},   /* unknown 2 is a p of contact_block, not a slack */
        {0, -1, -1},  /* p0 named at index 0: not before it */
    };
    double z[N];
    pp_lcp_result r;
    ck_assert_int_eq(solve_with(BLOCKS, slacks[_i], z, &r), PP_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_slack_needs_its_blocks)
{
    const int slack[N] = {-1, 0, -1};
    const int no_set_p[N] = {-1, -1, 2}; /* slack names 0, which is no p */
    double z[N];
    pp_lcp_result r;
    ck_assert_int_eq(solve_with(NULL, slack, z, &r), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(solve_with(no_set_p, slack, z, &r), PP_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_slacks_consecutive)
{
    /* n = 4: [p0, c, p2, c] with both slacks naming p0 (a set's slacks split) */
    const double M[16] = {2, 1, 0.5, 0, 1, 2, 0, 0, 0.5, 0, 2, 0, 0, 0, 0, 2};
    const double q[4] = {-1, -1, -1, -1};
    const int blocks[4] = {0, -1, 2, -1}, slack[4] = {-1, 0, -1, 0};
    double z[4];
    pp_lcp_result r;
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(4, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.contact_block = blocks;
    o.set_slack = slack;
    ck_assert_int_eq(pp_lcp_solve(ws, 4, M, q, &o, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    /* [p0, p1, c, c]: each set's slacks consecutive, but set 1's run before set 0's */
    const int two_sets[4] = {0, 1, -1, -1}, out_of_order[4] = {-1, -1, 1, 0};
    o.contact_block = two_sets;
    o.set_slack = out_of_order;
    ck_assert_int_eq(pp_lcp_solve(ws, 4, M, q, &o, NULL, z, &r), PP_ERR_INVALID_ARGUMENT);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lcp_set_slack");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, test_valid_slack_solves_from_the_warm_basis);
    tcase_add_test(tc, test_slack_left_as_the_warm_basis_has_it);
    tcase_add_loop_test(tc, test_invalid_slack_refused, 0, 5);
    tcase_add_test(tc, test_slack_needs_its_blocks);
    tcase_add_test(tc, test_slacks_consecutive);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
