/*
 * pp_lcp_options.contact_block (pegplus/lcp.h) checked as the other options are
 * (pp_lcp_check_options): a block entry outside -1..n-1, a p whose own entry is not itself,
 * or an unknown placed before its p is refused with PP_ERR_INVALID_ARGUMENT before any
 * solve, instead of being read as an index of the warm basis's repair (lcp_warm_repair.c),
 * which indexes the basis with it.
 *
 * The LCP: M = [[2, 1], [1, 2]] (a P-matrix), q = (-1, -0.5 + d), d = 1e-6, from the warm
 * basis {0, 1}: its basis solution has z_1 = -2d/3 < 0, near an answer, so the repair moves
 * unknown 1 by its block. With valid blocks the answer is checked as an LCP answer; the
 * block {0, 0} (one unknown after p, no beta for its sigma) had the repair write the basis at
 * an uninitialised index (make_sticking, beta[0] of a block without betas: valgrind's "use of
 * uninitialised value" before lcp_warm_repair.c's block_of read it as a beta).
 */
#include "pegplus/lcp.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { N = 2 };

static pp_status solve_with(const int *blocks, double *z, pp_lcp_result *r)
{
    const double M[N * N] = {2.0, 1.0, 1.0, 2.0}; /* symmetric: row or column order alike */
    const double q[N] = {-1.0, -0.5 + 1e-6};
    unsigned char basis[N] = {1, 1};
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(N, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.contact_block = blocks;
    pp_status st = pp_lcp_solve(ws, N, M, q, &o, basis, z, r);
    if (st == PP_OK) { /* an LCP answer: z >= 0, w = M z + q >= 0, z . w = 0 */
        for (int i = 0; i < N; ++i) {
            const double w = M[2 * i] * z[0] + M[2 * i + 1] * z[1] + q[i];
            ck_assert(z[i] >= 0.0 && w >= -1e-12 && fabs(z[i] * w) <= 1e-12);
        }
    }
    pp_lcp_workspace_destroy(ws);
    return st;
}

START_TEST(test_valid_blocks_solve)
{
    /* none; two frictionless contacts; one contact whose block has a single unknown after p */
    const int blocks[3][N] = {{-1, -1}, {0, 1}, {0, 0}};
    double z[N];
    pp_lcp_result r;
    ck_assert_int_eq(solve_with(blocks[_i], z, &r), PP_OK);
}
END_TEST

START_TEST(test_invalid_blocks_refused)
{
    /* out of range (far and just past n), below -1, p not its own entry, before its p */
    const int blocks[5][N] = {{-1, 1 << 24}, {-1, N}, {-1, -2}, {-1, 0}, {1, 1}};
    double z[N];
    pp_lcp_result r;
    ck_assert_int_eq(solve_with(blocks[_i], z, &r), PP_ERR_INVALID_ARGUMENT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lcp_contact_block");
    TCase *tc = tcase_create("options");
    tcase_add_loop_test(tc, test_valid_blocks_solve, 0, 3);
    tcase_add_loop_test(tc, test_invalid_blocks_refused, 0, 5);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
