/* Shared by the integration tests: run a Check suite and turn its failures into the exit code;
 * the step statistics' common assertions. */
#ifndef PP_IT_COMMON_H
#define PP_IT_COMMON_H

#include "pegplus/pegplus.h"

#include <check.h>

/* Runs every test of `suite` (each in a forked child, Check's default) and frees the runner.
 * Returns the process exit code: 0 when every test passed, 1 otherwise. */
static inline int pp_it_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? 1 : 0;
}

/* Every island of the step answered by Lemke (on M, or on M + eps I: lcp_fallback <= 1),
 * none approximately or not at all, and no PEG LCP replaced by the standard model's
 * constraints (peg_fallback 0); `step` names the step in the message. */
static inline void pp_it_assert_lemke(const pp_step_stats *t, int step)
{
    ck_assert_msg(t->lcp_fallback <= 1 && t->lcp_approximate == 0 && t->islands_failed == 0 &&
                      t->peg_fallback == 0,
                  "step %d: lcp_fallback %d, approximate %d, failed %d, PEG fallback %d", step,
                  t->lcp_fallback, t->lcp_approximate, t->islands_failed, t->peg_fallback);
}

#endif
