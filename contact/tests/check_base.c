/* Unit tests of pegplus/base.h: status names and the replaceable log hook. */
#include "pegplus/base.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static char g_last[256];
static pp_log_level g_level;

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)user;
    g_level = level;
    strncpy(g_last, message, sizeof g_last - 1);
}

START_TEST(test_status_strings_are_distinct)
{
    const char *a = pp_status_string(PP_ERR_INVALID_ARGUMENT);
    const char *b = pp_status_string(PP_ERR_DEGENERATE);
    ck_assert_str_eq(pp_status_string(PP_OK), "ok");
    ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(test_log_hook_receives_formatted_message)
{
    pp_log_fn previous = pp_set_log_hook(capture, NULL);
    pp_log(PP_LOG_WARNING, "mass %g of body %d", -1.0, 3);
    ck_assert_str_eq(g_last, "mass -1 of body 3");
    ck_assert_int_eq(g_level, PP_LOG_WARNING);
    pp_set_log_hook(previous, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_status_strings_are_distinct);
    tcase_add_test(tc, test_log_hook_receives_formatted_message);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
