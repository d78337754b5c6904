/* Shared by the integration tests: run a Check suite and turn its failures into the exit code. */
#ifndef PP_IT_COMMON_H
#define PP_IT_COMMON_H

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

#endif
