/*
 * pp_step_stats reports the LCP answer applied to the bodies (pegplus.h, "The answers
 * applied"; stage_time_step.c, "What an island's solves report"), not the worst of the step's
 * solves: an answer not applied shows only in the work (lcp_solves, lcp_pivots) and, when its
 * solve failed (no answer, or the bounded fallback's approximate one), in lcp_dropped.
 *
 * The scene is soak seed 1178's island (it_hulls_1178.h: two hulls falling together onto the
 * ground, mu = 1, k = 4, h = 0.02), clock-free, under each pegplus model, with a budget of one
 * Lemke pivot per island and step (pp_config.lcp_budget_pivots): the step's first solve is
 * cut and answered by the bounded fallback, and so is its first re-linearisation iterate,
 * after which the spent budget stops the iteration. At each of the first 8 steps, from the
 * trajectory's own state (no budget before it), the step is taken with the first solve alone
 * (relinearize_iterations = 0) and with the re-linearisation, and checked:
 *  - where the re-linearisation kept the first answer (relinearize_refused, the hulls bit for
 *    bit where the first solve alone puts them), the step's lcp_status, lcp_residual,
 *    lcp_fallback, lcp_approximate and islands_failed are the first solve's alone;
 *  - where it applied its iterate's answer instead (not refused, the hulls elsewhere) after a
 *    first solve short of a solution (status PP_LCP_APPROXIMATE), that first answer was
 *    dropped: lcp_dropped >= 1;
 *  - lcp_dropped < lcp_solves: some solve's answer is always the one applied.
 * Measured: PEG keeps the first answer at steps 0, 1, 2 and 6, its iterate failing at 0 and 1
 * (lcp_dropped 1), where main reported the iterate's residual, 3.22 and 0.722, for the applied
 * answers' 2.36 and 1.53e-4; the standard model keeps it at steps 4-6, where main reported
 * 1.96e-6 and 6.94e-8 at steps 5 and 6 for the applied 3.38e-8 and 2.83e-8. The iterate's
 * answer replaced a failed first one at standard steps 0, 1, 3 and PEG step 3 (and 5 until
 * PEG's builder kept a set that two configurations make once, peg_constraints.c
 * drop_repeated_sets: the hulls' LCPs lost a repeated vertex set, and PEG's step 5 now keeps
 * its first answer, the iterate's fallback answer no better).
 */
#include "pegplus/pegplus.h"
#include "pegplus/lcp.h"
#include "it_common.h"
#include "it_hulls_1178.h"

#include <check.h>
#include <math.h>
#include <string.h>

static const double H = 0.02, G = 9.81;

#define STEPS 8

START_TEST(test_stats_of_the_answer_applied)
{
    const pp_model model = _i ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    int kept_first = 0, dropped_iterates = 0, replaced_first = 0;
    for (int step = 0; step < STEPS; ++step) {
        pair_world first, relin; /* the first solve alone; with the re-linearisation */
        pp_it_hulls_make_unclocked(&first, model, G);
        pp_it_hulls_make_unclocked(&relin, model, G);
        for (int s = 0; s < step; ++s) { /* the same trajectory, no budget */
            ck_assert_int_eq(pp_world_step(first.pp, H), PP_OK);
            ck_assert_int_eq(pp_world_step(relin.pp, H), PP_OK);
        }
        pp_it_hulls_set_step(&first, 0, 1);
        ck_assert_int_eq(pp_world_step(first.pp, H), PP_OK);
        const pp_step_stats a = *pp_world_get_stats(first.pp);
        pp_it_hulls_set_step(&relin, 20, 1);
        ck_assert_int_eq(pp_world_step(relin.pp, H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(relin.pp);
        printf("%s step %d: first alone status %d fallback %d residual %.3g; re-linearised: "
               "%d iterates, refused %d, status %d fallback %d residual %.3g, %d solves, "
               "%d dropped\n", pp_model_name(model), step, a.lcp_status, a.lcp_fallback,
               a.lcp_residual, t->relinearizations, t->relinearize_refused, t->lcp_status,
               t->lcp_fallback, t->lcp_residual, t->lcp_solves, t->lcp_dropped);
        ck_assert_int_eq(a.lcp_dropped, 0); /* one solve, its answer applied */
        ck_assert_int_lt(t->lcp_dropped, t->lcp_solves);
        /* the first answer kept */
        if (t->relinearize_refused && pp_it_hulls_same_state(&first, &relin)) {
            ck_assert_int_eq(t->lcp_status, a.lcp_status);
            ck_assert_double_eq(t->lcp_residual, a.lcp_residual);
            ck_assert_int_eq(t->lcp_fallback, a.lcp_fallback);
            ck_assert_int_eq(t->lcp_approximate, a.lcp_approximate);
            ck_assert_int_eq(t->islands_failed, a.islands_failed);
            ++kept_first;
            dropped_iterates += t->lcp_dropped;
        } else if (!t->relinearize_refused && t->relinearizations == 1 &&
                   a.lcp_status == PP_LCP_APPROXIMATE) {
            /* the iterate's answer applied: the first solve's, short of a solution, dropped */
            ck_assert(!pp_it_hulls_same_state(&first, &relin));
            ck_assert_int_ge(t->lcp_dropped, 1);
            ++replaced_first;
        }
        pp_it_hulls_destroy(&first);
        pp_it_hulls_destroy(&relin);
    }
    /* measured: PEG refused at 6 steps (0-2, 5-7), 1 replaced; standard 3 (0), 3 */
    ck_assert_int_ge(kept_first, 3);
    ck_assert_int_ge(replaced_first, 1);
    if (model == PP_MODEL_PEG) ck_assert_int_ge(dropped_iterates, 2);
}
END_TEST

int main(void)
{
    dInitODE();
    pp_set_log_hook(pp_log_discard, NULL); /* every budgeted solve warns */
    Suite *s = suite_create("lcp stats applied");
    TCase *tc = tcase_create("soak 1178");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_stats_of_the_answer_applied, 0, 2); /* standard, PEG */
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
