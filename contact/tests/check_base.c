/* Unit tests of pegplus/base.h: status names and the replaceable log hook. */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno: capture stderr */
#include "pegplus/base.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* What pp_log(level, text) writes to file descriptor 2, with the hook in place. */
static void log_to_captured_stderr(pp_log_level level, const char *text, char *out, size_t size)
{
    fflush(stderr);
    FILE *file = tmpfile();
    ck_assert_ptr_nonnull(file);
    int saved = dup(2);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fileno(file), 2), 0);
    pp_log(level, "%s", text);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(file);
    size_t n = fread(out, 1, size - 1, file);
    out[n] = '\0';
    fclose(file);
}

/* The README's words: by default messages go to stderr through the default hook;
 * pp_log_discard silences them; NULL restores the default (it does not silence). */
START_TEST(test_default_hook_writes_stderr_and_discard_silences)
{
    char out[256];
    pp_log_fn previous = pp_set_log_hook(NULL, NULL);
    log_to_captured_stderr(PP_LOG_WARNING, "ERP 2 of world 1", out, sizeof out);
    ck_assert_str_eq(out, "pegplus: warning: ERP 2 of world 1\n");
    log_to_captured_stderr(PP_LOG_ERROR, "rejected", out, sizeof out);
    ck_assert_str_eq(out, "pegplus: error: rejected\n");

    pp_log_fn def = pp_set_log_hook(pp_log_discard, NULL);
    log_to_captured_stderr(PP_LOG_ERROR, "not shown", out, sizeof out);
    ck_assert_str_eq(out, "");

    ck_assert(pp_set_log_hook(NULL, NULL) == pp_log_discard);
    log_to_captured_stderr(PP_LOG_INFO, "back", out, sizeof out);
    ck_assert_str_eq(out, "pegplus: info: back\n");
    ck_assert(pp_set_log_hook(capture, NULL) == def); /* the default hook, again */
    log_to_captured_stderr(PP_LOG_INFO, "to the hook", out, sizeof out);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(g_last, "to the hook");
    pp_set_log_hook(previous, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_status_strings_are_distinct);
    tcase_add_test(tc, test_log_hook_receives_formatted_message);
    tcase_add_test(tc, test_default_hook_writes_stderr_and_discard_silences);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
